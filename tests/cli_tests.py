#!/usr/bin/env python3
"""CLI tests: the output layouts, the flags, and the messages for bad input.

Runs the quale tool on small pairs made by quale-sample and checks what a
user sees: the JSON parses with libvmaf's structure, the XML is well formed,
the CSV header matches the keys, flags behave as in libvmaf's tool, and bad
input gets a clear message and a non-zero exit, never a crash.
Prints "N passed, M failed".
"""
import argparse
import csv
import io
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import check, finish  # noqa: E402


class Tool:
    def __init__(self, quale, sample, tmp):
        self.quale, self.sample, self.tmp = quale, sample, tmp

    def run(self, *args, stdin=None):
        return subprocess.run([self.quale, *args], capture_output=True, text=True, input=stdin)

    def make(self, name, *args):
        out = os.path.join(self.tmp, name)
        subprocess.run([self.sample, *args, out], check=True, capture_output=True)
        return os.path.join(out, "sample_ref." + ("yuv" if "--raw" in args else "y4m")), \
            os.path.join(out, "sample_dist." + ("yuv" if "--raw" in args else "y4m"))


def no_crash(proc, what):
    # A signal shows as a negative return code; sanitizers exit with 1 but print.
    check(proc.returncode >= 0 and "Sanitizer" not in proc.stderr and "Segmentation" not in proc.stderr,
          f"{what}: crashed ({proc.returncode}): {proc.stderr[-500:]}")


def test_information(t):
    p = t.run("--help")
    check(p.returncode == 0 and "--reference" in p.stdout and "--list-features" in p.stdout, "--help")
    p = t.run("-v")
    check(p.returncode == 0 and re.match(r"quale \d+\.\d+\.\d+", p.stdout), f"-v: {p.stdout!r}")
    p = t.run("--list-features", "--json")
    check(p.returncode == 0, "--list-features --json exits 0")
    listing = json.loads(p.stdout)
    check(isinstance(listing, list) and listing, "--list-features --json is a non-empty list")
    for m in listing:
        check(set(m) >= {"name", "keys", "options", "backends"}, f"metric entry fields: {sorted(m)}")
        check("cpu" in m["backends"], f"{m['name']}: has a CPU twin")
        for o in m["options"]:
            check({"name", "type", "default", "help"} <= set(o), f"{m['name']} option fields")
    cambi = next((m for m in listing if m["name"] == "cambi"), {"options": []})
    heatmaps = next((o for o in cambi["options"] if o["name"] == "heatmaps_path"), None)
    check(heatmaps and heatmaps["type"] == "string" and heatmaps["default"] is None,
          f"cambi's heatmaps_path is a string option without a default: {heatmaps}")
    psnr = next((m for m in listing if m["name"] == "psnr"), None)
    check(psnr and psnr["keys"][:3] == ["psnr_y", "psnr_cb", "psnr_cr"], "psnr keys")
    p = t.run("--list-features")
    check(p.returncode == 0 and "psnr" in p.stdout and "enable_chroma" in p.stdout, "--list-features text")
    check("option heatmaps_path (string, default unset)" in p.stdout, "--list-features shows a string option")
    p = t.run("--list-models", "--json")
    check(p.returncode == 0 and "builtin" in json.loads(p.stdout), "--list-models --json")
    models = {m["version"]: m for m in json.loads(p.stdout)["builtin"]}
    v1 = models.get("vmaf_v1.0.16_3d0h_2160", {})
    check(v1.get("range") == [0, 110] and "3H" in v1.get("condition", "") and
          "speed_chroma" in v1.get("features", ""), f"--list-models --json describes v1: {v1}")
    p = t.run("--list-models")
    check(p.returncode == 0 and re.search(r"vmaf_v1\.0\.16_5d0h +phone", p.stdout),
          "--list-models says what each model is for")


def score(t, ref, dist, *args):
    p = t.run("-r", ref, "-d", dist, "-q", *args)
    no_crash(p, f"score {args}")
    return p


def test_layouts(t, ref, dist):
    base = ["-n", "--feature", "psnr=enable_mse=true:enable_apsnr=true"]
    p = score(t, ref, dist, *base, "--json", "-o", "-")
    check(p.returncode == 0, f"json run: {p.stderr}")
    d = json.loads(p.stdout)
    # libvmaf's keys, and quale's provenance (docs/output.md)
    check(set(d) == {"version", "fps", "frames", "pooled_metrics", "aggregate_metrics",
                     "provenance"}, f"json top keys {set(d)}")
    check(len(d["frames"]) == 6 and [f["frameNum"] for f in d["frames"]] == list(range(6)), "json frames")
    keys = list(d["frames"][0]["metrics"])
    check(keys == ["psnr_y", "mse_y", "psnr_cb", "mse_cb", "psnr_cr", "mse_cr"], f"json keys {keys}")
    for k in keys:
        check(set(d["pooled_metrics"][k]) == {"min", "max", "mean", "harmonic_mean"}, f"pooled {k}")
        vals = [f["metrics"][k] for f in d["frames"]]
        check(abs(d["pooled_metrics"][k]["mean"] - sum(vals) / len(vals)) < 1e-9, f"pooled mean {k}")
        check(d["pooled_metrics"][k]["min"] == min(vals), f"pooled min {k}")
    check(set(d["aggregate_metrics"]) == {"apsnr_y", "apsnr_cb", "apsnr_cr"}, "aggregate apsnr")
    full = d

    p = score(t, ref, dist, *base, "--xml", "-o", "-")
    root = ET.fromstring(p.stdout)
    check(root.tag == "VMAF" and root.find("params") is not None and root.find("fyi") is not None, "xml root")
    frames = root.find("frames").findall("frame")
    check(len(frames) == 6 and frames[0].get("frameNum") == "0", "xml frames")
    check(float(frames[2].get("psnr_y")) == full["frames"][2]["metrics"]["psnr_y"], "xml value at full precision")
    pooled = {m.get("name"): m for m in root.find("pooled_metrics").findall("metric")}
    check(list(pooled) == keys, "xml pooled keys")
    check(root.find("aggregate_metrics").get("apsnr_y") is not None, "xml aggregate")
    check(root.find("params").get("qualityWidth") == "64", "xml params width")

    p = score(t, ref, dist, *base, "--csv", "-o", "-")
    rows = list(csv.reader(io.StringIO(p.stdout)))
    check(rows[0] == ["Frame"] + keys + [""], f"csv header {rows[0]}")
    check(len(rows) == 7 and rows[3][0] == "2", "csv rows")
    check(float(rows[3][1]) == full["frames"][2]["metrics"]["psnr_y"], "csv value")

    p = score(t, ref, dist, *base, "--sub", "-o", "-")
    lines = p.stdout.splitlines()
    check(len(lines) == 6 and lines[1].startswith("{1}{2}frame: 1|psnr_y: "), f"sub: {lines[:1]}")

    p = score(t, ref, dist, *base, "--json", "--precision", "6", "-o", "-")
    check(re.search(r'"psnr_y": \d+\.\d{6}[,\n]', p.stdout) is not None, "--precision 6 writes %.6f")

    # A file output, written whole.
    out = os.path.join(t.tmp, "out.json")
    p = t.run("-r", ref, "-d", dist, *base, "--json", "-o", out)
    check(p.returncode == 0 and json.load(open(out))["frames"], "-o file")
    check(not [f for f in os.listdir(t.tmp) if ".partial-" in f], "no partial file left")
    check("psnr_y" in p.stderr and p.stdout == "", "summary goes to stderr with -o")
    p = score(t, ref, dist, *base, "--json", "-o", out)
    check(p.returncode == 0 and p.stderr == "" and p.stdout == "", "-q with -o prints nothing")
    p = score(t, ref, dist, *base)
    check(p.returncode == 0 and re.search(r"^psnr_y: \d+\.\d{6}$", p.stdout, re.M), "summary on stdout")


def test_flags(t, ref, dist, ref_yuv, dist_yuv):
    def frames_of(*args):
        p = score(t, ref, dist, "-n", "--feature", "psnr", "--json", "-o", "-", *args)
        check(p.returncode == 0, f"run {args}: {p.stderr}")
        return json.loads(p.stdout) if p.returncode == 0 else {"frames": [], "pooled_metrics": {}}

    d = frames_of("--subsample", "2")
    check([f["frameNum"] for f in d["frames"]] == [0, 2, 4], "--subsample 2 lists frames 0, 2, 4")
    d = frames_of("--frame_cnt", "3")
    check(len(d["frames"]) == 3, "--frame_cnt 3")
    all_frames = frames_of()
    d = frames_of("--frame_skip_ref", "1", "--frame_skip_dist", "1")
    check(len(d["frames"]) == 5, "skip 1 + 1 leaves 5 frames")
    check(d["frames"][0]["metrics"] == all_frames["frames"][1]["metrics"], "skipping both aligns frame 1")
    d = frames_of("--frame_skip_dist", "1")
    check(len(d["frames"]) == 5, "skipping only the distorted scores the overlap")
    # Several readers of one file (lanes) give the same frames in the same order.
    os.environ["QUALE_READ_LANES"] = "3"
    lanes = frames_of()
    skipped = frames_of("--frame_skip_dist", "1", "--frame_cnt", "4")
    os.environ.pop("QUALE_READ_LANES")
    check(lanes["frames"] == all_frames["frames"], "three read lanes: same frames")
    check(len(skipped["frames"]) == 4, "three read lanes with skip and count")
    one = frames_of("--threads", "1")
    many = frames_of("--threads", "3")
    check(one["frames"] == many["frames"] and one["pooled_metrics"] == many["pooled_metrics"],
          "--threads 1 and 3 give the same numbers")
    p = score(t, ref, dist, "-n", "--feature", "psnr", "--backend", "auto", "--json", "-o", "-")
    check(p.returncode == 0, "--backend auto falls back to the CPU")

    # Mixed containers: .y4m reference, raw .yuv distorted.
    p = t.run("-r", ref, "-d", dist_yuv, "-w", "64", "-h", "48", "-p", "420", "-b", "8", "-q",
              "-n", "--feature", "psnr", "--json", "-o", "-")
    check(p.returncode == 0 and json.loads(p.stdout)["frames"] == all_frames["frames"],
          f"y4m + yuv inputs: {p.stderr}")
    p = t.run("-r", ref_yuv, "-d", dist_yuv, "-w", "64", "-h", "48", "-p", "420", "-b", "8", "-q",
              "-n", "--feature", "psnr", "--json", "-o", "-")
    check(p.returncode == 0 and json.loads(p.stdout)["frames"] == all_frames["frames"], "yuv + yuv inputs")
    with open(dist, "rb") as f:
        p = subprocess.run([t.quale, "-r", ref, "-d", "-", "-q", "-n", "--feature", "psnr",
                            "--json", "-o", "-"], stdin=f, capture_output=True)
    check(p.returncode == 0 and json.loads(p.stdout)["frames"] == all_frames["frames"], "stdin input")


