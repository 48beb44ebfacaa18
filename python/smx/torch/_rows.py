"""smx.torch's row maps, made from the op table: softmax, log_softmax, logsumexp, sigmoid, the softmax
variants (softpick, ssmax, sa_softmax, adaptive_softmax, topk_softmax, softplus_l1, standardize_softmax),
sparsemax, entmax15, entmax, multimax and the mixture of softmaxes.

Each is a spec for the one Function (_function.Op): its forward is the op's C forward entry and its
backward the op's C backward entry (include/smx/smx_ops.h), through the walker on the tensors' memory.
float16 and bfloat16 run the library's half-precision rows; a backward the library has only in float32
is widened block by block inside the walker. A parameter given as a one-element tensor that requires grad
(ssmax's s, sigmoid's temperature and bias, multimax's ranges and scales) gets its gradient too.
"""
import numpy as np
import torch

import smx as _smx

from . import _cuda
from ._device import device_of, route
from ._function import HALF, Op, Spec, finite_dot, from_np, rows, scalar, threads_of, view
from .._rows import BACKWARD_READS

__all__ = ["softmax", "log_softmax", "logsumexp", "sigmoid", "softpick", "ssmax", "sa_softmax", "adaptive_softmax",
           "topk_softmax", "softplus_l1", "standardize_softmax", "sparsemax", "entmax15", "entmax", "multimax",
           "mixture_log_softmax"]


def _row_spec(name, params=lambda kw, ts: None, pgrad=None):
    """The spec of a row op: forward and backward from its table entries; params(kw, extra tensors) gives its
    parameter values, pgrad(kw, x, y, dy, dx, extra, needs) the gradients of the extra (parameter) tensors."""
    reads = BACKWARD_READS[name]

    def call(kw, backward, x, y=None, dy=None, ts=()):
        return rows(name, backward, x, y, dy, dim=kw["dim"], params=params(kw, ts), n=kw.get("n"),
                    temperature=kw.get("T", 0.0), threads=kw["threads"],
                    masked_row="zero" if backward else kw.get("masked_row", "zero"))

    def forward(kw, needs, x, *ts):
        y = call(kw, 0, x, ts=ts)
        keep_x = reads == "x" or pgrad is not None
        return y, (x if keep_x else None, y, *ts)

    def backward(kw, saved, needs, dy):
        x, y, *ts = saved
        dx = call(kw, 1, x if reads == "x" else None, y, dy, ts)
        return (dx,) + (tuple(pgrad(kw, x, y, dy, dx, ts, needs[1:])) if pgrad else ())
    return Spec(forward, backward)


def _apply(spec, t, dim, threads, *ts, **kw):
    kw.update(dim=dim, threads=threads_of(threads))
    return Op.apply(spec, kw, t, *ts)


_SOFTMAX = _row_spec("softmax")
_LOG_SOFTMAX = _row_spec("log_softmax")


def softmax(t, dim=-1, temperature=1.0, threads=None):
    """softmax(t / temperature) along dim (torch.softmax's semantics, except that a row of all -inf gives 0
    instead of NaN); float16, bfloat16, float32, float64; the gradient is smx's softmax backward. A CUDA
    tensor (float32, float16, bfloat16) runs libsmx_cuda on PyTorch's current stream (threads unused)."""
    mod = route("softmax", device_of(t))
    if mod is not None:
        return _cuda.softmax(mod, t, dim, temperature)
    return _apply(_SOFTMAX, t, dim, threads, T=float(temperature))


def log_softmax(t, dim=-1, temperature=1.0, threads=None):
    """log_softmax(t / temperature) along dim; the gradient is smx's log_softmax backward. CUDA tensors as
    softmax."""
    mod = route("log_softmax", device_of(t))
    if mod is not None:
        return _cuda.log_softmax(mod, t, dim, temperature)
    return _apply(_LOG_SOFTMAX, t, dim, threads, T=float(temperature))


def _lse_forward(kw, needs, x):
    shape = list(x.shape)
    del shape[kw["dim"]]
    out = rows("logsumexp", 0, x, dim=kw["dim"], temperature=kw["T"], threads=kw["threads"], out_shape=shape)
    return (out.unsqueeze(kw["dim"]) if kw["keepdim"] else out), (x,)


def _lse_backward(kw, saved, needs, dy):
    # d lse(x/T) / dx = softmax(x/T) / T: smx's softmax, scaled by the upstream gradient
    p = rows("softmax", 0, saved[0], dim=kw["dim"], temperature=kw["T"], threads=kw["threads"])
    p.mul_(dy if kw["keepdim"] else dy.unsqueeze(kw["dim"]))
    return (p.div_(kw["T"]) if kw["T"] != 1.0 else p,)


