#!/usr/bin/env bash
# On a machine of several GPUs: how quale scales over them.
#
#   scripts/device/multi_gpu_bench.sh BIN_DIR [--counts "1 2 4"] [--backend cuda] [--rounds 2]
#       [--length-1080p 7200] [--length-4k 1920] [--no-bench]
#
# BIN_DIR holds quale, quale-bench and quale-sample.  For every case (the
# model or metric set at a resolution) and every GPU count G it measures
#   tool:  `quale --gpu 0,..,G-1` end to end on y4m files in /dev/shm (the
#          frames split in G parts, each read by its own readers), the
#          median wall clock of --rounds runs, and whether its file equals
#          the one-GPU file (all but the fps line and the provenance);
#   gpus:  G quale-bench processes at once, one per GPU, frames in memory:
#          the sum of their steady states, what the GPUs give with no input
#          path at all.
# Then two processes sharing GPU 0 each write the file of a process alone.
set -uo pipefail
bin=$1
shift
counts="1 2 4" backend=cuda rounds=2 length_1080p=7200 length_4k=1920 bench=1
while (($#)); do
    case $1 in
        --length-1080p) length_1080p=$2; shift 2 ;;
        --length-4k) length_4k=$2; shift 2 ;;
        --no-bench) bench=0; shift ;;
        --counts) counts=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
have=$(nvidia-smi -L | wc -l)
work=/dev/shm/quale-multi-gpu
mkdir -p "$work"

# quale-sample draws some 7 frames a second at 1080p: a few distinct frames
# are drawn, then repeated to the clip's length (the frames after the
# header are whole "FRAME" records, so copies of them are a longer clip).
make_clip() { # name width height distinct frames
    local dir=$work/$1.$5
    [[ -s $dir/sample_dist.y4m ]] && return
    "$bin/quale-sample" --width "$2" --height "$3" --frames "$4" "$dir.drawn" >/dev/null
    mkdir -p "$dir"
    for f in sample_ref sample_dist; do
        local src=$dir.drawn/$f.y4m header
        header=$(head -c 200 "$src" | head -n 1 | wc -c)
        head -c "$header" "$src" >"$dir/$f.y4m"
        for ((i = 0; i < $5 / $4; i++)); do tail -c +$((header + 1)) "$src"; done >>"$dir/$f.y4m"
    done
    rm -rf "$dir.drawn"
}
make_clip 1080p 1920 1080 60 "$length_1080p"
make_clip 4k 3840 2160 24 "$length_4k"
declare -A frames=([1080p]=$(($length_1080p / 60 * 60)) [4k]=$(($length_4k / 24 * 24)))
declare -A bench_res=([1080p]=1080p [4k]=4k)

full=(--feature psnr --feature psnr_hvs --feature float_ssim --feature float_ms_ssim
      --feature ciede --feature float_ansnr --feature float_moment --feature cambi
      --feature float_psnr --feature float_vif --feature float_adm --feature float_motion)
cases=("v0.6.1 1080p|1080p|-m version=vmaf_v0.6.1"
       "v0.6.1 4K|4k|-m version=vmaf_v0.6.1"
       "v1 4K|4k|-m version=vmaf_v1.0.16_1d5h_2160"
       "full set 1080p|1080p|-n ${full[*]}")

# same_scores A B: the two JSON files are equal but their rate and
# provenance (the command line, the device)
same_scores() {
    python3 - "$1" "$2" <<'PY'
import json, sys
def body(path):
    doc = json.load(open(path)); doc.pop("fps", None); doc.pop("provenance", None); return doc
sys.exit(body(sys.argv[1]) != body(sys.argv[2]))
PY
}

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

printf '%-16s %4s %10s %8s %10s %8s %10s %s\n' case gpus "tool fps" "start s" "steady" "x one" \
    "gpus fps" "same file"
