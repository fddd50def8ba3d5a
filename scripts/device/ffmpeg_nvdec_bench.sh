#!/usr/bin/env bash
# On a GPU machine: FFmpeg's libvmaf_cuda filter on frames that never leave
# the GPU (both files decoded by NVDEC, scale_cuda to planar 4:2:0), with
# quale's libvmaf.so.3 and with another libvmaf.so.3 beside it (libvmaf's
# own CUDA build, the peer), alternating, three runs each; then quale's
# tool on the same files.  docs/benchmarks.md, "NVDEC".
#
#   scripts/device/ffmpeg_nvdec_bench.sh FFMPEG QUALE_LIBDIR PEER_LIBDIR QUALE_TOOL \
#                                        REF DIST [REF DIST ...]
#
# FFMPEG is the client of `scripts/ffmpeg-client.sh --nvdec`; the tool
# needs FFmpeg's shared libraries on LD_LIBRARY_PATH already.  Prints one
# line per run: the whole process's wall clock and FFmpeg's own -benchmark
# time (rtime, without the process's start), as frames per second.
set -uo pipefail
ffmpeg=${1:?usage: ffmpeg_nvdec_bench.sh FFMPEG QUALE_LIBDIR PEER_LIBDIR QUALE_TOOL REF DIST ...}
quale_lib=${2:?} peer_lib=${3:?} tool=${4:?}
shift 4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

frames_of() { # the distorted file's frame count, from quale's own run
    "$tool" -r "$1" -d "$2" --backend cuda -n --feature psnr --json -o - -q 2>/dev/null |
        python3 -c 'import json,sys; print(len(json.load(sys.stdin)["frames"]))'
}

filter_run() { # LIBDIR REF DIST FRAMES
    local start end out
    start=$(date +%s.%N)
    out=$(LD_LIBRARY_PATH=$1 "$ffmpeg" -nostdin -hide_banner -benchmark \
          -init_hw_device cuda=gpu -filter_hw_device gpu \
          -hwaccel cuda -hwaccel_device gpu -hwaccel_output_format cuda -i "$3" \
          -hwaccel cuda -hwaccel_device gpu -hwaccel_output_format cuda -i "$2" \
          -lavfi "[0:v]setpts=N/(24*TB),scale_cuda=format=yuv420p[d];[1:v]setpts=N/(24*TB),scale_cuda=format=yuv420p[r];[d][r]libvmaf_cuda" \
          -f null - 2>&1)
    local rc=$?
    end=$(date +%s.%N)
    if ((rc)); then
        echo "failed ($rc): $(tail -c 400 <<<"$out")"
        return
    fi
    local rtime score
    rtime=$(grep -o 'rtime=[0-9.]*' <<<"$out" | tail -1 | cut -d= -f2)
    score=$(grep -o 'VMAF score: [0-9.]*' <<<"$out" | tail -1)
    python3 -c "w=$end-$start; r=float('$rtime' or 'nan'); n=$4
print(f'{n/w:.0f} fps wall ({w:.2f} s), {n/r:.0f} fps rtime ({r:.2f} s), $score')"
}

tool_run() { # REF DIST FRAMES
    local start end
    start=$(date +%s.%N)
    "$tool" -r "$1" -d "$2" --backend cuda -q -o /dev/null || { echo "failed"; return; }
    end=$(date +%s.%N)
    python3 -c "w=$end-$start; print(f'{$3/w:.0f} fps wall ({w:.2f} s)')"
}

while (($# >= 2)); do
    ref=$1 dist=$2
    shift 2
    n=$(frames_of "$ref" "$dist")
    if [[ ! $n =~ ^[0-9]+$ ]]; then
        echo "== $(basename "$dist"): quale could not score the pair, so its frames are not known"
        continue
    fi
    echo "== $(basename "$dist") against $(basename "$ref"): $n frames, vmaf_v0.6.1"
    for rep in 1 2 3; do
        echo "  run $rep: libvmaf_cuda on quale:  $(filter_run "$quale_lib" "$ref" "$dist" "$n")"
        echo "  run $rep: libvmaf_cuda on libvmaf: $(filter_run "$peer_lib" "$ref" "$dist" "$n")"
        echo "  run $rep: quale tool, --backend cuda: $(tool_run "$ref" "$dist" "$n")"
    done
done
