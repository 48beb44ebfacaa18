"""Long-double references for softmax, log-softmax and log-sum-exp under smx's
special-value policy, and the accuracy bounds the headers promise.

The policy and the bounds are restated here from include/smx/smx.h (not
imported from the library) so that the soak is an independent check of them.
"""
import numpy as np

LD = np.longdouble

# Precision a result was computed in: eps as the header uses it, and the
# threshold below which a softmax output is only promised to be in [0, tiny].
COMPUTE = {
    "f32": (2.0 ** -23, float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)),
    "f64": (2.0 ** -52, float(np.finfo(np.float64).tiny), float(np.finfo(np.float64).max)),
}

# Storage a result was rounded to after the computation: unit roundoff (0 when
# the storage holds the computed value exactly), half the smallest subnormal,
# the largest finite value.
STORAGE = {
    "f16": (2.0 ** -11, 2.0 ** -25, 65504.0),
    "bf16": (2.0 ** -8, 2.0 ** -134, (2 - 2.0 ** -7) * 2.0 ** 127),
    "f32": (2.0 ** -24, 2.0 ** -150, float(np.finfo(np.float32).max)),
    "f64": (0.0, 0.0, float(np.finfo(np.float64).max)),
}


def as_rows(m):
    """(..., n) -> (rows, n), also when some size is 0."""
    m = np.asarray(m)
    if m.ndim == 0:
        return m.reshape(1, 1)
    return m.reshape(int(np.prod(m.shape[:-1], dtype=np.int64)), m.shape[-1])


def reference(x, op, temperature=1.0, masked_nan=False):
    """x: 2-D (rows, n), the values exactly as the library reads them.
    Returns (ref, t): ref is (rows, n) for softmax / log_softmax and (rows,)
    for logsumexp, in long double; t is |x_i - max| / T, for the bound."""
    x = np.asarray(x).astype(LD)
    rows, n = x.shape
    T = LD(temperature)
    if n == 0:
        return (np.full(rows, -np.inf, LD) if op == "logsumexp" else np.zeros((rows, 0), LD)), np.zeros((rows, 0), LD)
    with np.errstate(all="ignore"):
        isnan = np.isnan(x)
        nan_row = isnan.any(axis=1)
        pinf = x == np.inf
        k = pinf.sum(axis=1)
        inf_row = (k > 0) & ~nan_row
        masked_row = ~nan_row & (x == -np.inf).all(axis=1)
        finite = np.isfinite(x)
        m = np.where(finite, x, -np.inf).max(axis=1)
        m = np.where(np.isfinite(m), m, 0)
        t = (np.where(finite, x, -np.inf) - m[:, None]) / T
        e = np.exp(t)
        s = np.ascontiguousarray(e).sum(axis=1)
        logs = np.log(s)
        if op == "softmax":
            ref = e / s[:, None]
            ref[inf_row] = np.where(pinf[inf_row], 1 / k[inf_row, None].astype(LD), 0)
            ref[masked_row] = np.nan if masked_nan else 0
            ref[nan_row] = np.nan
        elif op == "log_softmax":
            ref = t - logs[:, None]
            ref[inf_row] = np.where(pinf[inf_row], -np.log(k[inf_row, None].astype(LD)), -np.inf)
            ref[masked_row] = np.nan if masked_nan else -np.inf
            ref[nan_row] = np.nan
        else:
            ref = m / T + logs
            ref[inf_row] = np.inf
            ref[masked_row] = np.nan if masked_nan else -np.inf
            ref[nan_row] = np.nan
        tabs = np.where(np.isfinite(t), np.abs(t), 0)
    return ref, tabs


def check(y, ref, tabs, op, compute, storage):
    """Compares y (any float array, same shape as ref) against the bound.
    Returns None, or a message naming the worst offending element."""
    eps, tiny, cmax = COMPUTE[compute]
    u, half_sub, smax = STORAGE[storage]
    if storage == compute or (storage == "f64"):
        u = 0.0  # the computed value is stored exactly
    y = np.asarray(y)
    if y.shape != ref.shape:
        return "shape %s, expected %s" % (y.shape, ref.shape)
    yl = y.astype(LD)
    with np.errstate(all="ignore"):
        rnan = np.isnan(ref)
        rinf = np.isinf(ref)
        bad = np.zeros(ref.shape, bool)
        bad |= rnan & ~np.isnan(yl)
        bad |= rinf & (yl != ref)
        fin = ~rnan & ~rinf
        err = np.abs(yl - ref)
        aref = np.abs(ref)
        if op == "softmax":
            bound = (4 + tabs / 2) * eps * ref + u * aref + half_sub
            small = ref < tiny
            ok = np.where(small, (yl >= 0) & (yl <= tiny), err <= bound)
            # -inf entries and underflow give +0, never -0
            bad |= ~np.isnan(yl) & np.signbit(y)
        else:
            bound = 4 * eps * np.maximum(1, aref) + u * aref + half_sub
            ok = err <= bound
        # a value beyond the range of the computing or the storing type is
        # +-inf, its correct rounding (or the largest finite within the bound)
        limit = LD(min(cmax, smax)) * (1 - 8 * LD(eps))
        ok |= np.isinf(yl) & (np.sign(yl) == np.sign(ref)) & (aref >= limit)
        bad |= fin & ~ok
    if not bad.any():
        return None
    idx = np.unravel_index(np.argmax(bad), bad.shape)
    with np.errstate(all="ignore"):
        b = bound[idx] if np.ndim(bound) else bound
    return "%d bad of %d; first at %s: got %r, ref %r, |err| %.3g, bound %.3g (t %.3g)" % (
        int(bad.sum()), bad.size, tuple(int(i) for i in idx), y[idx].item(), float(ref[idx]),
        float(err[idx]), float(b), float(tabs[idx]) if np.ndim(tabs) == np.ndim(ref) and tabs.size else 0.0)
