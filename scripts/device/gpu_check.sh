#!/usr/bin/env bash
# On a GPU machine: the GPU parity harness (random frames, and the corpus
# subset in .device/ when carried) and the benchmark, for each backend, with
# a short table at the end.  Logs go to $OUT when it is set.
#
#   scripts/device/gpu_check.sh [--bin DIR] [--backends cuda,vulkan] [--skip-parity]
#                               [--bench-backends LIST|none] [-- quale-bench arguments]
# --bin DIR uses binaries built elsewhere (quale, quale-bench, gpu_parity);
# without it the tree is built here with meson.  Vulkan needs the loader:
# .gl/*.deb are unpacked first when present.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/quale-out}
mkdir -p "$out"
bin="" backends=cuda parity=1 bench_backends=""
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        --skip-parity) parity=0; shift ;;
        --bench-backends) bench_backends=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
source scripts/device/vulkan_env.sh
echo "Vulkan driver: ${VK_DRIVER_FILES:-none found}"
if [[ -z $bin ]]; then
    if [[ ! -f build-gpu/build.ninja ]]; then
        meson setup build-gpu -Dbuildtype=release >"$out/setup.log" 2>&1 || { tail -30 "$out/setup.log"; exit 1; }
    fi
    ninja -C build-gpu >"$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
    bin=build-gpu
    quale=$bin/tools/quale bench=$bin/tools/quale-bench parity_exe=$bin/tests/gpu_parity
    vif_vulkan_exe=$bin/tests/test_integer_vif_vulkan api_exe=$bin/tests/test_api
else
    quale=$bin/quale bench=$bin/quale-bench parity_exe=$bin/gpu_parity
    vif_vulkan_exe=$bin/test_integer_vif_vulkan api_exe=$bin/test_api
fi

status=0
corpus=()
if [[ $parity == 1 && -d .device/cache ]]; then
    mkdir -p /tmp/quale-corpus
    for f in .device/cache/*.xz; do
        python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' \
            "$f" "/tmp/quale-corpus/$(basename "$f" .xz)"
    done
    corpus=(--shared .device/shared --cache /tmp/quale-corpus --max-frames 3)
fi
IFS=, read -ra list <<<"$backends"
for b in "${list[@]}"; do
    "$quale" --list-features --json | python3 -c \
        "import json,sys; print('$b twins:', *[m['name'] for m in json.load(sys.stdin) if '$b' in m['backends']])"
    if [[ $parity == 1 ]]; then
        "$parity_exe" --backend "$b" --tolerance tests/tolerance.json "${corpus[@]}" >"$out/parity_$b.txt" 2>&1 || status=1
        grep -v '^ok' "$out/parity_$b.txt" | head -30
        echo "$b parity: $(tail -1 "$out/parity_$b.txt")"
        # Integer VIF's Vulkan arithmetic case by case (the device's own
        # division and doubles against the C).
        if [[ $b == vulkan && -x $vif_vulkan_exe ]]; then
            "$vif_vulkan_exe" >"$out/vif_vulkan.txt" 2>&1 || status=1
            echo "vulkan VIF arithmetic: $(tail -1 "$out/vif_vulkan.txt")"
        fi
    fi
done
# The API's checks, quale_reset() on every backend there is among them: a
# context reset between pairs scores as a fresh one, bit for bit.
if [[ -x ${api_exe:-} ]]; then
    "$api_exe" >"$out/api.txt" 2>&1 || status=1
    grep -E "check failed|not checked" "$out/api.txt" | head -10
    echo "API checks (quale_reset on the CPU, Vulkan and CUDA): $(tail -1 "$out/api.txt")"
fi
[[ $bench_backends == none ]] && exit $status
"$bench" --backend "${bench_backends:-cpu,$backends}" --cli "$quale" "$@" >"$out/bench.json" 2>"$out/bench.err"
head -5 "$out/bench.err"
python3 - "$out/bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'backend':8} {'size':6} {'startup ms':>10} {'steady fps':>11} {'cli fps':>8}")
for r in d["results"]:
    if "error" in r:
        print(f"{r['backend']:8} {r['resolution']:6} error: {r['error']}")
        continue
    print(f"{r['backend']:8} {r['resolution']:6} {r['startup_ms']:10.1f} {r['steady_fps']:11.1f} {r.get('cli_fps', 0):8.1f}")
    if r.get("per_metric_ms"):
        print("   ms/frame: " + ", ".join(f"{k} {v:.3f}" if v is not None else f"{k} -" for k, v in r["per_metric_ms"].items()))
PY
exit $status
