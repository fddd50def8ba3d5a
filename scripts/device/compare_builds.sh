#!/usr/bin/env bash
# On a GPU machine: the steady state of two builds side by side, for a
# change that must not cost speed.  The builds' quale-bench runs alternate
# (before, after, before, ...) so that both see the same machine, and the
# table gives each one's median and range over the rounds.
#
#   scripts/device/compare_builds.sh BEFORE_DIR AFTER_DIR [--backend cuda] [--rounds 5]
#
# A build directory holds quale-bench (and the library it was linked
# with, found through its rpath or LD_LIBRARY_PATH).  The cases: vmaf_v0.6.1
# at 1080p and 4K, VMAF v1 (cambi, SpEED, ADM, motion) at 1080p, and the
# full metric set at 1080p.
set -uo pipefail
before=$1 after=$2
shift 2
backend=cuda rounds=5
while (($#)); do
    case $1 in
        --backend) backend=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
full=(--feature psnr --feature psnr_hvs --feature float_ssim --feature float_ms_ssim
      --feature ciede --feature float_ansnr --feature float_moment --feature cambi
      --feature float_psnr --feature float_vif --feature float_adm --feature float_motion)
cases=("v0.6.1 1080p|--resolution 1080p --frames 600"
       "v0.6.1 4K|--resolution 4k --frames 300"
       "v1 1080p|--resolution 1080p --frames 300 --model version=vmaf_v1.0.16_3d0h"
       "full set 1080p|--resolution 1080p --frames 300 ${full[*]}")
results=$(mktemp)
for ((r = 0; r < rounds; r++)); do
    for c in "${cases[@]}"; do
        name=${c%%|*} args=${c#*|}
        for build in before after; do
            dir=$before
            [[ $build == after ]] && dir=$after
            # shellcheck disable=SC2086
            fps=$("$dir/quale-bench" --backend "$backend" --repeat 1 $args 2>/dev/null |
                  python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r.get("steady_fps", 0))')
            echo "$name|$build|${fps:-0}" >>"$results"
        done
    done
done
python3 - "$results" "$backend" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, build, fps = line.strip().split("|")
    rows.setdefault(name, {}).setdefault(build, []).append(float(fps))
print(f"{sys.argv[2]} steady state, fps: median (min-max) over rounds")
print(f"{'case':16} {'before':>24} {'after':>24} {'after/before':>13}")
for name, b in rows.items():
    cell = lambda v: f"{statistics.median(v):8.1f} ({min(v):.0f}-{max(v):.0f})"
    ratio = statistics.median(b["after"]) / max(statistics.median(b["before"]), 1e-9)
    print(f"{name:16} {cell(b['before']):>24} {cell(b['after']):>24} {ratio:13.3f}")
PY
rm -f "$results"
