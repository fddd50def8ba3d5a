#!/bin/sh
# Prints the Debian packages of the FFmpeg libraries quale was built
# against (src/input/decode.c loads libavformat.so.N and the others with
# dlopen when a compressed input comes, so they are recommended, not
# depended on; dpkg-shlibdeps cannot see them): "libavformat59, ...".
# Nothing when pkg-config does not find them (a build without them).
set -eu
sep=
for lib in avformat avcodec avutil swscale; do
    major=$(pkg-config --modversion "lib$lib" 2>/dev/null | cut -d. -f1) || exit 0
    [ -n "$major" ] || exit 0
    printf '%slib%s%s' "$sep" "$lib" "$major"
    sep=', '
done
echo
