#!/usr/bin/env python3
"""FFmpeg's libvmaf filter on quale: FFmpeg 7.1 built against quale's
libvmaf.so.3 (scripts/ffmpeg-client.sh), run on corpus pairs, its log
files compared with libvmaf's golden scores at the precision they are
printed with (6 decimals, libvmaf 3.x's layout).

Cases: 8-bit and 10-bit 4:2:0 and 4:4:4; vmaf_v0.6.1 and a VMAF v1 model;
feature=name=psnr; pool=harmonic_mean (FFmpeg's "VMAF score" line);
n_subsample=2; n_threads 1 and 2; feature=name=xpsnr against FFmpeg's own
xpsnr filter (tests/golden_xpsnr/).  Ends with "N passed, M failed".

With --cuda: FFmpeg's libvmaf_cuda filter instead, the frames put on the
GPU by hwupload_cuda and copied by the filter into quale's device pictures
(libvmaf_cuda.h), scored by the CUDA twins; exit 77 (skipped) without an
NVIDIA GPU.  The filter copies the luma only (its copy loop stops after
the first plane), so its cases are luma models.

Also the README's commands: the client as `ffmpeg-client.sh --test`
builds it, run without LD_LIBRARY_PATH (its run path finds quale's
libvmaf.so.3), scores a corpus mp4 against its Matroska reference as the
README says, with quale's own numbers on the same files (--quale).

With --nvdec (and --client: the client of `ffmpeg-client.sh --nvdec`):
libvmaf_cuda on frames that never leave the GPU, the distorted bitstream
(H.264, HEVC) decoded by NVDEC (-hwaccel cuda -hwaccel_output_format
cuda) and made planar by scale_cuda, the lossless reference decoded by
FFmpeg on the CPU and uploaded.  --libdir LIBDIR replaces the client's
libvmaf.so.3 (another libvmaf to hold to the same golden scores).
"""
import ctypes
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402
from tally import check, finish  # noqa: E402

PIX_FMT = {("420", 8): "yuv420p", ("420", 10): "yuv420p10le", ("444", 8): "yuv444p",
           ("422", 8): "yuv422p"}
# What is printed with 6 decimals is within half a unit of the 6th
# decimal of the full-precision golden value (and a hair for the binary
# representation of the decimal text).
PRINTED = 0.5e-6 + 1e-12

# (pair, golden run, filter options, what it checks)
CASES = [
    ("dune_576x324_x264crf28", "vmaf",
     "model='version=vmaf_v0.6.1':feature='name=psnr':n_threads=2", "8-bit 4:2:0, psnr"),
    ("storm_720p10_x265crf28", "vmaf",
     "model='version=vmaf_v0.6.1':feature='name=psnr':pool=harmonic_mean:n_threads=2",
     "10-bit 4:2:0, harmonic mean"),
    ("raindrops_444_x264crf30", "vmaf",
     "model='version=vmaf_v0.6.1':n_threads=1", "8-bit 4:4:4, one thread"),
    ("dune_576x324_x264crf42", "v1",
     "model='version=vmaf_v1.0.16_3d0h':feature='name=speed_temporal':n_threads=2",
     "VMAF v1"),
    ("dune_576x324_x264crf28", "vmaf",
     "model='version=vmaf_v0.6.1':n_subsample=2:n_threads=2", "n_subsample=2"),
]

# The README's mp4 pair (an H.264 mp4 against its H.264 Matroska reference).
README_PAIR = "dune_576x324_x264crf28"

# libvmaf_cuda: yuv420p is the 8-bit format it takes.
CUDA_CASES = [
    ("dune_576x324_x264crf28", "vmaf", "model='version=vmaf_v0.6.1':n_threads=2",
     "libvmaf_cuda, 8-bit 4:2:0"),
    ("dune_576x324_x264crf42", "vmaf", "model='version=vmaf_v0.6.1':n_subsample=2:n_threads=2",
     "libvmaf_cuda, n_subsample=2"),
]

# libvmaf_cuda on NVDEC's frames: the distorted file as it is.
NVDEC_CASES = [
    ("dune_576x324_x264crf28", "vmaf", "model='version=vmaf_v0.6.1':n_threads=2",
     "NVDEC H.264 + libvmaf_cuda"),
    ("elephants_1080p_x264crf34", "vmaf", "model='version=vmaf_v0.6.1':n_threads=2",
     "NVDEC H.264 1080p + libvmaf_cuda"),
    ("elephants_1080p_x265crf30", "vmaf", "model='version=vmaf_v0.6.1':n_subsample=2",
     "NVDEC HEVC 1080p + libvmaf_cuda, n_subsample=2"),
]


