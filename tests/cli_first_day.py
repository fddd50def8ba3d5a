#!/usr/bin/env python3
"""What a new user meets on the first day: messages that name what was
meant, exit codes scripts can trust, a summary with every value asked for,
the model chosen for the video, alignment of a video of another size.

Each check here failed before the behaviour it checks was built."""
import argparse
import json
import os
import pty
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from tally import check, finish  # noqa: E402


class Tool:
    def __init__(self, quale, sample, tmp):
        self.quale, self.sample, self.tmp = quale, sample, tmp

    def run(self, *args, cwd=None):
        return subprocess.run([self.quale, *args], capture_output=True, text=True, cwd=cwd)

    def make(self, name, *args):
        out = os.path.join(self.tmp, name)
        subprocess.run([self.sample, *args, out], check=True, capture_output=True)
        ext = "yuv" if "--raw" in args else "y4m"
        return os.path.join(out, f"sample_ref.{ext}"), os.path.join(out, f"sample_dist.{ext}")


# ---- y4m in and out, for inputs the generator does not make ---------------

def read_y4m(path):
    with open(path, "rb") as f:
        data = f.read()
    header, rest = data.split(b"\n", 1)
    fields = {t[:1]: t[1:] for t in header.split()[1:]}
    w, h = int(fields[b"W"]), int(fields[b"H"])
    size = w * h * 3 // 2  # 4:2:0, 8-bit
    frames = []
    while rest.startswith(b"FRAME"):
        _, rest = rest.split(b"\n", 1)
        frames.append(rest[:size])
        rest = rest[size:]
    return header, w, h, frames


def write_y4m(path, header, frames):
    with open(path, "wb") as f:
        f.write(header + b"\n")
        for frame in frames:
            f.write(b"FRAME\n" + frame)


