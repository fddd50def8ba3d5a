#!/usr/bin/env python3
"""Segments and merge: a run split with --segment K/N and joined with
`quale merge` gives the file of the whole run, byte for byte.

For every pair of the corpus: the v0 model (integer motion: motion2 looks a
frame ahead), VMAF v1's hfr model (motion's five-frame window and moving
average: values reach four frames back), a bootstrap model (confidence
intervals), float_motion and psnr, split in 3 parts, merged as JSON and XML
and compared with the whole run's files (all but the fps, a timing, and the
command lines).  On
one pair also: 7 parts with --subsample 3, a --frames range split in 4,
CSV and the subtitle layout, a --precision the merge keeps; and merge's
refusals: a missing part, one given twice, overlapping parts, parts of
other runs, a file that is not a part, and a part cut short.

Exits 0 only if every comparison was made and equal.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as shared_corpus  # noqa: E402

MODELS = ["-m", "version=vmaf_v0.6.1",
          "-m", "version=vmaf_v1.0.16_hfr_3d0h:name=vmaf_hfr",
          "-m", "version=vmaf_b_v0.6.3:name=vmaf_b",
          "--feature", "float_motion", "--feature", "psnr"]

failures = []
checks = 0
QUALE = None


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, expect=0):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != expect:
        raise RuntimeError("%s\nexited %d (expected %d):\n%s%s" % (
            " ".join(cmd), proc.returncode, expect, proc.stdout, proc.stderr))
    return proc


def without_fps(path):
    """The file's text less the lines that hold the run's speed and the
    command lines of its provenance (a part's says --segment K/N and its
    own -o; the merge keeps them, tests/cli_provenance.py checks how)."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r'^\s*"fps": [^\n]*\n', "", text, flags=re.M)
    text = re.sub(r'^\s*"command": \[[^\n]*\n', "", text, flags=re.M)
    text = re.sub(r'^\s*<command [^\n]*/>\n', "", text, flags=re.M)
    return re.sub(r'<fyi fps="[^"]*" />', "", text)


def split_and_merge(quale, base, tmp, tag, parts, layouts, extra=()):
    """Scores whole and in parts; checks the merges in every layout."""
    argv = [quale] + base + list(extra)
    part_files = []
    for k in range(1, parts + 1):
        path = os.path.join(tmp, "%s.part%d.json" % (tag, k))
        run(argv + ["--segment", "%d/%d" % (k, parts), "-o", path])
        part_files.append(path)
    for layout in layouts:
        whole = os.path.join(tmp, "%s.whole.%s" % (tag, layout))
        merged = os.path.join(tmp, "%s.merged.%s" % (tag, layout))
        run(argv + ["-o", whole])
        # the parts in another order than their numbers
        run([quale, "merge", "-q", "-o", merged] + part_files[::-1])
        same = without_fps(whole) == without_fps(merged)
        check(same, "%s: %d parts merged as %s differ from the whole run (%s, %s)" % (
            tag, parts, layout, whole, merged))
    return part_files


