"""smx.torch's losses, each fused with its gradient in one C call: cross_entropy, focal_loss, dice_loss,
info_nce, sparsemax_loss, entmax15_loss, entmax_loss, kd_loss, noisy_softmax_loss, and every target loss of
the op table (class TLOSS: spherical_z_loss, sdpo_loss, ...), made from the table as smx._losses makes the
NumPy ones (TLOSSES, exported by smx.torch with no code per op).

One spec for the one Function (_function.Op): the forward computes the loss and, when an input requires
it, its gradient; the backward scales that saved gradient by the upstream one. Class dimension 1 as in
torch.nn.functional.cross_entropy ((C,), (N, C) or (N, C, d1, ...)), except for the sparse losses, kd_loss
and info_nce (classes last, as their NumPy counterparts). Half-precision inputs: cross_entropy runs smx's
float16 rows and computes bfloat16 in float32; the other losses (float32 / float64 rows in the library)
compute both in float32; the TLOSS ops run their own float16 / bfloat16 entries where the table lists them.
The loss and gradient come back in the input's dtype.
"""
import numpy as np
import torch

import smx as _smx

from .. import _losses as _np_losses
from . import _cuda
from ._device import device_of, route
from ._function import Op, from_np, threads_of, view
from ._rows import Spec

__all__ = ["cross_entropy", "focal_loss", "dice_loss", "info_nce", "sparsemax_loss", "entmax15_loss",
           "entmax_loss", "kd_loss", "noisy_softmax_loss"]


def _np_in(t, half_ok):
    """t as NumPy for a loss: its own memory, or float32 where the loss has no row of its dtype."""
    if t.dtype == torch.bfloat16 or (t.dtype == torch.float16 and not half_ok):
        t = t.detach().to(torch.float32)
    return view(t)[0]


def _forward(kw, needs, x, *extra):
    want = any(needs)
    r = kw["fn"](_np_in(x, kw.get("half", False)), *[_np_in(e.to(x.dtype), False) for e in extra],
                 reduction=kw["reduction"], return_grad=want, threads=kw["threads"])
    loss, grads = (r[0], r[1:1 + len(needs)]) if want else (r, ())
    return torch.as_tensor(np.asarray(loss)).to(x.dtype), tuple(from_np(g, x.dtype) for g in grads)


def _backward(kw, saved, needs, dl):
    grads = []
    for g in saved:
        if kw["reduction"] != "none":
            grads.append(g if bool(dl == 1) else g * dl)    # loss.backward() itself: the saved gradient as it is
        elif kw["row_local"]:
            grads.append(g * dl.reshape(dl.shape + (1,) * (g.dim() - dl.dim())))
        else:   # the saved gradient is that of the sum of the entries: only a uniform upstream scales it
            flat = dl.reshape(-1)
            if flat.numel() and not bool(torch.all(flat == flat[0])):
                raise NotImplementedError("smx.torch: reduction='none' of this loss has a gradient only for a "
                                          "uniform upstream gradient (e.g. .sum() or .mean() of it); use 'sum' "
                                          "or 'mean'")
            grads.append(g * (flat[0] if flat.numel() else 0.0))
    return grads + [None] * (len(needs) - len(grads))


_LOSS = Spec(_forward, _backward)


