#!/usr/bin/env python3
"""Golden parity: quale's CPU scores against libvmaf's, on the shared corpus.

For every pair of the corpus manifest and every golden run of it (RUNS:
the v0 models, libvmaf master's v1 and float models), runs quale with the same model and the metrics it has, then compares
every golden key that quale provides, per frame and pooled, with the
tolerance table (tests/tolerance.json).  Which keys quale provides comes
from the tool itself (--list-features and --list-models), so a new metric or
model is compared as soon as it is registered: this script needs no change.

Prints the worst key, frame and difference of each run and ends with the
line "N passed, M failed".  Exits 0 only if something was compared and
nothing failed.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as shared_corpus  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)

# The golden runs and the model each used (golden/COMMANDS.txt).
RUNS = {
    "vmaf": {"model": "version=vmaf_v0.6.1", "builtin": "vmaf_v0.6.1", "features": True},
    "neg": {"model": "version=vmaf_v0.6.1neg", "builtin": "vmaf_v0.6.1neg", "features": False},
    "b": {"model": "path={models}/vmaf_b_v0.6.3.json", "builtin": None, "features": False},
    "4k": {"model": "version=vmaf_4k_v0.6.1", "builtin": "vmaf_4k_v0.6.1", "features": False},
    "neg4k": {"model": "version=vmaf_4k_v0.6.1neg", "builtin": "vmaf_4k_v0.6.1neg",
              "features": False},
    # libvmaf master's VMAF v1 and float models (f85a8536); "extra": the
    # --feature requests of the golden command besides the model.
    "v1": {"model": "version=vmaf_v1.0.16_3d0h", "builtin": "vmaf_v1.0.16_3d0h",
           "features": False, "extra": ["speed_temporal"]},
    "v1phone": {"model": "version=vmaf_v1.0.16_5d0h", "builtin": "vmaf_v1.0.16_5d0h",
                "features": False},
    "v1hfr": {"model": "version=vmaf_v1.0.16_hfr_3d0h", "builtin": "vmaf_v1.0.16_hfr_3d0h",
              "features": False},
    "v1enc": {"model": "version=vmaf_v1.0.16_3d0h:cambi.enc_width=1280:cambi.enc_height=720:"
                       "cambi.enc_bitdepth=8", "builtin": "vmaf_v1.0.16_3d0h", "features": False},
    "v1_2160": {"model": "version=vmaf_v1.0.16_1d5h_2160", "builtin": "vmaf_v1.0.16_1d5h_2160",
                "features": False},
    "v1tv_2160": {"model": "version=vmaf_v1.0.16_3d0h_2160", "builtin": "vmaf_v1.0.16_3d0h_2160",
                  "features": False},
    "v1hfr_2160": {"model": "version=vmaf_v1.0.16_hfr_1d5h_2160",
                   "builtin": "vmaf_v1.0.16_hfr_1d5h_2160", "features": False},
    "float": {"model": "version=vmaf_float_v0.6.1", "builtin": "vmaf_float_v0.6.1",
              "features": False, "extra": ["speed_chroma"]},
    "floatb": {"model": "version=vmaf_float_b_v0.6.3", "builtin": "vmaf_float_b_v0.6.3",
               "features": False},
    "floatneg": {"model": "version=vmaf_float_v0.6.1neg", "builtin": "vmaf_float_v0.6.1neg",
                 "features": False},
    "float4k": {"model": "version=vmaf_float_4k_v0.6.1", "builtin": "vmaf_float_4k_v0.6.1",
                "features": False},
}
POOLS = ("min", "max", "mean", "harmonic_mean")


def load_tolerances(path):
    with open(path) as f:
        rules = json.load(f)["rules"]
    cache = {}

    def tolerance(key):
        if key not in cache:
            cache[key] = next(r["abs"] for r in rules if fnmatch.fnmatchcase(key, r["pattern"]))
        return cache[key]

    return tolerance


def quale_json(quale, *args):
    out = subprocess.run([quale, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)




def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quale", required=True, help="path of the quale tool")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--threads", default="2",
                    help="comma-separated thread counts: every run at each (the numbers "
                         "must not depend on it)")
    ap.add_argument("--pairs", default="", help="comma-separated pair names (default: all)")
    ap.add_argument("--runs", default=",".join(RUNS), help="comma-separated runs")
    ap.add_argument("--max-frames", type=int, default=0,
                    help="compare only the first N frames of each pair (0: all)")
    ap.add_argument("--tolerance", default=os.path.join(HERE, "tolerance.json"))
    args = ap.parse_args()

    corpus = os.path.join(args.shared, "corpus")
    models_dir = os.path.join(args.shared, "models")
    if not os.path.isdir(corpus):
        print(f"skip: no corpus at {corpus}")
        return 77
    tolerance = load_tolerances(args.tolerance)

    metrics = quale_json(args.quale, "--list-features", "--json")
    provided = {}  # key -> metric name
    for m in metrics:
        for k in m["keys"]:
            provided.setdefault(k, m["name"])
    models = quale_json(args.quale, "--list-models", "--json")
    builtin = {m["version"] for m in models["builtin"]}
    can_load_path = models["load_by_path"]

    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    wanted = set(filter(None, args.pairs.split(",")))
    pairs = [p for p in manifest if not wanted or p["name"] in wanted]
    print(f"decoding the corpus into {args.cache} ...", flush=True)
    shared_corpus.ensure_decoded(args.shared, args.cache)

    passed = failed = 0
    runs = [(pair, run, threads) for pair in pairs for run in filter(None, args.runs.split(","))
            for threads in filter(None, args.threads.split(","))]
    for pair, run, threads in runs:
        golden_path = os.path.join(corpus, "golden", f"{pair['name']}.{run}.json")
        if not os.path.exists(golden_path):
            continue
        with open(golden_path) as f:
            golden = json.load(f)
        spec = RUNS[run]
        golden_keys = set(golden["pooled_metrics"])
        has_model = (spec["builtin"] in builtin) if spec["builtin"] else can_load_path
        cmd = [args.quale, "-r", os.path.join(args.cache, pair["ref_yuv"]),
               "-d", os.path.join(args.cache, pair["dis_yuv"]),
               "-w", str(pair["width"]), "-h", str(pair["height"]),
               "-p", pair["vmaf_pixel_format"], "-b", str(pair["bitdepth"]),
               "--threads", threads, "--json", "-o", "-", "-q"]
        if args.max_frames:
            cmd += ["--frame_cnt", str(args.max_frames)]
        if has_model:
            cmd += ["-m", spec["model"].format(models=models_dir)]
        # Every metric that provides a golden key of this run, unless the
        # run's keys carry model-specific options (neg) that only the
        # model requests.
        features = sorted({provided[k] for k in golden_keys if k in provided})
        if spec["features"]:
            for name in features:
                cmd += ["--feature", name]
        elif not has_model:
            features = []
        for name in spec.get("extra", []):
            cmd += ["--feature", name]
        if not has_model and not features:
            print(f"{pair['name']}.{run}: nothing to compare yet (no model, no metric)")
            continue
        if not has_model:
            cmd.append("-n")

        t0 = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - t0
        label = f"{pair['name']}.{run} (--threads {threads})"
        if proc.returncode != 0:
            print(f"FAIL {label}: quale exited {proc.returncode}\n  {' '.join(cmd)}\n{proc.stderr}")
            failed += 1
            continue
        ours = json.loads(proc.stdout)
        our_frames = {fr["frameNum"]: fr["metrics"] for fr in ours["frames"]}
        keys = sorted(golden_keys & set(ours["pooled_metrics"]))
        if not keys:
            print(f"{label}: nothing to compare yet")
            continue

        worst = (0.0, None, None, None, None)  # excess ratio, key, frame, diff, tol
        problems = []
        golden_frames = golden["frames"]
        if args.max_frames:
            golden_frames = golden_frames[:args.max_frames]
        if len(our_frames) != len(golden_frames):
            problems.append(f"{len(our_frames)} frames, golden has {len(golden_frames)}")
        for gf in golden_frames:
            n = gf["frameNum"]
            mine = our_frames.get(n, {})
            for k in keys:
                if k not in gf["metrics"]:
                    continue
                if k not in mine:
                    problems.append(f"frame {n}: {k} missing")
                    continue
                diff = abs(mine[k] - gf["metrics"][k])
                tol = tolerance(k)
                if diff > tol:
                    problems.append(f"frame {n}: {k} = {mine[k]!r}, golden {gf['metrics'][k]!r}, "
                                    f"|diff| {diff:.3g} > {tol:g}")
                if diff / tol >= worst[0]:
                    worst = (diff / tol, k, n, diff, tol)
        if not args.max_frames:
            for k in keys:
                for pool in POOLS:
                    g = golden["pooled_metrics"][k].get(pool)
                    m = ours["pooled_metrics"][k].get(pool)
                    if g is None:
                        continue
                    if m is None:
                        problems.append(f"pooled {k}.{pool} missing")
                        continue
                    diff = abs(m - g)
                    if diff > tolerance(k):
                        problems.append(f"pooled {k}.{pool} = {m!r}, golden {g!r}, |diff| {diff:.3g}")

        missing = sorted(k for k in golden_keys if k in provided and k not in ours["pooled_metrics"]
                         and (has_model or spec["features"]))
        for k in missing:
            problems.append(f"{k}: provided by quale but not in its output")
        _, wk, wn, wd, wt = worst
        summary = (f"worst {wk} frame {wn} |diff| {wd:.3g} (tol {wt:g})" if wk else "no values")
        status = "FAIL" if problems else "ok  "
        print(f"{status} {label}: {len(keys)} keys, {len(golden_frames)} frames, {summary}, "
              f"{wall:.1f} s", flush=True)
        for p in problems[:20]:
            print(f"     {p}")
        if len(problems) > 20:
            print(f"     ... {len(problems) - 20} more")
        if problems:
            failed += 1
        else:
            passed += 1

    print(f"{passed} passed, {failed} failed")
    if passed + failed == 0:
        print("golden_parity: nothing was compared")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
