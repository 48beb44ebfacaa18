"""smx.torch wrappers of the row variants (softpick, ssmax, sa_softmax,
adaptive_softmax, topk_softmax, sigmoid, softplus_l1, standardize_softmax):
torch.autograd.Functions whose forward and backward call smx's own kernels
(smx.<name> and smx.<name>_backward) on the tensors' memory. CPU tensors of
float32 or float64; other dtypes are refused."""
import numpy as np
import torch

from .. import _norm

__all__ = ["softpick", "ssmax", "sa_softmax", "adaptive_softmax", "topk_softmax", "sigmoid", "softplus_l1",
           "standardize_softmax", "kd_loss", "mixture_log_softmax"]


def _np(t):
    if t.device.type != "cpu" or t.dtype not in (torch.float32, torch.float64):
        raise TypeError("smx.torch: CPU float32 or float64 tensors only")
    return t.detach().contiguous().numpy()


class _Variant(torch.autograd.Function):
    """forward(ctx, x, name, dim, kw, save): y = smx.<name>(x, axis=dim, **kw); backward calls
    smx.<name>_backward(x, y, dy, **kw). save: which of x, y the backward needs."""

    @staticmethod
    def forward(ctx, x, name, dim, kw, save):
        xn = _np(x)
        fn = getattr(_norm, name)
        y = fn(xn, **kw) if dim is None else fn(xn, axis=dim, **kw)
        y = torch.from_numpy(np.ascontiguousarray(y))
        ctx.name, ctx.dim, ctx.kw = name, dim, kw
        ctx.save_for_backward(x if "x" in save else None, y if "y" in save else None)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        fn = getattr(_norm, ctx.name + "_backward")
        args = (None if x is None else _np(x), None if y is None else _np(y), _np(dy))
        dx = fn(*args, **ctx.kw) if ctx.dim is None else fn(*args, axis=ctx.dim, **ctx.kw)
        return torch.from_numpy(np.ascontiguousarray(dx)), None, None, None, None


def softpick(t, dim=-1, eps=1e-6):
    """smx.softpick on a tensor, differentiable (smx's VJP)."""
    return _Variant.apply(t, "softpick", dim, {"eps": eps}, "x")


def ssmax(t, dim=-1, s=1.0, n=None):
    """smx.ssmax on a tensor (s held fixed in the gradient)."""
    return _Variant.apply(t, "ssmax", dim, {"s": s, "n": n}, "y")


def sa_softmax(t, dim=-1, normalized=False):
    return _Variant.apply(t, "sa_softmax", dim, {"normalized": normalized}, "x")


def adaptive_softmax(t, dim=-1):
    return _Variant.apply(t, "adaptive_softmax", dim, {}, "x")


def topk_softmax(t, k, dim=-1):
    return _Variant.apply(t, "topk_softmax", dim, {"k": k}, "y")


def sigmoid(t, temperature=1.0, bias=0.0):
    """sigma(t / temperature + bias) elementwise, differentiable in t."""
    return _Variant.apply(t, "sigmoid", None, {"temperature": temperature, "bias": bias}, "y")


def softplus_l1(t, dim=-1):
    return _Variant.apply(t, "softplus_l1", dim, {}, "x")


def standardize_softmax(t, temperature=1.0, dim=-1):
    return _Variant.apply(t, "standardize_softmax", dim, {"temperature": temperature}, "x")


class _KD(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s, t, temperature, standardize, reduction):
        loss, g = _norm.kd_loss(_np(s), _np(t), temperature=temperature, standardize=standardize,
                                reduction=reduction, return_grad=True)
        ctx.save_for_backward(torch.from_numpy(np.ascontiguousarray(g)))
        ctx.none = reduction == "none"
        return torch.as_tensor(loss, dtype=s.dtype)

    @staticmethod
    def backward(ctx, dl):
        (g,) = ctx.saved_tensors
        return (g * dl[:, None] if ctx.none else g * dl), None, None, None, None


def kd_loss(logits, target, temperature=1.0, standardize=True, reduction="mean"):
    """smx.kd_loss on tensors (student logits, teacher logits), differentiable in the student's logits."""
    return _KD.apply(logits, target, temperature, standardize, reduction)


class _MoS(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return torch.from_numpy(np.ascontiguousarray(_norm.mixture_log_softmax(_np(x), _np(w))))

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx, dw = _norm.mixture_log_softmax_backward(_np(x), _np(w), _np(dy))
        return torch.from_numpy(np.ascontiguousarray(dx)), torch.from_numpy(np.ascontiguousarray(dw))


def mixture_log_softmax(x, w):
    """smx.mixture_log_softmax on tensors x (..., K, n) and w (..., K), differentiable in both."""
    return _MoS.apply(x, w)