def test_option_keys(t, tmp):
    """Options rename keys as libvmaf does: choices by name, some keys never."""
    big_ref, big_dist = t.make("big", "--width", "256", "--height", "240", "--frames", "2")
    p = t.run("-r", big_ref, "-d", big_dist, "-q", "-n", "--feature",
              "cambi=cambi_eotf=pq:full_ref=true:window_size=33", "--json", "-o", "-")
    check(p.returncode == 0, f"cambi with choice options: {p.stderr}")
    if p.returncode == 0:
        keys = list(json.loads(p.stdout)["frames"][0]["metrics"])
        check(keys == ["cambi_ceot_pq_ws_33", "cambi_source", "cambi_full_reference"], f"cambi keys {keys}")
    p = t.run("-r", big_ref, "-d", big_dist, "-q", "-n", "--feature", "cambi=eotf=hlg")
    check(p.returncode == 2 and "bt1886, pq" in p.stderr, f"a bad choice names the choices: {p.stderr}")
    # An option's alias names keys only: libvmaf skips "cmxv=0.1" (and
    # scores with the default), quale refuses it and names the option.
    for spec in ("cambi=cmxv=0.1", "cambi=cambi_max_val=0.1:cmxv=0.2"):
        p = t.run("-r", big_ref, "-d", big_dist, "-q", "-n", "--feature", spec)
        no_crash(p, spec)
        check(p.returncode == 2 and "cambi_max_val=" in p.stderr and "'cmxv'" in p.stderr,
              f"{spec}: exit {p.returncode}, {p.stderr!r}")


def test_cambi_heatmaps(t):
    """cambi=heatmaps_path=DIR: one file per scale, frames in order whatever
    --threads, and a clear error where the files cannot be written."""
    w, h, frames = 256, 240, 3
    ref, dist = t.make("heat", "--width", str(w), "--height", str(h), "--frames", str(frames))

    def run(path, *args, **kw):
        p = subprocess.run([t.quale, "-r", ref, "-d", dist, "-q", "-n", "--feature",
                            f"cambi=heatmaps_path={path}", "--json", "-o", "-", *args],
                           capture_output=True, text=True, **kw)
        no_crash(p, f"heatmaps {path} {args}")
        return p

    files = {}
    for threads in ("1", "3"):
        out = os.path.join(t.tmp, f"heat{threads}", "nested")  # parents are made
        p = run(out, "--threads", threads)
        check(p.returncode == 0, f"heatmaps, --threads {threads}: {p.stderr}")
        sw, sh = w, h
        for scale in range(5):
            name = f"cambi_heatmap_scale_{scale}_{sw}x{sh}_16b.gray"
            path = os.path.join(out, name)
            size = os.path.getsize(path) if os.path.exists(path) else -1
            check(size == frames * sw * sh * 2, f"{name}: {size} bytes, wanted {frames} frames")
            files.setdefault(name, []).append(open(path, "rb").read() if size > 0 else b"")
            sw, sh = (sw + 1) // 2, (sh + 1) // 2
    check(len(files) == 5 and all(a == b for a, b in files.values()),
          "heatmaps: the same bytes with --threads 1 and 3")

    # A directory that cannot be made (a file is in the way).
    blocker = os.path.join(t.tmp, "heat_blocker")
    open(blocker, "w").close()
    p = run(os.path.join(blocker, "dir"))
    check(p.returncode == 1 and "heat_blocker/dir" in p.stderr and "heatmaps directory" in p.stderr
          and p.stdout == "", f"heatmaps under a file: exit {p.returncode}, {p.stderr!r}")

    # Files that cannot grow (a file-size limit stands for a full disk).
    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    p = run(os.path.join(t.tmp, "heat_limited"), preexec_fn=limited)
    check(p.returncode == 1 and "cambi_heatmap_scale_0" in p.stderr and "File too large" in p.stderr
          and p.stdout == "", f"heatmaps past the file-size limit: exit {p.returncode}, {p.stderr!r}")


