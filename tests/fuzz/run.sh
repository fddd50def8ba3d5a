#!/usr/bin/env bash
# Runs one fuzz target for a while (after tests/fuzz/build.sh).
#
#   tests/fuzz/run.sh TARGET [SECONDS] [DIR] [-- libFuzzer flags...]
#
# TARGET is y4m, yuv, model, cli, pictures, output or decode; SECONDS defaults to 300; DIR is the
# build directory of build.sh (default build-fuzz/).  The inputs libFuzzer
# finds go to DIR/corpus-TARGET/ (the committed seeds in
# tests/fuzz/corpus/TARGET/ are read, never written), crashers to
# DIR/artifacts-TARGET/.  Copy a crasher into tests/fuzz/regressions/TARGET/
# once it is fixed, so the replay test keeps it fixed.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${1:?usage: run.sh TARGET [SECONDS] [DIR] [-- flags]}
shift
seconds=300
out=$src/build-fuzz
if [[ $# -gt 0 && $1 != -- ]]; then seconds=$1; shift; fi
if [[ $# -gt 0 && $1 != -- ]]; then out=$(realpath -m "$1"); shift; fi
[[ ${1:-} == -- ]] && shift

fuzzer=$out/fuzz_$target
[[ -x $fuzzer ]] || { echo "run.sh: $fuzzer not built (tests/fuzz/build.sh $out)" >&2; exit 1; }
flags=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1)
case $target in
    y4m) flags+=(-dict="$src/tests/fuzz/y4m.dict" -max_len=8192) ;;
    yuv) flags+=(-max_len=8192) ;;
    model) flags+=(-dict="$src/tests/fuzz/json.dict" -max_len=16384) ;;
    cli) flags+=(-dict="$src/tests/fuzz/cli.dict" -max_len=1024) ;;
    pictures) flags+=(-max_len=512) ;;
    output) flags+=(-dict="$src/tests/fuzz/output.dict" -max_len=2048) ;;
    # Whole small files: the seeds are 3-frame clips of a few KiB.
    decode) flags+=(-max_len=65536) ;;
    *) echo "run.sh: unknown target '$target' (y4m, yuv, model, cli, pictures, output, decode)" >&2
       exit 1 ;;
esac
mkdir -p "$out/corpus-$target" "$out/artifacts-$target"
# Leaks are checked at exit by LeakSanitizer; the targets allocate nothing
# that outlives an input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$fuzzer" "${flags[@]}" -artifact_prefix="$out/artifacts-$target/" "$@" \
    "$out/corpus-$target" "$src/tests/fuzz/corpus/$target"
