#!/usr/bin/env bash
# On a GPU machine with torch: the Python package built against the
# machine's own python3 (its extension compiled there, linked with the
# libquale archives built elsewhere), scripts/device/python_cuda.py's checks
# and rates, and quale-bench's in-memory CUDA rate beside them, in one run.
#
#   scripts/device/python_check.sh --lib DIR [--bench PATH] [--frames N]
# DIR holds libquale.a and libquale_*.a (a release build's src/); PATH is a
# quale-bench of the same build.  The corpus subset comes from .device/.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/quale-out}
mkdir -p "$out"
lib="" bench="" frames=3000
while (($#)); do
    case $1 in
        --lib) lib=$2; shift 2 ;;
        --bench) bench=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $lib ]] || { echo "--lib DIR is needed" >&2; exit 2; }

pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[[ -f $pyinc/Python.h ]] || { echo "no Python.h in $pyinc: cannot build the extension" >&2; exit 1; }
pkg=/tmp/quale-python/quale
mkdir -p "$pkg"
cp python/quale/*.py python/quale/*.pyi "$pkg/"
cc -shared -fPIC -O2 -std=gnu17 -Iinclude -I"$pyinc" \
    python/quale/module.c python/quale/run.c python/quale/frames.c python/quale/arrays.c \
    -Wl,--start-group "$lib"/libquale*.a -Wl,--end-group -lm -ldl -lpthread \
    -o "$pkg/_quale$suffix" || exit 1

mkdir -p /tmp/quale-corpus
for f in .device/cache/*.xz; do
    python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' \
        "$f" "/tmp/quale-corpus/$(basename "$f" .xz)"
done
PYTHONPATH=/tmp/quale-python PYTHONUNBUFFERED=1 python3 scripts/device/python_cuda.py \
    --shared .device/shared --cache /tmp/quale-corpus --bench-frames "$frames" --out "$out"
status=$?
if [[ -n $bench ]]; then
    "$bench" --backend cuda --resolution 1080p --frames "$frames" --repeat 3 >"$out/bench.json" \
        2>"$out/bench.err"
    python3 - "$out/bench.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"  {'quale-bench in memory (peer)':32s} {r['steady_fps']:8.0f} fps")
PY
fi
exit $status
