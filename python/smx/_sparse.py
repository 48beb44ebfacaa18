"""sparsemax, entmax-1.5 and alpha-entmax (sparse probability maps), their
vector-Jacobian products and their Fenchel-Young losses, over NumPy arrays.

The C library does the work (include/smx/smx_sparse.h); this module maps an
array and an axis onto its rows form (one C-contiguous copy when the axis is
not the last one or the layout is not C), checks out=, and shapes the results.
"""
import numpy as np

from . import _smx

_OPS = {"sparsemax": 0, "entmax15": 1, "entmax": 2, "sparsemax_sort": 3}
_RED = {"mean": 0, "sum": 1, "none": 2}


def _float_input(fn, x, allow_half=True):
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        a = a.astype(np.float64)
    ok = (np.float32, np.float64, np.float16) if allow_half else (np.float32, np.float64)
    if a.dtype.type not in ok:
        raise TypeError("%s: dtype %s is not supported (float16, float32, float64)" % (fn, a.dtype))
    return a


def _rows(a, axis):
    """a with axis last, as a C-contiguous native 2-D array (a view when possible)."""
    if a.ndim == 0:
        a = a.reshape(1)
        axis = -1
    m = np.moveaxis(a, axis, -1)
    m = np.ascontiguousarray(m, dtype=m.dtype.newbyteorder("="))
    # explicit rows: reshape(-1, 0) cannot infer them
    return m, m.reshape(int(np.prod(m.shape[:-1], dtype=np.int64)), m.shape[-1])


def _check_alpha(fn, alpha):
    alpha = float(alpha)
    if not (alpha > 1.0 and np.isfinite(alpha)):
        raise ValueError("%s: alpha must be finite and > 1 (alpha -> 1 is softmax: use smx.softmax)" % fn)
    return alpha


def _forward(fn, op, x, axis, out, alpha, threads, masked_row):
    a = _float_input(fn, x)
    if masked_row not in ("zero", "nan"):
        raise ValueError("%s: masked_row must be 'zero' or 'nan'" % fn)
    if out is not None:
        if not isinstance(out, np.ndarray) or out.dtype != a.dtype:
            raise TypeError("%s: out must be an ndarray of dtype %s" % (fn, a.dtype))
        if out.shape != a.shape:
            raise ValueError("%s: out has shape %s, the result %s" % (fn, out.shape, a.shape))
    m, x2 = _rows(a, axis)
    last = a.ndim >= 1 and axis in (-1, a.ndim - 1)
    if out is not None and last and out.flags.c_contiguous and out.dtype.isnative and out.flags.writeable:
        if x2.size:   # straight into out (which may be x itself)
            _smx._sparse_rows(op, x2, out.reshape(x2.shape), alpha, int(threads), masked_row == "nan")
        return out
    res = np.empty_like(m)
    y2 = res.reshape(x2.shape)
    if x2.size:
        _smx._sparse_rows(op, x2, y2, alpha, int(threads), masked_row == "nan")
    res = np.moveaxis(res, -1, axis) if a.ndim else res.reshape(())
    if out is not None:
        out[...] = res
        return out
    return res[()] if a.ndim == 0 else res


def sparsemax(x, axis=-1, out=None, threads=0, masked_row="zero"):
    """sparsemax(x) = argmin_{p in simplex} ||p - x||^2 along axis (Martins & Astudillo 2016):
    max(x - tau, 0) summing to 1. Expected O(n) per row (pivot search on the candidates).
    -inf entries get 0 and take no part; a row of all -inf gives 0 (masked_row='nan': NaN);
    NaN gives a NaN row; k entries equal to +inf get 1/k. float16/32/64, out= may be x."""
    return _forward("smx.sparsemax", 0, x, axis, out, 0.0, threads, masked_row)


def sparsemax_sort(x, axis=-1, out=None, threads=0):
    """The O(n log n) sort-based sparsemax (the oracle): the same results as smx.sparsemax."""
    return _forward("smx.sparsemax_sort", 3, _float_input("smx.sparsemax_sort", x, False), axis, out, 0.0, threads,
                    "zero")


def entmax15(x, axis=-1, out=None, threads=0, masked_row="zero"):
    """1.5-entmax along axis (Peters et al. 2019), exact: max(x/2 - tau, 0)^2 summing to 1.
    Special values as smx.sparsemax."""
    return _forward("smx.entmax15", 1, x, axis, out, 0.0, threads, masked_row)


def entmax(x, alpha, axis=-1, out=None, threads=0, masked_row="zero"):
    """alpha-entmax along axis for alpha > 1: max((alpha-1) x - tau, 0)^(1/(alpha-1)), tau by
    bisection as the entmax package's entmax_bisect (30 halvings for float32/float16, 50 for
    float64), normalised to sum 1. alpha <= 1 is a ValueError (alpha -> 1 is softmax)."""
    alpha = _check_alpha("smx.entmax", alpha)
    return _forward("smx.entmax", 2, x, axis, out, alpha, threads, masked_row)


