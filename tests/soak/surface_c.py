"""The C API through ctypes: smx_{softmax,log_softmax,logsumexp}[_rows]_{f32,
f64,f16,bf16} on padded, misaligned, in-place and guarded buffers, every
option, every kernel set (smx_set_max_isa), checked against the reference,
for bitwise equality across thread counts, and for writing nothing outside
the rows (nor anything at all when the arguments are refused)."""
import ctypes as C

import numpy as np

import reference
import values

OPS = ["softmax", "log_softmax", "logsumexp"]
DTYPES = ["f32", "f64", "f16", "bf16"]
STORE_TYPE = {"f32": np.float32, "f64": np.float64, "f16": np.uint16, "bf16": np.uint16}
SMX_OK, SMX_E_INVALID_ARG = 0, 10
FLAG_MASKED_NAN, FLAG_STREAM, FLAG_CACHED = 1, 2, 4
GUARD = 16  # elements of sentinel before and after every buffer
SENTINEL = 0xA5


class Options(C.Structure):
    _fields_ = [("algo", C.c_int), ("temperature", C.c_double), ("flags", C.c_uint32), ("threads", C.c_int)]


class Lib:
    def __init__(self, path):
        self.lib = C.CDLL(path)
        self.lib.smx_set_max_isa.argtypes = [C.c_int]
        self.lib.smx_set_max_isa.restype = C.c_int
        self.lib.smx_isa.restype = C.c_char_p
        P, Z = C.c_void_p, C.c_size_t
        for op in OPS:
            for dt in DTYPES:
                rows = getattr(self.lib, "smx_%s_rows_%s" % (op, dt))
                one = getattr(self.lib, "smx_%s_%s" % (op, dt))
                if op == "logsumexp":
                    rows.argtypes = [P, Z, P, Z, Z, C.POINTER(Options)]
                else:
                    rows.argtypes = [P, Z, P, Z, Z, Z, C.POINTER(Options)]
                # the one-row forms are (x, out, n, opt) for every op (the API convention: inputs, outputs,
                # shape; logsumexp's was (x, n, out) before it, which this harness kept calling: a segfault)
                one.argtypes = [P, P, Z, C.POINTER(Options)]
                rows.restype = one.restype = C.c_int

    def fn(self, op, dt, form):
        return getattr(self.lib, "smx_%s%s_%s" % (op, "_rows" if form == "rows" else "", dt))


def _encode(x64, dt):
    """(stored array, values the library reads as float64-or-wider)."""
    if dt == "f32":
        s = x64.astype(np.float32)
        return s, s
    if dt == "f64":
        return x64.copy(), x64
    if dt == "f16":
        h = x64.astype(np.float16)
        return h.view(np.uint16), h
    b = values.to_bf16_bits(x64.astype(np.float32))
    return b, values.from_bf16_bits(b)


def _decode(y, dt, op):
    if op == "logsumexp" or dt in ("f32", "f64"):
        return y
    return y.view(np.float16) if dt == "f16" else values.from_bf16_bits(y)


class Buffer:
    """A guarded allocation holding a rows x cols matrix with leading dim ld,
    starting `shift` elements past the guard (misalignment)."""

    def __init__(self, dtype, rows, cols, ld, shift):
        self.span = (rows - 1) * ld + cols if rows and cols else 0
        self.rows, self.cols, self.ld = rows, cols, ld
        n = self.span + 2 * GUARD + shift
        self.raw = np.frombuffer(bytearray([SENTINEL]) * (n * np.dtype(dtype).itemsize), dtype=dtype)
        self.off = GUARD + shift
        self.view = self.raw[self.off:self.off + self.span]

    def ptr(self, extra=0):
        return self.raw.ctypes.data + (self.off + extra) * self.raw.itemsize

    def put(self, m):
        for r in range(self.rows):
            self.view[r * self.ld:r * self.ld + self.cols] = m[r]

    def get(self):
        if not self.rows or not self.cols:
            return np.zeros((self.rows, self.cols), self.raw.dtype)
        return np.lib.stride_tricks.as_strided(self.view, (self.rows, self.cols),
                                               (self.ld * self.raw.itemsize, self.raw.itemsize)).copy()

    def outside_rows_untouched(self):
        """True when every element outside the rows (guards, padding) is still the sentinel."""
        b = self.raw.view(np.uint8).reshape(-1, self.raw.itemsize)
        mask = np.ones(len(self.raw), bool)
        for r in range(self.rows if self.cols else 0):
            s = self.off + r * self.ld
            mask[s:s + self.cols] = False
        return bool((b[mask] == SENTINEL).all())


def _same_bytes(a, b):
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _must_refuse(bad, op, form, rows, cols, inplace):
    """Whether the header promises SMX_E_INVALID_ARG for this bad argument
    (an empty call may return SMX_OK before looking at its arguments)."""
    work = rows * cols > 0 or (op == "logsumexp" and rows > 0)
    if bad in ("temperature", "flags", "algo", "threads"):
        return work
    if bad == "ld":
        return form == "rows" and rows >= 2 and cols >= 1
    if bad == "overlap":
        if inplace:
            return form == "rows" and rows >= 2 and cols >= 1
        return rows * cols >= 2
    if bad == "null":
        return rows * cols > 0
    return False