def test_bad_input(t, ref, dist):
    def fails(args, pattern, code=1, what=None):
        p = t.run(*args)
        no_crash(p, what or str(args))
        check(p.returncode == code, f"{what or args}: exit {p.returncode}, wanted {code}: {p.stderr}")
        check(re.search(pattern, p.stderr) is not None, f"{what or args}: message {p.stderr!r} lacks /{pattern}/")

    missing = os.path.join(t.tmp, "missing.y4m")
    fails(["-r", missing, "-d", dist, "-n", "--feature", "psnr"], r"missing\.y4m", what="missing file")
    fails(["-r", ref, "-d", dist, "--bogus"], r"--bogus", code=2, what="unknown flag")
    fails(["-r", ref, "-d", dist, "-n", "--feature", "nonesuch"], r"nonesuch", code=2,
          what="unknown metric")
    fails(["-r", ref, "-d", dist, "-n", "--feature", "psnr=nope=1"], r"nope", code=2,
          what="unknown option")
    fails(["-r", ref, "-d", dist, "-n", "--feature", "psnr", "--backend", "cuda"],
          r"cuda.*not available|no CUDA|cuda", what="--backend cuda without it")
    # Another size is scaled to the reference's (where FFmpeg's libraries
    # are); another bit depth is shifted up to the deeper one (the scores
    # are those of the distorted video shifted by hand: sample << 2).
    other_ref, _ = t.make("other", "--width", "32", "--height", "48", "--frames", "2")
    p = t.run("-r", other_ref, "-d", dist, "-n", "--feature", "psnr")
    check((p.returncode == 0 and "converted to the reference's 32x48 4:2:0 (bicubic" in p.stderr) or
          (p.returncode == 1 and "cannot scale" in p.stderr), f"mismatched sizes: {p.stderr!r}")
    hbd_ref, _ = t.make("hbd", "--width", "64", "--height", "48", "--frames", "2", "--bitdepth", "10")
    p = t.run("-r", hbd_ref, "-d", dist, "-n", "--feature", "psnr", "--json", "-o", "-", "-q")
    q = t.run("-r", hbd_ref, "-d", dist, "-n", "--feature", "psnr", "--score-bitdepth", "10",
              "--json", "-o", "-", "-q")
    check(p.returncode == 0 and q.returncode == 0 and
          json.loads(p.stdout)["frames"] == json.loads(q.stdout)["frames"] and
          json.loads(p.stdout)["input"] == {"distorted_bitdepth": "8, shifted left by 2 to 10"} and
          "is 8-bit: scored at the 10 bits of" in p.stderr,
          f"mismatched depths: {p.stderr!r}")
    gray_ref, _ = t.make("gray", "--width", "64", "--height", "48", "--frames", "2", "--chroma", "400")
    fails(["-r", gray_ref, "-d", dist, "-n", "--feature", "psnr"],
          r"is 4:0:0, .* is 4:2:0; quale converts between 4:2:0, 4:2:2 and 4:4:4 only",
          what="4:0:0 against 4:2:0")

    empty = os.path.join(t.tmp, "empty.yuv")
    open(empty, "wb").close()
    fails(["-r", empty, "-d", empty, "-w", "64", "-h", "48", "-p", "420", "-b", "8", "-n", "--feature", "psnr"],
          r"no frames", what="empty files")
    truncated = os.path.join(t.tmp, "truncated.yuv")
    with open(truncated, "wb") as f:
        f.write(bytes(64 * 48 * 3 // 2 * 2 + 100))
    cut = r"9316 bytes are not a whole number of 64x48 4:2:0 8-bit frames of 4608 bytes"
    fails(["-r", truncated, "-d", truncated, "-w", "64", "-h", "48", "-p", "420", "-b", "8", "-n",
           "--feature", "psnr"], cut, what="truncated last frame")
    os.environ["QUALE_READ_LANES"] = "2"
    fails(["-r", truncated, "-d", truncated, "-w", "64", "-h", "48", "-p", "420", "-b", "8", "-n",
           "--feature", "psnr"], cut, what="truncated last frame, two read lanes")
    os.environ.pop("QUALE_READ_LANES")
    garbage = os.path.join(t.tmp, "garbage.y4m")
    with open(garbage, "wb") as f:
        f.write(b"\x00\xffnot a y4m file at all\n")
    fails(["-r", garbage, "-d", dist, "-n", "--feature", "psnr"], r"garbage\.y4m", what="not a y4m")
    fails(["-r", ref, "-d", dist, "-n", "--feature", "psnr", "-o", "/dev/full"], r"/dev/full|No space",
          what="-o /dev/full")
    nodir = os.path.join(t.tmp, "no", "such", "dir", "out.xml")
    fails(["-r", ref, "-d", dist, "-n", "--feature", "psnr", "-o", nodir], r"out\.xml", what="-o missing dir")
    check(not os.path.exists(os.path.dirname(nodir)), "nothing created for a missing directory")

    # Skipping past the end of a file is an error that says so.
    fails(["-r", ref, "-d", dist, "-n", "--feature", "psnr", "--frame_skip_ref", "10"],
          r"fewer than 10 frames.*frame_skip_ref 10", what="--frame_skip_ref past the end")

    # A shorter distorted: the common frames are scored, with a warning.
    _, short_dist = t.make("short", "--width", "64", "--height", "48", "--frames", "4")
    p = t.run("-r", ref, "-d", short_dist, "-q", "-n", "--feature", "psnr", "--json", "-o", "-")
    check(p.returncode == 0 and len(json.loads(p.stdout)["frames"]) == 4, "shorter distorted: 4 frames")
    check("ended after 4 frames" in p.stderr, f"shorter distorted warns: {p.stderr!r}")


# ---- robustness: tiny frames, early ends, write failures, GPU failures ----

Y4M_TAGS = {("420", 8): "420jpeg", ("422", 8): "422", ("444", 8): "444", ("400", 8): "mono"}


def y4m_tag(chroma, depth):
    if depth == 8:
        return Y4M_TAGS[(chroma, 8)]
    return f"mono{depth}" if chroma == "400" else f"{chroma}p{depth}"


def frame_samples(w, h, chroma):
    cw = {"400": 0, "420": (w + 1) // 2, "422": (w + 1) // 2, "444": w}[chroma]
    ch = {"400": 0, "420": (h + 1) // 2, "422": h, "444": h}[chroma]
    return w * h + 2 * cw * ch


def write_y4m(path, w, h, chroma, depth, frames, seed):
    """A y4m file of deterministic in-range samples that change per frame."""
    n = frame_samples(w, h, chroma)
    top = (1 << depth) - 1
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip C{y4m_tag(chroma, depth)}\n".encode())
        for k in range(frames):
            vals = [((i * 37 + k * 11 + seed * 101 + (i * i) % 7) * 2654435761 >> 7) % (top + 1)
                    for i in range(n)]
            f.write(b"FRAME\n")
            f.write(bytes(vals) if depth == 8 else struct.pack(f"<{n}H", *vals))


def test_tiny_frames(t):
    """Every metric of the registry on tiny and odd frames in every chroma
    format and at 8 to 16 bits: it scores them or refuses naming itself."""
    listing = json.loads(t.run("--list-features", "--json").stdout)
    sizes = [(1, 1), (2, 2), (16, 16), (17, 9), (3, 5)]
    formats = [("420", 8), ("422", 10), ("444", 12), ("400", 16)]
    clips = {}
    for w, h in sizes:
        for chroma, depth in formats:
            ref = os.path.join(t.tmp, f"tiny_{w}x{h}_{chroma}_{depth}_ref.y4m")
            dist = ref.replace("_ref.", "_dist.")
            write_y4m(ref, w, h, chroma, depth, 2, 1)
            write_y4m(dist, w, h, chroma, depth, 2, 2)
            clips[(w, h, chroma, depth)] = (ref, dist)
    census = {}
    for m in listing:
        name = m["name"]
        scored = refused = 0
        for (w, h, chroma, depth), (ref, dist) in clips.items():
            what = f"{name} on {w}x{h} {chroma} {depth}-bit"
            p = t.run("-r", ref, "-d", dist, "-q", "-n", "--feature", name, "--threads", "1",
                      "--json", "-o", "-")
            no_crash(p, what)
            if p.returncode == 0:
                scored += 1
                frames = json.loads(p.stdout)["frames"]
                check(len(frames) == 2 and any(k in frames[1]["metrics"] for k in m["keys"]),
                      f"{what}: scored, but the keys are missing")
            else:
                refused += 1
                check(p.returncode == 1 and re.search(rf"\b{re.escape(name)}\b", p.stderr)
                      and p.stdout == "", f"{what}: refused without naming the metric: {p.stderr!r}")
        census[name] = (scored, refused)
    print("tiny frames through the CLI (scored, refused): " +
          ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in census.items()), flush=True)


def frames_of_y4m(path):
    with open(path, "rb") as f:
        data = f.read()
    header, _, body = data.partition(b"\n")
    return header + b"\n", body


def test_early_end(t, ref, dist):
    """Files that end early or break mid-stream: a clear message, exit 1, and
    no output at all, neither on stdout nor in an -o file."""
    base = ["-n", "--feature", "psnr", "-q"]
    header, body = frames_of_y4m(dist)
    frame_len = len(body) // 6
    out = os.path.join(t.tmp, "early.json")

    def fails(name, data, pattern, *extra, role="-d"):
        path = os.path.join(t.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        args = ["-r", ref, "-d", path] if role == "-d" else ["-r", path, "-d", dist]
        p = t.run(*args, *base, *extra, "--json", "-o", "-")
        no_crash(p, name)
        check(p.returncode == 1 and re.search(pattern, p.stderr), f"{name}: exit {p.returncode}: {p.stderr!r}")
        check(p.stdout == "", f"{name}: wrote {len(p.stdout)} bytes to stdout")
        check(name in p.stderr, f"{name}: the message names the file: {p.stderr!r}")
        if os.path.exists(out):
            os.remove(out)
        p = t.run(*args, *base, *extra, "--json", "-o", out)
        check(p.returncode == 1 and not os.path.exists(out), f"{name}: -o file written by a failed run")
        check(not [f for f in os.listdir(t.tmp) if ".partial-" in f], f"{name}: partial file left")

    fails("cut_last_frame.y4m", header + body[:-100], r"frame 5 is truncated: \d+ of \d+ bytes")
    fails("cut_after_marker.y4m", header + body + b"FRAME\n", r"frame 6 is truncated: 0 of")
    fails("cut_in_marker.y4m", header + body + b"FRA", r"frame 6 is truncated: the file ends inside")
    damaged = header + body[:frame_len] + b"FRAMX" + body[frame_len + 5:]
    fails("no_marker.y4m", damaged, r"frame 1 does not start with a FRAME marker")
    fails("garbage_after.y4m", header + body + b"trailing text", r"frame 6 does not start with a FRAME")
    fails("empty.y4m", b"", r"empty file")
    fails("header_only.y4m", header, r"no frames to score")
    fails("cut_header.y4m", header[:-3], r"header is truncated")
    fails("cut_ref.y4m", header + body[:-1], r"frame 5 is truncated", role="-r")
    # A cut frame among the skipped ones is found too.
    fails("cut_skipped.y4m", header + body[:2 * frame_len - 9], r"frame 1 is truncated",
          "--frame_skip_dist", "3")
    # Raw yuv: a cut last frame, and an empty distorted beside a whole reference.
    raw = ["-w", "64", "-h", "48", "-p", "420", "-b", "8"]
    fails("cut.yuv", body.replace(b"FRAME\n", b"")[:-7],
          r"cut.yuv: 27641 bytes are not a whole number of 64x48 4:2:0 8-bit frames of 4608 "
          r"bytes \(5 frames and 4601 bytes over\)", *raw)
    fails("empty.yuv", b"", r"no frames to score", *raw)

    # One video shorter than the other: the common frames, and a warning
    # that names the shorter one, whichever it is.
    short = os.path.join(t.tmp, "short_ref.y4m")
    with open(short, "wb") as f:
        f.write(header + body[:2 * frame_len])
    p = t.run("-r", short, "-d", dist, *base, "--json", "-o", "-")
    check(p.returncode == 0 and len(json.loads(p.stdout)["frames"]) == 2, "shorter reference: 2 frames")
    check("short_ref.y4m ended after 2 frames" in p.stderr, f"shorter reference warns: {p.stderr!r}")

    # A failed run leaves an existing output as it was.
    keep = os.path.join(t.tmp, "keep.json")
    p = t.run("-r", ref, "-d", dist, *base, "--json", "-o", keep)
    with open(keep, "rb") as f:
        before = f.read()
    p = t.run("-r", ref, "-d", os.path.join(t.tmp, "cut_last_frame.y4m"), *base, "--json", "-o", keep)
    with open(keep, "rb") as f:
        check(p.returncode == 1 and f.read() == before, "a failed run leaves the previous output alone")

    # Both videos from one pipe cannot work.
    p = t.run("-r", "-", "-d", "-", *base)
    check(p.returncode == 2 and "standard input" in p.stderr, f"-r - -d -: {p.stderr!r}")


def as_nobody():
    """preexec_fn for a child that must not be root (root writes anything)."""
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


def test_write_failures(t, ref, dist):
    """Results that cannot be written: exit 1, a message, nothing that looks
    complete."""
    base = ["-r", ref, "-d", dist, "-n", "--feature", "psnr", "-q"]
    # stdout on a full disk, as the results and as the summary.
    with open("/dev/full", "w") as full:
        p = subprocess.run([t.quale, *base, "--json", "-o", "-"], stdout=full, stderr=subprocess.PIPE, text=True)
        no_crash(p, "-o - > /dev/full")
        check(p.returncode == 1 and "No space" in p.stderr, f"-o - > /dev/full: {p.returncode} {p.stderr!r}")
        p = subprocess.run([t.quale, *base[:-1]], stdout=full, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 1 and "No space" in p.stderr,
              f"summary > /dev/full: exit {p.returncode}, {p.stderr!r}")
    # A directory where the file should be.
    p = t.run(*base, "-o", t.tmp)
    check(p.returncode == 1 and "directory" in p.stderr.lower(), f"-o DIR: {p.stderr!r}")

    # Through a symbolic link: the link's target gets the results.
    target = os.path.join(t.tmp, "link_target.xml")
    link = os.path.join(t.tmp, "link.xml")
    with open(target, "w") as f:
        f.write("old")
    os.symlink(target, link)
    p = t.run(*base, "-o", link)
    check(p.returncode == 0 and os.path.islink(link) and open(target).read().startswith("<"),
          f"-o through a symlink writes its target: {p.stderr!r}")

    # A read-only file (and a read-only directory) stay as they are.  The
    # runs are made as an unprivileged user when the tests run as root.
    try:
        subprocess.run([t.quale, "-v"], check=True, capture_output=True, preexec_fn=as_nobody)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"skip: read-only outputs: cannot run as an unprivileged user ({e})", flush=True)
        return
    shared = tempfile.mkdtemp(prefix="quale-ro-")
    try:
        os.chmod(shared, 0o777)  # writable by the unprivileged user: only the file is read-only
        r, d = os.path.join(shared, "r.y4m"), os.path.join(shared, "d.y4m")
        shutil.copy(ref, r)
        shutil.copy(dist, d)
        for path in (r, d):
            os.chmod(path, 0o644)
        ro = os.path.join(shared, "ro.xml")
        with open(ro, "w") as f:
            f.write("previous results\n")
        os.chmod(ro, 0o444)
        args = [t.quale, "-r", r, "-d", d, "-n", "--feature", "psnr", "-q"]
        p = subprocess.run(args + ["-o", ro], capture_output=True, text=True, preexec_fn=as_nobody)
        no_crash(p, "-o read-only file")
        with open(ro) as f:
            kept = f.read()
        check(p.returncode == 1 and "ro.xml" in p.stderr and kept == "previous results\n"
              and os.stat(ro).st_mode & 0o777 == 0o444,
              f"-o read-only file: exit {p.returncode}, {p.stderr!r}, now {kept[:40]!r}")
        rodir = os.path.join(shared, "rodir")
        os.mkdir(rodir, 0o555)
        os.chmod(rodir, 0o555)
        p = subprocess.run(args + ["-o", os.path.join(rodir, "out.xml")], capture_output=True, text=True,
                           preexec_fn=as_nobody)
        check(p.returncode == 1 and "out.xml" in p.stderr and os.listdir(rodir) == [],
              f"-o into a read-only directory: exit {p.returncode}, {p.stderr!r}")
    finally:
        for root, dirs, _ in os.walk(shared):
            for x in dirs:
                os.chmod(os.path.join(root, x), 0o755)
        shutil.rmtree(shared, ignore_errors=True)


def test_robustness_two(t, ref, dist):
    """Requests that would mix values, model names no layout can carry, NaN
    scores, and how a results file replaces an existing one."""
    base = ["-r", ref, "-d", dist, "-q"]
    # Two requests of one metric whose keys coincide: refused, naming both,
    # the same way every time (it used to mix their values frame by frame,
    # differently from run to run).
    for first, second, key in (("float_ssim", "float_ssim=enable_db=true", "float_ssim"),
                               ("psnr", "psnr=reduced_hbd_peak=true", "psnr_y"),
                               ("float_ms_ssim", "float_ms_ssim=enable_db=true", "float_ms_ssim"),
                               ("float_ssim", "float_ssim=scale=1", "float_ssim")):
        runs = [t.run(*base, "-n", "--feature", first, "--feature", second, "--threads", "8",
                      "--json", "-o", "-") for _ in range(2)]
        p = runs[0]
        no_crash(p, f"{first} + {second}")
        check(p.returncode == 2 and p.stdout == "" and f"'{key}'" in p.stderr and
              f"'{second}'" in p.stderr, f"{first} + {second}: exit {p.returncode}, {p.stderr!r}")
        check(runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr and
              runs[0].returncode == runs[1].returncode, f"{first} + {second}: two runs differ")
    # Options that name their keys keep two requests apart, as in libvmaf.
    p = t.run(*base, "-n", "--feature", "vif", "--feature", "vif=vif_enhn_gain_limit=1.5",
              "--json", "-o", "-")
    check(p.returncode == 0 and "integer_vif_scale0_egl_1.5" in json.loads(p.stdout)["pooled_metrics"],
          f"vif + vif=egl 1.5: {p.stderr!r}")
    # A model named like a metric's key.
    p = t.run(*base, "-m", "version=vmaf_v0.6.1:name=integer_adm2")
    check(p.returncode == 2 and "'integer_adm2'" in p.stderr, f"model named integer_adm2: {p.stderr!r}")

    # Model names that a layout cannot carry are refused; allowed ones
    # reach every layout intact.
    for name in ('a"b<c>&d', "new\nline", "comma,name", "two words"):
        p = t.run(*base, "-m", f"version=vmaf_v0.6.1:name={name}", "--json", "-o", "-")
        no_crash(p, f"name={name!r}")
        check(p.returncode == 2 and "cannot name output keys" in p.stderr and p.stdout == "",
              f"name={name!r}: exit {p.returncode}, {p.stderr!r}")
    for layout in ("--json", "--xml", "--csv", "--sub"):
        p = t.run(*base, "-m", "version=vmaf_v0.6.1:name=vmaf-4k.v2_x", layout, "-o", "-")
        check(p.returncode == 0 and "vmaf-4k.v2_x" in p.stdout, f"name=vmaf-4k.v2_x {layout}")
        if layout == "--xml":
            check(ET.fromstring(p.stdout).find("frames") is not None, "xml with a dotted name parses")

    # --nflx_ctc v1.0: the 4K models (vmaf_4k_v0.6.1neg built in), and
    # cambi, which needs 216 samples on a side.
    big_ref, big_dist = t.make("ctc", "--width", "224", "--height", "216", "--frames", "2")
    p = t.run("-r", big_ref, "-d", big_dist, "-q", "--nflx_ctc", "v1.0", "--json", "-o", "-")
    check(p.returncode == 0, f"--nflx_ctc v1.0: exit {p.returncode}, {p.stderr!r}")
    if p.returncode == 0:
        pooled = json.loads(p.stdout)["pooled_metrics"]
        check({"vmaf", "vmaf_neg", "psnr_y", "float_ssim", "cambi"} <= set(pooled),
              f"--nflx_ctc v1.0 keys: {sorted(pooled)}")
    p = t.run("--list-models")
    check("vmaf_4k_v0.6.1neg" in p.stdout.split(), "--list-models has vmaf_4k_v0.6.1neg")

    # A NaN (or infinite) score: a warning naming the key and the frames,
    # null in JSON and "nan"/"inf" elsewhere, the same in every layout.
    model = os.path.join(t.tmp, "absurd_model.json")
    with open(model, "w") as f:
        f.write(json.dumps({"model_dict": {
            "model_type": "LIBSVMNUSVR", "norm_type": "linear_rescale",
            "feature_names": ["VMAF_integer_feature_adm2_score"],
            "slopes": [0.0, 1.0], "intercepts": [0.0, 0.0],
            "model": "svm_type nu_svr\nkernel_type rbf\ngamma 0.04\nnr_class 2\n"
                     "total_sv 1\nrho 0\nSV\n0 1:0.5 \n"}}))
    runs = {}
    for layout in ("--json", "--xml", "--csv", "--sub"):
        p = t.run("-r", ref, "-d", dist, "-m", f"path={model}", layout, "-o", "-")
        no_crash(p, f"NaN model {layout}")
        check(p.returncode == 0 and "vmaf is not a finite number at 6 frames (0, 1, 2, 3, 4, ...)"
              in p.stderr, f"NaN model {layout}: exit {p.returncode}, {p.stderr!r}")
        runs[layout] = p.stdout
    frames = json.loads(runs["--json"])["frames"]
    check(all(f["metrics"]["vmaf"] is None for f in frames), "NaN is null in JSON")
    xml_frames = ET.fromstring(runs["--xml"]).find("frames").findall("frame")
    check({f.get("vmaf") for f in xml_frames} == {"nan"}, "NaN is nan in XML")
    rows = list(csv.reader(io.StringIO(runs["--csv"])))
    col = rows[0].index("vmaf")
    check({r[col] for r in rows[1:]} == {"nan"}, "NaN is nan in CSV")
    check(all("|vmaf: nan|" in line for line in runs["--sub"].splitlines()), "NaN is nan in sub")
    check("-nan" not in "".join(runs.values()), "no -nan anywhere")
    # A bootstrap collection with a gap in its numbers: an error naming it.
    part = {"model_dict": {
        "model_type": "BOOTSTRAP_LIBSVMNUSVR", "norm_type": "linear_rescale",
        "feature_names": ["VMAF_integer_feature_adm2_score"],
        "slopes": [0.01, 1.0], "intercepts": [0.0, 0.0],
        "model": "svm_type nu_svr\nkernel_type rbf\ngamma 0.04\nnr_class 2\n"
                 "total_sv 1\nrho 0\nSV\n0.5 1:0.5 \n"}}
    for numbers, fails in (("0123", False), ("0124", True)):
        gap = os.path.join(t.tmp, f"collection_{numbers}.json")
        with open(gap, "w") as f:
            json.dump({n: part for n in numbers}, f)
        p = t.run(*base, "-m", f"path={gap}", "--json", "-o", "-")
        if fails:
            check(p.returncode == 2 and 'bootstrap model "3" is missing' in p.stderr,
                  f"a collection with a gap: {p.stderr!r}")
        else:
            check(p.returncode == 0 and "vmaf_0003" in json.loads(p.stdout)["pooled_metrics"],
                  f"the same collection without the gap: {p.stderr!r}")

    # Threads: any count is taken, capped, and the numbers are those of one.
    one = t.run(*base, "-n", "--feature", "psnr", "--threads", "1", "--json", "-o", "-")
    many = t.run(*base, "-n", "--feature", "psnr", "--threads", "1000", "--json", "-o", "-")
    check(many.returncode == 0 and "1000 threads asked for" in many.stderr and
          json.loads(one.stdout)["frames"] == json.loads(many.stdout)["frames"],
          f"--threads 1000: {many.stderr!r}")
    p = t.run("--help")
    check("twice the cores" in p.stdout, "--help says how --threads is capped")

    # Replacing a results file keeps what it was: its mode, its hard links,
    # and a long name still works (the temporary name is shortened).
    out = ["-r", ref, "-d", dist, "-n", "--feature", "psnr", "-q"]
    private = os.path.join(t.tmp, "private.xml")
    with open(private, "w") as f:
        f.write("old")
    os.chmod(private, 0o600)
    p = t.run(*out, "-o", private)
    check(p.returncode == 0 and os.stat(private).st_mode & 0o777 == 0o600 and
          open(private).read().startswith("<"), f"a 0600 file stays 0600: {oct(os.stat(private).st_mode)}")
    linked, other = os.path.join(t.tmp, "linked.xml"), os.path.join(t.tmp, "other_link.xml")
    with open(linked, "w") as f:
        f.write("old")
    os.link(linked, other)
    p = t.run(*out, "-o", linked)
    check(p.returncode == 0 and os.path.samefile(linked, other) and open(other).read().startswith("<"),
          "a hard-linked file is written in place: both names see the results")
    long_name = os.path.join(t.tmp, "x" * 250 + ".xml")
    p = t.run(*out, "-o", long_name)
    check(p.returncode == 0 and os.path.exists(long_name), f"a 254-byte name: {p.stderr!r}")
    check(not [f for f in os.listdir(t.tmp) if ".partial-" in f], "no partial file left")
    if os.geteuid() == 0:
        # As root, the new file takes the old one's owner and group too.
        owned = os.path.join(t.tmp, "owned.xml")
        with open(owned, "w") as f:
            f.write("old")
        os.chown(owned, 65534, 65534)
        os.chmod(owned, 0o640)
        p = t.run(*out, "-o", owned)
        st = os.stat(owned)
        check(p.returncode == 0 and (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o640),
              f"owner and mode kept: {st.st_uid}:{st.st_gid} {oct(st.st_mode)}")


def test_score_bitdepth(t, ref_yuv, dist_yuv):
    """--score-bitdepth 10 scores 8-bit video as the same video shifted to
    10 bits (FFmpeg's conversion, libvmaf's tools' 10-bit inputs)."""
    shifted = []
    for path in (ref_yuv, dist_yuv):
        with open(path, "rb") as f:
            data = f.read()
        out = path + ".10bit.yuv"
        with open(out, "wb") as f:
            f.write(struct.pack(f"<{len(data)}H", *(b << 2 for b in data)))
        shifted.append(out)
    base = ["-w", "64", "-h", "48", "-p", "420", "-n", "--feature", "psnr", "--feature",
            "float_ssim", "--feature", "motion", "--feature", "psnr_hvs", "--json", "-o", "-", "-q"]
    a = t.run("-r", ref_yuv, "-d", dist_yuv, "-b", "8", "--score-bitdepth", "10", *base)
    b = t.run("-r", shifted[0], "-d", shifted[1], "-b", "10", *base)
    check(a.returncode == 0 and b.returncode == 0, f"--score-bitdepth 10: {a.stderr!r} {b.stderr!r}")
    if a.returncode == 0 and b.returncode == 0:
        ja, jb = json.loads(a.stdout), json.loads(b.stdout)
        check(ja["frames"] == jb["frames"] and ja["pooled_metrics"] == jb["pooled_metrics"],
              "--score-bitdepth 10 gives the scores of the shifted 10-bit files")
        plain = json.loads(t.run("-r", ref_yuv, "-d", dist_yuv, "-b", "8", *base).stdout)
        check(plain["frames"] != ja["frames"], "and those differ from the 8-bit scores")
    for bad in ("8", "17", "x"):
        p = t.run("-r", ref_yuv, "-d", dist_yuv, "-b", "8", "--score-bitdepth", bad, *base)
        check(p.returncode == 2 and "--score-bitdepth" in p.stderr, f"--score-bitdepth {bad}")
    p = t.run("-r", shifted[0], "-d", shifted[1], "-b", "10", "--score-bitdepth", "9", *base)
    check(p.returncode == 2 and "below the 10 bits" in p.stderr, f"below the files: {p.stderr!r}")


def test_v1_bad_input(t):
    """VMAF v1 and SpEED on what they cannot score: a clear message naming
    the feature (and option), exit 1 for a video they cannot score, 2 for
    options no video could take, never a crash."""
    mono_ref, mono_dist = t.make("v1mono", "--width", "352", "--height", "288", "--frames", "2",
                                 "--chroma", "400")
    tiny_ref, tiny_dist = t.make("v1tiny", "--width", "1", "--height", "1", "--frames", "2")
    small_ref, small_dist = t.make("v1small", "--width", "226", "--height", "120", "--frames", "2")
    ok_ref, ok_dist = t.make("v1ok", "--width", "352", "--height", "288", "--frames", "2")
    wide_ref, wide_dist = t.make("v1wide", "--width", "640", "--height", "360", "--frames", "2")
    cases = [
        ("4:0:0 with a v1 model", [mono_ref, mono_dist, "-m", "version=vmaf_v1.0.16_3d0h"],
         "speed_chroma: 4:0:0 video has no chroma"),
        ("1x1 with a v1 model", [tiny_ref, tiny_dist, "-m", "version=vmaf_v1.0.16_3d0h"],
         "cannot score 1x1"),
        ("chroma below 80x80", [small_ref, small_dist, "-n", "--feature", "speed_chroma"],
         "speed_chroma: the chroma plane is 113x60; SpEED needs 80x80"),
        ("luma below 80 rows after the prescale",
         [small_ref, small_dist, "-n", "--feature", "speed_temporal=speed_prescale=0.5"],
         "speed_temporal: the luma plane is 113x60 after speed_prescale"),
        ("speed_prescale out of range",
         [ok_ref, ok_dist, "-n", "--feature", "speed_chroma=speed_prescale=5"],
         "option 'speed_prescale' must be in [0.1, 4]", 2),
        ("an unknown prescale method",
         [ok_ref, ok_dist, "-n", "--feature", "speed_chroma=speed_prescale_method=area"],
         "option 'speed_prescale_method' takes one of nearest, bilinear, bicubic, lanczos4", 2),
        ("a kernel scale libvmaf does not have",
         [ok_ref, ok_dist, "-n", "--feature", "speed_temporal=speed_kernelscale=0.9"],
         "speed_temporal: invalid speed_kernelscale 0.9", 2),
        ("a prescale too close to 1 that still resizes",
         [wide_ref, wide_dist, "-n", "--feature", "speed_temporal=speed_prescale=0.9992"],
         "speed_prescale 0.9992 resizes 640x360 to 639x360 but is too close to 1"),
        ("speed_temporal's prescale above 1",
         [ok_ref, ok_dist, "-n", "--feature", "speed_temporal=speed_prescale=2"],
         "speed_prescale 2 above 1", 2),
        ("a v1 model's weighting mode out of range",
         [ok_ref, ok_dist, "-m", "version=vmaf_v1.0.16_3d0h:speed_chroma.speed_weight_var_mode=9"],
         "option 'speed_weight_var_mode' must be in [0, 6]", 2),
    ]
    for what, (ref, dist, *args), message, *code in cases:
        p = t.run("-r", ref, "-d", dist, "-q", *args, "--json", "-o", "-")
        no_crash(p, what)
        want = code[0] if code else 1
        check(p.returncode == want and message in p.stderr and p.stdout == "",
              f"{what}: exit {p.returncode}, wanted {want}, {p.stderr!r}")
    # And what they can score: the smallest chroma plane SpEED takes.
    edge_ref, edge_dist = t.make("v1edge", "--width", "160", "--height", "160", "--frames", "3")
    p = t.run("-r", edge_ref, "-d", edge_dist, "-q", "-n", "--feature", "speed_chroma",
              "--feature", "speed_temporal", "--json", "-o", "-")
    check(p.returncode == 0 and "speed_chroma_uv" in p.stdout, f"160x160 is scored: {p.stderr!r}")


def test_in_place_writes(t, ref, dist):
    """A file its user may write in a directory they may not: written in
    place (run as an unprivileged user when the tests run as root)."""
    try:
        subprocess.run([t.quale, "-v"], check=True, capture_output=True, preexec_fn=as_nobody)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"skip: in-place writes: cannot run as an unprivileged user ({e})", flush=True)
        return
    shared = tempfile.mkdtemp(prefix="quale-inplace-")
    try:
        os.chmod(shared, 0o755)  # not writable by the unprivileged user
        r, d = os.path.join(shared, "r.y4m"), os.path.join(shared, "d.y4m")
        shutil.copy(ref, r)
        shutil.copy(dist, d)
        out = os.path.join(shared, "theirs.xml")
        with open(out, "w") as f:
            f.write("previous results\n")
        os.chmod(out, 0o666)
        for path in (r, d):
            os.chmod(path, 0o644)
        p = subprocess.run([t.quale, "-r", r, "-d", d, "-n", "--feature", "psnr", "-q", "-o", out],
                           capture_output=True, text=True, preexec_fn=as_nobody)
        with open(out) as f:
            text = f.read()
        check(p.returncode == 0 and text.startswith("<VMAF") and text.endswith("</VMAF>\n") and
              os.stat(out).st_uid == os.geteuid(),
              f"writable file in a read-only directory: exit {p.returncode}, {p.stderr!r}")
        check(sorted(os.listdir(shared)) == ["d.y4m", "r.y4m", "theirs.xml"], "nothing else created")
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_first_hour(t, ref, dist, ref_yuv, dist_yuv):
    """Each row of what a new user ran into (the "first hour" issue): the
    check before scoring, the device choice, the output format, the exit
    codes, -h, standard input, a y4m named .yuv, messages on clean lines,
    the progress line."""
    psnr = ["-n", "--feature", "psnr"]

    # --backend auto never takes a software renderer; --list-devices says
    # what there is.
    p = t.run("--list-devices", "--json")
    check(p.returncode == 0, f"--list-devices --json: {p.stderr!r}")
    listing = json.loads(p.stdout) if p.returncode == 0 else {}
    check(set(listing) == {"cuda", "hip", "vulkan"}, f"--list-devices --json backends: {sorted(listing)}")
    vulkan = listing.get("vulkan", {}).get("devices", [])
    text = t.run("--list-devices")
    check(text.returncode == 0 and text.stdout.startswith("cuda:") and "\nvulkan:" in text.stdout,
          f"--list-devices: {text.stdout!r}")
    auto = t.run("-r", ref, "-d", dist, *psnr, "--backend", "auto", "--json", "-o", "-")
    chosen = [line for line in auto.stderr.splitlines() if "info: using " in line]
    hardware = [d for d in vulkan if d["type"] != "software"]
    if vulkan and not hardware:
        for d in vulkan:
            check(d["name"] in text.stdout and "auto skips it" in text.stdout and
                  isinstance(d["memory_bytes"], int) and d["index"] >= 0,
                  f"--list-devices names {d['name']} as skipped by auto: {text.stdout!r}")
        check(auto.returncode == 0 and len(chosen) == 1 and "using cpu:" in chosen[0] and
              "software renderer" in chosen[0] and vulkan[0]["name"] in chosen[0],
              f"--backend auto on a software renderer takes the CPU and says why: {auto.stderr!r}")
        p = t.run("-r", ref, "-d", dist, *psnr, "--backend", "vulkan", "--json", "-o", "-")
        check(p.returncode == 0 and f"using vulkan: {vulkan[0]['name']}" in p.stderr and
              "--backend cpu is many times faster" in p.stderr,
              f"--backend vulkan on a software renderer warns: {p.stderr!r}")
        p = t.run("-r", ref, "-d", dist, *psnr, "--backend", "vulkan", "-q", "--json", "-o", "-")
        check("software renderer" in p.stderr, f"the warning stays with -q: {p.stderr!r}")
    elif not vulkan:
        print("skip: no Vulkan device: the software-renderer rows are not checked", flush=True)
    cpu = t.run("-r", ref, "-d", dist, *psnr, "--json", "-o", "-")
    check(auto.returncode == 0 and json.loads(auto.stdout)["frames"] == json.loads(cpu.stdout)["frames"],
          "auto gives the CPU's numbers")

    # A raw file of the wrong size is refused before a frame is scored.
    wrong = ["-w", "640", "-h", "360", "-p", "420", "-b", "8"]
    out = os.path.join(t.tmp, "never.json")
    p = t.run("-r", ref_yuv, "-d", dist_yuv, *wrong, *psnr, "-o", out)
    check(p.returncode == 1 and re.search(r"sample_ref\.yuv: 27648 bytes are not a whole number of "
                                          r"640x360 4:2:0 8-bit frames of 345600 bytes", p.stderr)
          and "hint: check -w/-h/-p/-b" in p.stderr and not os.path.exists(out),
          f"a 64x48 yuv read as 640x360: exit {p.returncode}, {p.stderr!r}")

    # A wrong format that the size cannot show (swapped -w/-h, 4:4:4 read
    # as 4:2:0 where the frame counts come out whole, 10-bit read as 8-bit
    # 4:4:4): the first frame shows it, and the run says so; --force scores
    # it all the same (without, tests/cli_first_day.py).
    for args, why in ((["-w", "48", "-h", "64", "-p", "420", "-b", "8"], "48x64 4:2:0 8-bit"),):
        p = t.run("-r", ref_yuv, "-d", dist_yuv, *args, *psnr, "-q", "--force")
        check(p.returncode == 0 and f"sample_ref.yuv does not look like {why} video: the rows of "
              "its luma plane do not line up" in p.stderr and "check -w/-h/-p/-b" in p.stderr,
              f"{args}: {p.stderr!r}")
    p = t.run("-r", ref_yuv, "-d", dist_yuv, "-w", "64", "-h", "48", "-p", "420", "-b", "8", *psnr, "-q")
    check(p.returncode == 0 and p.stderr == "", f"the right format: no warning: {p.stderr!r}")
    deep_ref, _ = t.make("deep", "--width", "64", "--height", "48", "--frames", "2", "--raw",
                         "--bitdepth", "10")
    p = t.run("-r", deep_ref, "-d", deep_ref, "-w", "64", "-h", "48", "-p", "444", "-b", "8", *psnr, "-q",
              "--force")
    check(p.returncode == 0 and "every other byte is 0 to 15" in p.stderr and
          p.stderr.count("does not look like") == 1, f"10-bit 4:2:0 read as 8-bit 4:4:4: {p.stderr!r}")

    # --align auto: a distorted video missing its first 3 frames is found
    # 3 frames late, and scored as --frame_skip_ref 3 scores it.
    long_ref, long_dist = t.make("long", "--width", "96", "--height", "64", "--frames", "20",
                                 "--raw")
    late = os.path.join(t.tmp, "late.yuv")
    with open(long_dist, "rb") as f:
        data = f.read()
    with open(late, "wb") as f:
        f.write(data[3 * 96 * 64 * 3 // 2:])
    fmt = ["-w", "96", "-h", "64", "-p", "420", "-b", "8"]
    p = t.run("-r", long_ref, "-d", late, *fmt, *psnr, "--align", "auto", "--json", "-o", "-")
    q = t.run("-r", long_ref, "-d", late, *fmt, *psnr, "--frame_skip_ref", "3", "-q", "--json",
              "-o", "-")
    check(p.returncode == 0 and q.returncode == 0 and
          "the distorted video starts 3 frames later than the reference" in p.stderr and
          "--frame_skip_ref 3" in p.stderr and
          json.loads(p.stdout)["frames"] == json.loads(q.stdout)["frames"],
          f"--align auto finds 3 frames: {p.stderr!r}")
    # The offset found goes into the output (--frame_skip_ref by hand adds
    # nothing: that run is libvmaf's layout).
    found = json.loads(p.stdout).get("input", {}).get("alignment", "") if p.returncode == 0 else ""
    check(found.startswith("auto: offset -3 frames (frame_skip_ref 3, frame_skip_dist 0), luma PSNR")
          and "input" not in json.loads(q.stdout), f"--align auto's note in the output: {found!r}")
    p = t.run("-r", late, "-d", long_dist, *fmt, *psnr, "--align", "auto", "-q")
    check(p.returncode == 0 and "the reference starts 3 frames later than the distorted video"
          in p.stderr, f"--align auto the other way: {p.stderr!r}")
    p = t.run("-r", long_ref, "-d", long_dist, *fmt, *psnr, "--align", "auto", "-q")
    check(p.returncode == 0 and "the videos are aligned" in p.stderr, f"aligned: {p.stderr!r}")
    p = t.run("-r", long_ref, "-d", "-", *fmt, *psnr, "--align", "auto")
    check(p.returncode == 2 and "standard input" in p.stderr, f"--align auto -d -: {p.stderr!r}")

    # Frame rates that differ (y4m F tags) are said: frames pair by order.
    with open(ref, "rb") as f:
        y4m = f.read()
    head_end = y4m.index(b"\n")
    header = y4m[:head_end]
    rated = {}
    for rate in (b"25:1", b"50:1"):
        path = os.path.join(t.tmp, f"rate_{rate.decode().replace(':', '_')}.y4m")
        tags = [tag for tag in header.split(b" ") if not tag.startswith(b"F")]
        with open(path, "wb") as f:
            f.write(b" ".join(tags + [b"F" + rate]) + y4m[head_end:])
        rated[rate] = path
    p = t.run("-r", rated[b"25:1"], "-d", rated[b"50:1"], *psnr, "-q")
    check(p.returncode == 0 and "the frame rates differ: " in p.stderr and "25.000 fps" in p.stderr
          and "50.000 fps" in p.stderr, f"frame rates 25 and 50: {p.stderr!r}")
    p = t.run("-r", rated[b"25:1"], "-d", rated[b"25:1"], *psnr, "-q")
    check(p.returncode == 0 and p.stderr == "", f"the same rate: no warning: {p.stderr!r}")

    # An output directory that is not there: said first, with the user's path.
    missing = os.path.join(t.tmp, "missing_dir", "out.xml")
    p = t.run("-r", ref, "-d", dist, *psnr, "-o", missing)
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and
          f"cannot write '{missing}': the directory '{os.path.dirname(missing)}' does not exist"
          in p.stderr and ".partial" not in p.stderr,
          f"-o into a missing directory: exit {p.returncode}, {p.stderr!r}")

    # The output format: the flag, the extension, both, neither.
    p = t.run("-r", ref, "-d", dist, *psnr, "--json")
    check(p.returncode == 0 and len(json.loads(p.stdout)["frames"]) == 6 and
          re.search(r"^psnr_y: [0-9.]+$", p.stderr, re.M),
          f"--json without -o: JSON on stdout, the summary on stderr: {p.stderr!r}")
    for ext, parse in ((".json", lambda x: json.loads(x)["frames"]),
                       (".xml", lambda x: ET.fromstring(x).find("frames")),
                       (".csv", lambda x: x.startswith("Frame,")),
                       (".sub", lambda x: x.startswith("{0}{1}"))):
        path = os.path.join(t.tmp, "scores" + ext)
        p = t.run("-r", ref, "-d", dist, *psnr, "-q", "-o", path)
        with open(path) as f:
            body = f.read()
        try:
            ok = bool(parse(body))
        except (ValueError, ET.ParseError):
            ok = False
        check(p.returncode == 0 and ok, f"-o scores{ext} without a flag: {body[:60]!r}")
    path = os.path.join(t.tmp, "scores.txt")
    p = t.run("-r", ref, "-d", dist, *psnr, "-q", "-o", path)
    with open(path) as f:
        check(p.returncode == 0 and f.read().startswith("<VMAF "), "-o scores.txt: XML, libvmaf's default")
    # .srt is SubRip, which is not libvmaf's subtitle layout (MicroDVD):
    # refused without --sub rather than written in the wrong layout.
    p = t.run("-r", ref, "-d", dist, *psnr, "-q", "-o", os.path.join(t.tmp, "x.srt"))
    check(p.returncode == 2 and "MicroDVD" in p.stderr, f"-o x.srt: {p.returncode} {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, *psnr, "-q", "--sub", "-o", os.path.join(t.tmp, "x.srt"))
    check(p.returncode == 0, f"--sub -o x.srt: {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, *psnr, "-q", "--csv", "-o", os.path.join(t.tmp, "x.json"))
    check(p.returncode == 2 and "ends in '.json', but --csv asks for another format" in p.stderr,
          f"--csv -o x.json: {p.returncode} {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, *psnr, "--json", "--csv")
    check(p.returncode == 2 and "--json and --csv both choose the output format" in p.stderr,
          f"--json --csv: {p.returncode} {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, *psnr, "-q", "--json", "--json", "-o", "-")
    check(p.returncode == 0, "the same format flag twice is fine")

    # -n with -m: the model's features, as libvmaf computes them, no model
    # score (libvmaf's tool accepts it; quale used to refuse it).
    p = t.run("-r", ref, "-d", dist, "-n", "-m", "version=vmaf_v0.6.1", "-q", "--json", "-o", "-")
    full = t.run("-r", ref, "-d", dist, "-m", "version=vmaf_v0.6.1", "-q", "--json", "-o", "-")
    if p.returncode == 0 and full.returncode == 0:
        a, b = json.loads(p.stdout), json.loads(full.stdout)
        keys = list(a["frames"][0]["metrics"])
        check("vmaf" not in keys and "integer_vif_scale0" in keys and
              all(fa["metrics"][k] == fb["metrics"][k] for fa, fb in zip(a["frames"], b["frames"])
                  for k in keys), f"-n -m: the model's features only: {keys}")
    else:
        check(False, f"-n -m: exit {p.returncode}: {p.stderr!r}")

    # Usage errors exit 2, every one.
    model_file = os.path.join(t.tmp, "file.json")
    with open(model_file, "w") as f:
        f.write("{}")
    for args, message in ((["-m", "version=nonesuch"], "nonesuch"),
                          (["-m", model_file], "file.json"),
                          (["-n", "--feature", "ssim"], "unknown metric 'ssim'"),
                          (["-n", "--feature", "psnr=enable_chroma=maybe"], "enable_chroma"),
                          (["-m", "path=" + os.path.join(t.tmp, "absent.json")], "absent.json")):
        p = t.run("-r", ref, "-d", dist, "-q", *args)
        no_crash(p, str(args))
        check(p.returncode == 2 and message in p.stderr and p.stdout == "",
              f"{args}: exit {p.returncode}, wanted 2: {p.stderr!r}")

    # -h alone: a hint to --help; -h without its value says so too.
    p = t.run("-h")
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "quale --help" in p.stderr,
          f"quale -h: {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, "-h")
    check(p.returncode == 2 and "--help" in p.stderr and "--height" in p.stderr, f"-h at the end: {p.stderr!r}")

    # Standard input: named so, an empty pipe explained (ffmpeg without
    # -strict -1 writes nothing for 10-bit y4m).
    p = t.run("-r", ref, "-d", "-", *psnr, stdin="")
    check(p.returncode == 1 and "distorted video: standard input: no data: the stream ended before "
          "its first byte" in p.stderr and "-strict -1" in p.stderr,
          f"empty standard input: {p.stderr!r}")
    with open(dist, "rb") as f:
        data = f.read()
    head = data.index(b"FRAME")
    frame_len = (len(data) - head) // 6
    p = subprocess.run([t.quale, "-r", ref, "-d", "-", *psnr, "-q", "--json", "-o", "-"],
                       input=data[:head + 3 * frame_len], capture_output=True)
    err = p.stderr.decode()
    check(p.returncode == 0 and "quale: warning: standard input ended after 3 frames" in err and
          "'-'" not in err, f"a short standard input is named so: {err!r}")

    # A y4m named .yuv, with raw flags: read as the y4m it is.
    disguised = os.path.join(t.tmp, "disguised.yuv")
    shutil.copy(dist, disguised)
    raw = ["-w", "64", "-h", "48", "-p", "420", "-b", "8"]
    p = t.run("-r", ref_yuv, "-d", disguised, *raw, *psnr, "--json", "-o", "-")
    q = t.run("-r", ref_yuv, "-d", dist, *raw, *psnr, "--json", "-o", "-")
    check(p.returncode == 0 and q.returncode == 0 and
          json.loads(p.stdout)["frames"] == json.loads(q.stdout)["frames"] and
          "disguised.yuv is YUV4MPEG2" in p.stderr and p.stderr.count("is YUV4MPEG2") == 1,
          f"a y4m named .yuv: {p.stderr!r}")
    mp4 = os.path.join(t.tmp, "movie.yuv")
    with open(mp4, "wb") as f:
        f.write(b"\0\0\0\x20ftypisom" + bytes(4596))
    p = t.run("-r", ref_yuv, "-d", mp4, *raw, *psnr)
    # (A broken one: decoded where quale has a decoder, it fails saying
    # what it is; without one, the hint says how to decode it.)
    check(p.returncode == 1 and "an MP4/MOV file (compressed video)" in p.stderr and
          ("cannot be decoded" in p.stderr or
           f"ffmpeg -i {mp4} -strict -1 -f yuv4mpegpipe - | quale -d - ..." in p.stderr),
          f"an mp4 named .yuv: {p.stderr!r}")

    # Messages stand on their own lines: no blank line, with -q or not.
    short = os.path.join(t.tmp, "short.y4m")
    with open(short, "wb") as f:
        f.write(data[:head + 2 * frame_len])
    for quiet in (["-q"], []):
        p = t.run("-r", ref, "-d", short, *psnr, *quiet, "--json", "-o", os.devnull)
        check(p.returncode == 0 and p.stderr.startswith("quale: warning:") and "\n\n" not in p.stderr,
              f"a warning {quiet}: {p.stderr!r}")

    # The progress line on a terminal: frames scored out of the total,
    # the time left, and the final count.
    import pty
    master, slave = pty.openpty()
    proc = subprocess.Popen([t.quale, "-r", ref, "-d", dist, *psnr, "-o", os.devnull],
                            stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    proc.wait()
    screen = shown.decode(errors="replace")
    check(proc.returncode == 0 and re.search(r"\r[0-6]/6 frames  [0-9.]+ fps", screen) and
          re.search(r"\r6 frames  [0-9.]+ fps\x1b\[K\r?\n", screen),
          f"the progress line: frames scored of 6, then the final count: {screen!r}")
    progress = subprocess.run([t.quale, "-r", ref, "-d", dist, *psnr, "-o", os.devnull],
                              capture_output=True, text=True)
    check("fps" not in progress.stderr, "no progress line when stderr is not a terminal")



def test_gpu_failures(t, ref, dist):
    """Simulated device failures (the backends read QUALE_*_LIBRARY and
    QUALE_*_MEMORY_LIMIT): a clear message and exit 1, never a crash, and
    --backend auto falls back to the CPU with one notice."""
    base = ["-r", ref, "-d", dist, "-n", "--feature", "psnr", "--json", "-o", "-"]

    def run_env(env, *args):
        return subprocess.run([t.quale, *base, *args], capture_output=True, text=True,
                              env={**os.environ, **env})

    cpu = t.run(*base, "-q")
    for gpu, name in (("cuda", "CUDA"), ("vulkan", "VULKAN")):
        p = run_env({f"QUALE_{name}_LIBRARY": "/nonexistent/lib.so"}, "--backend", gpu)
        no_crash(p, f"{gpu} without its library")
        check(p.returncode == 1 and gpu in p.stderr and p.stdout == "",
              f"--backend {gpu} without its library: exit {p.returncode}, {p.stderr!r}")
        p = run_env({"QUALE_CUDA_LIBRARY": "/nonexistent/lib.so",
                     "QUALE_VULKAN_LIBRARY": "/nonexistent/lib.so"}, "--backend", "auto")
        notices = [line for line in p.stderr.splitlines() if "using cpu: no GPU backend" in line]
        check(p.returncode == 0 and len(notices) == 1 and
              json.loads(p.stdout)["frames"] == json.loads(cpu.stdout)["frames"],
              f"--backend auto without GPU libraries: exit {p.returncode}, notices {notices}")
    # Out of device memory, where a Vulkan device is there (lavapipe in CI).
    p = t.run(*base, "-q", "--backend", "vulkan")
    if p.returncode != 0:
        print(f"skip: no Vulkan device here ({p.stderr.strip()[:120]})", flush=True)
        return
    p = run_env({"QUALE_VULKAN_MEMORY_LIMIT": "1000"}, "--backend", "vulkan")
    no_crash(p, "vulkan out of memory")
    check(p.returncode == 1 and "memory" in p.stderr and p.stdout == "",
          f"--backend vulkan with 1000 bytes of device memory: exit {p.returncode}, {p.stderr!r}")
    # With auto, a device that cannot hold the video hands it to the CPU
    # (auto takes lavapipe only when told to, for this test).
    p = run_env({"QUALE_VULKAN_MEMORY_LIMIT": "1000", "QUALE_AUTO_TAKES_SOFTWARE": "1"},
                "--backend", "auto")
    no_crash(p, "auto, vulkan out of memory")
    check(p.returncode == 0 and "using the CPU" in p.stderr and
          json.loads(p.stdout)["frames"] == json.loads(cpu.stdout)["frames"],
          f"--backend auto falls back when the device is out of memory: exit {p.returncode}, "
          f"{p.stderr!r}")
    # QUALE_VULKAN_PROFILE: the twins one after another, timed, the same
    # scores.
    prof_base = ["-r", ref, "-d", dist, "-n", "--feature", "psnr", "--feature", "motion",
                 "--json", "-o", "-", "--backend", "vulkan"]
    plain = subprocess.run([t.quale, *prof_base, "-q"], capture_output=True, text=True)
    p = subprocess.run([t.quale, *prof_base], capture_output=True, text=True,
                       env={**os.environ, "QUALE_VULKAN_PROFILE": "1"})
    lines = [line for line in p.stderr.splitlines() if "Vulkan profile" in line]
    check(p.returncode == 0 and plain.returncode == 0 and
          json.loads(p.stdout)["frames"] == json.loads(plain.stdout)["frames"] and
          any("6 frames" in line for line in lines) and
          any(" psnr " in line for line in lines) and any(" motion " in line for line in lines),
          f"QUALE_VULKAN_PROFILE: exit {p.returncode}, {lines}")


def test_host_pages(t, ref, dist):
    """The pictures a GPU reads live in host memory of our own, imported
    (Vulkan, lavapipe here) or registered (CUDA); QUALE_HOST_PAGES=driver
    takes the driver's memory instead.  Both give the same file."""
    base = ["-r", ref, "-d", dist, "--feature", "psnr", "--json", "-o", "-", "-q"]
    for gpu in ("vulkan", "cuda"):
        own = t.run(*base, "--backend", gpu)
        if own.returncode != 0:
            print(f"skip: no {gpu} device here: its host pages are not checked", flush=True)
            continue
        driver = subprocess.run([t.quale, *base, "--backend", gpu], capture_output=True, text=True,
                                env={**os.environ, "QUALE_HOST_PAGES": "driver"})
        check(driver.returncode == 0 and
              json.loads(own.stdout)["frames"] == json.loads(driver.stdout)["frames"] and
              len(json.loads(own.stdout)["frames"]) > 1,
              f"{gpu}: our own host pages and the driver's give the same frames "
              f"(exit {driver.returncode}, {driver.stderr[:200]!r})")


def test_split_runs(t, ref, dist):
    """--segment, quale merge, --frames, --pool, --gpu and quale report as a
    user meets them (under the sanitizers in scripts/sanitize.sh); the
    corpus-wide exactness is tests/segment_merge.py's."""
    # the speed, and the command lines of the provenance (a part's names
    # its --segment; tests/cli_provenance.py checks what the merge keeps)
    def strip_fps(text):
        return re.sub(r'"fps": [^\n]*\n|<fyi fps="[^"]*" />|\s*"command": \[[^\n]*\n', "",
                      text)

    base = ["-r", ref, "-d", dist, "--feature", "psnr", "--threads", "2", "-q"]
    whole = os.path.join(t.tmp, "split.whole.json")
    p = t.run(*base, "--json", "-o", whole)
    check(p.returncode == 0, f"a whole run: {p.stderr}")
    parts = [os.path.join(t.tmp, f"split.part{k}.json") for k in (1, 2, 3)]
    for k, part in enumerate(parts, 1):
        p = t.run(*base, "--segment", f"{k}/3", "-o", part)
        no_crash(p, f"--segment {k}/3")
        check(p.returncode == 0 and os.path.exists(part), f"--segment {k}/3: {p.stderr}")
    merged = os.path.join(t.tmp, "split.merged.json")
    p = t.run("merge", "-q", "-o", merged, *parts[::-1])
    no_crash(p, "merge")
    with open(whole) as a, open(merged) as b:
        check(p.returncode == 0 and strip_fps(a.read()) == strip_fps(b.read()),
              f"merge: the parts merged differ from the whole run: {p.stderr}")
    p = t.run("merge", "-o", os.path.join(t.tmp, "x.json"), parts[0], parts[2])
    check(p.returncode == 1 and "missing: part 2 " in p.stderr, f"merge, a part missing: {p.stderr}")
    p = t.run("merge", parts[0], "--precision", "99")
    check(p.returncode == 2 and "--precision" in p.stderr, f"merge --precision 99: {p.stderr}")
    for bad, why in (("0/3", "--segment takes K/N"), ("4/3", "--segment takes K/N"),
                     ("1/0", "--segment takes K/N")):
        p = t.run(*base, "--segment", bad, "-o", os.path.join(t.tmp, "x.json"))
        check(p.returncode == 2 and why in p.stderr, f"--segment {bad}: {p.stderr}")
    p = t.run(*base, "--segment", "1/7", "-o", os.path.join(t.tmp, "x.json"))
    check(p.returncode == 1 and "fewer than 7 parts" in p.stderr, f"--segment 1/7 of 6 frames: {p.stderr}")
    p = t.run(*base, "--segment", "1/2")
    check(p.returncode == 2 and "-o PART.json" in p.stderr, f"--segment without -o: {p.stderr}")
    p = t.run(*base, "--frames", "2:4", "--json", "-o", "-")
    frames = [f["frameNum"] for f in json.loads(p.stdout)["frames"]] if p.returncode == 0 else []
    check(frames == [2, 3], f"--frames 2:4 lists frames {frames}: {p.stderr}")
    p = t.run(*base, "--frames", "4:2")
    check(p.returncode == 2 and "--frames takes FIRST:END" in p.stderr, f"--frames 4:2: {p.stderr}")
    p = t.run(*base, "--pool", "p5,low1", "--json", "-o", "-")
    pooled = json.loads(p.stdout)["pooled_metrics"]["vmaf"] if p.returncode == 0 else {}
    check({"p5", "low1"} <= set(pooled), f"--pool p5,low1 in pooled_metrics: {sorted(pooled)}")
    p = t.run(*base, "--pool", "p100")
    check(p.returncode == 2 and "--pool takes" in p.stderr, f"--pool p100: {p.stderr}")
    p = t.run(*base, "--gpu", "0")
    check(p.returncode == 2 and "--backend cuda, hip or vulkan" in p.stderr, f"--gpu on the CPU: {p.stderr}")
    # --gpu with a device named twice: two parts at once on lavapipe, if any
    listing = t.run("--list-devices", "--json")
    devices = json.loads(listing.stdout).get("vulkan", {}).get("devices", []) if listing.returncode == 0 else []
    if devices:
        spread = os.path.join(t.tmp, "split.gpu.json")
        one = os.path.join(t.tmp, "split.gpu1.json")
        d = str(devices[0]["index"])
        p1 = t.run(*base, "--backend", "vulkan", "--gpu_device", d, "--json", "-o", one)
        p = t.run(*base, "--backend", "vulkan", "--gpu", f"{d},{d}", "--json", "-o", spread)
        no_crash(p, "--gpu")
        with open(one) as a, open(spread) as b:
            check(p.returncode == 0 and p1.returncode == 0 and
                  strip_fps(a.read()) == strip_fps(b.read()), f"--gpu {d},{d}: {p.stderr}")
    page = os.path.join(t.tmp, "split.html")
    p = t.run("report", whole, merged, "-o", page)
    no_crash(p, "report")
    with open(page) if os.path.exists(page) else io.StringIO("") as f:
        html = f.read()
    check(p.returncode == 0 and "quale-data" in html and "@QUALE_REPORT_DATA@" not in html,
          f"quale report: {p.stderr}")
    p = t.run(*base, "--html", page, "-o", os.path.join(t.tmp, "with_html.json"))
    check(p.returncode == 0 and os.path.getsize(page) > 0, f"--html: {p.stderr}")
    bad = os.path.join(t.tmp, "not_results.json")
    with open(bad, "w") as f:
        f.write('{"a": 1}')
    p = t.run("report", bad, "-o", os.path.join(t.tmp, "bad.html"))
    check(p.returncode == 1 and "not_results.json" in p.stderr and
          not os.path.exists(os.path.join(t.tmp, "bad.html")), f"report of a non-result: {p.stderr}")


def test_robustness_three(t, ref, dist):
    """No output destroys an input or another output; fewer frames than
    GPUs; --pool's numbers in decimal only."""
    import hashlib

    def digest(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    work = os.path.join(t.tmp, "r3")
    os.makedirs(work, exist_ok=True)
    r, d = os.path.join(work, "r.y4m"), os.path.join(work, "d.y4m")
    shutil.copy(ref, r)
    shutil.copy(dist, d)
    before = {p: digest(p) for p in (r, d)}
    base = ["-r", r, "-d", d, "--feature", "psnr", "--threads", "2", "-q"]

    def refused(args, pattern, what, append_stdout_to=None):
        if append_stdout_to:
            with open(append_stdout_to, "a") as out:
                p = subprocess.run([t.quale, *args], stdout=out, stderr=subprocess.PIPE,
                                   text=True)
        else:
            p = t.run(*args)
        no_crash(p, what)
        check(p.returncode == 2 and re.search(pattern, p.stderr),
              f"{what}: exit {p.returncode}, {p.stderr.strip()!r}")
        for path, sha in before.items():
            check(digest(path) == sha, f"{what}: {os.path.basename(path)} was changed")

    refused([*base, "-o", r], r"-o '.*r\.y4m' is the reference video", "-o REFERENCE")
    refused([*base, "--html", d], r"--html '.*d\.y4m' is the distorted video", "--html DISTORTED")
    link = os.path.join(work, "link.json")
    os.symlink(r, link)
    refused([*base, "-o", link], r"is the reference video", "-o LINK-TO-REFERENCE")
    hard = os.path.join(work, "hard.json")
    os.link(d, hard)
    refused([*base, "-o", hard], r"is the distorted video", "-o HARD-LINK-TO-DISTORTED")
    out = os.path.join(work, "same.json")
    refused([*base, "-o", out, "--html", out], r"are the same file", "-o X --html X")
    check(not os.path.exists(out), "-o X --html X: X was written")
    refused([*base, "-o", os.path.join(work, ".", "same.json"), "--html",
             os.path.join(os.path.abspath(work), "same.json")], r"are the same file",
            "-o DIR/./X --html /ABS/DIR/X")
    refused([*base, "-o", "-"], r"standard output \(-o -\) is the reference video",
            "-o - appended to the reference", append_stdout_to=r)
    model = os.path.join(work, "model.json")
    # any file given as a model's path= is an input, whatever it holds
    with open(model, "w") as f:
        f.write("{}")
    before[model] = digest(model)
    refused([*base, "-m", f"path={model}:name=m", "-o", model], r"is a model file",
            "-o MODEL-FILE")
    # merge and its parts
    parts = [os.path.join(work, f"p{k}.json") for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        p = t.run(*base, "--segment", f"{k}/2", "-o", part)
        check(p.returncode == 0, f"--segment {k}/2: {p.stderr}")
        before[part] = digest(part)
    refused(["merge", "-o", parts[0], *parts], r"-o '.*p1\.json' is a part", "merge -o PART")
    refused(["report", parts[0], "-o", parts[0]], r"is a results file", "report -o RESULTS")

    # fewer frames than GPUs (a device named twice stands in for two)
    listing = t.run("--list-devices", "--json")
    devices = json.loads(listing.stdout).get("vulkan", {}).get("devices", []) \
        if listing.returncode == 0 else []
    if devices:
        dev = str(devices[0]["index"])
        one = os.path.join(work, "tail.one.json")
        two = os.path.join(work, "tail.two.json")
        p1 = t.run(*base, "--backend", "vulkan", "--gpu_device", dev, "--frames", "5:",
                   "--json", "-o", one)
        p = t.run(*base, "--backend", "vulkan", "--gpu", f"{dev},{dev},{dev}", "--frames", "5:",
                  "--json", "-o", two)
        no_crash(p, "--gpu with more devices than frames")
        def scores(path):
            """The file but what says how it was run (the speed, the
            provenance: command lines and devices differ)."""
            with open(path) as f:
                doc = json.load(f)
            doc.pop("fps", None)
            doc.pop("provenance", None)
            return doc
        same = p.returncode == 0 and p1.returncode == 0 and scores(one) == scores(two)
        check(same and "--segment" not in p.stderr,
              f"--gpu {dev},{dev},{dev} --frames 5: on 6 frames: {p.stderr.strip()!r}")

    # what is asked for on standard output must arrive, or be said
    for args in (["--help"], ["-v"], ["--list-features"], ["--list-models", "--json"],
                 ["--list-devices"], ["merge", "--help"], ["report", "--help"]):
        with open("/dev/full", "w") as full:
            p = subprocess.run([t.quale, *args], stdout=full, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 1 and "cannot write" in p.stderr,
              f"{' '.join(args)} > /dev/full: exit {p.returncode}, {p.stderr.strip()!r}")
    for bad in ("p0x10", "p1e1", "p05", "p5.0", "p-1", "pinf", "p 5", "low0x1", "p.5", "p5."):
        p = t.run(*base, "--pool", bad, "--json", "-o", "-")
        check(p.returncode == 2 and "--pool takes" in p.stderr, f"--pool {bad!r}: {p.stderr}")
    p = t.run(*base, "--pool", "p0.5,p99.9,low2.5", "--json", "-o", "-")
    pooled = json.loads(p.stdout)["pooled_metrics"]["psnr_y"] if p.returncode == 0 else {}
    check({"p0.5", "p99.9", "low2.5"} <= set(pooled), f"--pool p0.5,p99.9,low2.5: {pooled}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Tool(args.quale, args.sample, tmp)
        ref, dist = t.make("y4m", "--width", "64", "--height", "48", "--frames", "6")
        ref_yuv, dist_yuv = t.make("yuv", "--width", "64", "--height", "48", "--frames", "6", "--raw")
        test_information(t)
        test_layouts(t, ref, dist)
        test_flags(t, ref, dist, ref_yuv, dist_yuv)
        test_option_keys(t, tmp)
        test_cambi_heatmaps(t)
        test_bad_input(t, ref, dist)
        test_early_end(t, ref, dist)
        test_write_failures(t, ref, dist)
        test_robustness_two(t, ref, dist)
        test_score_bitdepth(t, ref_yuv, dist_yuv)
        test_v1_bad_input(t)
        test_in_place_writes(t, ref, dist)
        test_gpu_failures(t, ref, dist)
        test_host_pages(t, ref, dist)
        test_first_hour(t, ref, dist, ref_yuv, dist_yuv)
        test_tiny_frames(t)
        test_split_runs(t, ref, dist)
        test_robustness_three(t, ref, dist)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
