"""sparsemax, entmax-1.5 and alpha-entmax (sparse probability maps), their
vector-Jacobian products and their Fenchel-Young losses, over NumPy arrays.

The C library does the work (include/smx/smx_sparse.h). The maps and their
VJPs are made from the op table by smx._rows (one walker call on the caller's
strides and dtype); the losses take the classes on the last axis.
"""
import numpy as np

from . import _rows, _smx

_RED = {"mean": 0, "sum": 1, "none": 2}


def _float_input(fn, x, allow_half=True):
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        a = a.astype(np.float64)
    ok = (np.float32, np.float64, np.float16) if allow_half else (np.float32, np.float64)
    if a.dtype.type not in ok:
        raise TypeError("%s: dtype %s is not supported (float16, float32, float64)" % (fn, a.dtype))
    return a


def _check_alpha(fn, alpha):
    alpha = float(alpha)
    if not (alpha > 1.0 and np.isfinite(alpha)):
        raise ValueError("%s: alpha must be finite and > 1 (alpha -> 1 is softmax: use smx.softmax)" % fn)
    return alpha


sparsemax, sparsemax_backward = _rows.make("sparsemax")
sparsemax_sort, _ = _rows.make("sparsemax_sort")
entmax15, entmax15_backward = _rows.make("entmax15")
entmax, entmax_backward = _rows.make("entmax")


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
