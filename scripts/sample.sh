#!/usr/bin/env bash
# Builds quale, makes a small synthetic reference/distorted pair with the
# project's own generator, and scores it: VMAF plus PSNR.  Says each step
# as it starts: the first build takes minutes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -x build/tools/quale && -f build/build.ninja ]]; then
    echo "sample: bringing the build in build/ up to date" >&2
else
    echo "sample: installing what is missing from Debian's packages and building quale" \
         "in build/ (a few minutes, once)" >&2
fi
scripts/build.sh
out=build/sample
echo "sample: making a synthetic pair in $out (a pan over a procedural scene, 640x360," \
     "24 frames, and a distorted copy)" >&2
build/tools/quale-sample --width 640 --height 360 --frames 24 "$out" >/dev/null
echo "Scoring $out/sample_dist.y4m against $out/sample_ref.y4m:"
build/tools/quale -r "$out/sample_ref.y4m" -d "$out/sample_dist.y4m" --feature psnr \
    --json -o "$out/scores.json" -q
build/tools/quale -r "$out/sample_ref.y4m" -d "$out/sample_dist.y4m" --feature psnr -q
echo "Per-frame scores: $out/scores.json"