def _reduction(name, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("smx.torch.%s: reduction must be 'mean', 'sum' or 'none', got %r" % (name, reduction))


def _loss(name, x, fn, reduction, threads, row_local=True, squeeze=False, extra=(), half=False):
    _reduction(name, reduction)
    kw = {"fn": fn, "reduction": reduction, "row_local": row_local, "threads": threads_of(threads), "half": half}
    out = Op.apply(_LOSS, kw, x, *extra)
    return out.reshape(()) if squeeze and reduction == "none" and out.dim() == 1 else out


def _classes_last(x, target):
    """(C,) -> (1, C); (N, C, d...) -> (N, d..., C): smx's class axis is the last one."""
    if x.dim() == 1:
        return x.unsqueeze(0), target.reshape(1) if target.dim() == 0 else target.unsqueeze(0), True
    return (x.movedim(1, -1) if x.dim() > 2 else x), target, False


def _class_layout(name, input, target):
    """(input with its classes last, the class-index target tensor of its shape without them, squeezed): torch's
    layout, checked."""
    if not torch.is_tensor(target) or target.is_floating_point():
        raise TypeError("smx.torch.%s: target must be a tensor of class indices (integers), got %s"
                        % (name, target.dtype if torch.is_tensor(target) else type(target).__name__))
    x, t, sq = _classes_last(input, target)
    if t.shape != x.shape[:-1]:
        raise ValueError("smx.torch.%s: target has shape %s, expected %s (the input's shape without the class "
                         "dimension 1)" % (name, tuple(target.shape), tuple(x.shape[:-1]) if not sq else ()))
    return x, t, sq


def _class_targets(name, input, target):
    """(input with its classes last, the class-index targets as int64 NumPy, squeezed): torch's layout, checked."""
    x, t, sq = _class_layout(name, input, target)
    return x, _targets(t), sq


def _targets(target, like=None):
    """class indices as int64 NumPy, or soft targets in like's (float) NumPy dtype"""
    if not torch.is_tensor(target):
        raise TypeError("smx.torch: target must be a tensor, not %s" % type(target).__name__)
    if target.is_floating_point():
        return _np_in(target.to(like.dtype if like is not None else target.dtype), False)
    return target.detach().to(torch.int64).numpy()


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0,
                  z_loss=0.0, threads=None):
    """torch.nn.functional.cross_entropy(input, target, ignore_index=, reduction=, label_smoothing=) with
    class-index targets, fused in smx (forward and gradient in one call), plus z_loss * lse^2 per row (PaLM's
    auxiliary loss). input: (C,), (N, C) or (N, C, d1, ...) as torch; float32, float16 (smx's f16 rows),
    bfloat16 (computed in float32) and float64 (computed in float32: smx's cross-entropy has no float64
    rows). CUDA tensors (float32, float16, bfloat16; the target on the same device) run libsmx_cuda's fused
    cross-entropy on the current stream, and wait for its check of the targets. Per-class weights are not
    supported."""
    if weight is not None:
        raise NotImplementedError("smx.torch.cross_entropy: per-class weight is not supported")
    if target.is_floating_point():
        raise NotImplementedError("smx.torch.cross_entropy: only class-index targets are supported")
    mod = route("cross_entropy", device_of(input))
    if mod is not None:   # a CUDA tensor: libsmx_cuda's fused cross-entropy (_cuda.py)
        _reduction("cross_entropy", reduction)
        x, t, sq = _class_layout("cross_entropy", input, target)
        out = _cuda.cross_entropy(mod, x, t, ignore_index=ignore_index, reduction=reduction,
                                  label_smoothing=label_smoothing, z_loss=z_loss)
        return out.reshape(()) if sq and reduction == "none" and out.dim() == 1 else out
    x, tn, sq = _class_targets("cross_entropy", input, target)

    def fn(xn, **kw):
        return _smx.cross_entropy(xn, tn, ignore_index=int(ignore_index), label_smoothing=float(label_smoothing),
                                  z_loss=float(z_loss), **kw)
    return _loss("cross_entropy", x, fn, reduction, threads, squeeze=sq, half=True)


def focal_loss(input, target, gamma=2.0, alpha=None, reduction="mean", ignore_index=-100, threads=None):
    """Focal loss on softmax over dim 1 (Lin et al. 2017): -alpha_t (1 - p_t)^gamma log p_t; gamma = 0
    with no alpha is cross_entropy. alpha: None or C per-class weights (tensor or sequence)."""
    x, t, sq = _classes_last(input, target)
    tn = _targets(t, x)
    a = None if alpha is None else np.asarray(alpha.detach().cpu().numpy() if torch.is_tensor(alpha) else alpha)

    def fn(xn, **kw):
        return _smx.focal_loss(xn, tn, gamma=float(gamma), alpha=a, ignore_index=int(ignore_index), **kw)
    return _loss("focal_loss", x, fn, reduction, threads, squeeze=sq)


