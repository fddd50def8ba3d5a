#!/usr/bin/env python3
"""Runs the GPU parity harness with the shared corpus decoded for it.

usage: gpu_parity.py GPU_PARITY_EXE --backend B --tolerance FILE [--max-frames N] [--quick]
Without the shared corpus, only the random frames are compared.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def main():
    exe, args = sys.argv[1], sys.argv[2:]
    shared, cache = corpus.default_shared(), corpus.default_cache()
    if "--shared" in args:
        shared = args[args.index("--shared") + 1]
        del args[args.index("--shared"):args.index("--shared") + 2]
    probe = subprocess.run([exe, *args, "--probe"], capture_output=True, text=True)
    if probe.returncode == 77:
        print(probe.stdout.strip())
        return 77
    if os.path.isdir(os.path.join(shared, "corpus")):
        corpus.ensure_decoded(shared, cache)
        args += ["--shared", shared, "--cache", cache]
    return subprocess.run([exe, *args]).returncode


if __name__ == "__main__":
    sys.exit(main())