def cuda_device_present():
    """Whether the NVIDIA driver loads and sees a device."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def check_run_path(ffmpeg, libdir, env):
    """The dynamic linker finds quale's libvmaf.so.3 in LIBDIR by itself."""
    ldd = subprocess.run(["ldd", ffmpeg], capture_output=True, text=True, env=env).stdout
    found = re.search(r"libvmaf\.so\.3 => (/\S+)", ldd)  # not "=> not found"
    where = os.path.dirname(found.group(1)) if found else None
    check(where is not None and os.path.samefile(where, libdir),
          f"without LD_LIBRARY_PATH ffmpeg loads libvmaf.so.3 from {where}, not {libdir}")


def readme_mp4_case(ffmpeg, env, quale, corpus, pair, tmp):
    """The README's command: an mp4 against its reference, the libvmaf
    filter's frames and "VMAF score" line against quale's run."""
    ref, dis = os.path.join(corpus, pair["ref"]), os.path.join(corpus, pair["dis"])
    log = os.path.join(tmp, "readme.json")
    # Frames paired by their index (setpts): FFmpeg pairs them by time, and
    # an mp4's time base (1/12288 s here) and Matroska's (1 ms) round the
    # same frame's time differently.
    index = "setpts=N/FRAME_RATE/TB"
    cmd = [ffmpeg, "-nostdin", "-i", dis, "-i", ref, "-lavfi",
           f"[0:v]{index}[d];[1:v]{index}[r];[d][r]libvmaf=log_fmt=json:log_path={log}",
           "-f", "null", "-"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"README mp4: ffmpeg exit {p.returncode}: {p.stderr[-800:]}")
    q = subprocess.run([quale, "-r", ref, "-d", dis, "--json", "-q"], capture_output=True,
                       text=True)
    check(q.returncode == 0, f"README mp4: quale exit {q.returncode}: {q.stderr[-400:]}")
    if p.returncode or q.returncode:
        return
    with open(log) as f:
        filtered = [fr["metrics"]["vmaf"] for fr in json.load(f)["frames"]]
    own = json.loads(q.stdout)
    scored = [fr["metrics"]["vmaf"] for fr in own["frames"]]
    check(len(filtered) == len(scored) == pair["frames"],
          f"README mp4: {len(filtered)} frames filtered, {len(scored)} scored by quale")
    worst = max((abs(a - b) for a, b in zip(filtered, scored)), default=float("inf"))
    check(worst <= PRINTED, f"README mp4: per-frame VMAF differs from quale's by {worst:.3g}")
    m = re.search(r"VMAF score: ([0-9.]+)", p.stderr)
    mean = own["pooled_metrics"]["vmaf"]["mean"]
    check(m is not None and abs(float(m.group(1)) - mean) <= PRINTED,
          f"README mp4: 'VMAF score: {m.group(1) if m else None}', quale's mean {mean:.6f}")
    print(f"README mp4 ({pair['dis']} against {pair['ref']}): VMAF score "
          f"{m.group(1) if m else None}, quale's {mean:.6f}", flush=True)