def _backward(fn, op, y, dy, axis, alpha, threads, out):
    if y is None:
        raise ValueError("%s: y (the forward output) is required; x is not used" % fn)
    y = _float_input(fn, y, False)
    dy = np.asarray(dy, dtype=y.dtype)
    if dy.shape != y.shape:
        raise ValueError("%s: dy has shape %s, y %s" % (fn, dy.shape, y.shape))
    if out is not None and (not isinstance(out, np.ndarray) or out.dtype != y.dtype or out.shape != y.shape):
        raise ValueError("%s: out must be an ndarray of the dtype and shape of y" % fn)
    m, y2 = _rows(y, axis)
    _, d2 = _rows(dy, axis)
    last = y.ndim >= 1 and axis in (-1, y.ndim - 1)
    if out is not None and last and out.flags.c_contiguous and out.dtype.isnative and out.flags.writeable:
        if y2.size:   # straight into out (which may be y or dy)
            _smx._sparse_backward_rows(op, y2, d2, out.reshape(y2.shape), alpha, int(threads))
        return out
    res = np.empty_like(m)
    if y2.size:
        _smx._sparse_backward_rows(op, y2, d2, res.reshape(y2.shape), alpha, int(threads))
    res = np.moveaxis(res, -1, axis) if y.ndim else res.reshape(())[()]
    if out is not None:
        out[...] = res
        return out
    return res


def sparsemax_backward(x, y, dy, axis=-1, threads=0, out=None):
    """The VJP of sparsemax from its output y (x is not used and may be None):
    dx = dy - mean(dy over y > 0) on the support, 0 elsewhere."""
    return _backward("smx.sparsemax_backward", 0, y, dy, axis, 2.0, threads, out)


def entmax15_backward(x, y, dy, axis=-1, threads=0, out=None):
    """The VJP of entmax15 from y (x may be None): g = sqrt(y), dx = g (dy - sum(g dy) / sum(g))."""
    return _backward("smx.entmax15_backward", 1, y, dy, axis, 1.5, threads, out)


def entmax_backward(x, y, dy, alpha, axis=-1, threads=0, out=None):
    """The VJP of alpha-entmax from y (x may be None): g = y^(2-alpha) on the support,
    dx = g (dy - sum(g dy) / sum(g))."""
    alpha = _check_alpha("smx.entmax_backward", alpha)
    return _backward("smx.entmax_backward", 2, y, dy, axis, alpha, threads, out)


def _loss(fn, op, logits, target, alpha, reduction, ignore_index, return_grad, grad_scale, threads, masked_row):
    x = _float_input(fn, logits, False)
    if x.ndim < 1:
        raise ValueError("%s: logits need a class axis" % fn)
    if reduction not in _RED:
        raise ValueError("%s: reduction must be 'mean', 'sum' or 'none'" % fn)
    t = np.asarray(target)
    # uint64 would wrap in the int64 copy below (2**64 - 100 read as -100, an ignored row): refused, as the
    # other losses (smx.cross_entropy, ...) do
    if t.dtype.kind not in "iu" or (t.dtype.kind == "u" and t.dtype.itemsize >= 8):
        raise TypeError("%s: target must be an array of integers (int32 or int64), got dtype %s" % (fn, t.dtype))
    if t.shape != x.shape[:-1]:
        raise ValueError("%s: target has shape %s, logits %s" % (fn, t.shape, x.shape))
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    if x.shape[-1] == 0 and rows > 0:
        raise ValueError("%s: logits have no classes (last axis of length 0)" % fn)
    # explicit rows: reshape(-1, 0) cannot infer them
    x2 = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("=")).reshape(rows, x.shape[-1])
    t2 = np.ascontiguousarray(t, dtype=np.int64).reshape(-1)
    n = x2.shape[0] if reduction == "none" else 1
    loss = np.empty(n, dtype=x.dtype)
    grad = np.empty_like(x2) if return_grad else None
    _smx._sparse_loss_rows(op, x2, t2, alpha, _RED[reduction], int(ignore_index), float(grad_scale), int(threads),
                           masked_row == "nan", loss, grad)
    res = loss.reshape(x.shape[:-1]) if reduction == "none" else x.dtype.type(loss[0])
    if return_grad:
        return res, grad.reshape(x.shape)
    return res


def sparsemax_loss(logits, target, reduction="mean", ignore_index=-100, return_grad=False, grad_scale=1.0,
                   threads=0, masked_row="zero"):
    """The sparsemax loss (Martins & Astudillo 2016): Omega(p) + <p, x> - x_t with
    p = sparsemax(x), Omega(p) = (1 - ||p||^2)/2; gradient p - onehot(t). Classes on the last
    axis; reduction and ignore_index as smx.cross_entropy; return_grad=True gives (loss, grad)."""
    return _loss("smx.sparsemax_loss", 0, logits, target, 2.0, reduction, ignore_index, return_grad, grad_scale,
                 threads, masked_row)


def entmax15_loss(logits, target, reduction="mean", ignore_index=-100, return_grad=False, grad_scale=1.0,
                  threads=0, masked_row="zero"):
    """The 1.5-entmax Fenchel-Young loss: Omega(p) + <p, x> - x_t, Omega(p) = (1 - sum p^1.5)/0.75."""
    return _loss("smx.entmax15_loss", 1, logits, target, 1.5, reduction, ignore_index, return_grad, grad_scale,
                 threads, masked_row)


def entmax_loss(logits, target, alpha, reduction="mean", ignore_index=-100, return_grad=False, grad_scale=1.0,
                threads=0, masked_row="zero"):
    """The alpha-entmax Fenchel-Young loss: Omega(p) = (1 - sum p^alpha)/(alpha (alpha - 1))."""
    alpha = _check_alpha("smx.entmax_loss", alpha)
    return _loss("smx.entmax_loss", 2, logits, target, alpha, reduction, ignore_index, return_grad, grad_scale,
                 threads, masked_row)
