#!/usr/bin/env python3
"""The shared library exports the public API (quale_*) and nothing else."""
import subprocess
import sys

out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], check=True,
                     capture_output=True, text=True).stdout
names = [line.split()[-1] for line in out.splitlines() if line.strip()]
public = [n for n in names if n.startswith("quale_")]
leaked = [n for n in names if not n.startswith("quale_")]
for n in leaked:
    print(f"not part of the API but exported: {n}")
print(f"{len(public)} passed, {len(leaked)} failed")
sys.exit(1 if leaked or not public else 0)