def refusals(quale, base, tmp, parts):
    """merge names what is wrong; it writes nothing then."""
    out = os.path.join(tmp, "refused.json")

    def refused(files, pattern, what):
        if os.path.exists(out):
            os.unlink(out)
        proc = run([quale, "merge", "-o", out] + files, expect=1)
        check(re.search(pattern, proc.stderr) is not None,
              "%s: the message %r does not match %r" % (what, proc.stderr.strip(), pattern))
        check(not os.path.exists(out), "%s: a merged file was written" % what)

    refused([parts[0], parts[2]], r"missing: part 2 ", "a missing part")
    refused([parts[0], parts[1], parts[1], parts[2]], r"both part 2 of 3", "a part twice")
    # a part whose segment claims frames of the next one
    with open(parts[1]) as f:
        text = f.read()
    seg = json.loads(text)["segment"]
    overlapping = os.path.join(tmp, "overlap.json")
    with open(overlapping, "w") as f:
        f.write(text.replace('"end": %d,' % seg["end"], '"end": %d,' % (seg["end"] + 1)))
    refused([parts[0], overlapping, parts[2]], r"overlap", "overlapping parts")
    other = os.path.join(tmp, "other.part2.json")
    run([quale] + base + ["--subsample", "2", "--segment", "2/3", "-o", other])
    refused([parts[0], other, parts[2]], r"different runs", "a part of another run")
    whole = os.path.join(tmp, "plain.json")
    run([quale] + base + ["-o", whole])
    refused([parts[0], whole, parts[2]], r"not a part", "a whole run's file")
    # parts of two videos of the same name and size, other pictures: the
    # second distorted video is another pair's, copied under the first's name
    dist = base[base.index("-d") + 1]
    other_dist = dist.replace("x264crf28", "x264crf42")
    check(other_dist != dist and os.path.getsize(other_dist) == os.path.getsize(dist),
          "no video of the same size to stand in for %s" % dist)
    folder = os.path.join(tmp, "elsewhere")
    os.makedirs(folder, exist_ok=True)
    same_name = os.path.join(folder, os.path.basename(dist))
    with open(other_dist, "rb") as src, open(same_name, "wb") as dst:
        dst.write(src.read())
    moved = list(base)
    moved[moved.index("-d") + 1] = same_name
    impostor = os.path.join(tmp, "impostor.part2.json")
    run([quale] + moved + ["--segment", "2/3", "-o", impostor])
    refused([parts[0], impostor, parts[2]], r"different runs: 'distorted=\S+ \(\d+ bytes, "
            r"content [0-9a-f]{16}\)' against 'distorted=", "a part of another video")
    cut = os.path.join(tmp, "cut.json")
    with open(parts[1]) as f:
        text = f.read()
    with open(cut, "w") as f:
        f.write(text[: len(text) // 2])
    refused([parts[0], cut, parts[2]], r"cut\.json:\d+:\d+", "a part cut short")


def pooling(quale, base, tmp):
    """--pool's percentiles and lows: computed here from the per-frame
    values, and the same after a split and a merge with --pool."""
    argv = [quale] + base + ["--feature", "psnr", "--pool", "p1,p50,p95.5,low1,low5"]
    whole = os.path.join(tmp, "pool.whole.json")
    run(argv + ["-o", whole])
    with open(whole) as f:
        doc = json.load(f)
    for key in ("vmaf", "psnr_y", "integer_motion2"):
        x = sorted(frame["metrics"][key] for frame in doc["frames"])
        n = len(x)
        for share in (1, 50, 95.5):
            h = (n - 1) * share / 100
            lo = int(h)
            want = x[lo] + (h - lo) * (x[lo + 1] - x[lo]) if lo + 1 < n else x[lo]
            got = doc["pooled_metrics"][key]["p%g" % share]
            check(got == want, "%s p%g: %r, not %r" % (key, share, got, want))
        for share in (1, 5):
            k = max(1, math.ceil(n * share / 100))
            want = sum(x[:k]) / k
            got = doc["pooled_metrics"][key]["low%g" % share]
            check(got == want, "%s low%g: %r, not %r" % (key, share, got, want))
    parts = []
    for k in (1, 2, 3):
        parts.append(os.path.join(tmp, "pool.part%d.json" % k))
        run(argv + ["--segment", "%d/3" % k, "-o", parts[-1]])
    merged = os.path.join(tmp, "pool.merged.json")
    run([quale, "merge", "-q", "--pool", "p1,p50,p95.5,low1,low5", "-o", merged] + parts)
    check(without_fps(whole) == without_fps(merged), "--pool: the merge differs from the run")
    print("--pool p1,p50,p95.5,low1,low5: as computed here, and merged = the whole run")


def ffmpeg(*args):
    run(["ffmpeg", "-v", "error", "-y"] + list(args))


def miscounted(quale, corpus_dir, tmp):
    """Videos whose frame count is not what their container or size says: a
    split counts what will be read, and its last part reads to the end, so
    the merge is the whole run's file (and --frames FIRST: reads to the end).
      - a fragmented MP4: its 'moov' declares the first fragment's 10 frames
        of 30;
      - an MP4 cut with an edit list: 30 packets, 24 frames shown;
      - an HEVC stream that starts on a CRA: the decoder drops the leading
        pictures that refer to frames before it (packets > frames, which no
        count short of decoding sees: the last part finds the end);
      - a y4m whose FRAME lines carry parameters, longer than "FRAME\n"."""
    dist = os.path.join(corpus_dir, "dune_576x324_x264crf28.mp4")
    ref = os.path.join(corpus_dir, "dune_576x324_ref.mkv")
    j = lambda name: os.path.join(tmp, name)  # noqa: E731
    ffmpeg("-i", ref, "-frames:v", "48", "-f", "yuv4mpegpipe", j("mc.ref.y4m"))
    ffmpeg("-i", dist, "-frames:v", "30", "-c:v", "libx264", "-g", "10", "-movflags",
           "frag_keyframe", j("mc.frag.mp4"))
    ffmpeg("-i", dist, "-frames:v", "30", "-c:v", "libx264", "-g", "10", j("mc.plain.mp4"))
    ffmpeg("-ss", "0.22", "-i", j("mc.plain.mp4"), "-c", "copy", j("mc.edit.mp4"))
    ffmpeg("-i", ref, "-frames:v", "48", "-c:v", "libx265", "-x265-params",
           "keyint=16:min-keyint=16:open-gop=1:bframes=4:log-level=none", "-f", "hevc",
           j("mc.hevc"))
    with open(j("mc.hevc"), "rb") as f:
        stream = f.read()
    # the stream from its second parameter sets on (a VPS: NAL type 32), a CRA
    vps = [m.start() for m in re.finditer(b"\x00\x00\x00\x01\x40\x01", stream)]
    with open(j("mc.cut.hevc"), "wb") as f:
        f.write(stream[vps[1]:])
    ffmpeg("-fflags", "+genpts", "-r", "24", "-i", j("mc.cut.hevc"), "-c", "copy",
           j("mc.cut.mp4"))
    # 64x36 frames (3,456 bytes) with 200-byte FRAME parameters: the size
    # alone would count 31 frames of 30
    ffmpeg("-i", ref, "-frames:v", "30", "-vf", "scale=64:36", "-f", "yuv4mpegpipe",
           j("mc.small.y4m"))
    with open(j("mc.small.y4m"), "rb") as f:
        data = f.read()
    header, body = data.split(b"\n", 1)
    frames = body.split(b"FRAME\n")[1:]
    with open(j("mc.params.y4m"), "wb") as f:
        f.write(header + b"\n")
        for k, frame in enumerate(frames):
            f.write(b"FRAME X" + b"%03d" % k + b"x" * 192 + b"\n" + frame)
    ffmpeg("-i", ref, "-frames:v", "30", "-vf", "scale=64:36", "-f", "yuv4mpegpipe",
           j("mc.small.ref.y4m"))
    cases = [("fragmented MP4", j("mc.ref.y4m"), j("mc.frag.mp4"), 30),
             ("edit-listed MP4", j("mc.ref.y4m"), j("mc.edit.mp4"), 24),
             ("HEVC from a CRA", j("mc.ref.y4m"), j("mc.cut.mp4"), None),
             ("y4m with FRAME parameters", j("mc.small.ref.y4m"), j("mc.params.y4m"), 30)]
    for what, r, d, frames in cases:
        base = ["-r", r, "-d", d, "-q", "--threads", "2", "-m", "version=vmaf_v0.6.1",
                "--feature", "psnr"]
        tag = "mc%d" % cases.index((what, r, d, frames))
        split_and_merge(quale, base, tmp, tag, 3, ["json"])
        with open(os.path.join(tmp, "%s.whole.json" % tag)) as f:
            whole = len(json.load(f)["frames"])
        if frames is not None:
            check(whole == frames, "%s: the whole run scored %d frames, not %d" % (
                what, whole, frames))
        tail = os.path.join(tmp, "%s.tail.json" % tag)
        run([quale] + base + ["--frames", "2:", "-o", tail])
        with open(tail) as f:
            got = len(json.load(f)["frames"])
        check(got == whole - 2, "%s: --frames 2: scored %d frames, not %d" % (
            what, got, whole - 2))
        print("%s (%d frames): 3 parts merged = the whole run; --frames 2: reads to the end"
              % (what, whole))


def vulkan_device():
    """The index of a Vulkan device (lavapipe counts), or None."""
    proc = subprocess.run([QUALE, "--list-devices", "--json"], capture_output=True, text=True)
    try:
        devices = json.loads(proc.stdout)["vulkan"]["devices"]
    except (ValueError, KeyError):
        return None
    return devices[0]["index"] if devices else None


def gpu_parts(quale, base, tmp):
    """--gpu: parts on the GPUs at once, merged in the process.  Two parts
    on one device (how several runs share a GPU) stand in for two GPUs."""
    device = vulkan_device()
    if device is None:
        print("--gpu: no Vulkan device; the in-process split is not checked here")
        return
    argv = [quale] + base + ["-m", "version=vmaf_v0.6.1", "-m",
                             "version=vmaf_v1.0.16_hfr_3d0h:name=vmaf_hfr",
                             "--frames", "0:20", "--backend", "vulkan"]
    whole = os.path.join(tmp, "gpu.whole.json")
    spread = os.path.join(tmp, "gpu.spread.json")
    run(argv + ["--gpu_device", str(device), "-o", whole])
    run(argv + ["--gpu", "%d,%d" % (device, device), "-o", spread])
    check(without_fps(whole) == without_fps(spread),
          "--gpu %d,%d: the merged parts differ from one device's run" % (device, device))
    print("--gpu %d,%d (Vulkan): the parts merged = one device's run" % (device, device))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    args = ap.parse_args()
    global QUALE
    QUALE = args.quale
    shared_corpus.ensure_decoded(args.shared, args.cache)
    with open(os.path.join(args.shared, "corpus", "manifest.json")) as f:
        pairs = json.load(f)

    with tempfile.TemporaryDirectory() as tmp:
        for pair in pairs:
            base = ["-r", os.path.join(args.cache, pair["ref_yuv"]),
                    "-d", os.path.join(args.cache, pair["dis_yuv"]),
                    "-w", str(pair["width"]), "-h", str(pair["height"]),
                    "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"]),
                    "-q", "--threads", "2"]
            parts = split_and_merge(args.quale, base + MODELS, tmp, pair["name"], 3,
                                    ["json", "xml"])
            print("%s: 3 parts merged = the whole run (JSON, XML)" % pair["name"])
            if pair["name"] != "dune_576x324_x264crf28":
                continue
            split_and_merge(args.quale, base + MODELS, tmp, "subsample", 7,
                            ["json", "csv"], ["--subsample", "3"])
            # parts that hold no frame --subsample scores
            split_and_merge(args.quale, base + MODELS, tmp, "sparse", 8, ["json"],
                            ["--subsample", "10"])
            split_and_merge(args.quale, base + MODELS, tmp, "range", 4,
                            ["json", "sub"], ["--frames", "5:41"])
            split_and_merge(args.quale, base + MODELS, tmp, "precision", 2, ["json"],
                            ["--precision", "6"])
            print("%s: --subsample 3 in 7 parts, --subsample 10 in 8, --frames 5:41 in 4, "
                  "--precision 6: merged = the whole run" % pair["name"])
            pooling(args.quale, base, tmp)
            refusals(args.quale, base + MODELS, tmp, parts)
            print("merge's refusals: each named")
            gpu_parts(args.quale, base, tmp)
            compressed = ["-r", os.path.join(args.shared, "corpus", pair["ref"]),
                          "-d", os.path.join(args.shared, "corpus", pair["dis"]), "-q",
                          "--threads", "2", "-m", "version=vmaf_v0.6.1"]
            probe = subprocess.run([args.quale] + compressed + ["--frame_cnt", "1"],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                # Matroska gives no frame count: the parts count its packets
                split_and_merge(args.quale, compressed, tmp, "compressed", 3, ["json"])
                print("%s and %s (compressed): 3 parts merged = the whole run" % (
                    pair["ref"], pair["dis"]))
                miscounted(args.quale, os.path.join(args.shared, "corpus"), tmp)
            else:
                print("compressed input not read by this build (%s): its split is not "
                      "checked here" % probe.stderr.strip()[-120:])

    print("%d checks, %d failed" % (checks, len(failures)))
    return 1 if failures or checks == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
