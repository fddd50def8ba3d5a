#!/usr/bin/env bash
# Builds quale, makes a small synthetic reference/distorted pair with the
# project's own generator, and scores it: VMAF plus PSNR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/build.sh
out=build/sample
build/tools/quale-sample --width 640 --height 360 --frames 24 "$out" >/dev/null
echo "Scoring $out/sample_dist.y4m against $out/sample_ref.y4m:"
build/tools/quale -r "$out/sample_ref.y4m" -d "$out/sample_dist.y4m" --feature psnr \
    --json -o "$out/scores.json" -q
build/tools/quale -r "$out/sample_ref.y4m" -d "$out/sample_dist.y4m" --feature psnr -q
echo "Per-frame scores: $out/scores.json"
