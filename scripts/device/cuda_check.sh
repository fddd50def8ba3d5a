#!/usr/bin/env bash
# On a CUDA machine: build, run the GPU parity harness (random frames and the
# corpus subset in .device/, when carried) and the benchmark, and print a
# short table.  Logs go to $OUT when it is set.
#
#   scripts/device/cuda_check.sh [parity|bench|all] [extra quale-bench args]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/quale-out}
mkdir -p "$out"
what=${1:-all}
shift || true

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if [[ ! -f build-gpu/build.ninja ]]; then
    meson setup build-gpu -Dbuildtype=release >"$out/setup.log" 2>&1 || { tail -30 "$out/setup.log"; exit 1; }
fi
if ! ninja -C build-gpu >"$out/build.log" 2>&1; then
    grep -E "error|FAILED" "$out/build.log" | head -30
    exit 1
fi
build-gpu/tools/quale --list-features --json | python3 -c \
    'import json,sys; print("twins:", *[m["name"] for m in json.load(sys.stdin) if "cuda" in m["backends"]])'

status=0
if [[ $what == parity || $what == all ]]; then
    corpus=()
    if [[ -d .device/cache ]]; then
        mkdir -p /tmp/quale-corpus
        for f in .device/cache/*.xz; do
            python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' \
                "$f" "/tmp/quale-corpus/$(basename "$f" .xz)"
        done
        corpus=(--shared .device/shared --cache /tmp/quale-corpus --max-frames 3)
    fi
    build-gpu/tests/gpu_parity --backend cuda --tolerance tests/tolerance.json "${corpus[@]}" \
        >"$out/parity.txt" 2>&1
    status=$?
    grep -v '^ok' "$out/parity.txt" | head -40
    echo "parity: $(tail -1 "$out/parity.txt")"
fi
if [[ $what == bench || $what == all ]]; then
    build-gpu/tools/quale-bench --backend cpu,cuda --cli build-gpu/tools/quale "$@" \
        >"$out/bench.json" 2>"$out/bench.err"
    cat "$out/bench.err" | head -5
    python3 - "$out/bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'backend':8} {'size':6} {'startup ms':>10} {'steady fps':>11} {'cli fps':>8}")
for r in d["results"]:
    if "error" in r:
        print(f"{r['backend']:8} {r['resolution']:6} error: {r['error']}")
        continue
    print(f"{r['backend']:8} {r['resolution']:6} {r['startup_ms']:10.1f} {r['steady_fps']:11.1f} {r.get('cli_fps', 0):8.1f}")
PY
fi
exit $status
