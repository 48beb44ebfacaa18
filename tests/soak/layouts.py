"""NumPy views with the same values and other strides: C and Fortran order,
a stride-2 window into a larger buffer, negative strides, permuted strides,
zero strides (broadcast)."""
import numpy as np

LAYOUTS = ["C", "F", "strided", "negative", "permuted", "broadcast"]


def view(rng, a, layout):
    """An array equal to `a` (same shape and values) laid out as named."""
    nd = a.ndim
    if layout == "C" or nd == 0:
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided":
        steps = [int(rng.integers(1, 4)) for _ in range(nd)]
        base = np.empty([max(s, 1) * k for s, k in zip(a.shape, steps)], a.dtype)
        base.fill(np.nan if a.dtype.kind == "f" else 0)
        v = base[tuple(slice(None, None, k) for k in steps)][tuple(slice(0, s) for s in a.shape)]
        v[...] = a
        return v
    if layout == "negative":
        flip = tuple(slice(None, None, -1) if rng.random() < 0.6 else slice(None) for _ in range(nd))
        return np.ascontiguousarray(a[flip])[flip]
    if layout == "permuted":
        perm = rng.permutation(nd)
        return np.ascontiguousarray(a.transpose(perm)).transpose(np.argsort(perm))
    # broadcast: the values along one dim are made equal, then that dim is a zero stride
    d = int(rng.integers(nd))
    if a.shape[d] == 0:
        return np.ascontiguousarray(a)
    return np.broadcast_to(np.take(a, [0], axis=d), a.shape)
