#!/usr/bin/env bash
# On a machine of several GPUs: `quale batch --gpu all` against the same
# catalog on one GPU (docs/benchmarks.md, "Every GPU of a host").
#
#   scripts/device/batch_gpus.sh --bin DIR [--backends cuda,vulkan] [--pairs N] [--frames N]
#       [--h264 CLIP --h264-pairs N]
#
# DIR holds quale and quale-sample.  The raw catalog is one 1080p pair of
# --frames frames (quale-sample's scene, raw 4:2:0 in the page cache) scored
# --pairs times under distinct output names; --h264 CLIP scores a compressed
# clip against itself --h264-pairs times (FFmpeg's libraries on
# LD_LIBRARY_PATH; NVDEC on the CUDA backend, so each GPU decodes its own
# pairs).  For each catalog: seconds and fps on GPU 0 alone, on every GPU,
# the ratio to N x one GPU, and whether the outputs of the two runs are
# equal (but the fps line and the provenance: command line, device).  Vulkan needs .gl/*.deb.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin="" backends=cuda,vulkan pairs=200 frames=120 h264="" h264_pairs=50
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --h264) h264=$(realpath "$2"); shift 2 ;;
        --h264-pairs) h264_pairs=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $bin ]] || { echo "--bin DIR is needed" >&2; exit 2; }
quale=$(realpath "$bin/quale")
source scripts/device/vulkan_env.sh
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/quale-sample" --width 1920 --height 1080 --frames "$frames" --raw "$work" >/dev/null
ref=$(ls "$work"/*ref*.yuv) dist=$(ls "$work"/*dist*.yuv)
cat "$ref" "$dist" >/dev/null # into the page cache

# catalog NAME N REF DIST OPTIONS OUTDIR: a catalog of N pairs writing into OUTDIR
catalog() {
    mkdir -p "$work/$6"
    python3 - "$work/$1.json" "$2" "$3" "$4" "$5" "$work/$6" <<'PY'
import json, sys
path, n, ref, dist, options, folder = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
json.dump([{"ref": ref, "dist": dist, "output": f"{folder}/o{i:04}.json", "options": options}
           for i in range(n)], open(path, "w"))
PY
}

# timed NAME GPU: seconds of `quale batch --gpu GPU` over catalog NAME
timed() {
    local start end
    start=$(date +%s.%N)
    "$quale" batch -q --force --gpu "$2" "$work/$1.json" 2>"$work/$1.err" ||
        { tail -5 "$work/$1.err" >&2; echo 0; return; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.3f}')"
}

# row LABEL NAME OPTIONS REF DIST PAIRS FRAMES
row() {
    local label=$1 name=$2 options=$3 r=$4 d=$5 n=$6 f=$7 one all same
    catalog "$name.one" "$n" "$r" "$d" "$options" "$name.one.out"
    catalog "$name.all" "$n" "$r" "$d" "$options" "$name.all.out"
    timed "$name.one" 0 >/dev/null # warm: the pipeline cache, the driver's first start
    one=$(timed "$name.one" 0)
    all=$(timed "$name.all" all)
    same=$(python3 - "$work/$name.one.out" "$work/$name.all.out" <<'PY'
import json, os, sys
a, b = sys.argv[1:]
names = sorted(os.listdir(a))
def body(path): # all but the rate and the provenance (command line, device)
    doc = json.load(open(path)); doc.pop("fps", None); doc.pop("provenance", None); return doc
print("equal" if names == sorted(os.listdir(b)) and
      all(body(os.path.join(a, f)) == body(os.path.join(b, f)) for f in names) else "DIFFER")
PY
)
    python3 -c "
n, f, one, all, g = $n, $f, $one, $all, $gpus
print(f'{\"$label\":24} {n:4} pairs x {f:4}: GPU 0 {one:7.2f} s {n*f/one:6.0f} fps; '
      f'--gpu all ({g}) {all:7.2f} s {n*f/all:6.0f} fps = {one/all/g:.2f} x {g} x one GPU; '
      f'outputs $same')"
}

nvidia-smi --query-gpu=index,name --format=csv,noheader
IFS=, read -ra list <<<"$backends"
for b in "${list[@]}"; do
    row "$b raw 1080p" "raw_$b" "--backend $b -w 1920 -h 1080 -p 420 -b 8" "$ref" "$dist" \
        "$pairs" "$frames"
    if [[ -n $h264 ]]; then
        f=$("$quale" -r "$h264" -d "$h264" --backend "$b" --json -o - -q 2>/dev/null |
            python3 -c 'import json,sys; print(len(json.load(sys.stdin)["frames"]))')
        row "$b H.264" "h264_$b" "--backend $b" "$h264" "$h264" "$h264_pairs" "$f"
    fi
done
