#!/usr/bin/env bash
# Configures (once) and builds quale in build/, with warnings as errors.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/bootstrap.sh "$@"
if [[ ! -f build/build.ninja ]]; then
    meson setup build -Dwerror=true >/dev/null
fi
ninja -C build >/dev/null
