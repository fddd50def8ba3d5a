"""quale.torch: VMAF and quale's metrics as a metric object for torch
loops, in the torchmetrics style (update() per batch, compute() at the
end, reset() for the next epoch).

    from quale.torch import VMAF
    vmaf = VMAF()                       # vmaf_v0.6.1, on the tensors' GPU
    for ref, dist in loader:            # (N, H, W) uint8 luma, on cuda
        vmaf.update(ref, dist)
    score = vmaf.compute()              # tensor(float64): the pooled mean
    vmaf.reset()

Frames are Y'CbCr samples, in the order given, scored as one video (the
temporal features, motion, look at the previous frame):

- (H, W): one luma frame; (N, H, W): N luma frames;
- (N, 1, H, W): N luma frames; (N, 3, H, W): N 4:4:4 frames (Y, Cb, Cr);
- uint8 (8-bit), uint16 with ``bit_depth`` 9 to 16, or floating point in
  [0, 1], scaled to ``bit_depth`` (round to nearest, clamped).

Tensors on a CUDA device are scored there, copied from device to device
on the stream that wrote them; tensors on the host go through the CPU
backend (or the one asked for).  Importing this module needs torch.
"""
import torch

import quale

__all__ = ["VMAF", "QualityMetric"]


def _as_samples(x, bit_depth):
    """x as integer samples of bit_depth: uint8 or uint16, as quale takes."""
    if x.dtype == torch.uint8:
        if bit_depth != 8:
            raise ValueError("uint8 frames are 8-bit; bit_depth %d needs uint16 or float frames"
                             % bit_depth)
        return x
    if x.dtype == torch.uint16:
        if bit_depth <= 8:
            raise ValueError("uint16 frames need bit_depth from 9 to 16")
        return x
    if x.is_floating_point():
        top = (1 << bit_depth) - 1
        y = (x.to(torch.float32) * top).round_().clamp_(0, top)
        return y.to(torch.uint8 if bit_depth == 8 else torch.uint16)
    raise ValueError("frames are uint8, uint16 or floating point in [0, 1], not %s" % x.dtype)


def _frames(x):
    """The frames of a tensor, each as quale.Session.push() takes it."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("frames are torch tensors, not %s" % type(x).__name__)
    if x.dim() == 2:
        return [x]
    if x.dim() == 3:
        return list(x.unbind(0))
    if x.dim() == 4 and x.shape[1] == 1:
        return list(x[:, 0].unbind(0))
    if x.dim() == 4 and x.shape[1] == 3:
        return [tuple(f.unbind(0)) for f in x.unbind(0)]
    raise ValueError("frames are (H, W), (N, H, W), (N, 1, H, W) or (N, 3, H, W), not %s"
                     % (tuple(x.shape),))


class QualityMetric:
    """Any of quale's scores over the frames given to update().

    QualityMetric(key, model=..., features=(), pool="mean", bit_depth=8,
    backend="auto", device=None, **session options)

    key: the output key compute() pools ("vmaf", "psnr_y", "float_ssim");
    pool: how ("mean", "harmonic_mean", "min", "p5", "low1"...).  The
    session opens at the first update(), on the GPU of the first tensors
    when they are on one (backend "auto").
    """

    def __init__(self, key, model=quale.DEFAULT_MODEL, features=(), pool="mean", bit_depth=8,
                 backend="auto", device=None, **options):
        if not 8 <= bit_depth <= 16:
            raise ValueError("bit_depth is 8 to 16, not %r" % (bit_depth,))
        self.key, self.pool, self.bit_depth = key, pool, bit_depth
        self._settings = dict(model=model, features=features, backend=backend, device=device,
                              **options)
        extra = () if pool in ("mean", "harmonic_mean", "min", "max") else (pool,)
        self._settings["pool"] = tuple(self._settings.get("pool", ())) + extra
        self._session = None
        self._result = None

    def _open(self, sample):
        settings = dict(self._settings)
        if sample.is_cuda and settings["backend"] in ("auto", "cuda"):
            settings["backend"] = "cuda"
            if settings["device"] is None:
                settings["device"] = sample.device.index or 0
        elif settings["backend"] == "auto" and not sample.is_cuda:
            settings["backend"] = "cpu"
        bit_depth = self.bit_depth if self.bit_depth > 8 else None
        return quale.Session(bit_depth=bit_depth, **settings)

    def update(self, ref, dist):
        """Scores the frames of a batch (ref and dist of one shape)."""
        if self._result is not None:
            raise ValueError("compute() ended this run: reset() before more frames")
        if not isinstance(ref, torch.Tensor) or not isinstance(dist, torch.Tensor):
            raise TypeError("ref and dist are torch tensors")
        if ref.shape != dist.shape:
            raise ValueError("ref is %s and dist %s: one shape for both"
                             % (tuple(ref.shape), tuple(dist.shape)))
        ref, dist = _as_samples(ref, self.bit_depth), _as_samples(dist, self.bit_depth)
        if self._session is None:
            self._session = self._open(ref)
        for r, d in zip(_frames(ref), _frames(dist)):
            self._session.push(r, d)

    def compute(self):
        """The pooled score of every frame so far, as a float64 tensor."""
        if self._result is None:
            if self._session is None:
                raise ValueError("compute() before any update()")
            self._result = self._session.result()
        return torch.tensor(self._result.pool(self.key, self.pool), dtype=torch.float64)

    @property
    def result(self):
        """The quale.Result behind compute() (per-frame values, to_json())."""
        self.compute()
        return self._result

    def reset(self):
        """Forgets the frames: the next update() starts a new run."""
        if self._session is not None:
            self._session.close()
        self._session = None
        self._result = None


class VMAF(QualityMetric):
    """VMAF over the frames given to update(): QualityMetric("vmaf", ...)
    with model "vmaf_v0.6.1" unless another is given."""

    def __init__(self, model=quale.DEFAULT_MODEL, **kwargs):
        super().__init__("vmaf", model=model, **kwargs)
