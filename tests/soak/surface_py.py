"""The Python module: smx.softmax / log_softmax / logsumexp on float16,
float32 and float64 arrays of every layout (layouts.py), any axis or None,
out= (fresh, strided, in place, overlapping the input), keepdims, every
option; checked against the reference, for the result's type, shape and
dtype, for bitwise equality across thread counts, and bad arguments for
the documented exception."""
import numpy as np

import layouts
import reference
import values

OPS = ["softmax", "log_softmax", "logsumexp"]
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _rows_view(x, axis):
    """The values as (rows, n), the reduced axis last."""
    if axis is None:
        return np.asarray(x).reshape(1, -1)
    m = np.moveaxis(np.asarray(x), axis, -1)
    return reference.as_rows(m)


def _result_shape(shape, axis, op, keepdims):
    if op != "logsumexp":
        return tuple(shape)
    if axis is None:
        return tuple(1 for _ in shape) if keepdims else ()
    a = axis % len(shape)
    return tuple(1 if d == a else s for d, s in enumerate(shape) if d != a or keepdims)


BAD = {  # argument -> (value, exception expected)
    "axis-range": (None, ValueError), "axis-float": (1.5, TypeError), "temperature-neg": (-1.0, ValueError),
    "temperature-zero": (0.0, ValueError), "temperature-nan": (float("nan"), ValueError),
    "temperature-inf": (float("inf"), ValueError), "temperature-str": ("hot", TypeError),
    "algo-name": ("fast", ValueError), "algo-int": (2, TypeError), "threads-neg": (-1, ValueError),
    "threads-float": (1.5, TypeError), "masked_row": ("maybe", ValueError), "dtype-bool": (None, TypeError),
    "dtype-complex": (None, TypeError), "out-dtype": (None, TypeError), "out-shape": (None, ValueError),
    "out-readonly": (None, ValueError),
}


