#!/usr/bin/env bash
# A headless Chromium for the report's test (tests/report_test.py): prints
# the browser's path on stdout, installing Debian's `chromium` through
# scripts/apt.sh when none is found.  Exits 77 (the test suite's "skip") only
# when none can be installed, so a machine without one skips instead of
# failing.  $CHROMIUM, when set, names the browser to use.
#
# Sourced, it defines quale_chromium (the same, returning instead of
# exiting) and leaves the shell's options alone.

quale_chromium() {
    local candidate path
    for candidate in "${CHROMIUM:-}" chromium chromium-browser google-chrome-stable google-chrome; do
        [[ -n $candidate ]] || continue
        if path=$(command -v -- "$candidate"); then
            printf '%s\n' "$path"
            return 0
        fi
    done
    # apt_install's own output goes to stderr: stdout carries only the path.
    # shellcheck source=apt.sh
    source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
    echo "chromium.sh: no Chromium found; installing Debian's chromium ..." >&2
    if apt_install chromium >&2 && path=$(command -v chromium); then
        printf '%s\n' "$path"
        return 0
    fi
    echo "chromium.sh: no headless Chromium, and installing Debian's chromium failed;" \
         "the report's browser checks are skipped" >&2
    return 77
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -uo pipefail
    quale_chromium
    exit $?
fi
