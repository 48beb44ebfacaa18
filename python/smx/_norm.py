"""Softmax variants that rescale, rectify or re-weight a row (issue 13,
items 3-10): softpick, ssmax, sa_softmax, adaptive_softmax, topk_softmax,
sigmoid (with a bias), softplus_l1, standardize_softmax, and for each
`<name>_backward(x, y, dy, ...)`, the vector-Jacobian product.

The arithmetic is the C library's (include/smx/smx_norm.h: definitions,
papers, special values and accuracy bounds); this module moves the axis
last, resolves dtypes (float32 and float64 computed in their own type;
float16 computed in float32 and rounded once; integers read as float64)
and handles out=.
"""
import numpy as np

from . import _smx

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


def _rows(a, axis, dt):
    """a with `axis` last, as a C-contiguous 2-D array of dt, and its moved shape."""
    m = np.moveaxis(a, axis, -1)
    shape = m.shape
    n = shape[-1] if m.ndim else 1
    # explicit rows: reshape(-1, 0) cannot infer them
    return np.ascontiguousarray(m, dtype=dt).reshape(int(np.prod(shape[:-1], dtype=np.int64)) if m.ndim else 1, n), shape


def _run(name, backward, x, y, dy, axis, out, p=0.0, k=0, lens=None, temperature=0.0, threads=0):
    arrays = [None if a is None else np.asarray(a) for a in (x, y, dy)]
    ref = next(a for a in arrays if a is not None)
    if any(a is not None and a.shape != ref.shape for a in arrays):
        raise ValueError("smx.%s: x, y and dy must have one shape" % name)
    work, res_dt = _dtype(*arrays)
    if ref.ndim == 0:
        arrays = [None if a is None else a.reshape(1) for a in arrays]
        axis = -1
    rows = [None if a is None else _rows(a, axis, work) for a in arrays]
    mshape = next(r for r in rows if r is not None)[1]
    r2 = [None if r is None else r[0] for r in rows]
    shape2 = next(r for r in r2 if r is not None).shape
    direct = (out is not None and isinstance(out, np.ndarray) and out.dtype == work and out.shape == ref.shape
              and ref.ndim >= 1 and axis in (-1, ref.ndim - 1) and out.flags.c_contiguous)
    # out= of the computed dtype, C order, the axis last: written in place (no temporary)
    o = out.reshape(shape2) if direct else np.empty(shape2, dtype=work)
    if lens is not None:
        lens = np.ascontiguousarray(np.broadcast_to(np.asarray(lens, dtype=np.int64), mshape[:-1]).reshape(-1))
    _smx._vnorm_rows(name, bool(backward), r2[0], r2[1], r2[2], o, float(p), int(k), lens, float(temperature),
                     int(threads))
    if direct:
        return out
    res = np.moveaxis(o.reshape(mshape), -1, axis).astype(res_dt, copy=False)
    if ref.ndim == 0:
        res = res.reshape(())
    if out is not None:
        np.copyto(out, res)
        return out
    return res[()] if res.ndim == 0 else res


def softpick(x, axis=-1, eps=1e-6, out=None, threads=0):
    """Softpick (Zuhri et al. 2025): ReLU(e^x - 1) / (sum |e^x - 1| + eps), in the stable form with the max
    taken out; rectified, not summing to one; -inf entries are masked (0, left out of the sum)."""
    return _run("softpick", 0, x, None, None, axis, out, p=eps, threads=threads)


def softpick_backward(x, y, dy, eps=1e-6, axis=-1, out=None, threads=0):
    """The VJP of softpick; reads x and dy (y may be None)."""
    return _run("softpick", 1, x, y, dy, axis, out, p=eps, threads=threads)


def ssmax(x, s=1.0, n=None, axis=-1, out=None, threads=0):
    """Scalable-Softmax (Nakanishi 2025): softmax((s log n) x); n: the row length (None), or one count per row
    (an integer array broadcast to the shape without `axis`: prefix / causal use)."""
    return _run("ssmax", 0, x, None, None, axis, out, p=s, lens=n, threads=threads)


def ssmax_backward(x, y, dy, s=1.0, n=None, axis=-1, out=None, threads=0):
    """The VJP of ssmax with s fixed; reads y and dy (x may be None)."""
    return _run("ssmax", 1, x, y, dy, axis, out, p=s, lens=n, threads=threads)


def sa_softmax(x, axis=-1, normalized=False, out=None, threads=0):
    """Self-Adjust Softmax (Zheng et al. 2025): x * softmax(x), or with normalized=True
    (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x). Masked entries give 0."""
    return _run("sa_softmax", 0, x, None, None, axis, out, k=int(bool(normalized)), threads=threads)


