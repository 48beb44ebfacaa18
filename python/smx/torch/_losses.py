"""smx.torch.focal_loss, dice_loss, spherical_z_loss, info_nce: autograd
Functions over smx's fused C losses. The forward computes the loss and its
gradient in one call (the gradient only when the input requires it); the
backward scales that gradient by the upstream one. Class dimension 1 as in
torch.nn.functional.cross_entropy ((C,), (N, C) or (N, C, d1, ...))."""
import numpy as np
import torch

import smx as _smx

from ._softmax import _np

__all__ = ["focal_loss", "dice_loss", "spherical_z_loss", "info_nce"]


class _FusedLoss(torch.autograd.Function):
    """fn(x_numpy, return_grad=...) -> loss or (loss, grad); row_local: a 'none' loss whose
    entry i depends only on row i (so an upstream vector scales the rows)."""

    @staticmethod
    def forward(ctx, x, fn, reduction, row_local):
        want = ctx.needs_input_grad[0]
        r = fn(_np(x), reduction=reduction, return_grad=want)
        loss, grad = r if want else (r, None)
        ctx.reduction, ctx.row_local = reduction, row_local
        if want:
            ctx.save_for_backward(torch.from_numpy(np.ascontiguousarray(grad)).to(x.dtype))   # f16: computed in f32
        return torch.as_tensor(np.asarray(loss), dtype=x.dtype)

    @staticmethod
    def backward(ctx, dl):
        (g,) = ctx.saved_tensors
        if ctx.reduction != "none":
            # loss.backward() on the loss itself: the saved gradient as it is (no extra pass)
            return (g if bool(dl == 1) else g * dl), None, None, None
        if ctx.row_local:
            return g * dl.reshape(dl.shape + (1,) * (g.dim() - dl.dim())), None, None, None
        # the saved gradient is that of the sum of the entries: only a uniform upstream scales it
        flat = dl.reshape(-1)
        if flat.numel() and not bool(torch.all(flat == flat[0])):
            raise NotImplementedError("smx.torch: reduction='none' of this loss has a gradient only for a uniform "
                                      "upstream gradient (e.g. .sum() or .mean() of it); use 'sum' or 'mean'")
        return g * (flat[0] if flat.numel() else 0.0), None, None, None


def _classes_last(x, target):
    """(C,) -> (1, C); (N, C, d...) -> (N, d..., C): smx's class axis is the last one."""
    if x.dim() == 1:
        return x.unsqueeze(0), target.reshape(1) if target.dim() == 0 else target.unsqueeze(0), True
    return (x.movedim(1, -1) if x.dim() > 2 else x), target, False


def _apply(x, fn, reduction, row_local, squeeze):
    out = _FusedLoss.apply(x, fn, reduction, row_local)
    return out.reshape(()) if squeeze and reduction == "none" and out.dim() == 1 else out


def _targets(target, x_last):
    """class indices as int64 NumPy, or soft targets moved like the input"""
    if target.is_floating_point():
        return _np(target.to(x_last.dtype))
    return _np(target.to(torch.int64))


def focal_loss(input, target, gamma=2.0, alpha=None, reduction="mean", ignore_index=-100):
    """Focal loss on softmax over dim 1 (Lin et al. 2017): -alpha_t (1 - p_t)^gamma log p_t; gamma = 0
    with no alpha is cross_entropy. alpha: None or C per-class weights (tensor or sequence)."""
    x, t, sq = _classes_last(input, target)
    tn = _targets(t, x)
    a = None if alpha is None else np.asarray(alpha.detach().cpu().numpy() if torch.is_tensor(alpha) else alpha)

    def fn(xn, **kw):
        return _smx.focal_loss(xn, tn, gamma=float(gamma), alpha=a, ignore_index=int(ignore_index), **kw)
    return _apply(x, fn, reduction, True, sq)


def spherical_z_loss(input, target, a=1.0, b=0.0, reduction="mean", ignore_index=-100):
    """The Z-loss of de Brebisson and Vincent 2016 (arXiv 1604.08859) over dim 1:
    softplus(a (b - z_t)) / a, z the row's scores standardised by their mean and (population) std."""
    x, t, sq = _classes_last(input, target)
    tn = _targets(t, x)

    def fn(xn, **kw):
        return _smx.spherical_z_loss(xn, tn, a=float(a), b=float(b), ignore_index=int(ignore_index), **kw)
    return _apply(x, fn, reduction, True, sq)


def dice_loss(input, target, smooth=1.0, reduction="mean", ignore_index=-100):
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
    return _apply(x, fn, reduction, False, False)


def info_nce(sim, targets=None, temperature=1.0, symmetric=True, reduction="mean", ignore_index=-100):
    """InfoNCE over a 2-D similarity matrix (rows x cols): cross-entropy of each row of
    sim / temperature against its positive column (targets, default the diagonal); symmetric
    (CLIP) averages it with the cross-entropy down that column."""
    tn = None if targets is None else _np(targets.to(torch.int64))

    def fn(xn, **kw):
        return _smx.info_nce(xn, tn, temperature=float(temperature), symmetric=bool(symmetric),
                             ignore_index=int(ignore_index), **kw)
    return _apply(sim, fn, reduction, not symmetric, False)