for c in "${cases[@]}"; do
    IFS='|' read -r name res args <<<"$c"
    n=${frames[$res]}
    clip=$work/$res.$n
    one_tool=""
    for g in $counts; do
        ((g > have)) && continue
        list=$(seq -s, 0 $((g - 1)))
        out=$work/out.$g.json
        times=()
        for ((r = 0; r < rounds; r++)); do
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086
            "$bin/quale" -r "$clip/sample_ref.y4m" -d "$clip/sample_dist.y4m" $args \
                --backend "$backend" --gpu "$list" -q --json -o "$out" 2>"$work/err" ||
                { echo "$name on $g GPUs failed:"; cat "$work/err"; }
            t1=$(date +%s.%N)
            times+=("$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {print n / (b - a)}')")
        done
        tool=$(printf '%s\n' "${times[@]}" | median)
        wall=$(awk -v n="$n" -v f="$tool" 'BEGIN {print n / f}')
        starts=()
        for ((r = 0; r < rounds; r++)); do
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086
            "$bin/quale" -r "$clip/sample_ref.y4m" -d "$clip/sample_dist.y4m" $args \
                --backend "$backend" --gpu "$list" --frame_cnt 8 -q --json -o "$work/start.json" \
                2>/dev/null
            t1=$(date +%s.%N)
            starts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
        done
        start=$(printf '%s\n' "${starts[@]}" | median)
        steady=$(awk -v n="$n" -v w="$wall" -v s="$start" 'BEGIN {print (n - 8) / (w - s)}')
        same=yes
        if ((g == 1)); then
            cp "$out" "$work/out.one.json"
        elif ! same_scores "$out" "$work/out.one.json"; then
            same=NO
        fi
        # the GPUs alone: one quale-bench per GPU at once, frames in memory
        pids=()
        for ((k = 0; k < g * bench; k++)); do
            # shellcheck disable=SC2086
            CUDA_VISIBLE_DEVICES=$k "$bin/quale-bench" --backend "$backend" \
                --resolution "${bench_res[$res]}" --frames $((n > 600 ? 600 : n)) \
                ${args/-m /--model } >"$work/bench.$k.json" 2>"$work/bench.$k.err" &
            pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p"; done
        gpus=0
        for ((k = 0; k < g * bench; k++)); do
            f=$(grep -o '"steady_fps": [0-9.]*' "$work/bench.$k.json" | head -1 | awk '{print $2}')
            gpus=$(awk -v a="$gpus" -v b="${f:-0}" 'BEGIN {print a + b}')
        done
        [[ -z $one_tool ]] && one_tool=$steady
        printf '%-16s %4d %10.0f %8.2f %10.0f %8.2f %10.0f %s\n' "$name" "$g" "$tool" "$start" \
            "$steady" "$(awk -v a="$steady" -v b="$one_tool" 'BEGIN {print a / b}')" "$gpus" "$same"
    done
done

# Two processes on one GPU at once: each writes the file of a process alone.
clip=$work/1080p.${frames[1080p]}
"$bin/quale" -r "$clip/sample_ref.y4m" -d "$clip/sample_dist.y4m" --backend "$backend" \
    --gpu_device 0 -q --json -o "$work/alone.json"
"$bin/quale" -r "$clip/sample_ref.y4m" -d "$clip/sample_dist.y4m" --backend "$backend" \
    --gpu_device 0 -q --json -o "$work/shared.a.json" &
a=$!
"$bin/quale" -r "$clip/sample_ref.y4m" -d "$clip/sample_dist.y4m" --backend "$backend" \
    --gpu_device 0 -q --json -o "$work/shared.b.json" &
b=$!
wait $a; ra=$?
wait $b; rb=$?
for f in shared.a shared.b; do
    if ((ra || rb)) || ! same_scores "$work/$f.json" "$work/alone.json"; then
        echo "two processes on GPU 0: $f differs or failed (exit $ra, $rb)"
    else
        echo "two processes on GPU 0: $f = the file of a process alone"
    fi
done
