#!/usr/bin/env python3
"""The Python package on a CUDA machine, with torch: frames already on the
GPU scored with no host copy.

Checks (each prints PASS or FAIL; the exit status counts the failures):
- torch CUDA tensors of every corpus pair (the --cache subset) give the
  CPU's numbers for vmaf_v0.6.1 and PSNR, every key of every frame (==):
  luma planes, three planes, (3, H, W) for 4:4:4, 10- and 12-bit uint16;
- the same frames as numpy arrays on the CUDA backend give the same;
- rows far apart (a crop of a wider tensor), a tensor written on a side
  stream just before the push (the producer's stream honoured, current or
  named), tensors freed at once and their memory overwritten (the copies
  are in stream order), the CUDA array interface without DLPack, CuPy;
- a CUDA tensor on a CPU session, and one whose samples are not adjacent,
  raise ValueError;
- quale.torch.VMAF over (N, H, W) batches gives the Session's mean, and
  float frames in [0, 1] the same as their uint8 samples.

Then the rate: a 1080p stream of tensors already on the GPU (eight pairs
pushed again and again, as quale-bench's steady state sends its eight),
and the same frames as numpy arrays, timed as quale-bench times its
steady state (after four frames, to the flush), and as a whole run (the
session opened to the Result made); median of --repeat runs.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

import quale
import quale.torch

FAILED = []
CHROMA_DIV = {"420": (2, 2), "422": (2, 1), "444": (1, 1)}


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILED.append(what)


def read_frames(path, pair, count):
    w, h, depth = pair["width"], pair["height"], pair["bitdepth"]
    dx, dy = CHROMA_DIV[pair["vmaf_pixel_format"]]
    cw, ch = (w + dx - 1) // dx, (h + dy - 1) // dy
    dtype = np.uint8 if depth == 8 else np.dtype("<u2")
    samples = w * h + 2 * cw * ch
    data = np.fromfile(path, dtype=dtype)
    count = min(count, data.size // samples)
    data = data[:samples * count].reshape(count, samples)
    return [(f[:w * h].reshape(h, w), f[w * h:w * h + cw * ch].reshape(ch, cw),
             f[w * h + cw * ch:].reshape(ch, cw)) for f in data]


def to_cuda(planes):
    return tuple(torch.from_numpy(np.ascontiguousarray(p)).cuda() for p in planes)


def score(frames, backend, depth, features=("psnr",)):
    with quale.Session(backend=backend, features=list(features),
                       bit_depth=depth if depth > 8 else None) as s:
        for r, d in frames:
            s.push(r, d)
        return s.result()


def crop_of_wider(t):
    """t as a crop of a wider tensor: its rows 64 samples further apart."""
    wide = torch.zeros((t.shape[0], t.shape[1] + 64), dtype=t.dtype, device=t.device)
    wide[:, 17:17 + t.shape[1]] = t
    return wide[:, 17:17 + t.shape[1]]


class InterfaceOnly:
    """A tensor seen only through the CUDA array interface."""

    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = dict(t.__cuda_array_interface__, version=3, stream=1)


def corpus_checks(args, manifest):
    for pair in manifest:
        depth, chroma = pair["bitdepth"], pair["vmaf_pixel_format"]
        big = pair["width"] * pair["height"] > 1920 * 1080
        count = 2 if big else args.frames
        ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, count)
        dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, count)
        host = list(zip(ref, dist))
        cpu = score(host, "cpu", depth)
        name = f"{pair['name']} ({len(host)} frames)"
        gpu = score([(to_cuda(r), to_cuda(d)) for r, d in host], "cuda", depth)
        check(gpu.backend == "cuda", f"{name}: tensors scored on {gpu.backend}")
        check(gpu.frames == cpu.frames, f"{name}: CUDA tensors (planes) equal the CPU")
        check(gpu.pooled == cpu.pooled, f"{name}: pooled values equal the CPU's")
        numpy_gpu = score(host, "cuda", depth)
        check(numpy_gpu.frames == cpu.frames, f"{name}: numpy frames on CUDA equal the CPU")
        on_host = score([(tuple(map(torch.from_numpy, r)), tuple(map(torch.from_numpy, d)))
                         for r, d in host], "cpu", depth)
        check(on_host.frames == cpu.frames, f"{name}: torch CPU tensors equal numpy's")
        luma = score([(to_cuda(r)[0], to_cuda(d)[0]) for r, d in host], "cuda", depth)
        luma_cpu = score([(r[0], d[0]) for r, d in host], "cpu", depth)
        check(luma.frames == luma_cpu.frames, f"{name}: luma tensors equal the CPU")
        if chroma == "444":
            stacked = score([(torch.stack(to_cuda(r)), torch.stack(to_cuda(d))) for r, d in host],
                            "cuda", depth)
            check(stacked.frames == cpu.frames, f"{name}: (3, H, W) tensors equal the CPU")
        if pair["width"] <= 1280:
            cropped = score([(tuple(map(crop_of_wider, to_cuda(r))),
                              tuple(map(crop_of_wider, to_cuda(d)))) for r, d in host],
                            "cuda", depth)
            check(cropped.frames == cpu.frames, f"{name}: crops of wider tensors equal the CPU")
            cai = score([(tuple(map(InterfaceOnly, to_cuda(r))),
                          tuple(map(InterfaceOnly, to_cuda(d)))) for r, d in host], "cuda", depth)
            check(cai.frames == cpu.frames, f"{name}: the CUDA array interface equals the CPU")


def stream_check(args, pair):
    """Frames written on a side stream just before each push."""
    ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, args.frames)
    dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, args.frames)
    cpu = score(list(zip(ref, dist)), "cpu", 8)
    side = torch.cuda.Stream()
    pinned = [(tuple(torch.from_numpy(p).pin_memory() for p in r),
               tuple(torch.from_numpy(p).pin_memory() for p in d)) for r, d in zip(ref, dist)]

    def written_on_side(r, d):
        """The planes copied up on the side stream after a slow kernel, so
        that a copy not ordered after that stream's work would read them
        before they are written."""
        with torch.cuda.stream(side):
            torch.cuda._sleep(2_000_000)
            return (tuple(p.to("cuda", non_blocking=True) for p in r),
                    tuple(p.to("cuda", non_blocking=True) for p in d))

    for named in (False, True):
        with quale.Session(backend="cuda", features=["psnr"]) as s:
            for r, d in pinned:
                rt, dt = written_on_side(r, d)
                if named:  # pushed from the default stream, naming the side one
                    s.push(rt, dt, stream=side)
                else:      # pushed while the side stream is torch's current one
                    with torch.cuda.stream(side):
                        s.push(rt, dt)
            got = s.result()
        check(got.frames == cpu.frames, "tensors of a side stream named by push(stream=)" if named
              else "tensors written on a side stream just before the push")
    # Arrays freed as push() returns, their memory taken at once by new
    # tensors and overwritten on the same stream: the copies come first.
    with quale.Session(backend="cuda", features=["psnr"]) as s:
        for r, d in zip(ref, dist):
            rt = tuple(torch.from_numpy(p).cuda() for p in r)
            dt = tuple(torch.from_numpy(p).cuda() for p in d)
            s.push(rt, dt)
            del rt, dt
            junk = [torch.full(p.shape, 255, dtype=torch.uint8, device="cuda") for p in r + d]
            del junk
        got = s.result()
    check(got.frames == cpu.frames, "tensors freed and their memory overwritten after push()")


def cupy_check(args, pair):
    try:
        import cupy
    except ImportError:
        print("NOT CHECKED CuPy arrays: no cupy", flush=True)
        return
    ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, 4)
    dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, 4)
    cpu = score(list(zip(ref, dist)), "cpu", 8)
    got = score([(tuple(map(cupy.asarray, r)), tuple(map(cupy.asarray, d)))
                 for r, d in zip(ref, dist)], "cuda", 8)
    check(got.frames == cpu.frames, "CuPy arrays equal the CPU")


def error_checks():
    y = torch.zeros((64, 96), dtype=torch.uint8, device="cuda")

    def raises(what, call, word):
        try:
            call()
        except ValueError as e:
            check(word in str(e), f"{what}: ValueError ({e})")
            return
        except Exception as e:  # noqa: BLE001
            check(False, f"{what}: {type(e).__name__} ({e}), not ValueError")
            return
        check(False, f"{what}: nothing raised")

    def push(r, d, backend):
        with quale.Session(model=None, features=["psnr"], backend=backend) as s:
            s.push(r, d)

    raises("a CUDA tensor on a CPU session", lambda: push(y, y, "cpu"), "cuda")
    raises("float CUDA tensors", lambda: push(y.float(), y.float(), "cuda"), "uint8 or uint16")
    wide = torch.zeros((64, 192), dtype=torch.uint8, device="cuda")
    raises("samples not adjacent", lambda: push(wide[:, ::2], wide[:, ::2], "cuda"), "contiguous")
    raises("a tensor on the GPU and one on the host",
           lambda: push(y, np.zeros((64, 96), np.uint8), "cuda"), "both frames")


def torch_metric_check(args, pair):
    ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, args.frames)
    dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, args.frames)
    session = score([(r[0], d[0]) for r, d in zip(ref, dist)], "cpu", 8, ())
    r = torch.stack([torch.from_numpy(f[0]) for f in ref]).cuda()
    d = torch.stack([torch.from_numpy(f[0]) for f in dist]).cuda()
    metric = quale.torch.VMAF()
    half = r.shape[0] // 2
    metric.update(r[:half], d[:half])
    metric.update(r[half:], d[half:])
    value = metric.compute()
    check(value.item() == session.pool("vmaf", "mean"),
          f"quale.torch.VMAF over two batches: {value.item()} == the Session's mean")
    metric.reset()
    metric.update(r.float() / 255, d.float() / 255)
    check(metric.compute().item() == session.pool("vmaf", "mean"),
          "quale.torch.VMAF on float frames in [0, 1] equals their uint8 samples")
    p5 = quale.torch.QualityMetric("vmaf", pool="p5")
    p5.update(r, d)
    check(p5.compute().item() == session.pool("vmaf", "p5"), "QualityMetric pool p5")


def pandas_check(args, pair):
    ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, 3)
    dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, 3)
    r = score([(to_cuda(a), to_cuda(b)) for a, b in zip(ref, dist)], "cuda", 8)
    df = r.to_pandas()
    check(list(df.columns) == r.keys and len(df) == len(r.frames) and
          all(df.at[f["frameNum"], k] == v for f in r.frames for k, v in f["metrics"].items()),
          "Result.to_pandas() holds the frames' values")


def rate(frames, count, repeat):
    """Frames per second as quale-bench's steady state counts them: after
    four frames of warm-up, `count` pushes and the flush (the models run);
    and the whole run: the session opened, every push, the Result made."""
    steady, whole = [], []
    for _ in range(repeat):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with quale.Session(backend="cuda") as s:
            for i in range(4):
                s.push(*frames[i % len(frames)])
            t0 = time.perf_counter()
            for i in range(count):
                r, d = frames[i % len(frames)]
                s.push(r, d)
            s._run.flush()
            steady.append(count / (time.perf_counter() - t0))
            s.result()
        whole.append((count + 4) / (time.perf_counter() - start))
    return statistics.median(steady), min(steady), max(steady), statistics.median(whole)


def bench(args, pair):
    ref = read_frames(os.path.join(args.cache, pair["ref_yuv"]), pair, 8)
    dist = read_frames(os.path.join(args.cache, pair["dis_yuv"]), pair, 8)
    host = list(zip(ref, dist))
    gpu = [(to_cuda(r), to_cuda(d)) for r, d in host]
    rows = [("torch CUDA tensors (3 planes)",) + rate(gpu, args.bench_frames, args.repeat),
            ("numpy arrays (3 planes)",) + rate(host, args.bench_frames, args.repeat)]
    print(f"\n1080p vmaf_v0.6.1, {args.bench_frames} frames, median of {args.repeat} "
          "(steady: after 4 frames, to the flush; whole: open to Result):")
    for name, med, lo, hi, whole in rows:
        print(f"  {name:32s} {med:8.0f} fps  ({lo:.0f}-{hi:.0f}), whole run {whole:.0f} fps")
    with open(os.path.join(args.out, "python_fps.json"), "w") as f:
        json.dump({name: {"steady": med, "whole": whole} for name, med, _, _, whole in rows}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--bench-frames", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    print(f"quale {quale.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)}", flush=True)
    manifest = json.load(open(os.path.join(args.shared, "corpus", "manifest.json")))
    by_name = {p["name"]: p for p in manifest}
    corpus_checks(args, manifest)
    stream_check(args, by_name["dune_576x324_x264crf28"])
    cupy_check(args, by_name["dune_576x324_x264crf28"])
    error_checks()
    torch_metric_check(args, by_name["dune_576x324_x264crf28"])
    pandas_check(args, by_name["dune_576x324_x264crf28"])
    bench(args, by_name["elephants_1080p_x264crf34"])
    print(f"\n{len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
