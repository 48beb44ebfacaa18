"""Random inputs for the soak: shapes, values (ordinary, ties, huge, tiny,
spikes, wide magnitudes) sprinkled with NaN, +-inf, -inf masks and whole
special rows, and the options (temperature, algorithm, threads).

Everything is drawn from the numpy Generator passed in, so a case is
reproducible from its seed alone.
"""
import numpy as np

ALGOS = ["auto", "three-pass", "two-pass", "online"]
# the largest magnitude drawn for "huge" values, and a subnormal of each type
HUGE = {"f16": 65000.0, "bf16": 3.38e38, "f32": 3.4e38, "f64": 1.79e308}
SUBNORMAL = {"f16": 3e-6, "bf16": 1e-39, "f32": 1e-39, "f64": 1e-310}


def row_length(rng):
    r = rng.random()
    if r < 0.07:
        return 0
    if r < 0.17:
        return 1
    if r < 0.45:
        return int(rng.integers(2, 9))
    if r < 0.80:
        return int(rng.integers(9, 300))
    if r < 0.95:
        return int(rng.integers(300, 5000))
    return int(rng.integers(5000, 1 << 18))  # long rows: the chunked, threaded path


def other_dim(rng, room):
    r = rng.random()
    if r < 0.04:
        s = 0
    elif r < 0.2:
        s = 1
    elif r < 0.75:
        s = int(rng.integers(2, 8))
    elif r < 0.95:
        s = int(rng.integers(8, 200))
    else:
        s = int(rng.integers(200, 5000))  # many short rows
    return min(s, room)


def nd_shape(rng, max_elems=1 << 19, max_ndim=4):
    """(shape, axis): the axis has a row length, the other dims multiply to
    at most max_elems / length (at least 1 each unless drawn 0)."""
    ndim = int(rng.integers(1, max_ndim + 1))
    axis = int(rng.integers(ndim))
    n = row_length(rng)
    room = max(1, max_elems // max(n, 1))
    shape = []
    for d in range(ndim):
        if d == axis:
            shape.append(n)
            continue
        s = other_dim(rng, room)
        room = max(1, room // max(s, 1))
        shape.append(s)
    return shape, axis


def _family(rng, size, kind):
    fam = rng.choice(["normal", "normal", "ties", "huge", "tiny", "spike", "wide", "constant"])
    if fam == "normal":
        v = rng.standard_normal(size) * 10 ** rng.uniform(-3, 3.5)
    elif fam == "ties":
        v = rng.integers(-3, 4, size).astype(np.float64) * float(rng.choice([1, 0.5, 100]))
    elif fam == "huge":
        v = rng.uniform(-1, 1, size) * HUGE[kind]
    elif fam == "tiny":
        v = rng.uniform(-1, 1, size) * SUBNORMAL[kind]
    elif fam == "spike":
        v = rng.standard_normal(size)
        if size:
            v[rng.integers(0, size, max(1, size // 1000))] += rng.uniform(20, 2000)
    elif fam == "wide":
        lo = np.log10(SUBNORMAL[kind])
        v = np.sign(rng.standard_normal(size)) * 10 ** rng.uniform(lo, np.log10(HUGE[kind]), size)
    else:
        v = np.full(size, rng.standard_normal() * 10 ** rng.uniform(-3, 3))
    return fam, v


def rows_of_values(rng, rows, n, kind):
    """(rows, n) float64 values representable in `kind` up to its rounding,
    and the name of the family drawn (for the case's description)."""
    fam, v = _family(rng, rows * n, kind)
    x = v.reshape(rows, n)
    if rows * n and rng.random() < 0.4:  # scattered special values
        for val in (np.nan, np.inf, -np.inf):
            if rng.random() < (0.5 if val == -np.inf else 0.25):
                p = 10 ** rng.uniform(-4, -0.2)
                x[rng.random(x.shape) < p] = val
        fam += "+specials"
    if rows and n and rng.random() < 0.3:  # whole special rows
        for r in rng.integers(0, rows, int(rng.integers(1, 4))):
            w = rng.choice(["-inf", "masked1", "+inf", "nan", "+inf-inf"])
            if w == "-inf":
                x[r] = -np.inf
            elif w == "masked1":  # one survivor in a masked row
                x[r] = -np.inf
                x[r, rng.integers(n)] = rng.standard_normal()
            elif w == "+inf":
                x[r, rng.random(n) < 0.5] = np.inf
            elif w == "nan":
                x[r, rng.integers(n)] = np.nan
            else:
                x[r] = np.where(rng.random(n) < 0.5, np.inf, -np.inf)
        fam += "+rows"
    return fam, x


def to_bf16_bits(a):
    """float32 -> bfloat16 bit patterns, round to nearest even (NaN kept NaN)."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), r).astype(np.uint16)


def from_bf16_bits(h):
    return (np.asarray(h, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def temperature(rng):
    r = rng.random()
    if r < 0.45:
        return 1.0
    if r < 0.70:
        return float(10 ** rng.uniform(-2, 2))
    if r < 0.80:
        return float(10 ** rng.uniform(-38, -2))  # tiny
    if r < 0.88:
        return float(10 ** rng.uniform(2, 38))  # huge
    if r < 0.92:
        return float(10 ** rng.uniform(38, 307))  # beyond the float range
    if r < 0.96:
        return float(10 ** rng.uniform(-307, -38))
    return float(rng.choice([5e-324, 1e-310, 2.2250738585072014e-308, 1.7e308, 2.0 ** -100, 2.0 ** 100]))


def threads(rng):
    return int(rng.integers(0, 6))


def algo(rng):
    return str(rng.choice(ALGOS))
