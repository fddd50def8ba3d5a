#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (with
# LeakSanitizer), then a short CLI run under valgrind memcheck.  Zero
# errors, zero leaks, or it fails.
#
#   scripts/sanitize.sh [meson test arguments...]
#
# - build-sanitize/: a second build, -Db_sanitize=address,undefined, every
#   UBSan finding fatal (-fno-sanitize-recover).  Runs every test except the
#   golden and GPU suites (libvmaf parity on the whole corpus and the GPU
#   twins: they take minutes and add no new code paths; the GPU suite also
#   needs a device): unit tests, the robustness test, the fuzz replay, and
#   the CLI tests (whose tool is the sanitized one, so every CLI run of
#   them is checked, lavapipe's Vulkan runs included).
# - valgrind on build/ (the normal build; valgrind cannot run ASan
#   binaries): every metric and the default model on a small clip, two
#   threads, plus a few runs that fail (damaged input, bad model, full
#   disk), which must free everything too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/build.sh --test
if ! command -v valgrind >/dev/null 2>&1; then
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    echo "sanitize: installing valgrind" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH=$PATH:/usr/local/cuda/bin
fi

# ---- ASan + UBSan ---------------------------------------------------------
san=build-sanitize
if [[ ! -f $san/build.ninja ]]; then
    meson setup "$san" --buildtype=debugoptimized -Dwerror=true \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args="-fno-sanitize-recover=all -fno-omit-frame-pointer" \
        -Dcpp_args="-fno-sanitize-recover=all -fno-omit-frame-pointer" >/dev/null
fi
ninja -C "$san" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=print_suppressions=0
# Sanitized code runs 2-4 times slower: the same timeouts, scaled.
# The ffmpeg suite links an unsanitized FFmpeg to the library: it runs in
# the plain build; the libvmaf API's own test runs here.  The install
# suite packages and installs the plain build's binaries (not these).
meson test -C "$san" --print-errorlogs --no-suite golden --no-suite gpu --no-suite ffmpeg --no-suite install \
    --num-processes "$(nproc)" --timeout-multiplier 4 "$@"

# ---- valgrind memcheck ------------------------------------------------------
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/tools/quale-sample --width 224 --height 176 --frames 3 "$tmp" >/dev/null
ref=$tmp/sample_ref.y4m
dist=$tmp/sample_dist.y4m
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect)
# The tool runs its C kernels under valgrind (--cpumask 24: no AVX2, no
# AVX-512): valgrind does not emulate AVX-512, and its translator runs out
# of room on some of the AVX2 kernels' long unrolled blocks.  The SIMD
# kernels' memory use is checked above, under ASan, by checkasm and the
# sanitized suite.
C_ONLY=(--cpumask 24)
features=()
for metric in $(build/tools/quale --list-features --json |
                python3 -c 'import json,sys; print(" ".join(m["name"] for m in json.load(sys.stdin)))'); do
    features+=(--feature "$metric")
done
echo "valgrind: every metric and vmaf_v0.6.1 on 3 frames of 224x176"
"${vg[@]}" build/tools/quale "${C_ONLY[@]}" -r "$ref" -d "$dist" "${features[@]}" --threads 2 -q \
    --json -o "$tmp/out.json"

# Runs that fail: exit 1 (or 2), and still no memory error or leak (99).
expect_failure() {
    local what=$1
    shift
    local status=0
    "${vg[@]}" build/tools/quale "${C_ONLY[@]}" "$@" -q >/dev/null 2>"$tmp/err" || status=$?
    if [[ $status -ne 1 && $status -ne 2 ]]; then
        echo "valgrind: $what: exit $status" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    echo "valgrind: $what: exit $status, clean"
}
head -c -100 "$dist" >"$tmp/cut.y4m"
expect_failure "truncated distorted" -r "$ref" -d "$tmp/cut.y4m" --feature psnr
printf '{"model_dict": {"feature_names": ["psnr_y"], "norm_type": "none", "model": 1}}' >"$tmp/bad.json"
expect_failure "bad model" -r "$ref" -d "$dist" -m "path=$tmp/bad.json"
expect_failure "full disk" -r "$ref" -d "$dist" -n --feature psnr -o /dev/full
expect_failure "unknown option" -r "$ref" -d "$dist" -n --feature psnr=nope=1
expect_failure "an option by its alias" -r "$ref" -d "$dist" -n --feature cambi=cmxv=5
expect_failure "a misspelt metric (the nearest names)" -r "$ref" -d "$dist" -n --feature ssim
expect_failure "a misspelt model version" -r "$ref" -d "$dist" -m version=vmaf_v0.6
echo "valgrind: the summary of every feature asked for, with pooling methods"
"${vg[@]}" build/tools/quale "${C_ONLY[@]}" -r "$ref" -d "$dist" --feature psnr --feature float_ssim \
    --pool mean,p5 -q >/dev/null
echo "valgrind: cambi's heatmaps (a string option, files written by two threads)"
"${vg[@]}" build/tools/quale "${C_ONLY[@]}" -r "$ref" -d "$dist" -n --feature "cambi=heatmaps_path=$tmp/heat" \
    --threads 2 -q --json -o "$tmp/heat.json"
expect_failure "heatmaps under a file" -r "$ref" -d "$dist" -n \
    --feature "cambi=heatmaps_path=$tmp/out.json/heat"
echo "valgrind: quale batch (a CSV catalog: a good pair, quoted options, a missing video, a bad option)"
{
    echo "ref,dist,output,options"
    echo "$ref,$dist,$tmp/b1.json,\"${C_ONLY[*]} --feature 'psnr' -q\""
    echo "$ref,$tmp/none.y4m,$tmp/b2.json,${C_ONLY[*]}"
    echo "$ref,$dist,$tmp/b3.json,\"${C_ONLY[*]} --feature psnr=nope=1\""
} >"$tmp/catalog.csv"
status=0
"${vg[@]}" build/tools/quale batch -q "$tmp/catalog.csv" 2>"$tmp/err" || status=$?
if [[ $status -ne 1 || ! -s $tmp/b1.json ]]; then
    echo "valgrind: quale batch: exit $status (1 wanted, with b1.json written)" >&2
    cat "$tmp/err" >&2
    exit 1
fi
echo "valgrind: quale batch: exit 1, clean"
echo "sanitize: ASan, UBSan, LSan and valgrind found nothing"