def dice_loss(input, target, smooth=1.0, reduction="mean", ignore_index=-100, threads=None):
    """Soft Dice loss of softmax(input) over dim 1, the classes' sums taken over every other dim:
    1 - mean_c (2 sum P G + smooth) / (sum P + sum G + smooth). target: class indices (the input's
    shape without dim 1) or soft targets of the input's shape (classes on dim 1). 'none': one value
    per class (its gradient needs a uniform upstream gradient)."""
    x, t, _ = _classes_last(input, target)
    if target.is_floating_point() and input.dim() > 2:
        t = target.movedim(1, -1)
    elif target.is_floating_point() and input.dim() == 1:
        t = target.unsqueeze(0)
    tn = _targets(t, x)

    def fn(xn, **kw):
        return _smx.dice_loss(xn, tn, smooth=float(smooth), ignore_index=int(ignore_index), **kw)
    return _loss("dice_loss", x, fn, reduction, threads, row_local=False)


def info_nce(sim, targets=None, temperature=1.0, symmetric=True, reduction="mean", ignore_index=-100,
             threads=None):
    """InfoNCE over a 2-D similarity matrix (rows x cols): cross-entropy of each row of sim / temperature
    against its positive column (targets, default the diagonal); symmetric (CLIP) averages it with the
    cross-entropy down that column."""
    tn = None if targets is None else _targets(targets)

    def fn(xn, **kw):
        return _smx.info_nce(xn, tn, temperature=float(temperature), symmetric=bool(symmetric),
                             ignore_index=int(ignore_index), **kw)
    return _loss("info_nce", sim, fn, reduction, threads, row_local=not symmetric)


def _sparse_loss(name, logits, target, reduction, ignore_index, threads, *alpha):
    tn = _targets(target)

    def fn(xn, **kw):
        return getattr(_smx, name)(xn, tn, *alpha, ignore_index=int(ignore_index), **kw)
    return _loss(name, logits, fn, reduction, threads)


def sparsemax_loss(logits, target, reduction="mean", ignore_index=-100, threads=None):
    """The sparsemax loss (smx.sparsemax_loss; classes on the last dim), gradient sparsemax - onehot."""
    return _sparse_loss("sparsemax_loss", logits, target, reduction, ignore_index, threads)


def entmax15_loss(logits, target, reduction="mean", ignore_index=-100, threads=None):
    """The 1.5-entmax Fenchel-Young loss (smx.entmax15_loss)."""
    return _sparse_loss("entmax15_loss", logits, target, reduction, ignore_index, threads)


def entmax_loss(logits, target, alpha=1.5, reduction="mean", ignore_index=-100, threads=None):
    """The alpha-entmax Fenchel-Young loss (smx.entmax_loss)."""
    return _sparse_loss("entmax_loss", logits, target, reduction, ignore_index, threads, float(alpha))


def kd_loss(logits, target, temperature=1.0, standardize=True, reduction="mean", threads=None):
    """smx.kd_loss on tensors (student logits, teacher logits), differentiable in the student's logits."""
    tn = _np_in(target.to(logits.dtype), False)

    def fn(xn, **kw):
        return _smx.kd_loss(xn, tn, temperature=temperature, standardize=standardize, **kw)
    return _loss("kd_loss", logits, fn, reduction, threads)


