"""ssimulacra2 against libjxl's ssimulacra2 tool: every frame of every golden pair.

The golden files (tests/golden_ssimulacra2/<pair>.txt, COMMANDS.txt says
how they were made) hold, for each frame, the tool's score of the two
pictures FFmpeg 7.1.5's swscale made (rgb24, accurate_rnd+bitexact, BT.709
limited range) and the sha256 of those two pictures' bytes.  Two checks:

  - every frame's ssimulacra2 within 1e-4 of the tool's (its float
    arithmetic is ours operation for operation where the order shows; the
    rest is below that); the worst difference of each pair is printed;
  - with --dump (the test_ssimulacra2 program), our rgb24 of the first and
    last frames of both pictures of each pair has the golden sha256: the
    conversion equals swscale's byte for byte.

The corpus is the shared one (decoded into .cache/corpus); without it the
test exits 77 and says NOT CHECKED.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402

GOLDEN = os.path.join(HERE, "golden_ssimulacra2")
TOLERANCE = 1e-4


def parse_golden(path):
    """[(score, ref sha256, dist sha256)] by frame."""
    frames = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            n, score, ref_sha, dis_sha = line.split()
            if int(n) != len(frames):
                raise ValueError(f"{path}: frame {n} out of order")
            frames.append((float(score), ref_sha, dis_sha))
    return frames


def run_quale(quale, inputs, extra=()):
    cmd = [quale, *inputs, "--feature", "ssimulacra2", "--threads", "2", "--json", "-o", "-",
           "-q", "-n", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"quale exited {proc.returncode}: {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(proc.stdout)


def rgb_sha(dump, yuv, pair, frame, tmp):
    out = os.path.join(tmp, "frame.rgb")
    subprocess.run([dump, yuv, str(pair["width"]), str(pair["height"]),
                    pair["vmaf_pixel_format"], str(pair["bitdepth"]), str(frame), out], check=True)
    with open(out, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True)
    ap.add_argument("--dump", help="test_ssimulacra2, to check the RGB pictures' sha256")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--pairs", nargs="*", help="only these pairs")
    args = ap.parse_args()

    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"NOT CHECKED: the corpus (no {corpus})")
        return 77
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    pairs = [p for p in manifest if os.path.exists(os.path.join(GOLDEN, p["name"] + ".txt"))
             and (not args.pairs or p["name"] in args.pairs)]
    not_checked = [p["name"] + " (no golden file)" for p in manifest
                   if not os.path.exists(os.path.join(GOLDEN, p["name"] + ".txt"))]
    if not pairs:
        print("NOT CHECKED: no golden pair")
        return 77
    print(f"decoding the corpus into {args.cache} ...", flush=True)
    shared_corpus.ensure_decoded(args.shared, args.cache)

    passed = failed = frames_total = 0
    worst_all = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for pair in pairs:
            golden = parse_golden(os.path.join(GOLDEN, pair["name"] + ".txt"))
            ref = os.path.join(args.cache, pair["ref_yuv"])
            dis = os.path.join(args.cache, pair["dis_yuv"])
            inputs = ["-r", ref, "-d", dis, "-w", str(pair["width"]), "-h", str(pair["height"]),
                      "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"])]
            ours = {fr["frameNum"]: fr["metrics"].get("ssimulacra2")
                    for fr in run_quale(args.quale, inputs)["frames"]}
            bad, worst, equal = [], (0.0, 0), 0
            for n, (score, ref_sha, dis_sha) in enumerate(golden):
                got = ours.get(n)
                if got is None:
                    bad.append(f"frame {n}: missing")
                    continue
                diff = abs(got - score)
                equal += got == score
                if diff > worst[0]:
                    worst = (diff, n)
                if not diff <= TOLERANCE:
                    bad.append(f"frame {n}: quale {got!r}, libjxl {score!r} (difference {diff:.3g})")
            if args.dump:
                for n in sorted({0, len(golden) - 1}):
                    for yuv, sha, role in ((ref, golden[n][1], "reference"),
                                           (dis, golden[n][2], "distorted")):
                        if rgb_sha(args.dump, yuv, pair, n, tmp) != sha:
                            bad.append(f"frame {n}: the {role}'s rgb24 differs from swscale's")
            frames_total += len(golden)
            worst_all = max(worst_all, worst[0])
            if bad:
                failed += 1
                print(f"FAIL {pair['name']}: " + "\n  ".join(bad[:12]))
            else:
                passed += 1
                print(f"ok   {pair['name']}: {len(golden)} frames within {TOLERANCE:g} ({equal} "
                      f"equal to the digit), worst {worst[0]:.3g} (frame {worst[1]})"
                      + ("; rgb24 equal to swscale's" if args.dump else ""))
    print(f"{passed} passed, {failed} failed")
    print(f"{frames_total} frames compared; largest difference {worst_all:.3g}")
    for what in not_checked:
        print(f"NOT CHECKED: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
