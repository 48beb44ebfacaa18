"""The row operations of the op table (src/ops/op_table.def) as NumPy functions, made from the table.

Each is one call of smx._smx._rows: the C walker on the caller's arrays as they are (any strides, views,
negative steps, any axis; float16, float32, float64 in their own precision, bfloat16 from smx.torch),
no copy to a contiguous float32 / float64 array. The keywords, their defaults and ranges, the bound and
the special-value rule come from the table (smx._smx._op_info), so every function reads the same way:

    name(x, <parameters>, axis=-1, out=None, threads=0[, masked_row='zero'])
    name_backward(x, y, dy, <parameters>, axis=-1, out=None, threads=0)

threads: 0 (the default) is every core this process may use, 1 the calling thread; results never depend
on it. Integer inputs are read as float64 (or in the other inputs' float dtype); float inputs of different
dtypes are a TypeError (no hidden copy).
"""
import inspect

import numpy as np

from . import _smx

# C stem -> which of the forward's input x and output y its backward entry reads (the other may be None)
BACKWARD_READS = {"softpick": "x", "ssmax": "y", "sa_softmax": "x", "adaptive_softmax": "x", "topk_softmax": "y",
                  "softplus_l1": "x", "standardize_softmax": "x", "sparsemax": "y", "entmax15": "y", "entmax": "y",
                  "sparsemax_sort": None, "softmax": "y", "log_softmax": "y", "sigmoid": "y"}


def run(name, backward, x, y=None, dy=None, axis=-1, out=None, params=None, n=None, temperature=0.0, threads=0,
        masked_row="zero", bf16=False):
    """One row operation over arrays (see the module's doc); returns out, or a scalar for 0-d inputs."""
    fn = "smx.%s%s" % (name, "_backward" if backward else "")
    if masked_row not in ("zero", "nan"):
        raise ValueError("%s: masked_row must be 'zero' or 'nan', got %r" % (fn, masked_row))
    arrays = [None if a is None else np.asarray(a) for a in (x, y, dy)]
    present = [a for a in arrays if a is not None]
    if not bf16 and present:   # one float dtype (no hidden copy); integers are read in it, or as float64
        floats = sorted({a.dtype.str for a in present if a.dtype.kind == "f"})
        if len(floats) > 1:
            raise TypeError("%s: the inputs have dtypes %s; one float dtype expected (cast first)"
                            % (fn, ", ".join(str(a.dtype) for a in present)))
        dt = np.dtype(floats[0]) if floats else np.dtype(np.float64)
        arrays = [a if a is None or a.dtype.kind not in "iu" else a.astype(dt) for a in arrays]
    scalar = bool(present) and present[0].ndim == 0
    if scalar:   # one row of one element, as scipy.special
        arrays = [None if a is None else a.reshape(1) for a in arrays]
        out = None if out is None else np.asarray(out).reshape(1)
        axis = -1
    if n is not None:
        ref = next(a for a in arrays if a is not None)
        want = tuple(np.delete(ref.shape, axis % ref.ndim))
        try:
            n = np.broadcast_to(np.asarray(n, dtype=np.int64), want)
        except ValueError:
            raise ValueError("%s: n must have, or broadcast to, the input's shape without the axis %s (one count "
                             "per row), got shape %s" % (fn, want, np.shape(n))) from None
    res = _smx._rows(name, bool(backward), arrays[0], arrays[1], arrays[2], out, int(axis),
                     None if params is None else [float(p) for p in params], n, float(temperature), threads,
                     masked_row == "nan", bool(bf16))
    return res[0] if scalar and out is None else res


def _doc(info, backward):
    head = "The vector-Jacobian product of smx.%s" % info["py"] if backward else "smx.%s" % info["py"]
    lines = [head + " (%s)." % (info["paper"] or "smx"), "", "Parameters (from the op table):"]
    lines += ["  %s: %s (range [%g, %g])" % (p[0], p[5], p[3], p[4]) for p in info["params"]]
    lines += ["axis: the row's axis; out: the result's array (may be an input); threads: 0 = every core.",
              "Bound: " + info["bound"], "Special values: " + info["special"],
              "dtypes: " + ", ".join(info["bwd_dtypes" if backward else "dtypes"])]
    return "\n".join(lines)


