#!/usr/bin/env bash
# Builds FFmpeg's shared libraries of Debian bookworm's version (5.1: the
# sonames quale's decoder loads), from bookworm's source package, with
# only what decoding on the GPU needs, as Debian's own libavcodec59 has
# it: the H.264, HEVC, AV1, VP9 and VP8 decoders with their NVDEC hwaccels,
# AV1 on the CPU through libdav1d (which Debian's FFmpeg prefers, and which
# has no NVDEC: quale then opens FFmpeg's own AV1 decoder on the GPU), the
# MPEG-1/2 and MPEG-4 Part 2 decoders with their NVDEC hwaccels (which quale
# must not use: those codecs are not bit-exact, docs/input.md), FFV1 (the
# lossless codec of references), the MP4/MOV, Matroska/WebM, IVF, MPEG-TS,
# MPEG-PS and raw H.264/HEVC demuxers, and swscale.  For machines that have
# the NVIDIA driver but no packages (the GPU machines quale is measured
# on): their files (libdav1d's too, copied beside them) travel there and
# LD_LIBRARY_PATH points at them.
#
#   scripts/ffmpeg-nvdec-libs.sh OUT_DIR
#
# Leaves the libraries in OUT_DIR/lib (reused while the configuration is
# the same) and prints that directory.  What it installs from Debian: a C
# compiler, make, pkg-config, nasm, xz-utils and NVIDIA's codec headers
# (libffmpeg-nvenc-dev).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
out=$(mkdir -p "${1:?usage: scripts/ffmpeg-nvdec-libs.sh OUT_DIR}" && cd "$1" && pwd)

need=()
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v nasm >/dev/null || need+=(nasm)
command -v xz >/dev/null || need+=(xz-utils)
pkg-config --exists ffnvcodec 2>/dev/null || need+=(libffmpeg-nvenc-dev)
pkg-config --exists dav1d 2>/dev/null || need+=(libdav1d-dev)
apt_install "${need[@]}"

# bookworm's ffmpeg source package, through a private apt setup (the
# machine's own sources are left alone); only the upstream tarball is used.
if ! ls "$out"/src/ffmpeg_5.1*.orig.tar.xz >/dev/null 2>&1; then
    apt_private "$out/apt"
    mkdir -p "$out/src"
    printf '%s\n' "deb-src http://deb.debian.org/debian bookworm main" \
        "deb-src http://deb.debian.org/debian-security bookworm-security main" >"$out/apt/sources.list"
    apt-get "${apt_opts[@]}" update -qq
    (cd "$out/src" && apt-get "${apt_opts[@]}" source --download-only -qq ffmpeg 2>/dev/null) || true
    ls "$out"/src/ffmpeg_5.1*.orig.tar.xz >/dev/null 2>&1 ||
        { echo "could not fetch bookworm's ffmpeg source package" >&2; exit 1; }
fi
tarball=$(ls "$out"/src/ffmpeg_5.1*.orig.tar.xz | sort -V | tail -1)
tree=$out/build
config=(--disable-everything --disable-autodetect --disable-programs --disable-doc
        --disable-network --disable-debug --disable-static --enable-shared
        --disable-avdevice --disable-avfilter --disable-swresample --disable-postproc
        --enable-ffnvcodec --enable-nvdec --enable-cuda
        --enable-libdav1d
        --enable-decoder=h264,hevc,av1,libdav1d,vp9,vp8,ffv1,mpeg1video,mpeg2video,mpeg4
        --enable-hwaccel=h264_nvdec,hevc_nvdec,av1_nvdec,vp9_nvdec,vp8_nvdec,mpeg1_nvdec,mpeg2_nvdec,mpeg4_nvdec
        --enable-parser=h264,hevc,av1,vp9,vp8,mpegvideo,mpeg4video
        --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,extract_extradata,av1_frame_merge,av1_frame_split
        --enable-demuxer=mov,matroska,ivf,h264,hevc,mpegts,mpegps,obu
        --enable-swscale
        "--prefix=$out")
if [[ ! -e $out/lib/libavcodec.so.59 || $(cat "$out/quale-config" 2>/dev/null) != "${config[*]}" ]]; then
    rm -rf "$tree" "$out/lib" && mkdir -p "$tree"
    tar -xJf "$tarball" -C "$tree" --strip-components=1
    (cd "$tree" && ./configure "${config[@]}" >"$tree/configure.log" 2>&1) ||
        { tail -20 "$tree/configure.log" >&2; exit 1; }
    for feature in H264_NVDEC_HWACCEL MPEG2_NVDEC_HWACCEL AV1_NVDEC_HWACCEL LIBDAV1D_DECODER; do
        grep -q "^CONFIG_$feature=yes" "$tree/ffbuild/config.mak" ||
            { echo "FFmpeg's configure left $feature out" >&2; exit 1; }
    done
    make -C "$tree" -j"$(nproc)" >"$tree/make.log" 2>&1 || { tail -20 "$tree/make.log" >&2; exit 1; }
    make -C "$tree" install >>"$tree/make.log" 2>&1
    # libdav1d travels with them
    cp -L "$(pkg-config --variable=libdir dav1d)"/libdav1d.so.[0-9] "$out/lib/"
    echo "${config[*]}" >"$out/quale-config"
fi
echo "$out/lib"
