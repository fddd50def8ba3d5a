#!/usr/bin/env python3
"""A shared library exports its API (quale_* for libquale, vmaf_* for the
libvmaf face) and nothing else: check_exports.py LIBRARY PREFIX."""
import subprocess
import sys

out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], check=True,
                     capture_output=True, text=True).stdout
names = [line.split()[-1] for line in out.splitlines() if line.strip()]
prefix = sys.argv[2] if len(sys.argv) > 2 else "quale_"
public = [n for n in names if n.startswith(prefix)]
leaked = [n for n in names if not n.startswith(prefix)]
for n in leaked:
    print(f"not part of the API but exported: {n}")
print(f"{len(public)} passed, {len(leaked)} failed")
sys.exit(1 if leaked or not public else 0)
