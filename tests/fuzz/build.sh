#!/usr/bin/env bash
# Builds the libFuzzer targets: libquale compiled by clang with coverage
# instrumentation, ASan and UBSan (a meson build of its own), and one fuzzer
# per target, fuzz_y4m, fuzz_yuv, fuzz_model, fuzz_cli, fuzz_pictures and
# fuzz_output, fuzz_decode and fuzz_results.
#
#   tests/fuzz/build.sh [DIR]      (default: build-fuzz/ in the source tree)
#
# Needs clang and its libFuzzer runtime: on Debian, `apt-get install clang
# libclang-rt-14-dev` (the -dev package of the installed clang's version).
# The normal test suite does not need any of it: tests/fuzz_replay.c runs
# the same targets over the corpora with gcc.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(realpath -m "${1:-$src/build-fuzz}")
cc=${FUZZ_CC:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build.sh: $cc not found (apt-get install clang libclang-rt-14-dev)" >&2
    exit 1
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
    v=$("$cc" -dumpversion | cut -d. -f1)
    echo "build.sh: $cc has no libFuzzer runtime (apt-get install libclang-rt-$v-dev)" >&2
    exit 1
fi

# UBSan findings must stop the run (a crash for libFuzzer), not scroll by.
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
if [[ ! -f $out/lib/build.ninja ]]; then
    CC=$cc meson setup "$out/lib" "$src" --buildtype=debugoptimized \
        -Dcuda=disabled -Dvulkan=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
        >/dev/null
fi
ninja -C "$out/lib" src/libquale.a >/dev/null

for target in y4m yuv model cli pictures output decode results; do
    extra=()
    [[ $target == cli ]] && extra=("$src/tools/quale/cli.c")
    "$cc" -std=c17 -g -O1 -D_GNU_SOURCE -DQUALE_LIBFUZZER -fsanitize=fuzzer "${sanitize[@]}" \
        -I"$src/include" -I"$src/src" -I"$src/tools/quale" -I"$src/tests/fuzz" \
        "$src/tests/fuzz/fuzz_$target.c" "$src/tests/fuzz/fuzz_common.c" "${extra[@]}" \
        "$out/lib/src/libquale.a" -lm -ldl -lpthread -o "$out/fuzz_$target"
done
echo "$out/fuzz_y4m $out/fuzz_yuv $out/fuzz_model $out/fuzz_cli $out/fuzz_pictures $out/fuzz_output $out/fuzz_decode $out/fuzz_results"