_LSE = Spec(_lse_forward, _lse_backward)


def logsumexp(t, dim=-1, keepdim=False, temperature=1.0, threads=None):
    """log(sum(exp(t / temperature))) along dim (torch.logsumexp); gradient softmax * dy. CUDA tensors as
    softmax (computed in float32, returned in the input's dtype)."""
    mod = route("logsumexp", device_of(t))
    if mod is not None:
        return _cuda.logsumexp(mod, t, dim, keepdim, temperature)
    return _apply(_LSE, t, dim % max(t.dim(), 1), threads, keepdim=bool(keepdim), T=float(temperature))


def _map(name, doc, params=lambda kw, ts: None, pgrad=None, **defaults):
    """A public row map with the keywords `defaults` (name: default), passed to the table's params."""
    spec = _row_spec(name, params, pgrad)

    def fn(t, dim=-1, threads=None, **kw):
        bad = set(kw) - set(defaults)
        if bad:
            raise TypeError("smx.torch.%s: unexpected keyword %s" % (name, ", ".join(sorted(bad))))
        return _apply(spec, t, dim, threads, **{**defaults, **kw})
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _p(*names):
    return lambda kw, ts: [kw[n] for n in names]


softpick = _map("softpick", "smx.softpick on a tensor, differentiable (smx's VJP).", _p("eps"), eps=1e-6)
sa_softmax = _map("sa_softmax", "Self-Adjust Softmax (smx.sa_softmax) on a tensor.", _p("normalized"),
                  normalized=False)
adaptive_softmax = _map("adaptive_softmax", "Adaptive-temperature softmax (smx.adaptive_softmax) on a tensor.")
softplus_l1 = _map("softplus_l1", "softplus(t) / sum softplus(t) along dim (smx.softplus_l1).")
_standardize = _map("standardize_softmax", "Logit standardisation (smx.standardize_softmax).", T=1.0)


def standardize_softmax(t, dim=-1, temperature=1.0, threads=None):
    """Logit standardisation (smx.standardize_softmax): softmax(z / temperature), z the z-score along dim; the
    temperature is the library options' (no op-table parameter)."""
    temperature = float(temperature)
    if not (0.0 < temperature < float("inf")):
        raise ValueError("smx.torch.standardize_softmax: temperature must be > 0 and finite, got %r" % (temperature,))
    return _standardize(t, dim, threads, T=temperature)
sparsemax = _map("sparsemax", "sparsemax along dim (smx.sparsemax), differentiable.", masked_row="zero")
entmax15 = _map("entmax15", "Exact 1.5-entmax along dim (smx.entmax15), differentiable.", masked_row="zero")
_entmax = _map("entmax", "alpha-entmax by bisection along dim (smx.entmax).", _p("alpha"), alpha=1.5,
               masked_row="zero")
_topk_softmax = _map("topk_softmax", "Softmax over the k largest entries (smx.topk_softmax).", _p("k"), k=1)


def entmax(t, alpha=1.5, dim=-1, threads=None):
    """alpha-entmax by bisection along dim (smx.entmax), differentiable in t; alpha > 1, a number."""
    return _entmax(t, dim=dim, threads=threads, alpha=float(alpha))


def topk_softmax(t, k, dim=-1, threads=None):
    """Softmax over the k largest entries along dim, 0 elsewhere (smx.topk_softmax)."""
    return _topk_softmax(t, dim=dim, threads=threads, k=int(k))


def _ssmax_pgrad(kw, x, y, dy, dx, ts, needs):
    """dL/ds = x . ssmax_backward(y, dy, s=1): smx's VJP at s = 1 on the same y and dy is log(n) g (no division
    by s, so s = 0 works)."""
    if not needs[0]:
        return (None,)
    g1 = rows("ssmax", 1, None, y, dy, dim=kw["dim"], params=[1.0], n=kw["n"], threads=kw["threads"])
    return (finite_dot(x, g1).reshape(ts[0].shape).to(ts[0].dtype),)


_SSMAX = _row_spec("ssmax", lambda kw, ts: [float(ts[0].detach().reshape(()).item())], _ssmax_pgrad)


def ssmax(t, dim=-1, s=1.0, n=None, threads=None):
    """smx.ssmax on a tensor. s may be a one-element tensor with requires_grad (SSMax's learned s)."""
    sv, st = scalar(s, "s")
    return _apply(_SSMAX, t, dim, threads, st if st is not None else torch.tensor(sv, dtype=torch.float64), n=n)


