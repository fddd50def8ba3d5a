#!/usr/bin/env bash
# Builds FFmpeg 7.1, from Debian trixie's source package, against quale's
# libvmaf face (libvmaf.so.3), as a test client: the libvmaf filter, the
# raw and y4m demuxers and the null muxer, nothing else.
#
#   scripts/ffmpeg-client.sh BUILD_DIR
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
build=$(cd "${1:?usage: scripts/ffmpeg-client.sh BUILD_DIR}" && pwd)
root=$build/ffmpeg-client
mkdir -p "$root"

need=()
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v xz >/dev/null || need+=(xz-utils)
if ((${#need[@]})); then
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# quale, installed as a user would have it (its libvmaf.pc included).
stage=$root/stage
rm -rf "$stage"
meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >/dev/null
pcdir=$(dirname "$(find "$stage" -name libvmaf.pc | head -1)")
libdir=$(dirname "$(find "$stage" -name 'libvmaf.so.3' | head -1)")
export PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_SYSROOT_DIR=$stage

# The source: trixie's ffmpeg source package, through a private apt setup
# (the machine's own sources are left alone).
apt=$root/apt
if ! ls "$root"/src/ffmpeg_7.1*.orig.tar.xz >/dev/null 2>&1; then
    mkdir -p "$apt/lists/partial" "$root/src"
    echo "deb-src http://deb.debian.org/debian trixie main" >"$apt/sources.list"
    opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt/lists" -o Debug::NoLocking=1)
    apt-get "${opts[@]}" update -qq
    (cd "$root/src" && apt-get "${opts[@]}" source --download-only -qq ffmpeg 2>/dev/null)
fi
tarball=$(ls "$root"/src/ffmpeg_7.1*.orig.tar.xz | sort -V | tail -1)
version=$(basename "$tarball" | sed 's/^ffmpeg_\(.*\)\.orig\.tar\.xz$/\1/')
tree=$root/$version
if [[ ! -x $tree/ffmpeg ]]; then
    rm -rf "$tree" && mkdir -p "$tree"
    tar -xJf "$tarball" -C "$tree" --strip-components=1
    (cd "$tree" && ./configure --disable-everything --disable-autodetect --disable-doc \
        --disable-network --disable-x86asm --disable-ffplay --disable-ffprobe \
        --disable-debug --enable-libvmaf \
        --enable-protocol=file,pipe \
        --enable-demuxer=rawvideo,yuv4mpegpipe \
        --enable-decoder=rawvideo,wrapped_avframe \
        --enable-encoder=wrapped_avframe,rawvideo \
        --enable-muxer=null \
        --enable-filter=libvmaf,scale,format,null,buffer,buffersink \
        --enable-swscale >"$tree/configure.log" 2>&1) ||
        { tail -20 "$tree/configure.log" >&2; exit 1; }
    make -C "$tree" -j"$(nproc)" ffmpeg >"$tree/make.log" 2>&1 ||
        { tail -20 "$tree/make.log" >&2; exit 1; }
fi
# ffmpeg finds quale's libvmaf.so.3 through this (printed for the test).
echo "LD_LIBRARY_PATH=$libdir"
echo "$tree/ffmpeg"
