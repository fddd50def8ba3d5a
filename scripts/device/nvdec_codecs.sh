#!/usr/bin/env bash
# On a GPU machine: which codecs decode on the GPU (NVDEC) and that those
# give the CPU decoder's scores frame for frame.  The clips are
# scripts/device/codec_clips.sh's; FFMPEG_LIB_DIR holds FFmpeg's libraries
# as scripts/ffmpeg-nvdec-libs.sh builds them (every hwaccel NVDEC has for
# these codecs, MPEG-2's included, and libdav1d for AV1 on the CPU).
#
#   scripts/device/nvdec_codecs.sh QUALE FFMPEG_LIB_DIR CLIP_DIR
#
# Each clip is scored against ref.mkv with --backend cuda (NVDEC where
# quale takes it) and with QUALE_DECODE_ON_CPU=1: the per-frame values of
# every key must be equal, and where the clip decoded must be where quale
# says a codec belongs: on the GPU for H.264, HEVC (8, 10, 12 bits), VP9,
# VP8 and AV1 (or, for AV1, on the CPU with the probe's note where the
# GPU's NVDEC has none, as on the H200); on the CPU for MPEG-2, MPEG-4 Part 2
# and AV1 with film grain.  H.264 with an H.274 film grain SEI (whose grain FFmpeg adds on the
# CPU only) must fail on the GPU path with a message, and score on the CPU.
# Exits 1 if any clip fails.
set -uo pipefail
quale=${1:?usage: nvdec_codecs.sh QUALE FFMPEG_LIB_DIR CLIP_DIR}
export LD_LIBRARY_PATH=${2:?the directory of FFmpeg libraries}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
clips=${3:?the directory of the clips}
python3 - "$quale" "$clips" <<'PY'
import json, os, subprocess, sys, tempfile

quale, clips = sys.argv[1:]
on_gpu = {"h264.mp4", "hevc.mkv", "hevc10.mp4", "hevc12.mkv", "vp9.webm", "vp8.webm",
          "av1.mp4", "av1_10.ivf"}
# on a GPU whose NVDEC has no AV1 (the H200), these stay on the CPU, said
no_av1 = "NVDEC refused its first picture"
on_cpu = {"mpeg2.ts": "does not define its decoded pictures to the bit",
          "mpeg4.mp4": "does not define its decoded pictures to the bit",
          "av1_grain.mkv": "film grain"}
ref = os.path.join(clips, "ref.mkv")
features = ["--feature", "psnr", "--feature", "float_moment", "--feature", "float_ssim"]
failed = False


def score(dist, cpu_decode):
    env = dict(os.environ)
    if cpu_decode:
        env["QUALE_DECODE_ON_CPU"] = "1"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        p = subprocess.run([quale, "-r", ref, "-d", dist, "--backend", "cuda", *features,
                            "--json", "-o", out.name], capture_output=True, text=True, env=env)
        if p.returncode:
            return None, p.stderr.strip()
        with open(out.name) as f:
            return json.load(f), p.stderr.strip()


print(f"{'clip':15} {'decoded':9} {'frames':>6} {'equal':>6}  vmaf (GPU path / CPU decoding)")
g, eg = score(os.path.join(clips, "h264_fgc.mp4"), False)
c, ec = score(os.path.join(clips, "h264_fgc.mp4"), True)
ok = g is None and "film grain" in eg and c is not None
failed |= not ok
print(f"{'h264_fgc.mp4':15} {'refused':9} {len(c['frames']) if c else 0:6} {'-':>6}  "
      f"{'ok' if ok else 'FAIL'}: the GPU path said: {eg[-160:]!r}")
for name in sorted(on_gpu | set(on_cpu)):
    dist = os.path.join(clips, name)
    g, eg = score(dist, False)
    c, ec = score(dist, True)
    if not (g and c):
        print(f"{name:15} FAIL: {eg or ec}")
        failed = True
        continue
    decoder = g.get("input", {}).get("distorted_decoder", "")
    where = "GPU" if "NVDEC" in decoder else "CPU"
    want = "GPU" if name in on_gpu else "CPU"
    if name.startswith("av1") and name in on_gpu and where == "CPU" and no_av1 in eg:
        want = "CPU"  # this GPU's NVDEC lacks AV1: the probe kept it on the CPU
    reason_ok = name not in on_cpu or on_cpu[name] in eg
    same = [f["metrics"] for f in g["frames"]] == [f["metrics"] for f in c["frames"]]
    ok = same and where == want and reason_ok
    failed |= not ok
    vmaf = (g["pooled_metrics"]["vmaf"]["mean"], c["pooled_metrics"]["vmaf"]["mean"])
    print(f"{name:15} {where:9} {len(g['frames']):6} {str(same):>6}  {vmaf[0]:.6f} / "
          f"{vmaf[1]:.6f}{'' if ok else '  FAIL: ' + decoder + ' ' + eg[-300:]}")
sys.exit(1 if failed else 0)
PY