def run(case, rng, env):
    smx = env["smx"]
    p = case.params
    p["op"] = op = str(rng.choice(OPS))
    p["dtype"] = dt = str(rng.choice(list(DTYPES)))
    shape, axis = values.nd_shape(rng)
    if rng.random() < 0.01 and op != "logsumexp":  # zero-width rows, very many of them
        shape, axis = [int(10 ** rng.uniform(6, 12)), 0], 1
    p["shape"] = shape
    nd = len(shape)
    p["axis"] = axis_arg = None if rng.random() < 0.1 else (axis - nd if rng.random() < 0.3 else axis)
    p["layout"] = layout = str(rng.choice(layouts.LAYOUTS))
    p["temperature"] = T = values.temperature(rng)
    p["algo"] = values.algo(rng)
    p["threads"] = values.threads(rng)
    p["masked_row"] = str(rng.choice(["zero", "zero", "nan"]))
    p["keepdims"] = keepdims = op == "logsumexp" and bool(rng.random() < 0.3)
    p["out"] = out_mode = str(rng.choice(["none", "none", "fresh", "fresh-F", "fresh-strided", "inplace", "overlap"]))
    if op == "logsumexp" and out_mode in ("inplace", "overlap"):
        p["out"] = out_mode = "fresh"
    if layout == "broadcast" and out_mode == "inplace":
        p["out"] = out_mode = "fresh"
    if out_mode == "overlap" and shape[-1] == 0:
        # the overlapping buffer has one more column: for a zero-width array of
        # 10^11 rows that is a huge allocation of the soak's own, not smx's
        p["out"] = out_mode = "fresh"
    p["bad"] = bad = str(rng.choice(list(BAD))) if rng.random() < 0.07 else None
    if env["known"].skip(case):
        return
    if shape[axis] == 0 and np.prod([s for d, s in enumerate(shape) if d != axis], dtype=float) > 1e7:
        x = np.zeros(shape, DTYPES[dt])  # no values to draw
        layout = p["layout"] = "C"
    else:
        others = [s for d, s in enumerate(shape) if d != axis]
        rows = int(np.prod(others, dtype=np.int64))
        fam, x2 = values.rows_of_values(rng, rows, shape[axis], dt)
        p["values"] = fam
        a = np.moveaxis(x2.reshape(others + [shape[axis]]), -1, axis).astype(DTYPES[dt])
        x = layouts.view(rng, a, layout)
    case.inputs["x"] = np.array(x)
    rshape = _result_shape(shape, axis_arg, op, keepdims)

    def make_out():
        if out_mode in ("fresh", "none") or rshape == ():
            return np.empty(rshape, DTYPES[dt])
        if out_mode == "fresh-F":
            return np.asfortranarray(np.empty(rshape, DTYPES[dt]))
        return np.empty([2 * s for s in rshape], DTYPES[dt])[tuple(slice(None, None, 2) for _ in rshape)]

    kwargs = dict(axis=axis_arg, temperature=T, algo=p["algo"], threads=p["threads"], masked_row=p["masked_row"])
    if op == "logsumexp":
        kwargs["keepdims"] = keepdims
    fn = getattr(smx, op)
    if bad:
        _bad_call(case, fn, x, bad, kwargs, rshape, dt)
        return

    def call(threads):
        kw = dict(kwargs, threads=threads)
        xin = x
        if out_mode == "inplace":
            xin = x.copy(order="K")
            kw["out"] = out = xin
        elif out_mode == "overlap" and nd >= 1:
            base = np.empty(list(shape[:-1]) + [shape[-1] + 1], DTYPES[dt])
            xin = base[..., :-1]
            xin[...] = x
            kw["out"] = out = base[..., 1:]
        elif out_mode != "none":
            kw["out"] = out = make_out()
        else:
            out = None
        res = fn(xin, **kw)
        if out is not None:
            case.expect(res is out, "the result is not the out= array")
        return res

    res = call(p["threads"])
    want_scalar = op == "logsumexp" and rshape == () and out_mode == "none"
    if want_scalar:
        case.expect(isinstance(res, np.generic), "a full reduction returned %s, not a NumPy scalar" % type(res).__name__)
    else:
        case.expect(isinstance(res, np.ndarray), "returned %s" % type(res).__name__)
    res = np.asarray(res)
    case.expect(res.dtype == DTYPES[dt], "result dtype %s, expected %s" % (res.dtype, np.dtype(DTYPES[dt])))
    if not case.expect(res.shape == rshape, "result shape %s, expected %s" % (res.shape, rshape)):
        return
    xr = _rows_view(x, axis_arg)
    ref, tabs = reference.reference(xr, op, T, p["masked_row"] == "nan")
    if op == "logsumexp":
        got = np.asarray(res).reshape(-1)
    else:
        got = _rows_view(res, axis_arg)
    compute = "f64" if dt == "f64" else "f32"
    msg = reference.check(got, ref.reshape(got.shape), tabs, op, compute, dt)
    if msg:
        case.fail("accuracy: " + msg)
    for t in sorted(set(int(v) for v in rng.integers(0, 6, 2)) - {p["threads"]}):
        again = np.asarray(call(t))
        case.expect(np.ascontiguousarray(again).tobytes() == np.ascontiguousarray(res).tobytes(),
                    "threads=%d differs from threads=%d" % (t, p["threads"]))


def _bad_call(case, fn, x, bad, kwargs, rshape, dt):
    val, exc = BAD[bad]
    kw = dict(kwargs)
    arg = x
    name = bad.split("-")[0]
    if bad == "axis-range":
        kw["axis"] = x.ndim if case.params["axis"] is None or case.params["axis"] >= 0 else -x.ndim - 1
    elif name in ("axis", "temperature", "algo", "threads", "masked_row"):
        kw[name] = val
    elif bad == "dtype-bool":  # integers are accepted (read as float64, as scipy)
        arg = np.zeros(x.shape, bool)
    elif bad == "dtype-complex":
        arg = np.zeros(x.shape, np.complex64)
    elif bad == "out-dtype":
        kw["out"] = np.empty(rshape, np.float32 if dt != "f32" else np.float64)
    elif bad == "out-shape":
        kw["out"] = np.empty(tuple(rshape) + (2,), DTYPES[dt])
    elif bad == "out-readonly":
        o = np.empty(rshape, DTYPES[dt])
        o.flags.writeable = False
        kw["out"] = o
    try:
        fn(arg, **kw)
    except exc:
        return
    except Exception as e:  # another exception is a failure too
        case.fail("bad argument %s raised %s: %s, expected %s" % (bad, type(e).__name__, e, exc.__name__))
        return
    case.fail("bad argument %s was accepted, expected %s" % (bad, exc.__name__))
