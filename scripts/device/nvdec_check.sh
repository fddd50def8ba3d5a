#!/usr/bin/env bash
# On a GPU machine: compressed pairs scored with NVDEC against the same
# pairs decoded on the CPU (per-frame scores must be equal), then the speed
# of each way (docs/benchmarks.md, "NVDEC").
#
#   scripts/device/nvdec_check.sh QUALE FFMPEG_LIB_DIR REF DIST [REF DIST ...]
#
# QUALE is the tool; FFMPEG_LIB_DIR holds FFmpeg's libraries
# (scripts/ffmpeg-nvdec-libs.sh makes them on a machine with packages).
# Each pair runs with --backend cuda (NVDEC where it can, in its default
# number of sessions and in one), with the same backend and
# QUALE_DECODE_ON_CPU=1, and with --backend cpu; pairs of more than 500
# frames are then timed three times each way, NVDEC with each number of
# sessions in $SESSIONS (default "1 2 3 4").
set -uo pipefail
quale=${1:?usage: nvdec_check.sh QUALE FFMPEG_LIB_DIR REF DIST [REF DIST ...]}
export LD_LIBRARY_PATH=${2:?the directory of FFmpeg libraries}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
shift 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 - "$quale" "$@" <<'PY'
import json, os, subprocess, sys, tempfile, time

quale, files = sys.argv[1], sys.argv[2:]
failed = False


SESSIONS = os.environ.get("SESSIONS", "1 2 3 4").split()


def run(ref, dist, backend, cpu_decode=False, sessions=None):
    env = dict(os.environ)
    if cpu_decode:
        env["QUALE_DECODE_ON_CPU"] = "1"
    if sessions:
        env["QUALE_DECODE_SESSIONS"] = str(sessions)
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
    g1, _, eg1 = run(ref, dist, "cuda", sessions=1)
    c, wc, ec = run(ref, dist, "cuda", cpu_decode=True)
    h, wh, eh = run(ref, dist, "cpu")
    if not (g and g1 and c and h):
        print(f"FAIL {dist}: {eg or eg1 or ec or eh}")
        failed = True
        continue
    frames = len(g["frames"])
    per_frame = [[f["metrics"] for f in x["frames"]] for x in (g, g1, c)]
    same = per_frame[0] == per_frame[2]
    same_sessions = per_frame[0] == per_frame[1]
    vmaf = [x["pooled_metrics"]["vmaf"]["mean"] for x in (g, c, h)]
    failed |= not (same and same_sessions)
    print(f"{'ok  ' if same and same_sessions else 'FAIL'} {os.path.basename(dist)}: {frames} "
          f"frames, per frame NVDEC == CPU decoding: {same}, NVDEC sessions == one session: "
          f"{same_sessions}; vmaf {vmaf[0]:.6f} / {vmaf[1]:.6f} / cpu backend {vmaf[2]:.6f}; "
          f"{g.get('input', {})}", flush=True)
    if frames > 150:
        for rep in range(3):
            line = []
            for n in SESSIONS:
                _, w, _ = run(ref, dist, "cuda", sessions=n)
                line.append(f"NVDEC x{n} {frames / w:.0f} fps ({w:.2f} s)")
            _, wc, _ = run(ref, dist, "cuda", cpu_decode=True)
            line.append(f"CPU decoding {frames / wc:.0f} fps ({wc:.2f} s)")
            print(f"     run {rep + 1}: " + ", ".join(line), flush=True)
sys.exit(1 if failed else 0)
PY
