#!/usr/bin/env bash
# On a GPU machine: quale batch against one quale process per pair, on the
# same files, for each backend asked (docs/benchmarks.md, "quale batch").
#
#   scripts/device/batch_bench.sh --bin DIR [--backends cuda,vulkan] [--pairs N] [--single-pairs N]
#       [--vulkan-pairs N] [--frames N] [--h264 CLIP --h264-pairs N] [--bench-frames N] [--no-fresh]
#
# DIR holds quale, quale-bench and quale-sample.  The pairs are one 1080p pair of --frames
# frames (quale-sample's scene, raw 4:2:0 in the page cache) scored --pairs
# times under distinct output names; quale-bench's in-memory rate is the
# ceiling.  --h264 CLIP scores a compressed clip against itself
# --h264-pairs times (FFmpeg's libraries on LD_LIBRARY_PATH).  Vulkan's
# per-process start is seconds, so its one-process-per-pair side runs
# --vulkan-pairs pairs and is scaled; the other backends' runs
# --single-pairs of the catalog's pairs (the time of one is what counts).
# The raw catalog is also scored by one worker, its context reset, and
# (but with --no-fresh) by one worker opening a context per pair.  Vulkan needs .gl/*.deb (unpacked
# here when present).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin="" backends=cuda pairs=200 single_pairs=50 vulkan_pairs=20 frames=120 h264="" h264_pairs=50 bench_frames=1200 fresh=1
while (($#)); do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        --single-pairs) single_pairs=$2; shift 2 ;;
        --vulkan-pairs) vulkan_pairs=$2; shift 2 ;;
        --frames) frames=$2; shift 2 ;;
        --h264) h264=$(realpath "$2"); shift 2 ;;
        --h264-pairs) h264_pairs=$2; shift 2 ;;
        --bench-frames) bench_frames=$2; shift 2 ;;
        --no-fresh) fresh=0; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $bin ]] || { echo "--bin DIR is needed" >&2; exit 2; }
