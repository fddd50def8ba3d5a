#!/usr/bin/env bash
# Builds FFmpeg 7.1, from Debian trixie's source package, against quale's
# libvmaf face (libvmaf.so.3): an ffmpeg whose libvmaf filter runs on
# quale, linked with a run path to quale's library, so that it runs
# without LD_LIBRARY_PATH.
#
#   scripts/ffmpeg-client.sh [--test | --nvdec] [--installed] DIR
#
# By default a user's client: the mp4/mov, Matroska/WebM, IVF, AVI,
# MPEG-TS, YUV4MPEG2 and raw video demuxers; the H.264, HEVC, VP8, VP9,
# AV1 (dav1d: Debian's libdav1d), MPEG-4 part 2 and MPEG-2 decoders with
# their parsers and FFmpeg's x86 assembly (nasm); the libvmaf and
# libvmaf_cuda filters (hwupload_cuda puts frames on the GPU), scale,
# format, setpts, fps and crop; the null, y4m and raw muxers; ffmpeg and
# ffprobe.  About 6.5 minutes of CPU (make -j2 on 2 cores: user 5.3,
# system 1.1).
#
# --test: the configuration the suite builds (tests/ffmpeg_libvmaf.py),
# the cheapest that runs the README's commands: no assembly, the raw,
# y4m, mp4 and Matroska demuxers, the H.264 decoder, the filters above
# but fps and crop, ffmpeg alone.  About 3.5 minutes of CPU (user 2.5,
# system 0.8; the raw and y4m client it grew from took 2, download
# included): the user's client would cost CI 2 to 3 minutes more.
#
# --nvdec: a client for GPU machines: FFmpeg's NVDEC hwaccels for H.264
# and HEVC with their CPU decoders (and assembly: nasm), and scale_cuda
# (its kernels compiled by clang, FFmpeg's cuda-llvm) to turn NVDEC's NV12
# into the planar frames libvmaf_cuda takes.  Needs clang too.
#
# DIR is quale's meson build directory (built): quale is installed as a
# user would have it, libvmaf.pc included, into DIR/ffmpeg-client/stage,
# and ffmpeg's run path points there (each run installs it again, so a
# changed quale needs no new FFmpeg build; removing DIR breaks the
# client).  With --installed the quale installed on this machine
# (`meson install` or the .deb; pkg-config's libvmaf.pc must be quale's)
# is built against and run on, and DIR is only where FFmpeg is built.
# The run path is a RUNPATH: LD_LIBRARY_PATH still puts another
# libvmaf.so.3 first where that is wanted.
#
# The FFmpeg build is kept in DIR/ffmpeg-client/<version>[-test|-nvdec]/
# and reused while the version and the options are the same.  Prints the
# directory of the libvmaf.so.3 ffmpeg runs on ("LIBDIR=...") and, on the
# last line, the path of the ffmpeg binary.  What it installs from Debian:
# a C compiler, make, pkg-config, xz-utils, and but for --test nasm, for
# the user's client libdav1d-dev (the source comes through apt-get
# source, with a private apt configuration that adds trixie's deb-src).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
variant=user installed=false
while [[ ${1:-} == --* ]]; do
    case $1 in
        --test) variant=test ;;
        --nvdec) variant=nvdec ;;
        --installed) installed=true ;;
        *) echo "ffmpeg-client.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ $# -eq 1 && -d $1 ]] ||
    { echo "usage: scripts/ffmpeg-client.sh [--test | --nvdec] [--installed] DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
root=$build/ffmpeg-client
mkdir -p "$root"

need=()
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v xz >/dev/null || need+=(xz-utils)
[[ $variant == test ]] || command -v nasm >/dev/null || need+=(nasm)
if [[ $variant == nvdec ]] && ! command -v clang >/dev/null; then need+=(clang); fi
if [[ $variant == user ]] && ! pkg-config --exists dav1d 2>/dev/null; then need+=(libdav1d-dev); fi
apt_install "${need[@]}"

# quale's libvmaf.pc and library: the installed ones, or the build tree's,
# installed as a user would have them into a staging root.
stage=$root/stage
if $installed; then
    pcpath=$(pkg-config --variable=pcfiledir libvmaf 2>/dev/null || true)
    grep -qs 'provided by quale' "$pcpath/libvmaf.pc" ||
        { echo "ffmpeg-client.sh: quale is not installed here (pkg-config's libvmaf.pc is" \
               "missing or another libvmaf's); install it, or leave --installed out" >&2; exit 1; }
    libdir=$(pkg-config --variable=libdir libvmaf)
else
    [[ -f $build/build.ninja ]] ||
        { echo "ffmpeg-client.sh: $build is not a meson build directory" >&2; exit 2; }
    rm -rf "$stage"
    meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >/dev/null
    pcpath=$(dirname "$(find "$stage" -name libvmaf.pc | head -1)")
    libdir=$(dirname "$(find "$stage" -name 'libvmaf.so.3' | head -1)")
    # The staged .pc files name their prefix without the staging root.
    sed -i "s|^prefix=|prefix=$stage|" "$pcpath"/*.pc
fi

# The sources: trixie's ffmpeg and nv-codec-headers source packages,
# through a private apt setup (the machine's own sources are left alone).
# Only the upstream tarballs are used.
fetched=false
fetch_source() { # PACKAGE TARBALL_PREFIX
    ls "$root"/src/"$2"*.orig.tar.xz >/dev/null 2>&1 && return 0
    apt_private "$root/apt"
    mkdir -p "$root/src"
    echo "deb-src http://deb.debian.org/debian trixie main" >"$root/apt/sources.list"
    $fetched || apt-get "${apt_opts[@]}" update -qq
    fetched=true
    # A mirror may lack the Debian packaging of the moment: the upstream
    # tarball is what counts, checked below.
    (cd "$root/src" && apt-get "${apt_opts[@]}" source --download-only -qq "$1" 2>/dev/null) || true
    ls "$root"/src/"$2"*.orig.tar.xz >/dev/null 2>&1 ||
        { echo "could not fetch the $1 source package from trixie" >&2; exit 1; }
}
fetch_source ffmpeg ffmpeg_7.1
fetch_source nv-codec-headers nv-codec-headers_
nvtar=$(ls "$root"/src/nv-codec-headers_*.orig.tar.xz | sort -V | tail -1)
rm -rf "$root/nv-codec-headers" && mkdir -p "$root/nv-codec-headers"
tar -xJf "$nvtar" -C "$root/nv-codec-headers" --strip-components=1
make -C "$root/nv-codec-headers" PREFIX="$root/ffnvcodec" install >/dev/null
# Debian's own .pc files too (dav1d), after quale's and the codec headers'.
system_pc=$(pkg-config --variable pc_path pkg-config)
export PKG_CONFIG_LIBDIR=$pcpath:$root/ffnvcodec/lib/pkgconfig:$system_pc
tarball=$(ls "$root"/src/ffmpeg_7.1*.orig.tar.xz | sort -V | tail -1)
version=$(basename "$tarball" | sed 's/^ffmpeg_\(.*\)\.orig\.tar\.xz$/\1/')

# What every variant has.  The run path is the directory of quale's
# libvmaf.so.3 (a RUNPATH, so that LD_LIBRARY_PATH can still put another
# libvmaf.so.3 first).
config=(--disable-everything --disable-autodetect --disable-doc
        --disable-network --disable-ffplay --disable-debug
        --enable-libvmaf --enable-ffnvcodec --enable-cuda
        "--extra-ldflags=-Wl,--enable-new-dtags,-rpath,$libdir"
        --enable-protocol=file,pipe
        --enable-demuxer=rawvideo,yuv4mpegpipe,mov,matroska
        --enable-decoder=rawvideo,wrapped_avframe,h264 --enable-parser=h264
        --enable-encoder=wrapped_avframe,rawvideo
        --enable-muxer=null
        --enable-filter=libvmaf,libvmaf_cuda,hwupload_cuda,scale,format,setpts,null,buffer,buffersink
        --enable-swscale)
targets=(ffmpeg)
case $variant in
    test)
        version+=-test
        config+=(--disable-x86asm --disable-ffprobe) ;;
    nvdec)
        version+=-nvdec
        config+=(--enable-pthreads --disable-ffprobe --enable-nvdec --enable-cuda-llvm
                 --enable-decoder=hevc --enable-parser=hevc
                 --enable-hwaccel=h264_nvdec,hevc_nvdec
                 --enable-filter=scale_cuda,hwdownload) ;;
    user)
        config+=(--enable-pthreads --enable-libdav1d
                 --enable-demuxer=ivf,avi,mpegts
                 --enable-decoder=hevc,vp8,vp9,libdav1d,mpeg4,mpeg2video
                 --enable-parser=hevc,vp8,vp9,av1,mpeg4video,mpegvideo
                 --enable-muxer=yuv4mpegpipe,rawvideo
                 --enable-filter=fps,crop)
        targets+=(ffprobe) ;;
esac
tree=$root/$version
# A build made with other options is made again.
if [[ ! -x $tree/ffmpeg || $(cat "$tree/quale-config" 2>/dev/null) != "${config[*]}" ]]; then
    rm -rf "$tree" && mkdir -p "$tree"
    tar -xJf "$tarball" -C "$tree" --strip-components=1
    (cd "$tree" && ./configure "${config[@]}" >"$tree/configure.log" 2>&1) ||
        { tail -20 "$tree/configure.log" >&2; exit 1; }
    wants=(LIBVMAF_CUDA_FILTER MOV_DEMUXER H264_DECODER)
    [[ $variant == nvdec ]] && wants+=(H264_NVDEC_HWACCEL HEVC_NVDEC_HWACCEL SCALE_CUDA_FILTER)
    [[ $variant == user ]] && wants+=(LIBDAV1D_DECODER VP9_DECODER HEVC_DECODER X86ASM)
    for want in "${wants[@]}"; do
        grep -q "^CONFIG_$want=yes\|^HAVE_$want=yes" "$tree/ffbuild/config.mak" ||
            { echo "FFmpeg's configure left $want out" >&2; exit 1; }
    done
    make -C "$tree" -j"$(nproc)" "${targets[@]}" >"$tree/make.log" 2>&1 ||
        { tail -20 "$tree/make.log" >&2; exit 1; }
    echo "${config[*]}" >"$tree/quale-config"
fi
# The library ffmpeg runs on (printed for the tests).
echo "LIBDIR=$libdir"
echo "$tree/ffmpeg"