def noisy_softmax_loss(logits, target, norms, alpha=0.1, seed=0, step=0, mode="annealed", row_offset=0,
                       reduction="mean", ignore_index=-100, threads=None):
    """Noisy Softmax (Chen, Deng and Du 2017) over dim 1: cross-entropy with the target logit f_t replaced by
    f_t - alpha * max(norms - f_t, 0) * |xi|, norms = ||W_t|| ||X|| per sample (the target's shape),
    xi ~ N(0, 1) per (seed, row, step) (smx.noisy_softmax_noise; row = row_offset + the place in the
    flattened target). mode 'annealed' (the paper's), 'free' (norms may be None) or 'amplitude'.
    Differentiable in logits and norms."""
    x, t, sq = _classes_last(logits, target)
    tn = _targets(t)
    n = norms
    if n is not None and not torch.is_tensor(n):
        n = torch.as_tensor(n, dtype=x.dtype)
    if n is not None and sq:
        n = n.reshape(1)

    def fn(xn, *nn, **kw):
        return _smx.noisy_softmax_loss(xn, tn, nn[0] if nn else None, alpha=float(alpha), seed=int(seed),
                                       step=int(step), mode=mode, row_offset=int(row_offset),
                                       ignore_index=int(ignore_index), **kw)
    return _loss("noisy_softmax_loss", x, fn, reduction, threads, squeeze=sq, extra=() if n is None else (n,))


# ------------------------------------------------------------------ the op table's target losses (TLOSS)

def _grad_tensor(g):
    """A gradient from smx._smx._tloss as a tensor: bfloat16 bits (int16) viewed as bfloat16, no copy."""
    t = torch.from_numpy(g)
    return t.view(torch.bfloat16) if t.dtype == torch.int16 else t


def _tloss_forward(kw, needs, x):
    want = any(needs)
    xn, bf16 = view(x)
    r = _smx._smx._tloss(kw["name"], xn, kw["targets"], *kw["values"], reduction=kw["reduction"],
                         ignore_index=kw["ignore_index"], return_grad=want, threads=kw["threads"], bf16=bf16)
    loss, grads = (r[0], r[1:]) if want else (r, ())
    return torch.as_tensor(np.asarray(loss)).to(x.dtype), tuple(_grad_tensor(g).to(x.dtype) for g in grads)


_TLOSS = Spec(_tloss_forward, _backward)

TORCH_DOC = """input: (C,), (N, C) or (N, C, d1, ...), the classes on dim 1 as torch.nn.functional.cross_entropy;
target: integer class indices of the input's shape without dim 1, each in [0, C) or ignore_index.
reduction 'mean', 'sum' or 'none'. Differentiable in input: the forward computes the loss and its gradient
in one C call, the backward scales that gradient by the upstream one; a second derivative raises.
float16 and bfloat16 run the op's own half rows where its dtypes list them, else float32; the loss and
gradient come back in the input's dtype. threads=None: torch.get_num_threads() (results never depend on it).
Layout: an (N, C) tensor whose rows are evenly spaced with a unit-stride class dim is read in place; other
layouts ((N, C, d1, ...), whose classes move last, transposed views) are copied once."""


def _make_tloss(info):
    """smx.torch.<py> of one TLOSS op (info: an entry of smx._losses.ops())."""
    name, fn = info["py"], "smx.torch." + info["py"]
    sig = _np_losses.signature(info, ("input", "target"), (("reduction", "mean"), ("ignore_index", -100),
                                                           ("threads", None)))
    bind = _np_losses.binder(fn, sig)

    def loss(*args, **kwargs):
        a = bind(args, kwargs)
        _reduction(name, a["reduction"])
        x, tn, sq = _class_targets(name, a["input"], a["target"])
        kw = {"name": info["name"], "targets": tn, "values": _np_losses.values(fn, info, a), "row_local": True,
              "reduction": a["reduction"], "ignore_index": a["ignore_index"], "threads": threads_of(a["threads"])}
        out = Op.apply(_TLOSS, kw, x)
        return out.reshape(()) if sq and a["reduction"] == "none" and out.dim() == 1 else out

    loss.__name__ = loss.__qualname__ = name
    loss.__signature__, loss.__doc__ = sig, _np_losses.doc(info, TORCH_DOC)
    return loss


TLOSSES = {py: _make_tloss(info) for py, info in _np_losses.ops().items()}
__all__ += list(TLOSSES)
