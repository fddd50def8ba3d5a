#!/usr/bin/env bash
# Builds FFmpeg 7.1, from Debian trixie's source package, against quale's
# libvmaf face (libvmaf.so.3), as a test client: the libvmaf and
# libvmaf_cuda filters (with hwupload_cuda to put frames on the GPU), the
# raw and y4m demuxers and the null muxer, nothing else.  The CUDA parts
# need NVIDIA's codec headers (nv-codec-headers, header-only, also from
# trixie: bookworm's 11.1.5.2 is older than FFmpeg 7.1 takes); FFmpeg loads
# the driver at run time, so the binary runs without a GPU too.
#
#   scripts/ffmpeg-client.sh [--nvdec] BUILD_DIR
#
# --nvdec builds a second client for GPU machines: FFmpeg's NVDEC
# hwaccels for H.264 and HEVC with their CPU decoders, the mp4 and
# Matroska demuxers and scale_cuda (its kernels compiled by clang, FFmpeg's
# cuda-llvm) to turn NVDEC's NV12 into the planar frames libvmaf_cuda
# takes; with nasm, FFmpeg's assembly for the CPU decoders.  It lives in
# BUILD_DIR/ffmpeg-client/<version>-nvdec/ and needs clang and nasm too.
#
# BUILD_DIR is quale's meson build directory (built).  Prints the path of
# the ffmpeg binary on its last line.  The FFmpeg build is kept in
# BUILD_DIR/ffmpeg-client/<version>/ and reused while the version is the
# same; quale itself is installed again each time (into a staging
# directory there), and ffmpeg links it at run time, so a changed quale
# needs no new FFmpeg build.  What it installs from Debian: a C compiler,
# make, pkg-config, xz-utils (the source comes through apt-get source,
# with a private apt configuration that adds trixie's deb-src).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
nvdec=false
if [[ ${1:-} == --nvdec ]]; then nvdec=true; shift; fi
build=$(cd "${1:?usage: scripts/ffmpeg-client.sh [--nvdec] BUILD_DIR}" && pwd)
root=$build/ffmpeg-client
mkdir -p "$root"

need=()
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v xz >/dev/null || need+=(xz-utils)
if $nvdec; then
    command -v clang >/dev/null || need+=(clang)
    command -v nasm >/dev/null || need+=(nasm)
fi
apt_install "${need[@]}"

# quale, installed as a user would have it (its libvmaf.pc included).
stage=$root/stage
rm -rf "$stage"
meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >/dev/null
pcdir=$(dirname "$(find "$stage" -name libvmaf.pc | head -1)")
libdir=$(dirname "$(find "$stage" -name 'libvmaf.so.3' | head -1)")
export PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_SYSROOT_DIR=$stage

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
make -C "$root/nv-codec-headers" PREFIX=/usr DESTDIR="$stage" install >/dev/null
export PKG_CONFIG_LIBDIR=$pcdir:$stage/usr/lib/pkgconfig
tarball=$(ls "$root"/src/ffmpeg_7.1*.orig.tar.xz | sort -V | tail -1)
version=$(basename "$tarball" | sed 's/^ffmpeg_\(.*\)\.orig\.tar\.xz$/\1/')
tree=$root/$version
config=(--disable-everything --disable-autodetect --disable-doc
        --disable-network --disable-x86asm --disable-ffplay --disable-ffprobe
        --disable-debug --enable-libvmaf --enable-ffnvcodec --enable-cuda
        --enable-protocol=file,pipe
        --enable-demuxer=rawvideo,yuv4mpegpipe
        --enable-decoder=rawvideo,wrapped_avframe
        --enable-encoder=wrapped_avframe,rawvideo
        --enable-muxer=null
        --enable-filter=libvmaf,libvmaf_cuda,hwupload_cuda,scale,format,null,buffer,buffersink
        --enable-swscale)
if $nvdec; then
    version+=-nvdec
    tree=$root/$version
    config=("${config[@]/--disable-x86asm/--enable-pthreads}"
            --enable-nvdec --enable-cuda-llvm
            --enable-demuxer=mov,matroska
            --enable-decoder=h264,hevc --enable-parser=h264,hevc
            --enable-hwaccel=h264_nvdec,hevc_nvdec
            --enable-filter=scale_cuda,hwdownload,setpts)
fi
# A build made with other options is made again.
if [[ ! -x $tree/ffmpeg || $(cat "$tree/quale-config" 2>/dev/null) != "${config[*]}" ]]; then
    rm -rf "$tree" && mkdir -p "$tree"
    tar -xJf "$tarball" -C "$tree" --strip-components=1
    (cd "$tree" && ./configure "${config[@]}" >"$tree/configure.log" 2>&1) ||
        { tail -20 "$tree/configure.log" >&2; exit 1; }
    grep -q '^CONFIG_LIBVMAF_CUDA_FILTER=yes' "$tree/ffbuild/config.mak" ||
        { echo "FFmpeg's configure left the libvmaf_cuda filter out" >&2; exit 1; }
    if $nvdec; then
        for want in H264_NVDEC_HWACCEL HEVC_NVDEC_HWACCEL SCALE_CUDA_FILTER; do
            grep -q "^CONFIG_$want=yes" "$tree/ffbuild/config.mak" ||
                { echo "FFmpeg's configure left $want out" >&2; exit 1; }
        done
    fi
    make -C "$tree" -j"$(nproc)" ffmpeg >"$tree/make.log" 2>&1 ||
        { tail -20 "$tree/make.log" >&2; exit 1; }
    echo "${config[*]}" >"$tree/quale-config"
fi
# ffmpeg finds quale's libvmaf.so.3 through this (printed for the test).
echo "LD_LIBRARY_PATH=$libdir"
echo "$tree/ffmpeg"