def halve(frame, w, h):
    """A 4:2:0 8-bit frame at half its size, each plane 2x2-averaged."""
    out = bytearray()
    at = 0
    for pw, ph in ((w, h), (w // 2, h // 2), (w // 2, h // 2)):
        plane = frame[at:at + pw * ph]
        at += pw * ph
        for y in range(0, ph, 2):
            for x in range(0, pw, 2):
                s = plane[y * pw + x] + plane[y * pw + x + 1] + plane[(y + 1) * pw + x] + \
                    plane[(y + 1) * pw + x + 1]
                out.append((s + 2) // 4)
    return bytes(out)


def pooled_mean(path, key):
    with open(path) as f:
        return json.load(f)["pooled_metrics"][key]["mean"]


# ---- the checks ----------------------------------------------------------

def test_names(t, ref, dist):
    """A misspelt model or metric: the message names what was meant."""
    listing = t.run("--list-models").stdout
    versions = [line.split()[0] for line in listing.splitlines()[1:] if line.startswith("vmaf")]
    p = t.run("-r", ref, "-d", dist, "-m", "version=vmaf_v0.6")
    missing = [v for v in versions if v not in p.stderr]
    check(p.returncode == 2 and len(versions) >= 17 and not missing and
          "did you mean vmaf_v0.6.1?" in p.stderr,
          f"unknown version: every built-in named and the nearest suggested: missing {missing}, "
          f"{p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, "-m", "vmaf_v0.6.1")
    check(p.returncode == 2 and "did you mean version=vmaf_v0.6.1?" in p.stderr,
          f"-m vmaf_v0.6.1: {p.stderr!r}")
    model = os.path.join(t.tmp, "my_model.json")
    with open(model, "w") as f:
        f.write("{}")
    p = t.run("-r", ref, "-d", dist, "-m", "my_model.json", cwd=t.tmp)
    check(p.returncode == 2 and "did you mean path=my_model.json?" in p.stderr,
          f"-m FILE: {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, "--feature", "ssim")
    check(p.returncode == 2 and "did you mean float_ssim or float_ms_ssim?" in p.stderr,
          f"--feature ssim: {p.stderr!r}")
    # --dist abbreviates --distorted and --dist-vf: getopt refuses it, and
    # the message names both
    p = t.run("-r", ref, "--dist", dist)
    check(p.returncode == 2 and "ambiguous option '--dist': --distorted, --dist-vf" in p.stderr,
          f"--dist: {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, "--feature", "psnrhvs")
    check(p.returncode == 2 and "did you mean psnr_hvs?" in p.stderr, f"--feature psnrhvs: {p.stderr!r}")


def test_defaults_shortest(t):
    """--list-features writes each default as the shortest text that reads
    back to it (0.6, not 0.59999999999999998)."""
    text = t.run("--list-features").stdout
    defaults = re.findall(r"\(double, default ([^)]+)\)", text)
    long = [d for d in defaults if d != repr(float(d)) and d != str(int(float(d)))]
    check(defaults and not long, f"{len(defaults)} double defaults, not shortest: {long[:5]}")
    listing = json.loads(t.run("--list-features", "--json").stdout)
    texts = json.dumps(listing)
    check("0.59999999999999998" not in texts and "0.28999999999999998" not in texts,
          "--list-features --json: defaults in shortest form")


def test_exit_codes(t, ref_yuv, dist_yuv):
    """Scripts see a usage error (2) for what the command got wrong."""
    p = t.run("-r", ref_yuv, "-d", dist_yuv)
    check(p.returncode == 2 and "needs -w, -h, -p and -b" in p.stderr,
          f"raw input without -w/-h: exit {p.returncode}, {p.stderr!r}")
    # 64x48 read as 48x64 (the size divides): its rows do not line up.
    out = os.path.join(t.tmp, "misread.json")
    swapped = ["-w", "48", "-h", "64", "-p", "420", "-b", "8"]
    p = t.run("-r", ref_yuv, "-d", dist_yuv, *swapped, "--json", "-o", out)
    check(p.returncode == 2 and "error:" in p.stderr and "does not look like 48x64" in p.stderr and
          "--force" in p.stderr and not os.path.exists(out),
          f"a misread raw video is an error: exit {p.returncode}, {p.stderr!r}")
    p = t.run("-r", ref_yuv, "-d", dist_yuv, *swapped, "--json", "-o", out, "--force")
    check(p.returncode == 0 and "warning:" in p.stderr and os.path.exists(out),
          f"--force scores it: exit {p.returncode}, {p.stderr!r}")


def test_summary(t, ref, dist):
    """Every requested feature's pooled value, the models' lines first."""
    out = os.path.join(t.tmp, "summary.json")
    p = t.run("-r", ref, "-d", dist, "--feature", "psnr", "--feature", "float_ssim", "-q")
    lines = p.stdout.splitlines()
    t.run("-r", ref, "-d", dist, "--feature", "psnr", "--feature", "float_ssim", "--json", "-o", out)
    want = [f"vmaf_v0.6.1: {pooled_mean(out, 'vmaf'):f}"] + \
        [f"{k}: {pooled_mean(out, k):f}" for k in ("psnr_y", "psnr_cb", "psnr_cr", "float_ssim")]
    check(p.returncode == 0 and lines == want, f"summary {lines} for {want}")

    # On a terminal: a table, several values to a line.
    leader, follower = pty.openpty()
    proc = subprocess.run([t.quale, "-r", ref, "-d", dist, "--feature", "psnr", "-q"],
                          stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    table = shown.decode().splitlines()
    check(proc.returncode == 0 and len(table) == 2 and table[0].startswith("vmaf_v0.6.1: ") and
          all(k in table[1] for k in ("psnr_y", "psnr_cb", "psnr_cr")),
          f"on a terminal, the features in a table: {table}")

    # A part of a split run says which; merge prints the pooled values.
    parts = []
    for k in (1, 2):
        part = os.path.join(t.tmp, f"part{k}.json")
        p = t.run("-r", ref, "-d", dist, "--segment", f"{k}/2", "--json", "-o", part)
        check(p.returncode == 0 and f"part {k} of 2 (frames {3 * (k - 1)} to {3 * k - 1}):" in p.stderr,
              f"part {k}: its summary says which part: {p.stderr!r}")
        parts.append(part)
    merged = os.path.join(t.tmp, "merged.json")
    p = t.run("merge", "-o", merged, *parts)
    check(p.returncode == 0 and f"vmaf: {pooled_mean(merged, 'vmaf'):f}" in p.stderr.splitlines(),
          f"merge prints the merged pooled values: {p.stderr!r}")


def test_models(t, ref, dist, shared):
    """-m auto, the note for v1 on 8-bit video, a model file's name."""
    # the sample is 320x240 at 25 fps: v1's 1080p model, at 10 bits
    p = t.run("-r", ref, "-d", dist, "-m", "auto", "-q")
    direct = t.run("-r", ref, "-d", dist, "-m", "version=vmaf_v1.0.16_3d0h", "--score-bitdepth",
                   "10", "-q")
    check(p.returncode == 0 and p.stdout == direct.stdout and
          p.stdout.startswith("vmaf_v1.0.16_3d0h: ") and "-m auto: vmaf_v1.0.16_3d0h" in p.stderr,
          f"-m auto at 25 fps: {p.stdout!r} {p.stderr!r} for {direct.stdout!r}")
    header, w, h, frames = read_y4m(ref)
    hfr_ref = os.path.join(t.tmp, "hfr_ref.y4m")
    write_y4m(hfr_ref, re.sub(rb"F\d+:\d+", b"F60:1", header), frames)
    p = t.run("-r", hfr_ref, "-d", dist, "-m", "auto", "-q")
    check(p.returncode == 0 and p.stdout.startswith("vmaf_v1.0.16_hfr_3d0h: "),
          f"-m auto at 60 fps: the HFR model: {p.stdout!r} {p.stderr!r}")
    big_ref, big_dist = t.make("uhd", "--width", "3840", "--height", "2160", "--frames", "1")
    p = t.run("-r", big_ref, "-d", big_dist, "-m", "auto", "-q")
    check(p.returncode == 0 and p.stdout.startswith("vmaf_v1.0.16_1d5h_2160: "),
          f"-m auto at 3840x2160: the 4K model: {p.stdout!r} {p.stderr!r}")

    p = t.run("-r", ref, "-d", dist, "-m", "version=vmaf_v1.0.16_3d0h", "-q")
    check(p.returncode == 0 and "meant to be scored at 10 bits" in p.stderr and
          "--score-bitdepth 10" in p.stderr, f"v1 on 8-bit video: a note: {p.stderr!r}")
    p = t.run("-r", ref, "-d", dist, "-m", "version=vmaf_v1.0.16_3d0h", "--score-bitdepth", "10", "-q")
    check(p.returncode == 0 and "meant to be scored" not in p.stderr,
          f"v1 at 10 bits: no note: {p.stderr!r}")

    model = os.path.join(shared, "models", "vmaf_v0.6.1.json")
    if not os.path.exists(model):
        print(f"SKIP model file labels: {model} is not there")
        return
    p = t.run("-r", ref, "-d", dist, "-m", f"path={model}", "-q")
    q = t.run("-r", ref, "-d", dist, "-m", f"path={model}:name=mine", "-q")
    check(p.returncode == 0 and p.stdout.startswith("vmaf_v0.6.1: ") and
          q.stdout.startswith("mine: "), f"a model file by its name: {p.stdout!r} {q.stdout!r}")


def test_align_scaled(t, ref, dist):
    """--align auto with a distorted video of another size, late by 2
    frames: aligned after scaling, scored as the skip scores it."""
    header, w, h, frames = read_y4m(dist)
    small = [halve(f, w, h) for f in frames]
    late = os.path.join(t.tmp, "late_small.y4m")
    write_y4m(late, header.replace(f"W{w} ".encode(), f"W{w // 2} ".encode())
              .replace(f"H{h} ".encode(), f"H{h // 2} ".encode()), small[:2] + small)
    p = t.run("-r", ref, "-d", late, "--align", "auto", "--json", "-o", "-", "-q")
    skip = t.run("-r", ref, "-d", late, "--frame_skip_dist", "2", "--json", "-o", "-", "-q")
    ok = p.returncode == 0 and skip.returncode == 0
    check(ok and "skipping 2 distorted frames" in p.stderr and
          json.loads(p.stdout)["frames"] == json.loads(skip.stdout)["frames"],
          f"--align auto across sizes: exit {p.returncode}, {p.stderr!r}")


def test_report_beside(t, ref, dist):
    """quale report RUN.json writes RUN.html beside it."""
    run = os.path.join(t.tmp, "run.json")
    t.run("-r", ref, "-d", dist, "--json", "-o", run, "-q")
    p = t.run("report", run)
    page = os.path.join(t.tmp, "run.html")
    check(p.returncode == 0 and os.path.exists(page) and "run.html" in p.stderr,
          f"report without -o: exit {p.returncode}, {p.stderr!r}")
    p = t.run("report", run, run)
    check(p.returncode == 2 and "-o" in p.stderr, f"two results without -o: {p.stderr!r}")


def test_sample_script(t):
    """scripts/sample.sh says each step before it takes its time."""
    own = os.path.join(SOURCE_ROOT, "build", "tools", "quale")
    if not os.path.exists(own) or not os.path.samefile(own, t.quale):
        print("SKIP sample.sh: the quale under test is not the one sample.sh builds (build/)")
        return
    p = subprocess.run([os.path.join(SOURCE_ROOT, "scripts", "sample.sh")], capture_output=True,
                       text=True)
    steps = [line for line in p.stderr.splitlines() if line.startswith("sample: ")]
    check(p.returncode == 0 and len(steps) >= 2 and "vmaf_v0.6.1: " in p.stdout,
          f"sample.sh says its steps: {p.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--shared", default=os.environ.get(
        "QUALE_SHARED_DIR", os.path.join(SOURCE_ROOT, "..", "shared")))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Tool(os.path.abspath(args.quale), args.sample, tmp)
        ref, dist = t.make("y4m", "--width", "64", "--height", "48", "--frames", "6")
        ref_yuv, dist_yuv = t.make("yuv", "--width", "64", "--height", "48", "--frames", "6", "--raw")
        test_names(t, ref, dist)
        test_defaults_shortest(t)
        test_exit_codes(t, ref_yuv, dist_yuv)
        test_summary(t, ref, dist)
        # v1's CAMBI needs 216 samples in width or height
        mid_ref, mid_dist = t.make("mid", "--width", "320", "--height", "240", "--frames", "3")
        test_models(t, mid_ref, mid_dist, args.shared)
        test_align_scaled(t, ref, dist)
        test_report_beside(t, ref, dist)
        test_sample_script(t)
    finish()


if __name__ == "__main__":
    main()
