#!/usr/bin/env bash
# CPU speed of the quale tool by wall clock on make-bench.sh clips:
# vmaf_v0.6.1 with 1 thread and with every core at 1080p and 4K, and the
# single-thread ms per frame of each metric at 1080p.
#
#   scripts/bench_cpu.sh BENCH_DIR [QUALE]
# BENCH_DIR holds bench_1080p_ref.yuv etc. from ../shared/corpus/make-bench.sh.
set -euo pipefail
dir=$1
quale=${2:-build/tools/quale}
cores=$(nproc)

wall() { # prints the best of 3 wall-clock times of a command, in seconds
    local best=""
    for _ in 1 2 3; do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null
        t1=$(date +%s.%N)
        best=$(python3 -c "t=$t1-$t0; b='$best'; print(min(t, float(b)) if b else t)")
    done
    echo "$best"
}

run() { # size frames threads args...
    local size=$1 frames=$2 threads=$3
    shift 3
    local w=1920 h=1080
    [[ $size == 4k ]] && w=3840 h=2160
    wall "$quale" -r "$dir/bench_${size}_ref.yuv" -d "$dir/bench_${size}_x264crf30.yuv" \
        -w $w -h $h -p 420 -b 8 --threads "$threads" -q -o /dev/null "$@"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $cores cores"
printf "%-28s %6s %8s %10s\n" "run" "size" "threads" "fps"
for size in 1080p 4k; do
    frames=120
    [[ $size == 4k ]] && frames=60
    for threads in 1 "$cores"; do
        t=$(run $size $frames "$threads")
        printf "%-28s %6s %8s %10.1f\n" "vmaf_v0.6.1" $size "$threads" "$(python3 -c "print($frames/$t)")"
    done
done
echo
printf "%-16s %12s\n" "metric" "ms/frame"
base=$(run 1080p 120 1 -n --feature psnr=enable_chroma=false:enable_apsnr=false --frame_cnt 40)
for metric in psnr vif adm motion psnr_hvs float_ssim float_ms_ssim ciede float_ansnr float_moment \
              cambi float_psnr float_vif float_adm float_motion; do
    t=$(run 1080p 120 1 -n --feature "$metric" --frame_cnt 40)
    printf "%-16s %12.1f\n" "$metric" "$(python3 -c "print(max(0.0, ($t - $base) / 40 * 1000))")"
done
echo "(per metric: 40 frames, minus a luma-only PSNR run that measures reading)"
