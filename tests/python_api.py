#!/usr/bin/env python3
"""The Python package quale against the tool, on the CPU.

- numpy frames of every corpus pair (its first --frames frames, fewer for
  frames above 1080p, to keep the suite cheap) pushed through a Session
  give the tool's JSON on the same raw files: every key of every frame and
  every pooled value equal (==), and the same layout; frames in other
  memory layouts ((3, H, W) arrays, strided and reversed views, planes
  gathered into a copy) give the same numbers;
- Result.to_pandas() holds the tool's values, a row per frame;
- quale.score() on files equals the tool (raw yuv and y4m), also on videos
  of two bit depths or sizes, which it matches as the tool does;
- arrays through DLPack equal numpy's numbers and are given back; arrays on
  a CUDA device are refused with a reason on the CPU backend, and so are
  ones no CUDA copy can take (not uint8/uint16, masked, samples apart);
- every bad input raises the right exception with quale's message, and
  quale's warnings reach Python as UserWarnings;
- two threads score at once and get the numbers of one;
- 10,000 pushes leak no reference and no Python memory.

Run with an interpreter that has numpy, the built package on --pythonpath.
--not-built: the build has no Python package (no python3-dev, or a
sanitized build): exit 77.
Prints "N passed, M failed".
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402
from tally import check, finish  # noqa: E402

CHROMA_DIV = {"420": (2, 2), "422": (2, 1), "444": (1, 1)}


def tool_json(quale, ref, dist, fmt, frames, features=()):
    cmd = [quale, "-r", ref, "-d", dist, "--json", "-o", "-", "-q", "--frame_cnt", str(frames)]
    if fmt:
        cmd += ["-w", str(fmt["width"]), "-h", str(fmt["height"]),
                "-p", fmt["vmaf_pixel_format"], "-b", str(fmt["bitdepth"])]
    for f in features:
        cmd += ["--feature", f]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def read_frames(np, path, pair, count):
    """The first `count` frames of a raw file as (Y, U, V) arrays."""
    w, h, depth = pair["width"], pair["height"], pair["bitdepth"]
    dx, dy = CHROMA_DIV[pair["vmaf_pixel_format"]]
    cw, ch = (w + dx - 1) // dx, (h + dy - 1) // dy
    dtype = np.uint8 if depth == 8 else np.dtype("<u2")
    samples = w * h + 2 * cw * ch
    data = np.fromfile(path, dtype=dtype, count=samples * count).reshape(count, samples)
    return [(f[:w * h].reshape(h, w), f[w * h:w * h + cw * ch].reshape(ch, cw),
             f[w * h + cw * ch:].reshape(ch, cw)) for f in data]


def same_results(result, tool, what):
    """Every key of every frame and every pooled value equal, same layout."""
    check(result.frames == tool["frames"], f"{what}: per-frame values differ from the tool's")
    check(result.pooled == tool["pooled_metrics"], f"{what}: pooled values differ")
    mine = json.loads(result.to_json())
    check(list(mine) == list(tool), f"{what}: JSON sections {list(mine)} != {list(tool)}")
    check(mine["frames"] == tool["frames"], f"{what}: to_json() frames differ from the tool's")
    check(mine.get("input") == tool.get("input"),
          f"{what}: to_json()'s input notes {mine.get('input')} != the tool's {tool.get('input')}")


def layouts(np, planes, chroma):
    """The same frame in other memory layouts quale must read alike."""
    y, u, v = planes
    yield "planes", planes
    if chroma == "444":
        yield "(3, H, W)", np.stack(planes)
    # Rows far apart (a crop of a wider picture) and rows bottom up.
    wide = [np.zeros((p.shape[0], p.shape[1] + 7), p.dtype) for p in planes]
    for w, p in zip(wide, planes):
        w[:, 3:3 + p.shape[1]] = p
    yield "row strides", tuple(w[:, 3:3 + p.shape[1]] for w, p in zip(wide, planes))
    flipped = [np.ascontiguousarray(p[::-1]) for p in planes]
    yield "bottom up", tuple(f[::-1] for f in flipped)
    # Samples not adjacent: gathered into a copy.
    spread = [np.zeros((p.shape[0], p.shape[1] * 2), p.dtype) for p in planes]
    for s, p in zip(spread, planes):
        s[:, ::2] = p
    yield "column strides", tuple(s[:, ::2] for s in spread)


def corpus_pairs(quale, np, args):
    manifest = json.load(open(os.path.join(args.shared, "corpus", "manifest.json")))
    shared_corpus.ensure_decoded(args.shared, args.cache)
    for pair in manifest:
        big = pair["width"] * pair["height"] > 1920 * 1080
        count = min(pair["frames"], 2 if big else args.frames)
        ref = read_frames(np, os.path.join(args.cache, pair["ref_yuv"]), pair, count)
        dist = read_frames(np, os.path.join(args.cache, pair["dis_yuv"]), pair, count)
        tool = tool_json(args.quale, os.path.join(args.cache, pair["ref_yuv"]),
                         os.path.join(args.cache, pair["dis_yuv"]), pair, count)
        depth = pair["bitdepth"]
        # Every layout on the smallest pairs of each format; planes elsewhere.
        kinds = list(layouts(np, ref[0], pair["vmaf_pixel_format"]))
        names = [k for k, _ in kinds] if pair["width"] <= 640 else ["planes"]
        for name in names:
            with quale.Session(backend="cpu", bit_depth=depth if depth > 8 else None) as s:
                for r, d in zip(ref, dist):
                    r_l = dict(layouts(np, r, pair["vmaf_pixel_format"]))[name]
                    d_l = dict(layouts(np, d, pair["vmaf_pixel_format"]))[name]
                    s.push(r_l, d_l)
                same_results(s.result(), tool, f"{pair['name']} ({name}, {count} frames)")
        print(f"{pair['name']}: {count} frames, {', '.join(names)}", flush=True)
        if pair["name"] == "storm_720p10_gblur":
            r = quale.score(os.path.join(args.cache, pair["ref_yuv"]),
                            os.path.join(args.cache, pair["dis_yuv"]), backend="cpu",
                            width=pair["width"], height=pair["height"],
                            pixel_format=pair["pix_fmt"], bitdepth=depth, frames=count)
            same_results(r, tool, f"score() on the raw files of {pair['name']}")
        if pair["name"] == "dune_576x324_x264crf28":
            ref, dist = (os.path.join(args.shared, "corpus", pair[k]) for k in ("ref", "dis"))
            tool = tool_json(args.quale, ref, dist, None, count)
            r = quale.score(ref, dist, backend="cpu", frames=count)
            same_results(r, tool, f"score() on the compressed files of {pair['name']}")


def files_api(quale, args, tmp):
    subprocess.run([args.sample, "--width", "96", "--height", "64", "--frames", "4", tmp],
                   check=True, capture_output=True)
    ref, dist = os.path.join(tmp, "sample_ref.y4m"), os.path.join(tmp, "sample_dist.y4m")
    tool = tool_json(args.quale, ref, dist, None, 4, ["psnr", "float_ssim"])
    r = quale.score(ref, dist, features=["psnr", "float_ssim"], backend="cpu")
    same_results(r, tool, "score() on y4m files")
    check(r.pool("vmaf", "mean") == tool["pooled_metrics"]["vmaf"]["mean"], "pool('mean')")
    check(r["psnr_y"] == [f["metrics"]["psnr_y"] for f in tool["frames"]], "result[key]")
    pandas_frame(r, tool)
    p5 = tool_json(args.quale, ref, dist, None, 4, ["psnr"])  # p5 from the tool's --pool
    out = subprocess.run([args.quale, "-r", ref, "-d", dist, "--json", "-o", "-", "-q",
                          "--pool", "p5"], check=True, capture_output=True, text=True).stdout
    check(r.pool("vmaf", "p5") == json.loads(out)["pooled_metrics"]["vmaf"]["p5"],
          "pool('p5') differs from the tool's --pool p5")
    check(bool(p5), "the tool ran")
    return ref, dist


def pandas_frame(r, tool):
    """Result.to_pandas(): a row per frame, indexed by frameNum, a column
    per key in output order, the tool's values."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("NOT CHECKED: Result.to_pandas() (no pandas: scripts/bootstrap.sh --test installs "
              "python3-pandas)")
        return
    df = r.to_pandas()
    check(list(df.columns) == r.keys, f"to_pandas() columns {list(df.columns)} != {r.keys}")
    numbers = [f["frameNum"] for f in tool["frames"]]
    check(df.index.name == "frameNum" and list(df.index) == numbers,
          "to_pandas()'s index is not the frames' numbers")
    check(all(df.at[f["frameNum"], k] == v
              for f in tool["frames"] for k, v in f["metrics"].items()),
          "to_pandas() values differ from the tool's")


