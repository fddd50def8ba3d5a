#!/usr/bin/env bash
# On a GPU machine: compressed pairs scored with NVDEC against the same
# pairs decoded on the CPU (per-frame scores must be equal), then the speed
# of each way (docs/benchmarks.md, "NVDEC").
#
#   scripts/device/nvdec_check.sh QUALE FFMPEG_LIB_DIR REF DIST [REF DIST ...]
#
# QUALE is the tool; FFMPEG_LIB_DIR holds FFmpeg's libraries
# (scripts/ffmpeg-nvdec-libs.sh makes them on a machine with packages).
# Each pair runs with --backend cuda (NVDEC where it can), with the same
# backend and QUALE_DECODE_ON_CPU=1, and with --backend cpu; pairs of more
# than 500 frames are then timed three times each way.
set -uo pipefail
quale=${1:?usage: nvdec_check.sh QUALE FFMPEG_LIB_DIR REF DIST [REF DIST ...]}
export LD_LIBRARY_PATH=${2:?the directory of FFmpeg libraries}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
shift 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 - "$quale" "$@" <<'PY'
import json, os, subprocess, sys, tempfile, time

quale, files = sys.argv[1], sys.argv[2:]
failed = False


def run(ref, dist, backend, cpu_decode=False):
    env = dict(os.environ)
    if cpu_decode:
        env["QUALE_DECODE_ON_CPU"] = "1"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        start = time.perf_counter()
        p = subprocess.run([quale, "-r", ref, "-d", dist, "--backend", backend, "--json", "-o",
                            out.name], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if p.returncode:
            return None, wall, p.stderr.strip()
        return json.load(open(out.name)), wall, p.stderr.strip()


for ref, dist in zip(files[::2], files[1::2]):
    g, wg, eg = run(ref, dist, "cuda")
    c, wc, ec = run(ref, dist, "cuda", cpu_decode=True)
    h, wh, eh = run(ref, dist, "cpu")
    if not (g and c and h):
        print(f"FAIL {dist}: {eg or ec or eh}")
        failed = True
        continue
    frames = len(g["frames"])
    same = [f["metrics"] for f in g["frames"]] == [f["metrics"] for f in c["frames"]]
    vmaf = [x["pooled_metrics"]["vmaf"]["mean"] for x in (g, c, h)]
    failed |= not same
    print(f"{'ok  ' if same else 'FAIL'} {os.path.basename(dist)}: {frames} frames, per frame "
          f"NVDEC == CPU decoding: {same}; vmaf {vmaf[0]:.6f} / {vmaf[1]:.6f} / cpu backend "
          f"{vmaf[2]:.6f}; {g.get('input', {})}")
    if frames > 500:
        for rep in range(3):
            _, wg, _ = run(ref, dist, "cuda")
            _, wc, _ = run(ref, dist, "cuda", cpu_decode=True)
            print(f"     run {rep + 1}: NVDEC {frames / wg:.0f} fps ({wg:.2f} s), "
                  f"CPU decoding {frames / wc:.0f} fps ({wc:.2f} s)")
sys.exit(1 if failed else 0)
PY
