#!/usr/bin/env bash
# Builds quale and runs the whole test suite: unit tests, CLI tests and the
# golden parity against libvmaf's scores on the shared corpus.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/build.sh --test
meson test -C build --print-errorlogs "$@"
