#!/usr/bin/env bash
# On a GPU machine: where the tool's frames wait.  The quale tool's own
# scoring rate on raw files in the page cache (the "fps" of its JSON: from
# the first frame read to the flush, its start left out) beside
# quale-bench's in-memory rate, per backend, size and number of reader
# lanes, and split in two parts on the one GPU (--gpu 0,0: two contexts,
# readers and senders side by side); with the page cache's own read rate
# (one reader, cat) beside it, and where one run's sending thread waited
# (QUALE_RUN_STAGE_TIMES: the readers' frames, sending, the flush)
# (docs/benchmarks.md, "The tool against the engine").
#
#   scripts/device/tool_rate.sh --bin DIR [--backends cuda,vulkan] [--sizes 1080p:1200,4k:300]
#       [--lanes auto,1,2,4,6] [--repeat N]
#
# DIR holds quale, quale-bench and quale-sample.  The clips are 60 frames of
# quale-sample's scene repeated.  Vulkan needs .gl/*.deb.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin="" backends=cuda,vulkan sizes=1080p:1200,4k:300 lanes=auto,1,2,4,6 repeat=3
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --lanes) lanes=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $bin ]] || { echo "--bin DIR is needed" >&2; exit 2; }
quale=$(realpath "$bin/quale") bench=$(realpath "$bin/quale-bench") sample=$(realpath "$bin/quale-sample")
source scripts/device/vulkan_env.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
extra=() # more flags for tool_fps's runs

# median of the tool's JSON fps over --repeat runs: tool_fps W H ENV...
tool_fps() {
    local w=$1 h=$2
    shift 2
    for ((i = 0; i < repeat; i++)); do
        env "$@" "$quale" -r "$work/ref.yuv" -d "$work/dist.yuv" -w "$w" -h "$h" -p 420 -b 8 -q \
            --json -o "$work/out.json" --backend "$backend" "${extra[@]}" 2>/dev/null &&
            python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fps"])' "$work/out.json"
    done | sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : 0}'
}

IFS=, read -ra size_list <<<"$sizes"
IFS=, read -ra backend_list <<<"$backends"
IFS=, read -ra lane_list <<<"$lanes"
for entry in "${size_list[@]}"; do
    size=${entry%%:*} frames=${entry##*:}
    case $size in
        1080p) w=1920 h=1080 ;;
        4k) w=3840 h=2160 ;;
        *) echo "size $size: 1080p or 4k" >&2; exit 2 ;;
    esac
    # 60 frames of the synthetic scene (it is slow to make), repeated
    rm -f "$work"/*.yuv
    "$sample" --width $w --height $h --frames 60 --raw "$work" >/dev/null
    for role in ref dist; do
        for ((k = 0; k < (frames + 59) / 60; k++)); do cat "$work"/sample_$role.yuv; done |
            head -c $((w * h * 3 / 2 * frames)) >"$work/$role.yuv"
    done
    rm -f "$work"/sample_*.yuv
    cat "$work/ref.yuv" "$work/dist.yuv" >/dev/null
    start=$(date +%s.%N)
    cat "$work/ref.yuv" "$work/dist.yuv" >/dev/null
    end=$(date +%s.%N)
    bytes=$(($(stat -c %s "$work/ref.yuv") * 2))
    python3 -c "print(f'$size, $frames frames: the page cache to one reader (cat): {$bytes / ($end - $start) / 1e9:.1f} GB/s')"
    for backend in "${backend_list[@]}"; do
        steady=$("$bench" --backend "$backend" --resolution "$size" --frames "$frames" 2>/dev/null |
                 python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["steady_fps"])')
        line="$size $backend: in memory $steady fps; the tool"
        for l in "${lane_list[@]}"; do
            if [[ $l == auto ]]; then fps=$(tool_fps $w $h); else fps=$(tool_fps $w $h QUALE_READ_LANES=$l); fi
            line+=" lanes=$l $fps"
        done
        if [[ $backend == vulkan ]]; then
            line+="; uploads on the lanes' queues $(tool_fps $w $h QUALE_VULKAN_UPLOAD_QUEUE=0)"
        fi
        extra=(--gpu 0,0)
        line+="; two parts on the GPU (--gpu 0,0) $(tool_fps $w $h)"
        extra=()
        # one more run, lanes auto: where its sending thread's time went
        split=$(QUALE_RUN_STAGE_TIMES=1 "$quale" -r "$work/ref.yuv" -d "$work/dist.yuv" -w "$w" \
                -h "$h" -p 420 -b 8 -q --json -o "$work/out.json" --backend "$backend" 2>&1 |
                grep -o "score: .*")
        line+="; ${split:-no stage times}"
        echo "$line"
    done
done