def xpsnr_case(ffmpeg, env, cache, pair, tmp):
    """feature=name=xpsnr through quale's libvmaf.so.3, beside vmaf_v0.6.1:
    each frame's XPSNR as FFmpeg's own xpsnr filter gives it
    (tests/golden_xpsnr/, at the 6 decimals the log prints).  The libvmaf
    API has no frame rate, so the filter's rate is the option fps."""
    from xpsnr_golden import parse_golden
    golden, _, fps = parse_golden(os.path.join(HERE, "golden_xpsnr", pair["name"] + ".log"))
    pix_fmt = PIX_FMT[(pair["vmaf_pixel_format"], pair["bitdepth"])]
    raw = ["-f", "rawvideo", "-pix_fmt", pix_fmt, "-s", f"{pair['width']}x{pair['height']}"]
    log = os.path.join(tmp, "xpsnr.json")
    # the feature's own options are ':'-separated: escaped in the graph
    graph = (f"[0:v][1:v]libvmaf=model='version=vmaf_v0.6.1':feature='name=xpsnr\\:fps={fps}'"
             f":n_threads=2:log_fmt=json:log_path={log}")
    p = subprocess.run([ffmpeg, "-nostdin", "-hide_banner", *raw, "-i",
                        os.path.join(cache, pair["dis_yuv"]), *raw, "-i",
                        os.path.join(cache, pair["ref_yuv"]), "-lavfi", graph, "-f", "null", "-"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"xpsnr through libvmaf: ffmpeg exit {p.returncode}: {p.stderr[-800:]}")
    if p.returncode:
        return
    with open(log) as f:
        frames = json.load(f)["frames"]
    worst, compared = 0.0, 0
    for fr, planes in zip(frames, golden):
        for plane, (value, _) in planes.items():
            got = fr["metrics"].get(f"xpsnr_{plane}")
            check(got is not None, f"xpsnr through libvmaf: frame {fr['frameNum']} has no xpsnr_{plane}")
            if got is not None:
                worst = max(worst, abs(got - value))
                compared += 1
    check(len(frames) == len(golden) and compared == 3 * len(golden) and
          all("vmaf" in fr["metrics"] for fr in frames),
          f"xpsnr through libvmaf: {len(frames)} frames, {compared} values against {len(golden)} frames")
    check(worst <= PRINTED, f"xpsnr through libvmaf: worst |diff| {worst:.3g} from FFmpeg's filter")
    print(f"xpsnr through libvmaf: {pair['name']}, {len(frames)} frames, {compared} values, "
          f"worst |diff| {worst:.2g} from FFmpeg's xpsnr filter", flush=True)


def client(args):
    """The FFmpeg to run and its environment: built here (ffmpeg-client.sh
    --test, or --nvdec), or the one of --client; (None, None) on failure."""
    if args.client:
        ffmpeg, libdir = args.client
        # Another libvmaf.so.3 may be put first (the client's RUNPATH yields).
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    else:
        built = subprocess.run([os.path.join(args.source, "scripts", "ffmpeg-client.sh"),
                                "--nvdec" if args.nvdec else "--test", args.build],
                               capture_output=True, text=True)
        if built.returncode:
            print(f"building FFmpeg against quale failed:\n{built.stdout}{built.stderr}")
            return None, None
        lines = built.stdout.strip().splitlines()
        ffmpeg, libdir = lines[-1], lines[-2].split("=", 1)[1]
        # As a user runs it: the run path finds quale's library.
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        check_run_path(ffmpeg, libdir, env)
    return ffmpeg, env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="quale's meson build directory")
    ap.add_argument("--source", required=True, help="quale's source directory")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--cuda", action="store_true", help="the libvmaf_cuda filter's cases")
    ap.add_argument("--nvdec", action="store_true",
                    help="libvmaf_cuda on NVDEC's frames (needs --client of an --nvdec build)")
    ap.add_argument("--client", nargs=2, metavar=("FFMPEG", "LIBDIR"),
                    help="an FFmpeg client built before, and where its libvmaf.so.3 is")
    ap.add_argument("--quale", help="the build tree's tool: the README's mp4 case against it")
    args = ap.parse_args()
    args.cuda |= args.nvdec

    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"skip: no corpus at {corpus}")
        return 77
    if args.cuda and not cuda_device_present():
        print("skip: no NVIDIA GPU here: the libvmaf_cuda cases did not run")
        return 77
    ffmpeg, env = client(args)
    if ffmpeg is None:
        return 1
    version = subprocess.run([ffmpeg, "-version"], capture_output=True, text=True, env=env).stdout
    print(version.splitlines()[0] if version else "ffmpeg -version failed", flush=True)

    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = {p["name"]: p for p in json.load(f)}
    cases = NVDEC_CASES if args.nvdec else CUDA_CASES if args.cuda else CASES
    # Decoded already (a device machine has no FFmpeg to decode with).
    if not args.nvdec and not all(os.path.exists(os.path.join(args.cache, manifest[c[0]][k]))
               for c in cases for k in ("ref_yuv", "dis_yuv")):
        shared_corpus.ensure_decoded(args.shared, args.cache)

    with tempfile.TemporaryDirectory() as tmp:
        for case, (name, run, options, what) in enumerate(cases):
            pair = manifest[name]
            with open(os.path.join(corpus, "golden", f"{name}.{run}.json")) as f:
                golden = json.load(f)
            pix_fmt = PIX_FMT[(pair["vmaf_pixel_format"], pair["bitdepth"])]
            size = f"{pair['width']}x{pair['height']}"
            log = os.path.join(tmp, f"{case}.{name}.{run}.json")
            raw = ["-f", "rawvideo", "-pix_fmt", pix_fmt, "-s", size]
            graph = f"[0:v][1:v]libvmaf={options}:log_fmt=json:log_path={log}"
            device = []
            if args.cuda:
                graph = (f"[0:v]hwupload_cuda[d];[1:v]hwupload_cuda[r];"
                         f"[d][r]libvmaf_cuda={options}:log_fmt=json:log_path={log}")
                device = ["-init_hw_device", "cuda=gpu", "-filter_hw_device", "gpu"]
            inputs = [*raw, "-i", os.path.join(args.cache, pair["dis_yuv"]),
                      *raw, "-i", os.path.join(args.cache, pair["ref_yuv"])]
            if args.nvdec:
                # Frames paired by their index: the two containers' time
                # bases differ (an MP4's 1/24 s against Matroska's 1 ms),
                # and FFmpeg pairs by time.
                graph = (f"[0:v]setpts=N/(24*TB),scale_cuda=format=yuv420p[d];"
                         f"[1:v]setpts=N/(24*TB),format=yuv420p,hwupload_cuda[r];"
                         f"[d][r]libvmaf_cuda={options}:log_fmt=json:log_path={log}")
                inputs = ["-hwaccel", "cuda", "-hwaccel_device", "gpu", "-hwaccel_output_format",
                          "cuda", "-i", os.path.join(corpus, pair["dis"]),
                          "-i", os.path.join(corpus, pair["ref"])]
            cmd = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "info", *device, *inputs,
                   "-lavfi", graph, "-f", "null", "-"]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            check(p.returncode == 0, f"{what}: ffmpeg exit {p.returncode}: {p.stderr[-800:]}")
            if p.returncode:
                continue
            with open(log) as f:
                ours = json.load(f)
            subsample = 2 if "n_subsample=2" in options else 1
            want_frames = [fr for fr in golden["frames"] if fr["frameNum"] % subsample == 0]
            check([fr["frameNum"] for fr in ours["frames"]] == [fr["frameNum"] for fr in want_frames],
                  f"{what}: frames {[fr['frameNum'] for fr in ours['frames']]}")
            worst = (0.0, None)
            compared = 0
            for fo, fg in zip(ours["frames"], want_frames):
                for key, value in fo["metrics"].items():
                    if key not in fg["metrics"]:
                        continue
                    d = abs(value - fg["metrics"][key])
                    compared += 1
                    if d > worst[0]:
                        worst = (d, f"frame {fg['frameNum']} {key}")
            check(compared >= len(want_frames) * 2 and "vmaf" in ours["frames"][0]["metrics"],
                  f"{what}: {compared} values compared")
            check(worst[0] <= PRINTED, f"{what}: worst |diff| {worst[0]:.3g} at {worst[1]}")
            if subsample == 1:
                for key, pools in ours["pooled_metrics"].items():
                    for pool, value in pools.items():
                        g = golden["pooled_metrics"].get(key, {}).get(pool)
                        if g is not None:
                            check(abs(value - g) <= PRINTED, f"{what}: pooled {key} {pool}: "
                                  f"{value} vs {g}")
            # FFmpeg's own line: the pooled model score by the pool asked for.
            m = re.search(r"VMAF score: ([0-9.]+)", p.stderr)
            pool = "harmonic_mean" if "harmonic_mean" in options else "mean"
            values = [fr["metrics"]["vmaf"] for fr in want_frames]
            if pool == "mean":
                expected = sum(values) / len(values)
            else:
                expected = len(values) / sum(1.0 / (v + 1.0) for v in values) - 1.0
            check(m is not None and abs(float(m.group(1)) - expected) <= PRINTED,
                  f"{what}: 'VMAF score: {m.group(1) if m else None}', expected {expected:.6f}")
            print(f"{what}: {name} ({run}), {len(ours['frames'])} frames, {compared} values, "
                  f"worst |diff| {worst[0]:.2g}", flush=True)
        if args.quale and not args.cuda:
            readme_mp4_case(ffmpeg, env, args.quale, corpus, manifest[README_PAIR], tmp)
        if not args.cuda:
            xpsnr_case(ffmpeg, env, args.cache, manifest["dune_576x324_x264crf28"], tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
