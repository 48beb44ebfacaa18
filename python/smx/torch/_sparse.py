"""smx.torch.sparsemax, entmax15, entmax and their losses: torch.autograd.Functions
whose forward and backward run smx's C kernels (smx.sparsemax, smx.sparsemax_backward,
...) on the tensors' memory. CPU float32 / float64 tensors; alpha is a number (no
gradient with respect to alpha). A drop-in for entmax.sparsemax(t, dim=-1),
entmax.entmax15(t, dim=-1) and entmax.entmax_bisect(t, alpha, dim=-1).
"""
import numpy as np
import torch

import smx

_FWD = {"sparsemax": lambda a, dim, alpha: smx.sparsemax(a, axis=dim),
        "entmax15": lambda a, dim, alpha: smx.entmax15(a, axis=dim),
        "entmax": lambda a, dim, alpha: smx.entmax(a, alpha, axis=dim)}
_BWD = {"sparsemax": lambda y, dy, dim, alpha: smx.sparsemax_backward(None, y, dy, axis=dim),
        "entmax15": lambda y, dy, dim, alpha: smx.entmax15_backward(None, y, dy, axis=dim),
        "entmax": lambda y, dy, dim, alpha: smx.entmax_backward(None, y, dy, alpha, axis=dim)}
_LOSS = {"sparsemax": lambda x, t, alpha, **k: smx.sparsemax_loss(x, t, **k),
         "entmax15": lambda x, t, alpha, **k: smx.entmax15_loss(x, t, **k),
         "entmax": lambda x, t, alpha, **k: smx.entmax_loss(x, t, alpha, **k)}


def _np(t, name):
    if t.device.type != "cpu" or t.dtype not in (torch.float32, torch.float64):
        raise TypeError("smx.torch.%s: CPU float32 or float64 tensors only (got %s on %s)" % (name, t.dtype, t.device))
    return t.detach().contiguous().numpy()


class _Map(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, name, dim, alpha):
        y = torch.from_numpy(np.ascontiguousarray(_FWD[name](_np(x, name), dim, alpha)))
        ctx.name, ctx.dim, ctx.alpha = name, dim, alpha
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dx = _BWD[ctx.name](y.numpy(), _np(dy, ctx.name), ctx.dim, ctx.alpha)
        return torch.from_numpy(np.ascontiguousarray(dx)), None, None, None


def sparsemax(t, dim=-1):
    """sparsemax along dim (smx.sparsemax), differentiable (smx.sparsemax_backward)."""
    return _Map.apply(t, "sparsemax", dim, 2.0)


def entmax15(t, dim=-1):
    """Exact 1.5-entmax along dim (smx.entmax15), differentiable."""
    return _Map.apply(t, "entmax15", dim, 1.5)


def entmax(t, alpha=1.5, dim=-1):
    """alpha-entmax by bisection along dim (smx.entmax), differentiable in t; alpha > 1, a number."""
    return _Map.apply(t, "entmax", dim, float(alpha))


class _Loss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, name, alpha, reduction, ignore_index):
        t = target.detach().cpu().numpy()
        loss, grad = _LOSS[name](_np(x, name), t, alpha, reduction=reduction, ignore_index=ignore_index,
                                 return_grad=True)
        ctx.reduction = reduction
        ctx.save_for_backward(torch.from_numpy(np.ascontiguousarray(grad)))
        return torch.as_tensor(np.asarray(loss), dtype=x.dtype)

    @staticmethod
    def backward(ctx, g):
        (grad,) = ctx.saved_tensors
        dx = grad * (g.unsqueeze(-1) if ctx.reduction == "none" else g)
        return dx, None, None, None, None, None


def sparsemax_loss(logits, target, reduction="mean", ignore_index=-100):
    """The sparsemax loss (smx.sparsemax_loss; classes on the last dim), gradient sparsemax - onehot."""
    return _Loss.apply(logits, target, "sparsemax", 2.0, reduction, ignore_index)


def entmax15_loss(logits, target, reduction="mean", ignore_index=-100):
    """The 1.5-entmax Fenchel-Young loss (smx.entmax15_loss)."""
    return _Loss.apply(logits, target, "entmax15", 1.5, reduction, ignore_index)


def entmax_loss(logits, target, alpha=1.5, reduction="mean", ignore_index=-100):
    """The alpha-entmax Fenchel-Young loss (smx.entmax_loss)."""
    return _Loss.apply(logits, target, "entmax", float(alpha), reduction, ignore_index)
