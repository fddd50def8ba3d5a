"""quale: video quality (VMAF and the metrics around it), libvmaf's numbers.

Score two videos the quale tool reads::

    r = quale.score("ref.y4m", "dist.y4m")
    r.pooled["vmaf"]["mean"], r.pool("vmaf", "p5"), r.to_json()

or frames held in numpy arrays, one pair at a time::

    with quale.Session(model="vmaf_v0.6.1", features=["psnr"]) as s:
        for ref, dist in pairs:
            s.push(ref, dist)
        r = s.result()

A frame is a 2-D array (luma), a (3, H, W) array (4:4:4) or a sequence of
three 2-D planes (4:2:0, 4:2:2 or 4:4:4, told by their sizes), uint8, or
uint16 with ``bit_depth``.  Errors are exceptions carrying quale's message:
ValueError for input to fix, FileNotFoundError and its kin for files,
RuntimeError for a device or backend that fails.
"""
import json
import os
import sys
import time

from . import _quale

__all__ = ["Result", "Session", "score", "models", "features", "devices", "backends",
           "__version__"]

__version__ = _quale.version()

DEFAULT_MODEL = "vmaf_v0.6.1"


def models():
    """The built-in models: a list of dicts (version, condition, features,
    range, bootstrap)."""
    return _quale.models()


def features():
    """The metrics: a list of dicts (name, keys, options, backends)."""
    return _quale.features()


def devices():
    """The GPU devices of the backends built in: a list of dicts (backend,
    index, type, name, memory_bytes, preferred)."""
    return _quale.devices()


def backends():
    """The backends this build has ("cpu", "cuda", "vulkan", "hip")."""
    return _quale.backends()


def _model_specs(model):
    """Model specs in the tool's -m syntax from a name, a path, a spec or a
    sequence of those; None or () asks for no model."""
    if model is None:
        return []
    if isinstance(model, (str, os.PathLike)):
        model = [model]
    specs = []
    for m in model:
        m = os.fspath(m)
        if not isinstance(m, str) or not m:
            raise ValueError("a model is a name (vmaf_v0.6.1), a path or a spec "
                             "(version=...:name=...), not %r" % (m,))
        if m.startswith(("version=", "path=")):
            specs.append(m)
        elif m.endswith(".json") or os.sep in m:
            specs.append("path=" + m)
        else:
            specs.append("version=" + m)
    return specs


def _option_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _feature_specs(feats):
    """Metric specs from a name, a spec ("psnr=enable_chroma=false"), a
    sequence of those, or a dict of names to dicts of options."""
    if feats is None:
        return []
    if isinstance(feats, str):
        return [feats]
    if isinstance(feats, dict):
        specs = []
        for name, options in feats.items():
            parts = ["%s=%s" % (k, _option_text(v)) for k, v in (options or {}).items()]
            specs.append(name + ("=" + ":".join(parts) if parts else ""))
        return specs
    specs = list(feats)
    for s in specs:
        if not isinstance(s, str):
            raise ValueError("a feature is a metric's name or spec, not %r" % (s,))
    return specs


