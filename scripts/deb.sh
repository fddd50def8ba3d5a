#!/usr/bin/env bash
# Makes quale's Debian package from a build tree that is built already,
# without building again: meson installs it into a staging root under
# /usr, and dpkg-deb packs that with the project's debian/ files (control,
# changelog, copyright).  The Debian way, which builds from the source, is
# `dpkg-buildpackage -us -uc -b` (debian/rules); both make the same package.
#
#   scripts/deb.sh BUILD_DIR [OUT_DIR]
#
# The package holds the tool (bin/quale), libquale (shared, static, its
# header quale/quale.h and quale.pc), libvmaf.so.3 with libvmaf's headers
# and libvmaf.pc, and the copyright with the VMAF models' licence.  Its
# Depends are what dpkg-shlibdeps finds the binaries linked to; FFmpeg's
# libraries and the GPU runtimes, which quale loads with dlopen, are
# Recommends and Suggests (debian/control).  Writes
# OUT_DIR/quale_VERSION_ARCH.deb (OUT_DIR: BUILD_DIR) and prints its path
# on the last line.  Installs Debian's dpkg-dev (dpkg-shlibdeps,
# dpkg-gencontrol) where it is missing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $# -le 2 && -f ${1}/build.ninja ]] ||
    { echo "usage: scripts/deb.sh BUILD_DIR [OUT_DIR] (BUILD_DIR: a meson build directory, built)" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$(mkdir -p "${2:-$build}" && cd "${2:-$build}" && pwd)
command -v dpkg-shlibdeps >/dev/null || apt_install dpkg-dev

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
root=$work/root

# The build's own install, wherever its prefix is, then moved under /usr:
# nothing in the binaries names the prefix (the models are built in), the
# pkg-config files name it once, in their prefix= line.
meson install -C "$build" --destdir "$stage" --no-rebuild --quiet --strip >/dev/null
prefix=$(meson introspect "$build" --buildoptions |
         python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
[[ -d $stage$prefix ]] || { echo "deb.sh: meson installed nothing under $prefix" >&2; exit 1; }
mkdir -p "$root"
cp -a "$stage$prefix" "$root/usr"
find "$root/usr" -name '*.pc' -exec sed -i "s|^prefix=.*|prefix=/usr|" {} +
# Every installed file must be under the prefix (a libdir given as an
# absolute path outside it would not be).
outside=$(find "$stage" ! -type d ! -path "$stage$prefix/*" | head -1)
[[ -z $outside ]] ||
    { echo "deb.sh: the build installs ${outside#$stage} outside its prefix $prefix" >&2; exit 1; }

# The package's version is debian/changelog's, which must be the project's.
version=$(dpkg-parsechangelog -l"$src/debian/changelog" -SVersion)
project=$(meson introspect "$build" --projectinfo |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[[ ${version%%-*} == "$project" ]] ||
    { echo "deb.sh: debian/changelog is at $version, the project at $project: add a changelog entry" >&2; exit 1; }

doc=$root/usr/share/doc/quale
mkdir -p "$doc" "$root/DEBIAN"
cp "$src/debian/copyright" "$doc/copyright"
gzip -9n -c "$src/debian/changelog" >"$doc/changelog.gz"

# Depends from the binaries (dpkg-shlibdeps reads debian/control, so it
# runs in the source tree, writing only to $work).
mapfile -t elves < <(find "$root/usr" -type f \( -name '*.so*' -o -perm -u+x \) \
                     -exec sh -c 'head -c4 "$1" | grep -q ELF' sh {} \; -print)
mapfile -t libdirs < <(find "$root/usr/lib" -maxdepth 1 -type d -printf '-l%p\n')
(cd "$src" && dpkg-shlibdeps -T"$work/substvars" "${libdirs[@]}" "${elves[@]}" 2>"$work/shlibdeps.log") ||
    { cat "$work/shlibdeps.log" >&2; exit 1; }
echo "misc:Depends=" >>"$work/substvars"
echo "ffmpeg:Recommends=$("$src/debian/ffmpeg-recommends.sh")" >>"$work/substvars"
(cd "$src" && dpkg-gencontrol -pquale -c"$src/debian/control" -l"$src/debian/changelog" \
    -T"$work/substvars" -P"$root" -f"$work/files")
# ldconfig runs once dpkg has put the libraries in place (what dh_makeshlibs
# adds to a library's package); the shlibs file tells packages built
# against these libraries what to depend on.
echo "activate-noawait ldconfig" >"$root/DEBIAN/triggers"
find "$root/usr/lib" -name 'lib*.so.*' -type f | while read -r lib; do
    soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
    echo "${soname%%.so.*} ${soname##*.so.} quale (>= $version)"
done | sort -u >"$root/DEBIAN/shlibs"
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"

arch=$(dpkg --print-architecture)
deb=$out/quale_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
