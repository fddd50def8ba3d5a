#!/usr/bin/env python3
"""The AMD code objects hold every kernel, for every target.

Usage: check_hip_code_objects.py BUNDLER TARGETS SOURCE.cu OBJECT.hsaco [...]

For each kernel source and the bundle hipcc made of it (src/cuda/meson.build):
the bundle lists a code object for each target of TARGETS (comma-separated,
e.g. gfx90a,gfx940,gfx1030), and each of those code objects defines every
kernel the source declares (its `extern "C" __global__` functions, and those
its kernel-defining macros name), as the kernel descriptor `<name>.kd` an AMD
code object has for each kernel.  A source whose device code the compiler
did not see would build an empty object: this says so.  Prints
"N passed, M failed".
"""
import os
import re
import subprocess
import sys
import tempfile

DECLARED = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(')
# A kernel made by a macro: NAME_KERNEL(kernel, ...) (cambi's element kernels).
BY_MACRO = re.compile(r'^\s*\w+_KERNEL\((\w+),', re.M)


def kernels_of(source):
    text = open(source, encoding="utf-8").read()
    names = set(DECLARED.findall(text)) | set(BY_MACRO.findall(text))
    names.discard("name")  # the macros' own parameter
    return sorted(names)


def main():
    bundler, targets = sys.argv[1], sys.argv[2].split(",")
    pairs = sys.argv[3:]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for source, bundle in zip(pairs[0::2], pairs[1::2]):
            names = kernels_of(source)
            stem = os.path.basename(source)
            listed = subprocess.run([bundler, "--list", "--type=o", "--input=" + bundle],
                                    capture_output=True, text=True)
            ok = listed.returncode == 0 and bool(names)
            problems = [] if names else ["no kernel found in the source"]
            if listed.returncode:
                problems.append("not a bundle: " + listed.stderr.strip())
            for target in targets:
                triple = "hipv4-amdgcn-amd-amdhsa--" + target
                if triple not in listed.stdout.split():
                    problems.append("no code object for " + target)
                    continue
                out = os.path.join(tmp, stem + "." + target)
                subprocess.run([bundler, "--unbundle", "--type=o", "--input=" + bundle,
                                "--targets=" + triple, "--output=" + out], check=True)
                code = open(out, "rb").read()
                missing = [n for n in names if (b"\0" + n.encode() + b".kd\0") not in code]
                if missing:
                    problems.append(f"{target} lacks {', '.join(missing)}")
            ok = ok and not problems
            print(f"{'ok  ' if ok else 'FAIL'} {stem}: {len(names)} kernels, {', '.join(targets)}"
                  + ("" if ok else ": " + "; ".join(problems)))
            passed += ok
            failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if passed and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