def _sigmoid_forward(kw, needs, x, *ts):
    """sigma(x / T + b): sigmoid_bias's entry (sigmoid's at b = 0)."""
    y = rows("sigmoid" if kw["b"] == 0.0 else "sigmoid_bias", 0, x, params=None if kw["b"] == 0.0 else [kw["b"]],
             temperature=kw["T"], threads=kw["threads"])
    return y, (x, y, *ts)


def _sigmoid_pgrad(kw, x, y, dy, dx, ts, needs):
    """dx = y (1 - y) dy / T; dL/db = T sum(dx) and dL/dT = -sum(x dx) / T."""
    dt = (-finite_dot(x, dx) / kw["T"]).reshape(ts[0].shape).to(ts[0].dtype) if needs[0] else None
    db = (dx.sum() * kw["T"]).reshape(ts[1].shape).to(ts[1].dtype) if needs[1] else None
    return dt, db


_SIGMOID = Spec(_sigmoid_forward, _row_spec("sigmoid", pgrad=_sigmoid_pgrad).backward)


def sigmoid(t, temperature=1.0, bias=0.0, threads=None):
    """sigma(t / temperature + bias) elementwise, differentiable in t, and in temperature and bias when they
    are given as one-element tensors (with requires_grad)."""
    tv, tt = scalar(temperature, "temperature")
    bv, bt = scalar(bias, "bias")
    one = torch.tensor(0.0, dtype=torch.float64)
    return _apply(_SIGMOID, t, -1, threads, tt if tt is not None else one, bt if bt is not None else one, T=tv, b=bv)


def _four(p):
    if p is None:
        return [0.0] * 4
    return [float(v) for v in np.asarray(p.detach().cpu().numpy() if torch.is_tensor(p) else p,
                                         dtype=np.float64).reshape(4)]


def _multimax_backward(kw, saved, needs, dy):
    x, y, r_t, t_t = saved
    want_p = needs[1] or needs[2]
    work = torch.float32 if x.dtype in HALF else x.dtype    # the VJP with parameter gradients: f32 / f64
    r = _smx.multimax_backward(view(x.to(work))[0], view(y.to(work))[0], view(dy.to(work))[0], kw["ranges"], kw["ts"],
                               axis=kw["dim"], temperature=kw["T"], threads=kw["threads"], params_grad=want_p)
    dx, dr, dt = r if want_p else (r, None, None)
    return (from_np(dx, x.dtype), from_np(dr, r_t.dtype) if needs[1] else None,
            from_np(dt, t_t.dtype) if needs[2] else None)


_MULTIMAX = Spec(lambda kw, needs, x, r_t, t_t: _mm_forward(kw, x, r_t, t_t), _multimax_backward)


def _mm_forward(kw, x, r_t, t_t):
    y = rows("multimax", 0, x, dim=kw["dim"], params=kw["ranges"] + kw["ts"], temperature=kw["T"],
             threads=kw["threads"])
    return y, (x, y, r_t, t_t)


def multimax(t, ranges=None, ts=None, dim=-1, temperature=1.0, threads=None):
    """softmax(s(t) / temperature) along dim, s(x) = x + ts[0] relu(ranges[0] - x) + ts[1] relu(x - ranges[1])
    + ts[2] relu(ranges[2] - x)^2 + ts[3] relu(x - ranges[3])^2 (None: zeros). ranges and ts may be
    4-element tensors that require grad (the paper learns them)."""
    rt = ranges if torch.is_tensor(ranges) else torch.zeros(4, dtype=t.dtype)
    tt = ts if torch.is_tensor(ts) else torch.zeros(4, dtype=t.dtype)
    return _apply(_MULTIMAX, t, dim % max(t.dim(), 1), threads, rt, tt, ranges=_four(ranges), ts=_four(ts),
                  T=float(temperature))


def _mos_forward(kw, needs, x, w):
    work = torch.float32 if x.dtype in HALF else x.dtype
    y = _smx.mixture_log_softmax(view(x.to(work))[0], view(w.to(work))[0], threads=kw["threads"])
    return from_np(y, x.dtype), (x, w)


def _mos_backward(kw, saved, needs, dy):
    x, w = saved
    work = torch.float32 if x.dtype in HALF else x.dtype
    dx, dw = _smx.mixture_log_softmax_backward(view(x.to(work))[0], view(w.to(work))[0], view(dy.to(work))[0],
                                               threads=kw["threads"])
    return from_np(dx, x.dtype), from_np(dw, w.dtype)


_MOS = Spec(_mos_forward, _mos_backward)


def mixture_log_softmax(x, w, threads=None):
    """smx.mixture_log_softmax on tensors x (..., K, n) and w (..., K), differentiable in both (float16 and
    bfloat16 computed in float32: the library's mixture has float32 / float64 rows only)."""
    return Op.apply(_MOS, {"threads": threads_of(threads)}, x, w)
