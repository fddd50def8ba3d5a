#!/usr/bin/env bash
# Configures (once) and builds quale in build/, with warnings as errors.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/bootstrap.sh "$@"
# The CUDA toolkit installs nvcc outside the default PATH.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH=$PATH:/usr/local/cuda/bin
fi
if [[ ! -f build/build.ninja ]]; then
    meson setup build -Dwerror=true >/dev/null
fi
# On a terminal ninja's one line of progress shows; elsewhere only errors.
if [[ -t 2 ]]; then
    ninja -C build 1>&2
else
    ninja -C build >/dev/null
fi
