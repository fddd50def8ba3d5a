#!/usr/bin/env python3
"""The Vulkan backend's pipeline cache (src/gpu/vulkan/vulkan_pipeline_cache.c).

- a run writes its pipelines to $XDG_CACHE_HOME/quale/vulkan-...bin, named
  by the driver and the build; a second run reads it and gives the same
  scores;
- QUALE_VULKAN_PIPELINE_CACHE=0 writes none;
- a damaged file is refused by the driver and replaced, the scores the
  same;
- two runs at once leave one whole file and no temporary one.

Skips (77) where no Vulkan device is found.  Prints "N passed, M failed".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import check, finish  # noqa: E402


def run(quale, ref, dist, out, cache_home, **env):
    e = dict(os.environ, XDG_CACHE_HOME=cache_home, **env)
    r = subprocess.run([quale, "-r", ref, "-d", dist, "--backend", "vulkan", "-q", "--json",
                        "-o", out], capture_output=True, text=True, env=e)
    check(r.returncode == 0, f"a Vulkan run: exit {r.returncode}: {r.stderr[-300:]}")
    return json.load(open(out))["frames"] if r.returncode == 0 else None


def files(folder):
    d = os.path.join(folder, "quale")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True)
    args = ap.parse_args()
    devices = subprocess.run([args.quale, "--list-devices", "--json"], capture_output=True,
                             text=True)
    listed = json.loads(devices.stdout or "{}") if devices.returncode == 0 else {}
    if not listed.get("vulkan", {}).get("devices"):
        print("SKIP: no Vulkan device")
        return 77
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([args.sample, "--width", "96", "--height", "64", "--frames", "3", work],
                       check=True, capture_output=True)
        ref, dist = (os.path.join(work, f"sample_{k}.y4m") for k in ("ref", "dist"))
        out = os.path.join(work, "out.json")
        home = os.path.join(work, "cache")
        first = run(args.quale, ref, dist, out, home)
        names = files(home)
        check(len(names) == 1 and names[0].startswith("vulkan-") and names[0].endswith(".bin"),
              f"the cache folder holds {names}, not one vulkan-...bin")
        path = os.path.join(home, "quale", names[0]) if names else None
        check(run(args.quale, ref, dist, out, home) == first, "the second run's scores differ")
        check(files(home) == names, f"the second run left {files(home)}")

        off = os.path.join(work, "off")
        run(args.quale, ref, dist, out, off, QUALE_VULKAN_PIPELINE_CACHE="0")
        check(files(off) == [], f"QUALE_VULKAN_PIPELINE_CACHE=0 wrote {files(off)}")

        if path:
            with open(path, "wb") as f:
                f.write(b"\x7fnot a pipeline cache" * 7)
            check(run(args.quale, ref, dist, out, home) == first,
                  "a run over a damaged cache file gives other scores")
            data = open(path, "rb").read()
            check(not data.startswith(b"\x7fnot"), "the damaged cache file was not replaced")

        both = os.path.join(work, "both")
        env = dict(os.environ, XDG_CACHE_HOME=both)
        procs = [subprocess.Popen([args.quale, "-r", ref, "-d", dist, "--backend", "vulkan", "-q",
                                   "--json", "-o", os.path.join(work, f"p{i}.json")], env=env,
                                  stderr=subprocess.DEVNULL) for i in range(2)]
        check(all(p.wait() == 0 for p in procs), "two runs at once failed")
        left = files(both)
        check(len(left) == 1 and left[0].endswith(".bin"),
              f"two runs at once left {left}, not one cache file")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