class Result:
    """The results of a run.

    frames: libvmaf's per-frame records, ``{"frameNum": n, "metrics": {key:
    value}}`` (None where a value is not a finite number); pooled: key ->
    {"min", "max", "mean", "harmonic_mean"} and the extra methods asked for;
    aggregate: the run's aggregate metrics; keys: every key in output order;
    backend: what ran the metrics.  pool() pools by any name quale knows,
    to_json() is the tool's JSON, to_pandas() a DataFrame of the frames.
    """

    def __init__(self, run, pool_methods=(), fps=0.0):
        self._run = run
        self._pool_methods = tuple(pool_methods)
        self._fps = fps
        whole = json.loads(run.write_json(-1, self._pool_methods, fps))
        self.frames = whole["frames"]
        self.pooled = whole["pooled_metrics"]
        self.aggregate = whole.get("aggregate_metrics", {})
        self.keys = run.feature_names()
        self.backend = run.backend

    def __repr__(self):
        return "<quale.Result: %d frames, %d keys, %s>" % (len(self.frames), len(self.keys),
                                                           self.backend)

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, key):
        """The per-frame values of a key, in frame order."""
        if key not in self.keys:
            raise KeyError(key)
        return [f["metrics"].get(key) for f in self.frames]

    def pool(self, key, method="mean"):
        """The key pooled by name: "min", "max", "mean", "harmonic_mean",
        "pN" (a percentile: "p5"), "lowN" (the mean of the lowest N%)."""
        return self._run.pooled(key, method)

    def to_json(self, precision=None):
        """The results in the tool's JSON layout (`quale --json`): full
        precision by default, else `precision` digits after the point."""
        return self._run.write_json(-1 if precision is None else precision,
                                    self._pool_methods, self._fps)

    def to_pandas(self):
        """A pandas DataFrame: one row per frame (indexed by frameNum), one
        column per key.  Needs pandas."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Result.to_pandas() needs pandas (python3-pandas)") from e
        rows = [f["metrics"] for f in self.frames]
        index = pandas.Index([f["frameNum"] for f in self.frames], name="frameNum")
        return pandas.DataFrame(rows, index=index, columns=self.keys)


class Session:
    """A streaming run: frames pushed as numpy arrays, one pair at a time.

    Session(model="vmaf_v0.6.1", features=(), backend="auto", device=None,
    threads=0, subsample=0, cpumask=0, bit_depth=None, pool=())

    model: a name, path or spec, a sequence of them, or None; features:
    metrics to compute besides the model's; backend: "cpu", "cuda",
    "vulkan", "hip" or "auto" (a GPU where there is one); bit_depth: the
    default for uint16 frames; pool: extra pooling methods ("p5", "low1")
    for the results.  push() may be called from several threads at once
    (frames are numbered in the order they arrive; temporal metrics need
    them in order, so push from one thread where that matters).  The GIL
    is released while frames are scored.
    """

    def __init__(self, model=DEFAULT_MODEL, features=(), backend="auto", device=None,
                 threads=0, subsample=0, cpumask=0, bit_depth=None, pool=()):
        self._run = _quale.Run(backend, -1 if device is None else int(device), threads,
                               subsample, cpumask)
        for spec in _model_specs(model):
            self._run.use_model(spec)
        for spec in _feature_specs(features):
            self._run.use_metric(spec)
        self._bit_depth = bit_depth or 0
        self._pool = tuple(pool)
        for method in self._pool:
            _check_pool_method(method)
        self._result = None
        self._start = None

    @property
    def backend(self):
        """The backend that runs the metrics ("cpu", "cuda", ...)."""
        return self._run.backend

    @property
    def closed(self):
        return self._run.closed

    @property
    def frame_count(self):
        """The frames pushed so far."""
        return self._run.frame_count()

    def push(self, ref, dist, bit_depth=None, stream=None):
        """Scores one frame pair (see the module's docstring for frames).

        Frames on a CUDA device are copied on the device, after the work on
        the stream that wrote them: ``stream`` (a CUstream as an int, or an
        object with ``cuda_stream``: torch.cuda.Stream, cupy's Stream); by
        default torch's current stream for torch tensors, else the
        producer's DLPack synchronisation (or the CUDA array interface's
        stream).  The arrays are the caller's again when push() returns: on
        the host at once; on the device in the stream's order (work queued
        on that stream after push() may overwrite them, as torch's and
        CuPy's allocators do with memory freed there); where no stream was
        known, push() waits for the copies.
        """
        if self._start is None:
            self._start = time.monotonic()
        if stream is None:
            stream = _torch_stream(ref)
        elif not isinstance(stream, int):
            handle = getattr(stream, "cuda_stream", None)
            if not isinstance(handle, int):
                raise TypeError("stream is a CUstream as an int or an object with cuda_stream "
                                "(torch.cuda.Stream), not %s" % type(stream).__name__)
            stream = handle
        self._run.push(ref, dist, bit_depth or self._bit_depth, stream)

    def _score_files(self, ref, dist, **raw):
        self._start = time.monotonic()
        return self._run.score_files(ref, dist, **raw)

    def result(self):
        """Finishes the frames, runs the models and returns the Result; the
        session then takes no more frames."""
        if self._result is None:
            self._run.flush()
            elapsed = time.monotonic() - self._start if self._start is not None else 0.0
            frames = self._run.frame_count()
            self._result = Result(self._run, self._pool, frames / elapsed if elapsed > 0 else 0.0)
        return self._result

    def close(self):
        """Takes no more frames; a Result already made stays usable."""
        self._run.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _torch_stream(frame):
    """torch's current stream on the device of a frame of torch CUDA
    tensors (the stream its work on them is ordered in), else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    t = frame[0] if isinstance(frame, (tuple, list)) and frame else frame
    if not isinstance(t, torch.Tensor) or not t.is_cuda:
        return None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(t.device.index)
    return torch.cuda.current_stream(t.device).cuda_stream


def _check_pool_method(method):
    if (not isinstance(method, str) or method in ("min", "max", "mean", "harmonic_mean")
            or not _quale.pool_method_ok(method)):
        raise ValueError("extra pooling methods are pN or lowN (libvmaf's four are always "
                         "there), not %r" % (method,))


def _pixel_format(name):
    """The tool's -p names ("420") from those or FFmpeg's ("yuv420p", "gray")."""
    name = str(name)
    if name in ("gray", "gray10le", "gray12le", "gray16le"):
        return "400"
    if name.startswith("yuv") and len(name) >= 6:
        return name[3:6]
    return name


def _is_path(x):
    return isinstance(x, (str, bytes, os.PathLike))


def _with_frame_rate(specs, path):
    """xpsnr's temporal term depends on the frame rate, which FFmpeg's
    filter takes from its first input: the reference's integer rate goes
    to an xpsnr spec that sets none, where the file declares one (y4m, a
    container), as the tool does."""
    out = []
    for spec in specs:
        name, _, options = spec.partition("=")
        if name == "xpsnr" and "fps=" not in options:
            rate = _quale.frame_rate(path)
            if rate:
                spec = "%s=%s" % (name, ":".join(filter(None, (options, "fps=%d" % (rate[0] // rate[1])))))
        out.append(spec)
    return out


def score(ref, dist, model=DEFAULT_MODEL, features=(), backend="auto", **options):
    """Scores a distorted video against its reference; returns a Result.

    ref, dist: paths of videos the tool reads (y4m, raw yuv, compressed
    video where FFmpeg's libraries are installed), or sequences of frames
    (numpy arrays, as Session.push() takes them).  Options: width, height,
    pixel_format ("420", "422", "444", "400") and bitdepth for raw yuv;
    frames (score at most this many: the tool's --frame_cnt); scaler (how
    a distorted video of another size is scaled to the reference's:
    "bicubic", "bilinear", "lanczos"...; videos of two bit depths are
    scored at the deeper, as the tool does, each said in a warning); device,
    threads, subsample, cpumask, bit_depth (of uint16 frames) and pool
    (extra pooling methods), as Session takes them.
    """
    raw_keys = ("width", "height", "pixel_format", "bitdepth", "scaler")
    session_keys = ("device", "threads", "subsample", "cpumask", "bit_depth", "pool")
    unknown = set(options) - set(raw_keys) - set(session_keys) - {"frames"}
    if unknown:
        raise TypeError("score() got unknown options: %s" % ", ".join(sorted(unknown)))
    if _is_path(ref) and _is_path(dist):
        features = _with_frame_rate(_feature_specs(features), os.fspath(ref))
    session = Session(model, features, backend,
                      **{k: options[k] for k in session_keys if k in options})
    frames = options.get("frames") or 0
    with session:
        if _is_path(ref) and _is_path(dist):
            raw = {k: options[k] for k in raw_keys if options.get(k) is not None}
            if "pixel_format" in raw:
                raw["pixel_format"] = _pixel_format(raw["pixel_format"])
            session._score_files(ref, dist, frame_count=frames, **raw)
        elif _is_path(ref) or _is_path(dist):
            raise ValueError("ref and dist are both paths or both sequences of frames")
        else:
            for i, (r, d) in enumerate(zip(ref, dist)):
                if frames and i >= frames:
                    break
                session.push(r, d)
        return session.result()
