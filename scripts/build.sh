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
ninja -C build >/dev/null
