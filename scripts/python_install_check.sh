#!/usr/bin/env bash
# Checks that the Python package installs with pip from the source tree
# (Debian's meson-python, no build isolation) into a fresh venv, and that
# the installed package scores a sample pair as the tool does.  It builds
# the project again (minutes), so it is not in the test suite.
#
#   scripts/python_install_check.sh [MESON OPTION...]
#
# MESON OPTIONs (-Dcuda=disabled ...) configure the build pip makes;
# bookworm's pip (23.0) keeps one --config-settings value per key, so the
# options go to a build directory configured first and handed to
# meson-python (builddir=).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/bootstrap.sh --test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson setup "$tmp/build" "$@" >/dev/null
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
start=$(date +%s)
"$tmp/venv/bin/pip" install -q --no-build-isolation --config-settings=builddir="$tmp/build" .
echo "pip install: $(( $(date +%s) - start )) s"
"$tmp/build/tools/quale-sample" --width 96 --height 64 --frames 4 "$tmp/pair" >/dev/null
cd "$tmp"   # away from the source tree: the installed package is imported
"$tmp/venv/bin/python" - "$tmp/build/tools/quale" "$tmp/pair" <<'PY'
import json, os, subprocess, sys
import quale
tool, pair = sys.argv[1], sys.argv[2]
ref, dist = os.path.join(pair, "sample_ref.y4m"), os.path.join(pair, "sample_dist.y4m")
assert "site-packages" in quale.__file__, quale.__file__
r = quale.score(ref, dist, backend="cpu")
want = json.loads(subprocess.run([tool, "-r", ref, "-d", dist, "--json", "-o", "-", "-q"],
                                 check=True, capture_output=True, text=True).stdout)
if r.frames != want["frames"] or r.pooled != want["pooled_metrics"]:
    sys.exit("the installed package's scores differ from the tool's")
print(f"quale {quale.__version__} installed at {os.path.dirname(quale.__file__)}: "
      f"vmaf {r.pooled['vmaf']['mean']} as the tool")
PY
