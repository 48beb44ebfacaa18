"""Softmax variants that rescale, rectify or re-weight a row (issue 13,
items 3-10): softpick, ssmax, sa_softmax, adaptive_softmax, topk_softmax,
sigmoid (with a bias), softplus_l1, standardize_softmax, and for each
`<name>_backward(x, y, dy, ...)`, the vector-Jacobian product.

The arithmetic is the C library's (include/smx/smx_norm.h: definitions,
papers, special values and accuracy bounds). The row maps are made from the
op table by smx._rows (one walker call on the caller's strides and dtype);
kd_loss and the mixture of softmaxes resolve dtypes here (float16 computed
in float32 and rounded once; integers read as float64).
"""
import numpy as np

from . import _rows, _smx

__all__ = ["softpick", "ssmax", "sa_softmax", "adaptive_softmax", "topk_softmax", "sigmoid", "softplus_l1",
           "standardize_softmax", "softpick_backward", "ssmax_backward", "sa_softmax_backward",
           "adaptive_softmax_backward", "topk_softmax_backward", "sigmoid_backward", "softplus_l1_backward",
           "standardize_softmax_backward", "kd_loss", "mixture_log_softmax", "mixture_log_softmax_backward"]


def _dtype(*arrays):
    dt = np.result_type(*[a.dtype for a in arrays if a is not None])
    if dt == np.float16 or dt == np.float32:
        return np.dtype(np.float32), dt
    if dt == np.float64:
        return dt, dt
    if np.issubdtype(dt, np.integer) or dt == np.bool_:
        return np.dtype(np.float64), np.dtype(np.float64)
    raise TypeError("smx: float16, float32 or float64 input expected, got %s" % dt)


softpick, softpick_backward = _rows.make("softpick")
ssmax, ssmax_backward = _rows.make("ssmax", lens=True)
sa_softmax, sa_softmax_backward = _rows.make("sa_softmax")
adaptive_softmax, adaptive_softmax_backward = _rows.make("adaptive_softmax")
topk_softmax, topk_softmax_backward = _rows.make("topk_softmax")
softplus_l1, softplus_l1_backward = _rows.make("softplus_l1")
standardize_softmax, standardize_softmax_backward = _rows.make("standardize_softmax", temperature=True)   # the options' T


def sigmoid(x, temperature=1.0, bias=0.0, out=None, threads=0):
    """sigma(x / temperature + bias) elementwise (scipy.special.expit at temperature 1, bias 0)."""
    if bias == 0.0:
        return _smx.sigmoid(x, temperature=temperature, out=out, threads=threads)
    return _rows.run("sigmoid_bias", 0, x, out=out, params=[bias], temperature=temperature, threads=threads)


def sigmoid_backward(x, y, dy, temperature=1.0, bias=0.0, out=None, threads=0):
    """The VJP of sigmoid: y (1 - y) dy / temperature; reads y and dy (x may be None; bias is not needed)."""
    del bias
    return _rows.run("sigmoid", 1, x, y, dy, out=out, temperature=temperature, threads=threads)


_REDUCTIONS = {"mean": 0, "sum": 1, "none": 2}


def kd_loss(logits, target, temperature=1.0, standardize=True, reduction="mean", return_grad=False, threads=0):
    """Distillation loss of logit standardisation (Sun et al. 2024, KD.py): per row
    T^2 KL(softmax(Z(target)/T) || softmax(Z(logits)/T)), Z the z-score (unbiased std + 1e-7), or the
    identity with standardize=False (Hinton KD). logits: the student's (rows, classes); target: the teacher's
    logits, same shape. reduction 'mean' (KD.py's batch mean), 'sum' or 'none'. return_grad=True also returns
    the gradient of the (reduced) loss in the student's logits, as smx.cross_entropy does."""
    s = np.asarray(logits)
    t = np.asarray(target)
    if s.ndim != 2 or s.shape != t.shape:
        raise ValueError("smx.kd_loss: logits and target must be 2-D arrays of one shape")
    if reduction not in _REDUCTIONS:
        raise ValueError("smx.kd_loss: reduction must be 'mean', 'sum' or 'none'")
    work, res_dt = _dtype(s, t)
    s2 = np.ascontiguousarray(s, dtype=work)
    t2 = np.ascontiguousarray(t, dtype=work)
    red = _REDUCTIONS[reduction]
    loss = np.empty(s.shape[0] if red == 2 else 1, dtype=work)
    grad = np.empty_like(s2) if return_grad else None
    _smx._kd_loss(s2, t2, loss, grad, float(temperature), bool(standardize), red, int(threads))
    loss = loss.astype(res_dt, copy=False)
    loss = loss if red == 2 else loss[0]
    if return_grad:
        return loss, grad.astype(res_dt, copy=False)
    return loss


def _mix_args(x, w, fn="smx.mixture_log_softmax"):
    x = np.asarray(x)
    w = np.asarray(w)
    if x.ndim < 2 or w.shape != x.shape[:-1]:
        raise ValueError("%s: x must be (..., K, n) and w (..., K)" % fn)
    work, res_dt = _dtype(x, w)
    k, n = x.shape[-2:]
    rows = int(np.prod(x.shape[:-2], dtype=np.int64))
    if k == 0 and rows > 0:
        raise ValueError("%s: x and w have no mixture components (K = 0): x must be (..., K, n) and w (..., K) "
                         "with K >= 1" % fn)
    # explicit rows: reshape(-1, ...) cannot infer them when K or n is 0
    return (np.ascontiguousarray(x, dtype=work).reshape(rows, k, n), np.ascontiguousarray(w, dtype=work).reshape(rows, k),
            work, res_dt)


def mixture_log_softmax(x, w, out=None, threads=0):
    """Mixture of softmaxes (Yang et al. 2018) as log-probabilities: log sum_k pi_k softmax(x[..., k, :]),
    pi = softmax(w) (w: mixture logits or log-weights, shape (..., K)), by log-sum-exp (no probability is
    formed). Returns shape (..., n)."""
    x3, w2, work, res_dt = _mix_args(x, w)
    y = np.empty((x3.shape[0], x3.shape[2]), dtype=work)
    _smx._mixture(x3, w2, None, y, None, int(threads))
    y = y.reshape(np.shape(x)[:-2] + (x3.shape[2],)).astype(res_dt, copy=False)
    if out is not None:
        np.copyto(out, y)
        return out
    return y


def mixture_log_softmax_backward(x, w, dy, threads=0):
    """The VJP of mixture_log_softmax: returns (dx, dw) for the output gradient dy (shape (..., n))."""
    x3, w2, work, res_dt = _mix_args(x, w, "smx.mixture_log_softmax_backward")
    want = np.shape(x)[:-2] + np.shape(x)[-1:]
    if np.shape(dy) != want:
        raise ValueError("smx.mixture_log_softmax_backward: dy has shape %s, expected %s (x's shape without K)"
                         % (np.shape(dy), want))
    g = np.ascontiguousarray(dy, dtype=work).reshape(x3.shape[0], x3.shape[2])
    dx = np.empty_like(x3)
    # zeros: with n = 0 the library returns before writing dw, whose value (a sum over no element) is 0
    dw = np.zeros_like(w2)
    _smx._mixture(x3, w2, g, dx, dw, int(threads))
    return dx.reshape(np.shape(x)).astype(res_dt, copy=False), dw.reshape(np.shape(w)).astype(res_dt, copy=False)
