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


def _scalar(p, name):
    """A parameter given as a number, or as a one-element tensor that may be learned."""
    if torch.is_tensor(p):
        if p.numel() != 1:
            raise ValueError(f"smx.torch: {name} must hold one value")
        return float(p.detach().reshape(()).item()), p
    return float(p), None


def _finite_dot(x, g):
    """sum of x * g over the entries where x is finite (g is 0 at the others: masked or saturated)."""
    return torch.where(torch.isfinite(x), x * g, torch.zeros((), dtype=g.dtype)).sum()


class _SSMaxS(torch.autograd.Function):
    """ssmax with a learned s. With z = s log(n) x and g the VJP with respect to z, dL/ds = sum log(n) x g.
    smx's VJP at s = 1 on the same y and dy is log(n) g, so dL/ds = x . ssmax_backward(y, dy, s=1): no
    division by s, so s = 0 works."""

    @staticmethod
    def forward(ctx, x, s_t, dim, n):
        s = float(s_t.detach().reshape(()).item())
        xn = _np(x)
        y = torch.from_numpy(np.ascontiguousarray(_norm.ssmax(xn, s=s, n=n, axis=dim)))
        ctx.dim, ctx.n, ctx.s = dim, n, s
        ctx.save_for_backward(x, y, s_t)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, s_t = ctx.saved_tensors
        yn, dyn = _np(y), _np(dy)
        dx = _norm.ssmax_backward(None, yn, dyn, s=ctx.s, n=ctx.n, axis=ctx.dim)
        ds = None
        if ctx.needs_input_grad[1]:
            g1 = torch.from_numpy(np.ascontiguousarray(_norm.ssmax_backward(None, yn, dyn, s=1.0, n=ctx.n, axis=ctx.dim)))
            ds = _finite_dot(x, g1).reshape(s_t.shape).to(s_t.dtype)
        return torch.from_numpy(np.ascontiguousarray(dx)), ds, None, None


def ssmax(t, dim=-1, s=1.0, n=None):
    """smx.ssmax on a tensor. s may be a one-element tensor with requires_grad (SSMax's learned s)."""
    if torch.is_tensor(s):
        _scalar(s, "s")
        return _SSMaxS.apply(t, s, dim, n)
    return _Variant.apply(t, "ssmax", dim, {"s": s, "n": n}, "y")


def sa_softmax(t, dim=-1, normalized=False):
    return _Variant.apply(t, "sa_softmax", dim, {"normalized": normalized}, "x")


def adaptive_softmax(t, dim=-1):
    return _Variant.apply(t, "adaptive_softmax", dim, {}, "x")


def topk_softmax(t, k, dim=-1):
    return _Variant.apply(t, "topk_softmax", dim, {"k": k}, "y")


class _SigmoidParams(torch.autograd.Function):
    """sigmoid with a learned temperature T and / or bias b. smx's VJP gives dx = y (1 - y) dy / T; then
    dL/db = T sum(dx) and dL/dT = -sum(x dx) / T (saturated and infinite entries have dx = 0)."""

    @staticmethod
    def forward(ctx, x, t_t, b_t, t, b):
        y = torch.from_numpy(np.ascontiguousarray(_norm.sigmoid(_np(x), temperature=t, bias=b)))
        ctx.t, ctx.b = t, b
        ctx.save_for_backward(x, y, t_t, b_t)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y, t_t, b_t = ctx.saved_tensors
        dx = torch.from_numpy(np.ascontiguousarray(_norm.sigmoid_backward(None, _np(y), _np(dy), temperature=ctx.t)))
        dt = db = None
        if ctx.needs_input_grad[1]:
            dt = (-_finite_dot(x, dx) / ctx.t).reshape(t_t.shape).to(t_t.dtype)
        if ctx.needs_input_grad[2]:
            db = (dx.sum() * ctx.t).reshape(b_t.shape).to(b_t.dtype)
        return dx, dt, db, None, None


def sigmoid(t, temperature=1.0, bias=0.0):
    """sigma(t / temperature + bias) elementwise, differentiable in t, and in temperature and bias when they
    are given as one-element tensors (with requires_grad)."""
    if torch.is_tensor(temperature) or torch.is_tensor(bias):
        tv, tt = _scalar(temperature, "temperature")
        bv, bt = _scalar(bias, "bias")
        if tt is None:
            tt = torch.tensor(tv, dtype=t.dtype)
        if bt is None:
            bt = torch.tensor(bv, dtype=t.dtype)
        return _SigmoidParams.apply(t, tt, bt, tv, bv)
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
