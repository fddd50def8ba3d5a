#!/usr/bin/env python3
"""Key order: quale lists keys where libvmaf's tool does.

For each kind of golden run (golden/COMMANDS.txt: the same command line,
models and --feature options in the same order), runs quale on 3 frames of
the run's first pair, at --threads 1 and 2, and compares the order of the
keys of a frame and of the pooled metrics with the golden file's.  The XML,
CSV and subtitle layouts of the same run must list the keys in the JSON's
order.  (libvmaf's order is the order of its collector's first values; see
src/collector.h.)

One golden order is a race in libvmaf, not a rule: with --feature
float_motion beside a model, whether float_motion's motion3 (written while
frame 1 is read, on the calling thread) comes before or after the first key
of frame 0's batch (on a worker) depends on which thread gets there first.
The golden files show it before in 4 runs of 5; quale always puts it there,
so in the 'vmaf' run motion3 is left out of the comparison.

Prints one line per run and "N passed, M failed"; exits 77 without the
corpus.
"""
import argparse
import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as shared_corpus  # noqa: E402

# Keys whose place in a golden file is a race of libvmaf's threads, by run.
RACY = {"vmaf": {"motion3"}}


def golden_runs(corpus):
    """The first command line of each kind of run, and its golden file."""
    runs = {}
    with open(os.path.join(corpus, "golden", "COMMANDS.txt")) as f:
        for line in f:
            if not line.startswith("vmaf "):
                continue
            args = shlex.split(line)[1:]
            out = args[args.index("-o") + 1]
            kind = os.path.basename(out).split(".")[-2]
            runs.setdefault(kind, (args, os.path.join(corpus, out)))
    return runs


def run(quale, args, fmt):
    proc = subprocess.run([quale, *args, f"--{fmt}", "-o", "-", "-q"], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"quale exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def xml_order(text):
    root = ET.fromstring(text)
    frame = root.find("frames/frame")
    frame_keys = [k for k in frame.attrib if k != "frameNum"]
    pooled = [m.get("name") for m in root.find("pooled_metrics")]
    return frame_keys, pooled


def csv_order(text):
    header = next(csv.reader(io.StringIO(text)))
    return [k for k in header if k and k != "Frame"]


def sub_order(text):
    # "{0}{1}frame: 0|key: value|..." lines
    line = next(ln for ln in text.splitlines() if ln.startswith("{"))
    return [part.split(":")[0] for part in line.split("|")[1:] if ":" in part]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True)
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    args = ap.parse_args()
    corpus = os.path.join(args.shared, "corpus")
    if not os.path.isdir(corpus):
        print(f"skip: no corpus at {corpus}")
        return 77
    shared_corpus.ensure_decoded(args.shared, args.cache)

    passed = failed = 0
    for kind, (cmd, golden_path) in sorted(golden_runs(corpus).items()):
        with open(golden_path) as f:
            golden = json.load(f)
        racy = RACY.get(kind, set())
        want_frame = [k for k in golden["frames"][0]["metrics"] if k not in racy]
        want_pooled = [k for k in golden["pooled_metrics"] if k not in racy]
        base = []
        skip = False
        it = iter(range(len(cmd)))
        for i in it:
            a = cmd[i]
            if a in ("-o", "--threads"):
                next(it)
                continue
            if a in ("--json", "--xml", "--csv", "--sub"):
                continue
            if a.startswith("yuv/"):
                a = os.path.join(args.cache, a[4:])
            elif a.startswith("path=../models/"):
                a = "path=" + os.path.join(args.shared, "models", a[len("path=../models/"):])
            base.append(a)
        problems = []
        for threads in ("1", "2"):
            try:
                a = base + ["--threads", threads, "--frame_cnt", "3"]
                ours = json.loads(run(args.quale, a, "json"))
                got_frame = [k for k in ours["frames"][0]["metrics"] if k not in racy]
                got_pooled = [k for k in ours["pooled_metrics"] if k not in racy]
                if got_frame != want_frame:
                    problems.append(f"--threads {threads}: frame keys {got_frame}, golden "
                                    f"{want_frame}")
                if got_pooled != want_pooled:
                    problems.append(f"--threads {threads}: pooled keys {got_pooled}, golden "
                                    f"{want_pooled}")
                keys = list(ours["frames"][0]["metrics"])
                x_frame, x_pooled = xml_order(run(args.quale, a, "xml"))
                if x_frame != keys or x_pooled != list(ours["pooled_metrics"]):
                    problems.append(f"--threads {threads}: XML order {x_frame}")
                if csv_order(run(args.quale, a, "csv")) != keys:
                    problems.append(f"--threads {threads}: CSV order differs")
                if sub_order(run(args.quale, a, "sub")) != keys:
                    problems.append(f"--threads {threads}: subtitle order differs")
            except (RuntimeError, ET.ParseError, StopIteration, json.JSONDecodeError) as e:
                problems.append(f"--threads {threads}: {e}")
        print(f"{'FAIL' if problems else 'ok  '} {kind}: {len(want_frame)} frame keys, "
              f"{len(want_pooled)} pooled", flush=True)
        for p in problems[:6]:
            print(f"     {p}")
        if problems:
            failed += 1
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
