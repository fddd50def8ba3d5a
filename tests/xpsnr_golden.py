"""XPSNR against FFmpeg's xpsnr filter: every frame of every golden pair.

The golden files (tests/golden_xpsnr/<pair>.log) are the stats files of
FFmpeg 7.1.5's filter, patched to print its values at %.17g with each
plane's weighted SSE (COMMANDS.txt).  Every frame's xpsnr_y/u/v, its
xpsnr_wsse_y/u/v and the pooled axpsnr_* must be equal: the arithmetic is
FFmpeg's, operation for operation, so no tolerance is allowed (a value
printed at %.17g reads back as the same double).

Two sets: the shared corpus (decoded into .cache/corpus; NOT CHECKED
without ../shared) and synthetic pairs of quale-sample listed in
synthetic.txt (10, 12 and 16 bits, 4:4:4, 4:2:2, 4:0:0, odd sizes, second
order temporal terms, pictures too small to weigh, identical pictures).
A split run (--frames with its margins) must give the whole run's values,
the 8-bit cases of another rate than 25 again as y4m files of that rate
with no fps given (the tool passes the reference's rate, as FFmpeg's
filter takes its first input's), and every output layout must carry the
keys.  --set picks one of the
two; it exits 77 (skipped, and says NOT CHECKED) when nothing of the set
could be checked, and names whatever of it was not.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402

GOLDEN = os.path.join(HERE, "golden_xpsnr")
PLANES = ("y", "u", "v")
FRAME_RE = re.compile(r"^n:\s*(\d+) fps: (\d+)(.*)$")
PLANE_RE = re.compile(r"XPSNR (\w): (\S+) wsse \w: (\d+)")
AVERAGE_RE = re.compile(r"^XPSNR average, (\d+) frames(.*)$")


def parse_golden(path):
    """Frames [{plane: (value, wsse)}], the pooled {plane: value} (and
    "min"), and the integer frame rate FFmpeg used."""
    frames, pooled, fps = [], {}, None
    with open(path) as f:
        for line in f:
            m = FRAME_RE.match(line)
            if m:
                if int(m.group(1)) != len(frames) + 1:
                    raise ValueError(f"{path}: frame {m.group(1)} out of order")
                fps = int(m.group(2))
                frames.append({p: (float(v), int(w)) for p, v, w in PLANE_RE.findall(m.group(3))})
                continue
            m = AVERAGE_RE.match(line)
            if m:
                for p, v in re.findall(r"\b(\w): (\S+)", m.group(2)):
                    pooled[p] = float(v)
                mm = re.search(r"minimum: (\S+)\)", m.group(2))
                if mm:
                    pooled["min"] = float(mm.group(1))
    return frames, pooled, fps


def same(a, b):
    """Equal doubles (infinities included); JSON writes +inf as null."""
    if a is None:
        return math.isinf(b) and b > 0
    return a == b or (math.isinf(a) and math.isinf(b) and (a > 0) == (b > 0))


def run_quale(quale, inputs, fps, extra=()):
    """fps None: none given, the tool's own (the reference's frame rate)."""
    feature = "xpsnr=enable_axpsnr=true" if fps is None else f"xpsnr=fps={fps}:enable_axpsnr=true"
    cmd = [quale, *inputs, "--feature", feature,
           "--threads", "2", "--json", "-o", "-", "-q", "-n", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"quale exited {proc.returncode}: {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(proc.stdout), cmd


class Report:
    def __init__(self):
        self.passed = self.failed = 0
        self.max_diff = {}
        self.frames = 0

    def compare(self, label, golden_path, ours, first=0):
        frames, pooled, _ = parse_golden(golden_path)
        our_frames = {fr["frameNum"]: fr["metrics"] for fr in ours["frames"]}
        bad = []
        compared = 0
        for n, golden in enumerate(frames):
            if n not in our_frames:
                if n >= first and (not our_frames or n <= max(our_frames)):
                    bad.append(f"frame {n}: missing")
                continue
            compared += 1
            for p, (value, wsse) in golden.items():
                got = our_frames[n].get(f"xpsnr_{p}")
                got_wsse = our_frames[n].get(f"xpsnr_wsse_{p}")
                key = f"xpsnr_{p}"
                if got is not None and math.isfinite(got) and math.isfinite(value):
                    self.max_diff[key] = max(self.max_diff.get(key, 0.0), abs(got - value))
                if not same(got, value):
                    bad.append(f"frame {n} {key}: quale {got!r}, FFmpeg {value!r}")
                if got_wsse != wsse:
                    bad.append(f"frame {n} xpsnr_wsse_{p}: quale {got_wsse!r}, FFmpeg {wsse}")
        if first == 0:
            aggregates = ours.get("aggregate_metrics", {})
            for p, value in pooled.items():
                key = f"axpsnr_{p}"
                got = aggregates.get(key)
                if not same(got, value):
                    bad.append(f"{key}: quale {got!r}, FFmpeg {value!r}")
        if not compared:
            bad.append("no frame compared")
        if bad:
            self.failed += 1
            print(f"FAIL {label}: " + "\n  ".join(bad[:12]))
        else:
            self.passed += 1
            self.frames += compared
            print(f"ok   {label}: {compared} frames equal")


def write_y4m(raw, case):
    """An 8-bit raw clip of case as a y4m file at case's frame rate."""
    w, h = int(case["width"]), int(case["height"])
    chroma = {"420": (w + 1) // 2 * ((h + 1) // 2), "422": (w + 1) // 2 * h, "444": w * h,
              "400": 0}[case["chroma"]]
    frame = w * h + 2 * chroma
    data = open(raw, "rb").read()
    path = raw[:-4] + ".y4m"
    mono = " Cmono" if case["chroma"] == "400" else f" C{case['chroma']}"
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F{case['fps']}:1 Ip A1:1{mono}\n".encode())
        for i in range(len(data) // frame):
            f.write(b"FRAME\n" + data[i * frame:(i + 1) * frame])
    return path


def synthetic_cases():
    with open(os.path.join(GOLDEN, "synthetic.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, w, h, chroma, depth, frames, fps, _fmt, strength = line.split()
                yield dict(name=name, width=w, height=h, chroma=chroma, bitdepth=depth,
                           frames=frames, fps=fps, strength=strength)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True, help="path of quale-sample")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--set", choices=("synthetic", "corpus"), required=True,
                    help="which pairs: quale-sample's or the shared corpus's")
    ap.add_argument("--pythonpath", help="where the built Python package is: its score() of the "
                    "y4m files is checked too")
    args = ap.parse_args()
    quale_py = None
    if args.pythonpath:
        sys.path.insert(0, args.pythonpath)
        import quale as quale_py
    report = Report()
    not_checked = []

    if not os.path.isfile(os.path.join(GOLDEN, "synthetic.txt")):
        print(f"NOT CHECKED: no golden files in {GOLDEN}")
        return 77

    # Synthetic pairs: made again here, scored, compared.
    with tempfile.TemporaryDirectory() as tmp:
        for case in synthetic_cases() if args.set == "synthetic" else ():
            golden = os.path.join(GOLDEN, case["name"] + ".log")
            if not os.path.exists(golden):
                not_checked.append(case["name"] + " (no golden file)")
                continue
            d = os.path.join(tmp, case["name"])
            strength = "2" if case["strength"] == "same" else case["strength"]
            subprocess.run([args.sample, "--width", case["width"], "--height", case["height"],
                            "--chroma", case["chroma"], "--bitdepth", case["bitdepth"],
                            "--frames", case["frames"], "--strength", strength, "--raw", d],
                           check=True, capture_output=True)
            dist = "sample_ref.yuv" if case["strength"] == "same" else "sample_dist.yuv"
            inputs = ["-r", os.path.join(d, "sample_ref.yuv"), "-d", os.path.join(d, dist),
                      "-w", case["width"], "-h", case["height"], "-p", case["chroma"],
                      "-b", case["bitdepth"]]
            ours, _ = run_quale(args.quale, inputs, case["fps"])
            report.compare(case["name"], golden, ours)
            if case["name"] in ("s8_444_320x240_60fps", "s10_420_352x288"):
                # a part of a split run, read from two frames after the
                # first: its margins give the whole run's values
                total = int(case["frames"])
                first = total - 4
                part, _ = run_quale(args.quale, inputs, case["fps"],
                                    ["--frames", f"{first}:{total}"])
                report.compare(case["name"] + f" --frames {first}:{total}", golden, part,
                               first=first)
            if case["fps"] != "25" and case["bitdepth"] == "8":
                # as y4m files of that rate, no fps given: the tool passes
                # the reference's rate, as FFmpeg's filter takes its input's
                y4m = [write_y4m(os.path.join(d, f"sample_{r}.yuv"), case) for r in ("ref", "dist")]
                if case["strength"] == "same":
                    y4m[1] = y4m[0]
                ours, _ = run_quale(args.quale, ["-r", y4m[0], "-d", y4m[1]], None)
                report.compare(case["name"] + " (y4m, its rate)", golden, ours)
                if quale_py:
                    # the Python package's score() passes the rate too
                    result = quale_py.score(y4m[0], y4m[1], model=None, threads=2,
                                            features=["xpsnr=enable_axpsnr=true"])
                    report.compare(case["name"] + " (y4m, its rate, Python score())", golden,
                                   json.loads(result.to_json()))
            if case["name"] == "s8_420_odd_175x99":
                for layout in ("--xml", "--csv", "--sub"):
                    proc = subprocess.run(
                        [args.quale, *inputs, "--feature", "xpsnr", layout, "-o", "-", "-q", "-n"],
                        capture_output=True, text=True)
                    ok = proc.returncode == 0 and all(f"xpsnr_{p}" in proc.stdout for p in PLANES)
                    if ok:
                        report.passed += 1
                    else:
                        report.failed += 1
                        print(f"FAIL {case['name']} {layout}: {proc.stderr.strip()}")

    # The shared corpus.
    corpus = os.path.join(args.shared, "corpus")
    if args.set != "corpus":
        pass
    elif not os.path.isdir(corpus):
        not_checked.append(f"the corpus (no {corpus})")
    else:
        with open(os.path.join(corpus, "manifest.json")) as f:
            manifest = json.load(f)
        pairs = [p for p in manifest if os.path.exists(os.path.join(GOLDEN, p["name"] + ".log"))]
        not_checked += [p["name"] + " (no golden file)" for p in manifest if p not in pairs]
        if pairs:
            print(f"decoding the corpus into {args.cache} ...", flush=True)
            shared_corpus.ensure_decoded(args.shared, args.cache)
        for pair in pairs:
            golden = os.path.join(GOLDEN, pair["name"] + ".log")
            _, _, fps = parse_golden(golden)
            inputs = ["-r", os.path.join(args.cache, pair["ref_yuv"]),
                      "-d", os.path.join(args.cache, pair["dis_yuv"]),
                      "-w", str(pair["width"]), "-h", str(pair["height"]),
                      "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"])]
            ours, _ = run_quale(args.quale, inputs, fps)
            report.compare(pair["name"], golden, ours)
            if pair["name"] == "dune_576x324_x264crf28":
                part, _ = run_quale(args.quale, inputs, fps, ["--frames", "20:30"])
                report.compare(pair["name"] + " --frames 20:30", golden, part, first=20)

    print(f"{report.passed} checks passed, {report.failed} failed; {report.frames} frames "
          f"compared; largest difference: " +
          (", ".join(f"{k} {v:.3g}" for k, v in sorted(report.max_diff.items())) or "none"))
    for what in not_checked:
        print(f"NOT CHECKED: {what}")
    if report.failed:
        return 1
    if not report.passed:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