def run(case, rng, env):
    lib = env["clib"]
    p = case.params
    p["op"] = op = str(rng.choice(OPS))
    p["dtype"] = dt = str(rng.choice(DTYPES))
    p["form"] = form = "one" if rng.random() < 0.15 else "rows"
    cols = values.row_length(rng)
    rows = 1 if form == "one" else values.other_dim(rng, max(1, (1 << 19) // max(cols, 1)))
    p["rows"], p["cols"] = rows, cols
    p["ldx"] = ldx = cols + (int(rng.integers(1, 9)) if form == "rows" and rng.random() < 0.3 else 0)
    inplace = op != "logsumexp" and rng.random() < 0.15
    p["inplace"] = inplace
    p["ldy"] = ldy = ldx if inplace else (1 if op == "logsumexp" else cols + (int(rng.integers(1, 5)) if form == "rows" and rng.random() < 0.3 else 0))
    p["shift"] = shift = int(rng.integers(0, 3))
    p["isa"] = isa = int(rng.integers(0, 3))
    T = values.temperature(rng)
    p["temperature"] = T if rng.random() > 0.1 or T != 1.0 else 0.0  # 0 means 1
    p["algo"] = values.ALGOS.index(values.algo(rng))
    p["flags"] = int(rng.choice([0, 0, FLAG_MASKED_NAN, FLAG_STREAM, FLAG_CACHED, FLAG_MASKED_NAN | FLAG_STREAM]))
    p["threads"] = values.threads(rng)
    fam, x64 = values.rows_of_values(rng, rows, cols, dt)
    p["values"] = fam
    bad = None
    if rng.random() < 0.08:
        bad = str(rng.choice(["ld", "temperature", "overlap", "null", "flags", "algo", "threads"]))
        p["bad"] = bad
    if env["known"].skip(case):
        return
    stored, seen = _encode(x64, dt)
    case.inputs["x"] = stored
    lib.lib.smx_set_max_isa(isa)

    def call(threads, opts_override=None):
        o = Options(p["algo"], p["temperature"], p["flags"], threads)
        if opts_override:
            for k, v in opts_override.items():
                setattr(o, k, v)
        xb = Buffer(STORE_TYPE[dt], rows, cols, ldx, shift)
        xb.put(stored)
        if inplace:
            yb = xb
        elif op == "logsumexp":
            yb = Buffer(np.float64 if dt == "f64" else np.float32, rows, 1, 1, shift)
        else:
            yb = Buffer(STORE_TYPE[dt], rows, cols, ldy, (shift + 1) % 3)
        xp, yp, lx, ly = xb.ptr(), yb.ptr(), ldx, ldy
        if bad == "ld":
            lx = cols - 1 if cols > 0 else 0
        elif bad == "overlap" and not inplace and rows * cols > 0:
            # (an empty x has no bytes to overlap: out stays its own buffer)
            if op == "logsumexp":
                # the first address inside x that is aligned for out's type (x may
                # be 2-byte data at an odd shift): out may never overlap x at all
                j = next(j for j in range(4) if xb.ptr(j) % yb.raw.itemsize == 0)
            else:
                j = 1   # y of x's type, one element on: not the in-place alias
            yp = xb.ptr(j)
        elif bad == "overlap":
            ly = ldx + 1
        elif bad == "null":
            xp = None
        f = lib.fn(op, dt, form)
        if form == "rows":
            st = f(xp, lx, yp, rows, cols, C.byref(o)) if op == "logsumexp" else \
                f(xp, lx, yp, ly, rows, cols, C.byref(o))
        else:
            st = f(xp, yp, cols, C.byref(o))
        return st, xb, yb

    over = {}
    if bad == "temperature":
        over["temperature"] = float(rng.choice([-1.0, -1e-300, np.nan, np.inf, -np.inf]))
    elif bad == "flags":
        over["flags"] = int(rng.choice([FLAG_STREAM | FLAG_CACHED, 0x100, 0x80000000]))
    elif bad == "algo":
        over["algo"] = int(rng.choice([4, 7, -1]))
    elif bad == "threads":
        over["threads"] = int(rng.choice([-1, -1000]))
    if bad:
        st, xb, yb = call(p["threads"], over)
        p["status"] = st
        if _must_refuse(bad, op, form, rows, cols, inplace):
            case.expect(st == SMX_E_INVALID_ARG, "bad argument (%s): status %d, expected %d" % (bad, st, SMX_E_INVALID_ARG))
            if not inplace:
                case.expect(np.all(yb.raw.view(np.uint8) == SENTINEL), "bad argument (%s): the output was written" % bad)
            case.expect(_same_bytes(xb.get(), stored), "bad argument (%s): the input was changed" % bad)
        else:  # nothing to do: either answer, but no crash
            case.expect(st in (SMX_OK, SMX_E_INVALID_ARG), "bad argument (%s) without work: status %d" % (bad, st))
        return

    st, xb, yb = call(p["threads"])
    if not case.expect(st == SMX_OK, "status %d" % st):
        return
    if not inplace:
        case.expect(_same_bytes(xb.get(), stored), "the input was changed")
        case.expect(xb.outside_rows_untouched(), "the input's guard or padding was written")
    case.expect(yb.outside_rows_untouched(), "a write outside the output rows (guard or padding)")
    y = yb.get()
    if op == "logsumexp":
        y = y.reshape(rows)
    compute = "f64" if dt == "f64" else "f32"
    storage = compute if op == "logsumexp" else dt
    ref, tabs = reference.reference(seen.reshape(rows, cols), op, p["temperature"] or 1.0, bool(p["flags"] & FLAG_MASKED_NAN))
    msg = reference.check(_decode(y, dt, op), ref, tabs, op, compute, storage)
    if msg:
        case.fail("accuracy: " + msg)
    # the same bits for any thread count
    for t in sorted(set(int(v) for v in rng.integers(0, 6, 2)) - {p["threads"]}):
        st2, _, yb2 = call(t)
        y2 = yb2.get()
        same = st2 == SMX_OK and y2.tobytes() == yb.get().tobytes()
        case.expect(same, "threads=%d differs from threads=%d (status %d)" % (t, p["threads"], st2))