def make(name, py=None, lens=False, temperature=False):
    """smx.<py> and smx.<py>_backward for the table's row op `name` (its C stem). lens: the op takes one count
    per row (n=); temperature: the op reads the options' temperature (a keyword temperature=1.0, > 0)."""
    info = _smx._op_info(name)
    py = py or info["py"]
    pnames = [p[0] for p in info["params"]]
    masked = "MASKED_ROW_NAN" in info["special"] or info["family"] == "SPARSE"   # entmax: "sparsemax's" rule
    P = inspect.Parameter

    def params_of(kw):
        return [kw[p] for p in pnames]

    def sig(arrays, fwd):
        ps = [P(a, P.POSITIONAL_OR_KEYWORD) for a in arrays]
        ps += [P(p[0], P.POSITIONAL_OR_KEYWORD, **({} if p[2] is None else {"default": default(p)}))
               for p in info["params"]]
        if lens:
            ps.append(P("n", P.POSITIONAL_OR_KEYWORD, default=None))
        if temperature:
            ps.append(P("temperature", P.POSITIONAL_OR_KEYWORD, default=1.0))
        ps += [P("axis", P.POSITIONAL_OR_KEYWORD, default=-1), P("out", P.POSITIONAL_OR_KEYWORD, default=None),
               P("threads", P.POSITIONAL_OR_KEYWORD, default=0)]
        if fwd and masked:
            ps.append(P("masked_row", P.POSITIONAL_OR_KEYWORD, default="zero"))
        return inspect.Signature(ps)

    fsig, bsig = sig(["x"], True), sig(["x", "y", "dy"], False)

    def forward(*args, **kwargs):
        kw = fsig.bind(*args, **kwargs)
        kw.apply_defaults()
        a = kw.arguments
        return run(name, 0, a["x"], axis=a["axis"], out=a["out"], params=params_of(a), n=a.get("n"),
                   temperature=_temp(py, a, temperature), threads=a["threads"], masked_row=a.get("masked_row", "zero"))

    reads = BACKWARD_READS.get(name)

    def backward(*args, **kwargs):
        kw = bsig.bind(*args, **kwargs)
        kw.apply_defaults()
        a = kw.arguments
        if reads and a[reads] is None:
            raise ValueError("smx.%s_backward: %s is required (the backward reads %s and dy; %s may be None)"
                             % (py, reads, reads, "y" if reads == "x" else "x"))
        return run(name, 1, a["x"], a["y"], a["dy"], axis=a["axis"], out=a["out"], params=params_of(a),
                   n=a.get("n"), temperature=_temp(py, a, temperature), threads=a["threads"])

    forward.__name__, forward.__qualname__, forward.__signature__ = py, py, fsig
    forward.__doc__ = _doc(info, False)
    backward.__name__ = backward.__qualname__ = py + "_backward"
    backward.__signature__, backward.__doc__ = bsig, _doc(info, True)
    return forward, (backward if info["bwd_dtypes"] else None)


def _temp(py, a, on):
    """The options' temperature from the keywords where the op reads it (else 0: the library's default)."""
    if not on:
        return 0.0
    t = float(a["temperature"])
    if not (0.0 < t < float("inf")):
        raise ValueError("smx.%s: temperature must be > 0 and finite, got %r" % (py, a["temperature"]))
    return t


def default(p):
    """The table's default as the Python type of the parameter (p: an _op_info params tuple)."""
    if p[1] == "bool":
        return bool(p[2])
    if p[1] in ("int", "size_t", "uint64"):
        return int(p[2])
    return p[2]


def _backward_y(name, doc):
    """smx.<name>_backward(y, dy, ...): the VJP of a map whose backward reads only its output (class YBWD)."""
    def fn(y, dy, axis=-1, temperature=1.0, out=None, threads=0):
        t = float(temperature)
        if not (0.0 < t < float("inf")):
            raise ValueError("smx.%s_backward: temperature must be positive and finite, got %r" % (name, temperature))
        return run(name, 1, None, y, dy, axis, out, temperature=t, threads=threads)
    fn.__name__ = fn.__qualname__ = name + "_backward"
    fn.__doc__ = doc
    return fn


softmax_backward = _backward_y("softmax", "Vector-Jacobian product of softmax: dx = y * (dy - sum(dy * y)) / T along "
                               "axis, from the softmax output y and the upstream gradient dy (same shape),\nin their "
                               "dtype (float16 on the library's f16 rows), any strides. Bound and special values: "
                               "include/smx/smx_grad.h.")
log_softmax_backward = _backward_y("log_softmax", "Vector-Jacobian product of log-softmax: dx = (dy - exp(y) * "
                                   "sum(dy)) / T along axis, from the log-softmax output y and the upstream "
                                   "gradient dy; as softmax_backward.")