def write_y4m(np, path, frames, depth):
    """Frames of (Y, U, V) 4:2:0 planes as a YUV4MPEG2 file."""
    h, w = frames[0][0].shape
    tag = "C420jpeg" if depth == 8 else f"C420p{depth}"
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 {tag}\n".encode())
        for planes in frames:
            f.write(b"FRAME\n")
            for p in planes:
                f.write(p.astype(np.uint8 if depth == 8 else "<u2").tobytes())


def mixed_formats(quale, np, args, tmp):
    """Videos of two bit depths, and a distorted video of another size:
    score() matches them as the tool does (and says so in a warning)."""
    import warnings
    rng = np.random.default_rng(5)

    def frames(w, h, top):
        return [tuple(rng.integers(0, top, (hh, ww), np.uint16)
                      for ww, hh in ((w, h), (w // 2, h // 2), (w // 2, h // 2)))
                for _ in range(3)]

    ref8, dist10, small = (os.path.join(tmp, n) for n in ("ref8.y4m", "dist10.y4m", "small.y4m"))
    write_y4m(np, ref8, frames(96, 64, 256), 8)
    write_y4m(np, dist10, frames(96, 64, 1024), 10)
    write_y4m(np, small, frames(48, 32, 256), 8)
    for dist, words in ((dist10, ("8-bit", "10 bits")), (small, ("48x32", "96x64", "bicubic"))):
        tool = tool_json(args.quale, ref8, dist, None, 3)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            r = quale.score(ref8, dist, backend="cpu")
        same_results(r, tool, f"score() of {os.path.basename(dist)} against an 8-bit 96x64 one")
        text = " ".join(str(w.message) for w in said)
        check(all(w in text for w in words), f"score()'s warning {text!r} lacks {words}")


def raises(exc, what, call, *words):
    try:
        call()
    except exc as e:
        text = str(e)
        check(all(w in text for w in words), f"{what}: message {text!r} lacks {words}")
        return
    except Exception as e:  # noqa: BLE001 - the wrong type is the failure reported
        check(False, f"{what}: raised {type(e).__name__} ({e}), not {exc.__name__}")
        return
    check(False, f"{what}: raised nothing, not {exc.__name__}")


def bad_inputs(quale, np, ref_path):
    y = np.zeros((64, 96), np.uint8)
    y16 = np.zeros((64, 96), np.uint16)
    uv = np.zeros((32, 48), np.uint8)

    def push(*frames, **kw):
        with quale.Session(model=None, features=["psnr"], backend="cpu") as s:
            for r, d in frames:
                s.push(r, d, **kw)
            s.result()

    raises(ValueError, "float frames", lambda: push((y.astype(np.float32), y)), "uint8", "f")
    raises(ValueError, "int16 frames", lambda: push((y, y.astype(np.int16))), "dist", "uint16")
    raises(ValueError, "a 1-D frame", lambda: push((y.ravel(), y.ravel())), "dimension")
    raises(ValueError, "a (2, H, W) frame", lambda: push((np.stack([y, y]),) * 2), "(3, H, W)")
    raises(ValueError, "two planes", lambda: push(((y, uv), (y, uv))), "three")
    raises(ValueError, "planes of no chroma format",
           lambda: push(((y, uv[:20], uv[:20]),) * 2), "4:2:0")
    raises(ValueError, "ref and dist of two sizes", lambda: push((y, y[:32])), "96x64", "96x32")
    raises(ValueError, "uint16 without a bit depth", lambda: push((y16, y16)), "bit_depth")
    raises(ValueError, "bit depth 17", lambda: push((y16, y16), bit_depth=17), "9 to 16")
    raises(ValueError, "uint8 at bit depth 10", lambda: push((y, y), bit_depth=10), "uint16")
    raises(ValueError, "a frame of another size than the first",
           lambda: push((y, y), (y[:32], y[:32])), "96x32")
    raises(TypeError, "a str frame", lambda: push(("frame", "frame")), "str")
    raises(ValueError, "an unknown model", lambda: quale.Session(model="vmaf_v9"), "vmaf_v9")
    raises(FileNotFoundError, "a missing model file",
           lambda: quale.Session(model="no/such/model.json"), "model.json")
    raises(ValueError, "an unknown feature", lambda: quale.Session(features=["psnrr"]), "psnr")
    raises(ValueError, "an unknown backend", lambda: quale.Session(backend="tpu"), "tpu")
    if "cuda" not in quale.backends():
        raises(RuntimeError, "CUDA in a build without it", lambda: quale.Session(backend="cuda"))
    raises(FileNotFoundError, "a missing video", lambda: quale.score(ref_path, "no/such.y4m"),
           "no/such.y4m")
    raises(ValueError, "raw video without its format",
           lambda: quale.score("a.yuv", "b.yuv", width=96), "pixel_format")
    raises(ValueError, "an unknown pooling", lambda: quale.Session(pool=["p200"]), "p200")
    s = quale.Session(model=None, features=["psnr"], backend="cpu")
    s.push(y, y)
    r = s.result()
    raises(ValueError, "a push after result()", lambda: s.push(y, y), "no more frames")
    raises(ValueError, "an unknown pooling of a result", lambda: r.pool("psnr_y", "median"),
           "median")
    raises(KeyError, "an unknown key", lambda: r.pool("vmaf", "mean"), "vmaf")
    with quale.Session(model=None, features=["psnr"], backend="cpu") as s:
        pass
    raises(ValueError, "a push to a closed session", lambda: s.push(y, y), "closed")


class DLPackOnly:
    """An array seen only through DLPack (as a torch CPU tensor is)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


class CudaInterface:
    """An array described by the CUDA array interface (version 3)."""

    def __init__(self, array, **changes):
        self.array = array
        self.__cuda_array_interface__ = dict(
            shape=array.shape, typestr=array.dtype.str, version=3, stream=1,
            data=(array.__array_interface__["data"][0], False), strides=array.strides)
        self.__cuda_array_interface__.update(changes)


def foreign_arrays(quale, np):
    """DLPack arrays on the host give numpy's numbers and are given back;
    arrays on a CUDA device are refused with a reason where they cannot go."""
    rng = np.random.default_rng(11)
    y8 = [rng.integers(0, 256, (36, 64), np.uint8) for _ in range(4)]
    c8 = [rng.integers(0, 256, (18, 32), np.uint8) for _ in range(8)]
    y16 = [rng.integers(0, 1024, (36, 64), np.uint16) for _ in range(4)]

    def run(frames, **kw):
        with quale.Session(features=["psnr"], backend="cpu", **kw) as s:
            for r, d in frames:
                s.push(r, d)
            return s.result().frames

    pairs = [(y8[i], y8[i + 1]) for i in range(3)]
    check(run([(DLPackOnly(r), DLPackOnly(d)) for r, d in pairs]) == run(pairs),
          "luma through DLPack differs from numpy")
    planes = [((y8[i], c8[i], c8[i + 1]), (y8[i + 1], c8[i + 2], c8[i + 3])) for i in range(3)]
    check(run([(tuple(map(DLPackOnly, r)), tuple(map(DLPackOnly, d))) for r, d in planes]) ==
          run(planes), "4:2:0 planes through DLPack differ from numpy")
    wide = [np.zeros((36, 80), np.uint8) for _ in range(2)]
    wide[0][:, 5:69], wide[1][:, 5:69] = y8[0], y8[1]
    check(run([(DLPackOnly(wide[0][:, 5:69]), DLPackOnly(wide[1][:, 5:69]))]) ==
          run([(y8[0], y8[1])]), "a strided DLPack view differs from numpy")
    deep = [(y16[i], y16[i + 1]) for i in range(3)]
    check(run([(DLPackOnly(r), DLPackOnly(d)) for r, d in deep], bit_depth=10) ==
          run(deep, bit_depth=10), "10-bit luma through DLPack differs from numpy")
    held = sys.getrefcount(y8[0])
    with quale.Session(model=None, features=["psnr"], backend="cpu") as s:
        for _ in range(200):
            s.push(DLPackOnly(y8[0]), DLPackOnly(y8[1]))
    check(sys.getrefcount(y8[0]) == held, "DLPack capsules keep their arrays after a push")

    def push(r, d, backend="cpu"):
        with quale.Session(model=None, features=["psnr"], backend=backend) as s:
            s.push(r, d)

    raises(ValueError, "a CUDA array on the CPU backend",
           lambda: push(CudaInterface(y8[0]), CudaInterface(y8[1])), "cuda backend")
    raises(ValueError, "a DLPack array on a CUDA device on the CPU backend",
           lambda: push(DLPackOnly(y8[0], (2, 0)), DLPackOnly(y8[1], (2, 0))), "cuda backend")
    raises(ValueError, "one frame on the host and one on a CUDA device",
           lambda: push(y8[0], CudaInterface(y8[1])), "both frames", "host")
    raises(ValueError, "float samples on a CUDA device",
           lambda: push(CudaInterface(y8[0].astype(np.float32)),
                        CudaInterface(y8[1].astype(np.float32))),
           "uint8 or uint16")
    raises(ValueError, "a masked CUDA array",
           lambda: push(CudaInterface(y8[0], mask=1), CudaInterface(y8[1])), "masked")
    raises(ValueError, "stream 0 in a CUDA array interface",
           lambda: push(CudaInterface(y8[0], stream=0), CudaInterface(y8[1])), "stream 0")
    spread = np.zeros((36, 128), np.uint8)
    raises(ValueError, "a CUDA plane whose samples are not adjacent",
           lambda: push(CudaInterface(spread[:, ::2]), CudaInterface(spread[:, ::2])),
           "contiguous")
    raises(ValueError, "a negative stream",
           lambda: quale.Session(model=None, features=["psnr"], backend="cpu").push(
               CudaInterface(y8[0]), CudaInterface(y8[1]), stream=-5), "negative")
    raises(TypeError, "a stream that is no stream",
           lambda: quale.Session(model=None, features=["psnr"], backend="cpu").push(
               y8[0], y8[1], stream="side"), "cuda_stream")
    raises(ValueError, "a DLPack device the frames cannot be on",
           lambda: push(DLPackOnly(y8[0], (4, 0)), DLPackOnly(y8[1], (4, 0))), "device type 4")
    raises(ValueError, "signed samples through DLPack",
           lambda: push(DLPackOnly(y8[0].astype(np.int8)), DLPackOnly(y8[1].astype(np.int8))),
           "uint8 or uint16")


def library_warnings(quale, np):
    """quale's warnings reach Python as UserWarnings, and a filter that
    makes them errors raises instead of crashing."""
    import warnings
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        s = quale.Session(model=None, features=["psnr"], backend="cpu", threads=100000)
    text = " ".join(str(w.message) for w in said if issubclass(w.category, UserWarning))
    check("threads asked for" in text, f"no UserWarning of too many threads: {text!r}")
    y = np.zeros((16, 16), np.uint8)
    s.push(y, y)
    check(len(s.result().frames) == 1, "a session opened with a warning scores")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raises(UserWarning, "a warning a filter makes an error",
               lambda: quale.Session(model=None, features=["psnr"], backend="cpu",
                                     threads=100000), "threads")


def threads(quale, np):
    rng = np.random.default_rng(7)
    frames = [(rng.integers(0, 256, (72, 128), np.uint8), rng.integers(0, 256, (72, 128),
                                                                       np.uint8))
              for _ in range(12)]

    def run():
        with quale.Session(features=["psnr"], backend="cpu", threads=1) as s:
            for r, d in frames:
                s.push(r, d)
            return s.result().frames

    alone = run()
    results = [None, None]

    def worker(i):
        results[i] = run()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(results[0] == alone and results[1] == alone, "two sessions on two threads differ")
    # One session, two threads pushing: the same values, in either order.
    with quale.Session(model=None, features=["psnr"], backend="cpu") as s:
        halves = [frames[0::2], frames[1::2]]
        ts = [threading.Thread(target=lambda h=h: [s.push(r, d) for r, d in h]) for h in halves]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        shared = sorted(f["metrics"]["psnr_y"] for f in s.result().frames)
    check(shared == sorted(f["metrics"]["psnr_y"] for f in alone),
          "one session pushed from two threads gives other values")


def no_leak(quale, np):
    y = np.full((16, 16), 100, np.uint8)
    d = np.full((16, 16), 90, np.uint8)
    before = (sys.getrefcount(y), sys.getrefcount(d))
    s = quale.Session(model=None, features=["psnr"], backend="cpu", threads=1)
    tracemalloc.start()
    for _ in range(100):
        s.push(y, d)
    start = tracemalloc.get_traced_memory()[0]
    for _ in range(10000):
        s.push(y, d)
    for _ in range(1000):  # refused pushes must let go of their arrays too
        try:
            s.push(y, d[:8])
        except ValueError:
            pass
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    check(s.frame_count == 10100, f"frames counted: {s.frame_count}")
    check((sys.getrefcount(y), sys.getrefcount(d)) == before,
          f"references held after 11,000 pushes: {before} -> "
          f"{(sys.getrefcount(y), sys.getrefcount(d))}")
    check(grown < 64 * 1024, f"Python memory grew by {grown} bytes over 11,000 pushes")
    r = s.result()
    check(len(r.frames) == 10100, "the frames of 10,100 pushes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quale", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--pythonpath")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    ap.add_argument("--cache", default=shared_corpus.default_cache())
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--not-built", action="store_true")
    args = ap.parse_args()
    if args.not_built:
        print("SKIP: this build has no Python package (python3-dev missing, -Dpython=disabled, "
              "or a sanitized build, which an interpreter cannot load)")
        return 77
    if args.pythonpath:
        sys.path.insert(0, args.pythonpath)
    import numpy as np
    import quale
    print(f"quale {quale.__version__} from {os.path.dirname(quale.__file__)}", flush=True)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        ref, _ = files_api(quale, args, tmp)
        mixed_formats(quale, np, args, tmp)
        bad_inputs(quale, np, ref)
        foreign_arrays(quale, np)
        library_warnings(quale, np)
        threads(quale, np)
        no_leak(quale, np)
    corpus_pairs(quale, np, args)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