def sa_softmax_backward(x, y, dy, axis=-1, normalized=False, out=None, threads=0):
    """The VJP of sa_softmax (exact, min / max terms included); reads x and dy (y may be None)."""
    return _run("sa_softmax", 1, x, y, dy, axis, out, k=int(bool(normalized)), threads=threads)


def adaptive_softmax(x, axis=-1, out=None, threads=0):
    """Adaptive temperature (Velickovic et al. 2024): softmax(beta x), beta from the entropy of softmax(x)
    by the paper's polynomial (beta = 1 for entropy <= 0.5, never below 1)."""
    return _run("adaptive_softmax", 0, x, None, None, axis, out, threads=threads)


def adaptive_softmax_backward(x, y, dy, axis=-1, out=None, threads=0):
    """The exact VJP of adaptive_softmax (beta's dependence on x included); reads x and dy."""
    return _run("adaptive_softmax", 1, x, y, dy, axis, out, threads=threads)


def topk_softmax(x, k, axis=-1, out=None, threads=0):
    """Softmax over the k largest entries, 0 elsewhere; ties go to the lowest index."""
    if int(k) < 1:
        raise ValueError("smx.topk_softmax: k must be >= 1")
    return _run("topk_softmax", 0, x, None, None, axis, out, k=k, threads=threads)


def topk_softmax_backward(x, y, dy, k=1, axis=-1, out=None, threads=0):
    """The VJP of topk_softmax (the softmax VJP on the support); reads y and dy."""
    return _run("topk_softmax", 1, x, y, dy, axis, out, k=max(int(k), 1), threads=threads)


def sigmoid(x, temperature=1.0, bias=0.0, out=None, threads=0):
    """sigma(x / temperature + bias) elementwise (scipy.special.expit at temperature 1, bias 0)."""
    if bias == 0.0:
        return _smx.sigmoid(x, temperature=temperature, out=out, threads=threads)
    a = np.asarray(x)
    return _run("sigmoid_bias", 0, a, None, None, -1, out, p=bias, temperature=temperature, threads=threads)


def sigmoid_backward(x, y, dy, temperature=1.0, bias=0.0, out=None, threads=0):
    """The VJP of sigmoid: y (1 - y) dy / temperature; reads y and dy (x may be None; bias is not needed)."""
    del bias
    return _run("sigmoid", 1, x, y, dy, -1, out, temperature=temperature, threads=threads)


def softplus_l1(x, axis=-1, out=None, threads=0):
    """softplus(x) / sum softplus(x) along axis, with the stable softplus; -inf entries give 0."""
    return _run("softplus_l1", 0, x, None, None, axis, out, threads=threads)


def softplus_l1_backward(x, y, dy, axis=-1, out=None, threads=0):
    """The VJP of softplus_l1; reads x and dy (y may be None)."""
    return _run("softplus_l1", 1, x, y, dy, axis, out, threads=threads)


def standardize_softmax(x, temperature=1.0, axis=-1, out=None, threads=0):
    """Logit standardisation (Sun et al. 2024): softmax(((x - mean) / (std + 1e-7)) / temperature), std
    unbiased, over the finite entries."""
    return _run("standardize_softmax", 0, x, None, None, axis, out, temperature=_temperature(temperature),
                threads=threads)


def standardize_softmax_backward(x, y, dy, temperature=1.0, axis=-1, out=None, threads=0):
    """The VJP of standardize_softmax; reads x and dy (y may be None)."""
    return _run("standardize_softmax", 1, x, y, dy, axis, out, temperature=_temperature(temperature),
                threads=threads)


def _temperature(t):
    """standardize_softmax's T, the C options' temperature (where 0 would mean 1): > 0 and finite here."""
    t = float(t)
    if not (t > 0.0 and t != float("inf")):
        raise ValueError("smx.standardize_softmax: temperature must be > 0 and finite, got %r" % (t,))
    return t


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
    g = np.ascontiguousarray(dy, dtype=work).reshape(x3.shape[0], x3.shape[2])
    dx = np.empty_like(x3)
    # zeros: with n = 0 the library returns before writing dw, whose value (a sum over no element) is 0
    dw = np.zeros_like(w2)
    _smx._mixture(x3, w2, g, dx, dw, int(threads))
    return dx.reshape(np.shape(x)).astype(res_dt, copy=False), dw.reshape(np.shape(w)).astype(res_dt, copy=False)