quale=$(realpath "$bin/quale") bench=$(realpath "$bin/quale-bench")
source scripts/device/vulkan_env.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/quale-sample" --width 1920 --height 1080 --frames "$frames" --raw "$work" >/dev/null
ref=$(ls "$work"/*ref*.yuv) dist=$(ls "$work"/*dist*.yuv)
cat "$ref" "$dist" >/dev/null # into the page cache

# catalog NAME N REF DIST OPTIONS: a catalog of N pairs in $work/NAME/
catalog() {
    local name=$1 n=$2 r=$3 d=$4 options=$5
    mkdir -p "$work/$name"
    python3 - "$work/$name/catalog.json" "$n" "$r" "$d" "$options" <<'PY'
import json, sys
path, n, ref, dist, options = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
json.dump([{"ref": ref, "dist": dist, "output": f"o{i:04}.json", "options": options}
           for i in range(n)], open(path, "w"))
PY
}

# one_per_pair NAME N: the catalog's first N pairs, one quale each; seconds
one_per_pair() {
    local name=$1 n=$2
    python3 - "$quale" "$work/$name/catalog.json" "$n" <<'PY'
import json, os, shlex, subprocess, sys, time
quale, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
folder = os.path.dirname(path)
start = time.perf_counter()
for p in json.load(open(path))[:n]:
    subprocess.run([quale, "-r", p["ref"], "-d", p["dist"], *shlex.split(p["options"]), "-q",
                    "-o", os.path.join(folder, "single_" + p["output"])], check=True,
                   stderr=subprocess.DEVNULL)
print(f"{time.perf_counter() - start:.3f}")
PY
}

# in_batch NAME [ENV...]: the whole catalog by quale batch, with the flags
# in $batch_flags (each pair's stage times in NAME/batch.err); seconds
in_batch() {
    local start end name=$1
    shift
    start=$(date +%s.%N)
    # shellcheck disable=SC2086 # the flags are words
    env QUALE_RUN_STAGE_TIMES=1 "$@" "$quale" batch -q --force ${batch_flags:-} \
        "$work/$name/catalog.json" 2>"$work/$name/batch.err" ||
        { tail -5 "$work/$name/batch.err"; return 1; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.3f}')"
}

# stage_times NAME: the median milliseconds of each stage over the batch's
# pairs but the first (which opens the context)
stage_times() {
    python3 - "$work/$1/batch.err" <<'PY'
import re, statistics, sys
rows = [dict((k, float(v)) for k, v in re.findall(r"(\w+) ([0-9.]+)", line.split(":", 2)[2]))
        for line in open(sys.argv[1]) if line.startswith("quale: stages")]
if len(rows) > 1:
    print("stages, median ms a pair after the first: " +
          ", ".join(f"{k} {statistics.median(r[k] for r in rows[1:]):.2f}" for k in rows[1]))
PY
}

table=()
IFS=, read -ra list <<<"$backends"
for b in "${list[@]}"; do
    steady=$("$bench" --backend "$b" --resolution 1080p --frames "$bench_frames" 2>/dev/null |
             python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["steady_fps"])')
    n=$((single_pairs < pairs ? single_pairs : pairs)) count=$pairs
    [[ $b == vulkan ]] && n=$vulkan_pairs
    catalog "raw_$b" "$count" "$ref" "$dist" "--backend $b -w 1920 -h 1080 -p 420 -b 8"
    single=$(one_per_pair "raw_$b" "$n")
    # one worker, a context per pair; one worker, the context reset; the
    # default (two workers on the GPU)
    fresh=0 fresh_stages="(not run: --no-fresh)"
    if ((fresh)); then
        fresh=$(batch_flags="--jobs 1" in_batch "raw_$b" QUALE_BATCH_REUSE=0)
        fresh_stages=$(stage_times "raw_$b")
    fi
    serial=$(batch_flags="--jobs 1" in_batch "raw_$b")
    serial_stages=$(stage_times "raw_$b")
    whole=$(in_batch "raw_$b")
    table+=("$(python3 -c "
p, n, f, s, w, st, fr, se = $count, $n, $frames, $single, $whole, $steady, $fresh, $serial
per = s / n
print(f'{\"$b\":7} raw 1080p  {p:4} pairs x {f} frames: batch {w:7.1f} s ({p*f/w:6.0f} fps, '
      f'{p*f/w/st:.2f}x in-memory {st:.0f}); one process per pair {per:.3f} s a pair '
      f'({f/per:6.0f} fps, over {n}): batch {per*p/w:.1f}x faster')
print(f'        --jobs 1, context reset {se:.1f} s ({p*f/se:.0f} fps, {p*f/se/st:.2f}x); '
      + (f'--jobs 1, a context per pair {fr:.1f} s ({p*f/fr:.0f} fps)' if fr else ''))")")
    table+=("        --jobs 1, reset: $serial_stages" "        --jobs 1, context per pair: $fresh_stages")
    if [[ -n $h264 ]]; then
        catalog "h264_$b" "$h264_pairs" "$h264" "$h264" "--backend $b"
        frames_h264=$("$quale" -r "$h264" -d "$h264" --backend "$b" --json -o - -q 2>/dev/null |
                      python3 -c 'import json,sys; print(len(json.load(sys.stdin)["frames"]))')
        n=$((h264_pairs < single_pairs ? h264_pairs : single_pairs))
        [[ $b == vulkan ]] && n=$((n < vulkan_pairs ? n : vulkan_pairs))
        single=$(one_per_pair "h264_$b" "$n")
        serial=$(batch_flags="--jobs 1" in_batch "h264_$b")
        serial_stages=$(stage_times "h264_$b")
        whole=$(in_batch "h264_$b")
        table+=("$(python3 -c "
p, n, f, s, w = $h264_pairs, $n, $frames_h264, $single, $whole
per = s / n
print(f'{\"$b\":7} H.264      {p:4} pairs x {f} frames: batch {w:7.1f} s ({p*f/w:6.0f} fps); '
      f'one process per pair {per:.3f} s a pair ({f/per:6.0f} fps): batch {per*p/w:.1f}x faster; '
      f'--jobs 1 {$serial:.1f} s')")")
        table+=("        --jobs 1: $serial_stages")
        table+=("        $(stage_times "h264_$b")")
    fi
    # the batch's outputs are the single runs' but the timing and -q
    python3 - "$work/raw_$b" <<'PY'
import json, os, sys
folder = sys.argv[1]
singles = sorted(f for f in os.listdir(folder) if f.startswith("single_"))
same = all(json.load(open(os.path.join(folder, f)))["frames"] ==
           json.load(open(os.path.join(folder, f[7:])))["frames"] for f in singles)
print(f"{os.path.basename(folder)}: {len(singles)} single runs' frames equal the batch's: {same}")
PY
done
printf '%s\n' "${table[@]}"
