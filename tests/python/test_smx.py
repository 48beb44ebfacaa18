"""Tests of the Python module smx against scipy.special and torch.

Run from ctest (PYTHONPATH=build/python), or by hand:
  PYTHONPATH=build/python /usr/bin/python3 -m unittest -v tests/python/test_smx.py

Values are checked against the bounds of include/smx/smx.h, with the reference
computed by scipy.special in float64 (float16/float32 inputs) or in long
double (float64 inputs). Where smx deliberately differs from scipy and torch
(rows of all -inf, +inf entries) the test says so and asserts both sides.
"""
import os
import re
import subprocess
import sys
import threading
import time
import unittest
import warnings

import numpy as np
import scipy.special as ss

import smx
from gil_probe import stamps_inside

try:
    import torch
except ImportError:  # the torch comparisons are skipped, nothing else
    torch = None

DTYPES = (np.float16, np.float32, np.float64)
OPS = ("softmax", "log_softmax", "logsumexp")
EPS32 = 2.0 ** -23
EPS64 = 2.0 ** -52
FLT_MIN = float(np.finfo(np.float32).tiny)
DBL_MIN = float(np.finfo(np.float64).tiny)
RNG = np.random.default_rng(20261202)


def randn(shape, dtype, scale=3.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def reference(op, x, axis=-1, temperature=1.0):
    """(ref, t): the exact result in float64 (long double for float64 data) and
    t = (x - max) / T along the axis, which enters the softmax bound."""
    if x.dtype == np.float64:
        z = x.astype(np.longdouble) / np.longdouble(temperature)
        m = np.max(z, axis=axis, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)  # rows of all -inf or +inf: no shift
        e = np.exp(z - m)
        s = np.sum(e, axis=axis, keepdims=True)
        lse = np.log(s) + m
        ref = {"softmax": e / s, "log_softmax": z - lse, "logsumexp": np.squeeze(lse, axis=axis)}[op]
        return ref, (z - m)
    z = x.astype(np.float64) / temperature
    ref = {"softmax": ss.softmax, "log_softmax": ss.log_softmax, "logsumexp": ss.logsumexp}[op](z, axis=axis)
    m = np.max(z, axis=axis, keepdims=True, initial=-np.inf)
    return ref, z - np.where(np.isfinite(m), m, 0)


def bound(op, dtype, ref, t):
    """Largest allowed |y - ref|, from the accuracy contract in smx.h: the f32
    bound, plus one rounding to the storage type for float16 (u = 2^-11 for
    normal outputs, half the smallest subnormal below); for float64 the f64
    contract (the same shape with eps = 2^-52 and DBL_MIN)."""
    f64 = dtype == np.float64
    ref = np.abs(ref).astype(np.longdouble if f64 else np.float64)
    eps, c, tiny = (EPS64, 4, DBL_MIN) if f64 else (EPS32, 4, FLT_MIN)
    if op == "softmax":
        b = (c + np.abs(np.asarray(t, dtype=ref.dtype)) / 2) * eps * ref
        b = np.where(ref >= tiny, b, tiny)  # subnormal outputs: only in [0, tiny)
    else:
        b = c * eps * np.maximum(1.0, ref)
    if dtype == np.float16:
        b = b + np.where(ref >= 2.0 ** -14, 2.0 ** -11 * ref, 2.0 ** -25)
    return b


class Case(unittest.TestCase):
    def assert_within(self, op, y, x, axis=-1, temperature=1.0):
        ref, t = reference(op, x, axis, temperature)
        ref = np.asarray(ref)
        y = np.asarray(y)
        self.assertEqual(y.shape, ref.shape)
        with np.errstate(invalid="ignore"):
            err = np.where(y == ref, 0, np.abs(y.astype(np.longdouble) - ref))  # equal infinities: exact
            b = bound(op, x.dtype.type, ref, t)
        # beyond the range of the dtype the correctly rounded result is an infinity
        with np.errstate(invalid="ignore"):
            big = np.abs(ref) > float(np.finfo(x.dtype).max)
            err = np.where(big & (y == np.sign(ref) * np.inf), 0, err)
        bad = ~(err <= b)
        if bad.any():
            i = np.argwhere(bad)[0]
            self.fail("%s %s axis=%d T=%g: |y - ref| = %g > bound %g at %s (y=%r ref=%r)" %
                      (op, x.dtype, axis, temperature, err[tuple(i)], b[tuple(i)], tuple(i),
                       y[tuple(i)], ref[tuple(i)]))


class TestValues(Case):
    """smx within its bounds of scipy.special on the same arrays."""

    def test_shapes_and_axes(self):
        shapes = [(7,), (1,), (3, 4), (3, 4, 5), (2, 3, 1, 6), (1, 1000)]
        for dtype in DTYPES:
            for shape in shapes:
                x = randn(shape, dtype)
                for axis in range(-len(shape), len(shape)):
                    for op in OPS:
                        with self.subTest(dtype=dtype, shape=shape, axis=axis, op=op):
                            y = getattr(smx, op)(x, axis=axis)
                            self.assertEqual(y.dtype, dtype)
                            self.assert_within(op, y, x, axis)

    def test_axis_none_is_all_elements(self):
        # as scipy's axis=None: one row of every element, in any layout
        for dtype in DTYPES:
            base = randn((3, 4, 5), dtype)
            for v in (base, np.asfortranarray(base), base.transpose(2, 0, 1), base[:, ::2, ::-1],
                      np.asarray(base[0, 0, 0])):
                for op in OPS:
                    with self.subTest(dtype=dtype, shape=v.shape, op=op):
                        y = getattr(smx, op)(v, axis=None)
                        self.assert_within(op, np.ravel(y) if op != "logsumexp" else y,
                                           v.reshape(-1), 0)
                        self.assertEqual(np.shape(y), v.shape if op != "logsumexp" else ())
                        if op != "logsumexp":
                            # the row is v in memory order (sums in another order may
                            # round differently), and y[i] belongs to v[i]
                            np.testing.assert_array_equal(
                                y.ravel(order="K"), getattr(smx, op)(v.ravel(order="K")))
                            self.assertEqual(y.shape, v.shape)
        x = randn((3, 4), np.float32)
        self.assertEqual(smx.logsumexp(x, axis=None, keepdims=True).shape, (1, 1))
        out = np.empty_like(x)
        self.assertIs(smx.softmax(x, axis=None, out=out), out)
        np.testing.assert_array_equal(out, smx.softmax(x, axis=None))
        expect = smx.log_softmax(x, axis=None)
        self.assertIs(smx.log_softmax(x, axis=None, out=x), x)  # in place (through a fresh result)
        np.testing.assert_array_equal(x, expect)
        o = np.empty((), np.float32)
        self.assertIs(smx.logsumexp(out, axis=None, out=o), o)

    def test_default_axis_is_last(self):
        x = randn((4, 9), np.float32)
        np.testing.assert_array_equal(smx.softmax(x), smx.softmax(x, axis=1))

    def test_views_strides_and_orders(self):
        for dtype in DTYPES:
            base = randn((6, 10, 12), dtype)
            views = {
                "fortran": np.asfortranarray(base),
                "transposed": base.transpose(2, 0, 1),
                "sliced": base[::2, 1::3, ::-1],
                "negative": base[::-1, ::-1, ::-1],
                "broadcast": np.broadcast_to(base[:1], base.shape),
                "column": base[:, :, 5],
            }
            for name, v in views.items():
                for axis in range(v.ndim):
                    for op in OPS:
                        with self.subTest(dtype=dtype, view=name, axis=axis, op=op):
                            self.assert_within(op, getattr(smx, op)(v, axis=axis), v, axis)

    def test_random_layouts(self):
        # random shapes, slices (negative and non-unit steps), orders, axes, threads and strided out=
        rng = np.random.default_rng(7)
        for _ in range(150):
            nd = int(rng.integers(1, 5))
            shape = tuple(int(v) for v in rng.integers(1, 7, nd))
            dtype = DTYPES[int(rng.integers(0, 3))]
            base = (rng.standard_normal([d * 2 + 1 for d in shape]) * 3).astype(dtype)
            steps = tuple(slice(None, None, int(rng.choice([1, 2, -1, -2]))) for _ in shape)
            v = base[steps][tuple(slice(0, d) for d in shape)]
            if rng.random() < 0.3:
                v = np.asfortranarray(v)
            if rng.random() < 0.3:
                v = v.transpose(rng.permutation(nd))
            axis = int(rng.integers(-nd, nd))
            op = OPS[int(rng.integers(0, 3))]
            threads = int(rng.integers(1, 4))
            with self.subTest(shape=v.shape, strides=v.strides, dtype=dtype, axis=axis, op=op, threads=threads):
                if op != "logsumexp" and rng.random() < 0.3:
                    outbase = np.zeros([d * 2 + 1 for d in v.shape], dtype)
                    where = tuple(slice(0, 2 * d, 2) for d in v.shape)
                    out = outbase[where]
                    self.assertIs(getattr(smx, op)(v, axis=axis, threads=threads, out=out), out)
                    untouched = np.ones(outbase.shape, bool)
                    untouched[where] = False
                    self.assertTrue((outbase[untouched] == 0).all())  # nothing written between
                    y = out
                else:
                    y = getattr(smx, op)(v, axis=axis, threads=threads)
                self.assert_within(op, y, v, axis)

    def test_result_keeps_memory_order(self):
        x = np.asfortranarray(randn((5, 7), np.float32))
        self.assertTrue(smx.softmax(x, axis=1).flags.f_contiguous)
        self.assertTrue(smx.softmax(x.T).flags.c_contiguous)

    def test_unaligned_and_byteswapped_inputs(self):
        x = randn((4, 33), np.float32)
        raw = np.zeros(x.nbytes + 1, np.uint8)
        un = raw[1:].view(np.float32).reshape(x.shape)
        un[...] = x
        self.assertFalse(un.flags.aligned)
        np.testing.assert_array_equal(smx.softmax(un), smx.softmax(x))
        for dtype in DTYPES:
            xs = randn((3, 17), dtype)
            sw = xs.astype(xs.dtype.newbyteorder(">"))
            y = smx.log_softmax(sw)
            self.assertTrue(y.dtype.isnative)
            np.testing.assert_array_equal(y, smx.log_softmax(xs))

    def test_lists_are_float64(self):
        y = smx.softmax([[1.0, 2.0, 3.0]])
        self.assertEqual(y.dtype, np.float64)
        self.assert_within("softmax", y, np.array([[1.0, 2.0, 3.0]]))

    def test_integers_are_float64(self):
        # as scipy.special: integer arrays and lists of ints are read as float64
        # (scipy gives float16 / float32 for 8- and 16-bit integers, through
        # np.exp's promotion, and overflows; smx gives float64 for every width)
        xs = [[1, 2, 3], [[-4, 0, 7], [2, 2, 2]]]
        xs += [np.array([[3, -1, 4], [1, 5, 9]], dtype=t) for t in (np.int8, np.int16, np.int32, np.int64)]
        xs += [np.array([[3, 1, 4], [1, 5, 9]], dtype=t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
        xs.append(np.arange(12, dtype=np.int32).reshape(3, 4).T)  # a transposed view
        for x in xs:
            ref = np.asarray(x, dtype=np.float64)
            for op in OPS:
                for axis in (0, -1, None):
                    with self.subTest(x=x, op=op, axis=axis):
                        y = getattr(smx, op)(x, axis=axis)
                        self.assertEqual(np.asarray(y).dtype, np.float64)
                        self.assert_within(op, y, ref, axis=axis)
                        np.testing.assert_array_equal(y, getattr(smx, op)(ref, axis=axis))
        out = np.zeros((2, 3))
        self.assertIs(smx.softmax(np.ones((2, 3), np.int32), out=out), out)
        np.testing.assert_array_equal(out, 1 / 3)

    def test_scalars_as_scipy(self):
        # a 0-d input is one row of one element: softmax 1, log_softmax 0,
        # logsumexp the value, as NumPy scalars of the input's dtype (scipy.special)
        for x, dtype in ((3.0, np.float64), (-7, np.float64), (np.float32(2.5), np.float32),
                         (np.float16(-1.0), np.float16), (np.array(4.0), np.float64), (np.int32(5), np.float64)):
            for axis in (-1, 0, None):
                for op in OPS:
                    with self.subTest(x=x, op=op, axis=axis):
                        y = getattr(smx, op)(x, axis=axis)
                        ref = getattr(ss, op)(x, axis=axis)
                        self.assertIsInstance(y, np.generic)
                        self.assertEqual(y.dtype, dtype)
                        self.assertEqual(y, ref)
                        self.assertEqual(y, {"softmax": 1.0, "log_softmax": 0.0}.get(op, float(x)))
        self.assertEqual(smx.softmax(3.0, temperature=0.5), 1.0)
        self.assertEqual(smx.logsumexp(3.0, keepdims=True), 3.0)
        self.assertEqual(smx.softmax(float("-inf")), 0.0)  # masked_row="zero": an all -inf row
        self.assertTrue(np.isnan(smx.softmax(float("-inf"), masked_row="nan")))
        self.assertTrue(np.isnan(smx.logsumexp(float("nan"))))
        out = np.zeros(())
        self.assertIs(smx.log_softmax(3.0, out=out), out)
        self.assertEqual(out, 0.0)

    def test_empty(self):
        for dtype in DTYPES:
            for shape, axis in (((0,), 0), ((0, 5), 1), ((0, 5), 0), ((4, 0), 1), ((4, 0), 0)):
                x = np.zeros(shape, dtype)
                with self.subTest(dtype=dtype, shape=shape, axis=axis):
                    self.assertEqual(smx.softmax(x, axis=axis).shape, shape)
                    self.assertEqual(smx.log_softmax(x, axis=axis).dtype, dtype)
                    lse = smx.logsumexp(x, axis=axis)
                    # An empty axis: log(empty sum) = -inf for each reduced
                    # element, like np.logaddexp.reduce (scipy raises instead).
                    self.assertEqual(lse.dtype, dtype)
                    np.testing.assert_array_equal(lse, np.logaddexp.reduce(x, axis=axis))

    def test_empty_axis_costs_nothing(self):
        # An empty axis: softmax / log-softmax have nothing to compute, whatever
        # the number of (empty) rows, and allocate nothing; logsumexp is -inf
        # per row, O(output). Run in a child so that a slow walk fails by timeout.
        code = (
            "import numpy as np, smx\n"
            "for dt in (np.float16, np.float32, np.float64):\n"
            "    for shape in ((2**40, 0), (2**20, 2**20, 0), (0, 2**40)):\n"
            "        x = np.zeros(shape, dt)\n"
            "        for f in (smx.softmax, smx.log_softmax):\n"
            "            for axis in (-1, 0):\n"
            "                assert f(x, axis=axis).shape == shape\n"
            "    x = np.zeros((2**24, 0), dt)\n"
            "    l = smx.logsumexp(x)\n"
            "    assert l.shape == (2**24,) and l.dtype == dt and np.all(l == -np.inf)\n"
            "    assert smx.logsumexp(x, keepdims=True).shape == (2**24, 1)\n"
            "    assert smx.logsumexp(np.zeros((2**12, 2**12, 0), dt), axis=-1).shape == (2**12, 2**12)\n"
        )
        start = time.monotonic()
        # (under ASan the 2^24 -inf outputs alone take tens of seconds on a loaded machine: only the
        # timeout, which a walk over the empty rows would still hit, holds there)
        asan = "asan" in os.environ.get("LD_PRELOAD", "") or "ASAN_OPTIONS" in os.environ
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120 if asan else 60)
        self.assertLess(time.monotonic() - start, 120.0 if asan else 20.0)

    def test_temperatures(self):
        for dtype in DTYPES:
            x = randn((5, 300), dtype)
            for T in (0.05, 0.5, 1.0, 2.5, 100.0):
                for op in OPS:
                    with self.subTest(dtype=dtype, T=T, op=op):
                        self.assert_within(op, getattr(smx, op)(x, temperature=T), x, -1, T)
        # an int temperature is a number like any other
        x = randn((2, 8), np.float32)
        np.testing.assert_array_equal(smx.softmax(x, temperature=2), smx.softmax(x, temperature=2.0))

    def test_subnormal_and_tiny_temperatures(self):
        # Any positive finite T is accepted; below the float range of 1/T the
        # result is the T -> 0 limit, the same for every dtype: the f64 answer
        # rounded (softmax 1/k on the k maxima, log-softmax -log k there and
        # -inf elsewhere, logsumexp max/T + log k, +-inf beyond the range).
        rows = np.array([[1, 3, 3, -2, -np.inf, 2.75], [0, -1, 0, -5, -0.5, -2], [-7, -9, -8, -7.5, -10, -11]])
        for T in (5e-324, 1e-310, 8e-309, 1e-308, 2.2250738585072014e-308, 1e-300, 1e-100, 1e-40):
            for dtype in DTYPES:
                x = rows.astype(dtype)
                with self.subTest(T=T, dtype=dtype):
                    sm = smx.softmax(x, temperature=T)
                    np.testing.assert_array_equal(sm, np.array([[0, .5, .5, 0, 0, 0], [.5, 0, .5, 0, 0, 0],
                                                                [1, 0, 0, 0, 0, 0]], dtype))
                    ref_ls = smx.log_softmax(rows, temperature=T).astype(dtype)
                    ref_lse = smx.logsumexp(rows, temperature=T).astype(dtype)
                    np.testing.assert_allclose(smx.log_softmax(x, temperature=T), ref_ls, rtol=1e-3)
                    np.testing.assert_allclose(smx.logsumexp(x, temperature=T), ref_lse, rtol=1e-6)
                    self.assertFalse(np.isnan(smx.log_softmax(x, temperature=T)).any())

    def test_algorithms(self):
        for dtype in DTYPES:
            x = randn((6, 2000), dtype, scale=10)
            for algo in ("auto", "three-pass", "two-pass", "online"):
                for op in OPS:
                    with self.subTest(dtype=dtype, algo=algo, op=op):
                        self.assert_within(op, getattr(smx, op)(x, algo=algo), x)

    def test_threads_give_identical_results(self):
        for dtype in DTYPES:
            x = randn((64, 3000), dtype)
            for op in OPS:
                one = getattr(smx, op)(x, threads=1)
                for threads in (0, 2, 3, 8):
                    with self.subTest(dtype=dtype, op=op, threads=threads):
                        np.testing.assert_array_equal(getattr(smx, op)(x, threads=threads), one)
            # the gathered path: with threads > 1 each thread gathers its own blocks
            for v, axis in ((x.T, 0), (x.reshape(8, 8, 3000).transpose(2, 0, 1), 0), (x[:, ::2], 1)):
                for op in OPS:
                    one = getattr(smx, op)(v, axis=axis)
                    for threads in (2, 3, 100):
                        with self.subTest(dtype=dtype, shape=v.shape, op=op, threads=threads):
                            np.testing.assert_array_equal(getattr(smx, op)(v, axis=axis, threads=threads), one)

    def test_adversarial_rows(self):
        rows = {
            "huge": np.array([3e38, -3e38, 1e38, 2e38]),
            "tiny": np.array([1e-30, -1e-30, 0.0, 1e-38]),
            "spread": np.array([0.0, -80.0, -100.0, -120.0, 10.0]),
            "ties": np.full(50, 7.0),
            "spike": np.r_[np.zeros(999), 60.0],
            "masked": np.array([1.0, -np.inf, 2.0, -np.inf]),
        }
        for dtype in (np.float32, np.float64):
            for name, r in rows.items():
                x = r.astype(dtype)[None, :]
                for op in OPS:
                    with self.subTest(dtype=dtype, row=name, op=op):
                        self.assert_within(op, getattr(smx, op)(x), x)

    def test_long_row(self):
        x = randn((1, 1 << 20), np.float32, scale=5)
        for op in OPS:
            self.assert_within(op, getattr(smx, op)(x), x)

    def test_logsumexp_shapes(self):
        x = randn((3, 4, 5), np.float32)
        self.assertEqual(smx.logsumexp(x, axis=1).shape, (3, 5))
        self.assertEqual(smx.logsumexp(x, axis=1, keepdims=True).shape, (3, 1, 5))
        np.testing.assert_array_equal(smx.logsumexp(x, axis=1, keepdims=True)[:, 0, :], smx.logsumexp(x, axis=1))
        s = smx.logsumexp(x[0, 0])  # 1-D without out=: a scalar, like NumPy reductions
        self.assertIsInstance(s, np.float32)
        self.assertEqual(s, smx.logsumexp(x[0, 0][None, :])[0])
        # log_softmax = x / T - logsumexp(x / T), up to the rounding of each side
        lse = smx.logsumexp(x, axis=2, keepdims=True, temperature=0.7)
        np.testing.assert_allclose(smx.log_softmax(x, temperature=0.7), x / np.float32(0.7) - lse, atol=4e-6)


class TestOut(Case):
    def test_empty_out(self):
        # NumPy gives empty arrays zero strides; with no elements nothing overlaps
        for op, shape, oshape in (("softmax", (0, 3), (0, 3)), ("log_softmax", (3, 0), (3, 0)),
                                  ("logsumexp", (0, 3), (0,))):
            out = np.empty(oshape, np.float32)
            self.assertIs(getattr(smx, op)(np.zeros(shape, np.float32), out=out), out)

    def test_axis_none_on_any_layout(self):
        # a broadcast input (zero strides), Fortran order and a permuted view:
        # the values land where scipy puts them
        base = randn((3, 4, 5), np.float64)
        for x in (np.broadcast_to(np.array([0.0, 1.0, 2.0]), (2, 3)), np.asfortranarray(base),
                  base.transpose(2, 0, 1), base[:, ::-2, 1:]):
            for op in ("softmax", "log_softmax"):
                np.testing.assert_allclose(getattr(smx, op)(x, axis=None), getattr(ss, op)(x, axis=None),
                                           rtol=1e-12, atol=1e-15)

    def test_out_is_filled_and_returned(self):
        for dtype in DTYPES:
            x = randn((4, 6, 5), dtype)
            for op in ("softmax", "log_softmax"):
                for axis in (0, 2):
                    out = np.empty_like(x)
                    r = getattr(smx, op)(x, axis=axis, out=out)
                    self.assertIs(r, out)
                    np.testing.assert_array_equal(out, getattr(smx, op)(x, axis=axis))
            out = np.empty((4, 5), dtype)
            self.assertIs(smx.logsumexp(x, axis=1, out=out), out)
            np.testing.assert_array_equal(out, smx.logsumexp(x, axis=1))
            out0 = np.empty((), dtype)  # a 1-D input's logsumexp into a 0-d out stays an array
            self.assertIs(smx.logsumexp(x[0, 0], out=out0), out0)

    def test_strided_out(self):
        x = randn((5, 8), np.float32)
        big = np.zeros((10, 16), np.float32)
        view = big[::2, ::2]
        smx.softmax(x, out=view)
        np.testing.assert_array_equal(view, smx.softmax(x))
        self.assertTrue((big[1::2] == 0).all() and (big[:, 1::2] == 0).all())  # nothing written between
        col = np.zeros((5, 3), np.float32)
        smx.logsumexp(x, out=col[:, 1])
        np.testing.assert_array_equal(col[:, 1], smx.logsumexp(x))
        self.assertTrue((col[:, [0, 2]] == 0).all())

    def test_in_place(self):
        for dtype in DTYPES:
            for axis in (0, 1):
                x = randn((7, 9), dtype)
                expect = smx.log_softmax(x, axis=axis)
                r = smx.log_softmax(x, axis=axis, out=x)
                self.assertIs(r, x)
                np.testing.assert_array_equal(x, expect)
                xf = np.asfortranarray(randn((7, 9), dtype))
                expect = smx.softmax(xf, axis=axis)
                smx.softmax(xf, axis=axis, out=xf)
                np.testing.assert_array_equal(xf, expect)

    def test_partially_overlapping_out(self):
        # out shares memory with the input but is not the same elements: smx
        # copies the input first, so the result is as if they were distinct.
        buf = randn((6, 20), np.float32)
        x = buf[:, :10].copy()
        buf[:, :10] = x
        expect = smx.softmax(x)
        smx.softmax(buf[:, :10], out=buf[:, 5:15])
        np.testing.assert_array_equal(buf[:, 5:15], expect)
        b = randn((30,), np.float32)
        x = b[:20].copy()
        smx.softmax(b[:20], out=b[10:30])
        np.testing.assert_array_equal(b[10:30], smx.softmax(x))


class TestCopies(unittest.TestCase):
    """smx copies an input only when it must: NumPy reports its allocations
    to tracemalloc, so a copy of an 8 MB input would show in the peak (the
    gathered path's bounded scratch buffer is C memory, at most a few MB)."""

    def peak(self, fn):
        import tracemalloc
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def test_no_copies(self):
        x = randn((512, 4096), np.float32)
        y = np.empty_like(x)
        xf = np.asfortranarray(x)
        yf = np.empty_like(xf)
        for name, fn in (("axis -1", lambda: smx.softmax(x, out=y)),
                         ("axis 0", lambda: smx.log_softmax(x, axis=0, out=y)),
                         ("fortran", lambda: smx.softmax(xf, out=yf)),
                         ("in place", lambda: smx.softmax(y, out=y)),
                         ("view", lambda: smx.softmax(x[::2, ::3], out=y[::2, ::3])),
                         ("logsumexp axis 0", lambda: smx.logsumexp(x, axis=0))):
            with self.subTest(name):
                self.assertLess(self.peak(fn), 1 << 20)
        # a byte-swapped input is the case that needs one
        xs = x.astype(">f4")
        self.assertGreater(self.peak(lambda: smx.softmax(xs, out=y)), x.nbytes)


class TestSpecialValues(Case):
    """The written policy of smx.h; where scipy and torch differ, both are asserted."""

    def setUp(self):
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's NaN paths warn

    def tearDown(self):
        warnings.resetwarnings()

    def test_all_minus_inf_row(self):
        for dtype in DTYPES:
            x = np.array([[-np.inf] * 4, [0.0, 1.0, 2.0, 3.0]], dtype)
            # Deliberate difference: smx gives softmax 0, log_softmax -inf,
            # logsumexp -inf by default; scipy gives NaN for the softmaxes.
            np.testing.assert_array_equal(smx.softmax(x)[0], np.zeros(4))
            np.testing.assert_array_equal(smx.log_softmax(x)[0], np.full(4, -np.inf))
            self.assertEqual(smx.logsumexp(x)[0], -np.inf)
            self.assertTrue(np.isnan(ss.softmax(x.astype(np.float64), axis=-1)[0]).all())
            self.assertEqual(ss.logsumexp(x.astype(np.float64), axis=-1)[0], -np.inf)  # scipy agrees here
            # masked_row="nan" gives NaN everywhere in the row, like torch
            self.assertTrue(np.isnan(smx.softmax(x, masked_row="nan")[0]).all())
            self.assertTrue(np.isnan(smx.log_softmax(x, masked_row="nan")[0]).all())
            self.assertTrue(np.isnan(smx.logsumexp(x, masked_row="nan")[0]))
            # the other row is untouched by the flag
            np.testing.assert_array_equal(smx.softmax(x, masked_row="nan")[1], smx.softmax(x)[1])

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_masked_row_nan_matches_torch(self):
        x = np.array([[-np.inf] * 3, [1.0, -np.inf, 2.0]], np.float32)
        t = torch.from_numpy(x)
        # NaN in the same places; the finite values agree up to rounding
        np.testing.assert_allclose(smx.softmax(x, masked_row="nan"), torch.softmax(t, -1).numpy(), rtol=1e-6)
        np.testing.assert_allclose(smx.log_softmax(x, masked_row="nan"), torch.log_softmax(t, -1).numpy(),
                                   rtol=1e-6)
        # torch's logsumexp of an all -inf row is -inf: smx's default agrees
        np.testing.assert_array_equal(smx.logsumexp(x)[0], torch.logsumexp(t, -1).numpy()[0])

    def test_plus_inf_entries(self):
        for dtype in DTYPES:
            x = np.array([[np.inf, 1.0, np.inf, -np.inf], [np.inf, 0.0, 0.0, 0.0]], dtype)
            # Deliberate difference: smx gives the limit (1/k on the k entries
            # equal to +inf); scipy (and torch) give NaN.
            np.testing.assert_array_equal(smx.softmax(x), [[0.5, 0, 0.5, 0], [1, 0, 0, 0]])
            ls = smx.log_softmax(x)
            np.testing.assert_array_equal(ls[1], [0, -np.inf, -np.inf, -np.inf])
            np.testing.assert_allclose(ls[0, [0, 2]], -np.log(2), rtol=1e-3 if dtype == np.float16 else 1e-6)
            self.assertTrue((ls[0, [1, 3]] == -np.inf).all())
            np.testing.assert_array_equal(smx.logsumexp(x), [np.inf, np.inf])
            self.assertTrue(np.isnan(ss.softmax(x.astype(np.float64), axis=-1)).all())
            if torch is not None and dtype != np.float16:
                self.assertTrue(torch.softmax(torch.from_numpy(x), -1).isnan().all())

    def test_nan_poisons_its_row_only(self):
        for dtype in DTYPES:
            x = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], dtype)
            for op in OPS:
                y = getattr(smx, op)(x)
                ref = getattr(ss, op)(x.astype(np.float64), axis=-1)
                self.assertTrue(np.isnan(y[0]).all())  # as scipy
                self.assertTrue(np.isnan(ref[0]).all())
                self.assertFalse(np.isnan(y[1]).any())

    def test_minus_inf_entries_are_absent(self):
        for dtype in DTYPES:
            x = np.array([[1.0, -np.inf, 2.0]], dtype)
            np.testing.assert_array_equal(smx.softmax(x)[0, 1], 0.0)
            np.testing.assert_array_equal(smx.softmax(x)[:, [0, 2]], smx.softmax(x[:, [0, 2]]))
            self.assert_within("softmax", smx.softmax(x), x)


@unittest.skipIf(torch is None, "torch is not installed (python3-torch)")
class TestTorch(unittest.TestCase):
    """torch.softmax / log_softmax / logsumexp on the same arrays. Debian's
    torch 1.13 CPU kernels deviate up to about 1.5e-5 (relative) from the exact
    float32 result, so these tolerances are torch's, not smx's (smx is held to
    its own bounds against scipy above). torch has no float16 softmax on CPU."""

    def setUp(self):
        torch.set_num_threads(1)

    def check(self, x, dim, rtol, atol):
        t = torch.from_numpy(x)
        np.testing.assert_allclose(smx.softmax(x, axis=dim), torch.softmax(t, dim).numpy(), rtol=rtol, atol=atol)
        np.testing.assert_allclose(smx.log_softmax(x, axis=dim), torch.log_softmax(t, dim).numpy(),
                                   rtol=rtol, atol=atol * 100)
        np.testing.assert_allclose(smx.logsumexp(x, axis=dim), torch.logsumexp(t, dim).numpy(),
                                   rtol=rtol, atol=atol * 100)

    def test_float32(self):
        for shape, dim in (((8, 3000), -1), ((8, 3000), 0), ((3, 4, 50), 1), ((1, 32000), -1)):
            with self.subTest(shape=shape, dim=dim):
                self.check(randn(shape, np.float32), dim, rtol=1e-4, atol=1e-9)

    def test_float64(self):
        self.check(randn((8, 3000), np.float64), -1, rtol=1e-12, atol=1e-300)

    def test_views(self):
        x = randn((40, 60), np.float32)[::3, ::-2]
        self.check(np.ascontiguousarray(x), -1, 1e-4, 1e-9)  # torch.from_numpy refuses negative strides
        np.testing.assert_array_equal(smx.softmax(x), smx.softmax(np.ascontiguousarray(x)))

    def test_temperature(self):
        x = randn((4, 500), np.float32)
        np.testing.assert_allclose(smx.softmax(x, temperature=0.3),
                                   torch.softmax(torch.from_numpy(x) / 0.3, -1).numpy(), rtol=1e-4, atol=1e-9)


class TestErrors(unittest.TestCase):
    def assert_raises_msg(self, exc, fragment, fn, *args, **kw):
        with self.assertRaises(exc) as cm:
            fn(*args, **kw)
        self.assertIn(fragment, str(cm.exception))

    def test_dtypes(self):
        for op in OPS:
            f = getattr(smx, op)
            self.assert_raises_msg(TypeError, "bool", f, np.ones(3, bool))
            self.assert_raises_msg(TypeError, "bool", f, [True, False])
            self.assert_raises_msg(TypeError, "complex128", f, np.ones(3, complex))
            self.assert_raises_msg(TypeError, "float128", f, np.ones(3, np.longdouble))
            self.assert_raises_msg(TypeError, "object", f, np.array([1.0, None]))
            self.assert_raises_msg(TypeError, "<U", f, np.array(["a"]))

    def test_axis(self):
        x = np.zeros((2, 3), np.float32)
        self.assert_raises_msg(ValueError, "axis 2 is out of range", smx.softmax, x, axis=2)
        self.assert_raises_msg(ValueError, "axis -3 is out of range", smx.logsumexp, x, axis=-3)
        for bad in (1, -2, 5):
            self.assert_raises_msg(ValueError, "axis %d is out of range for a 0-d input" % bad, smx.softmax,
                                   np.float32(1.0), axis=bad)
        self.assert_raises_msg(TypeError, "axis must be an int or None", smx.logsumexp, 2.0, axis=0.0)
        self.assert_raises_msg(ValueError, "out has shape (1,), expected ()", smx.softmax, 2.0, out=np.zeros(1))
        self.assert_raises_msg(TypeError, "axis must be an int or None", smx.softmax, x, axis=1.0)
        self.assert_raises_msg(TypeError, "axis must be an int", smx.softmax, x, axis=(0, 1))
        self.assert_raises_msg(TypeError, "axis must be an int", smx.softmax, x, axis=True)
        self.assertEqual(smx.softmax(x, axis=np.int64(0)).shape, (2, 3))

    def test_temperature(self):
        x = np.zeros((2, 3), np.float32)
        for bad in (0.0, -1.0, float("nan"), float("inf"), -float("inf")):
            self.assert_raises_msg(ValueError, "temperature must be positive and finite", smx.softmax, x,
                                   temperature=bad)
        for bad in ("1", None, True, [1.0]):
            self.assert_raises_msg(TypeError, "temperature must be a real number", smx.log_softmax, x,
                                   temperature=bad)

    def test_algo_threads_masked_row(self):
        x = np.zeros((2, 3), np.float32)
        self.assert_raises_msg(ValueError, "algo must be one of", smx.softmax, x, algo="fast")
        self.assert_raises_msg(TypeError, "algo must be a str", smx.softmax, x, algo=1)
        self.assert_raises_msg(ValueError, "masked_row must be one of 'zero', 'nan'", smx.softmax, x,
                               masked_row="inf")
        self.assert_raises_msg(TypeError, "masked_row must be a str", smx.softmax, x, masked_row=None)
        self.assert_raises_msg(ValueError, "threads must be >= 0", smx.softmax, x, threads=-1)
        self.assert_raises_msg(ValueError, "threads must be >= 0", smx.softmax, x, threads=2 ** 40)
        self.assert_raises_msg(TypeError, "threads must be an int", smx.softmax, x, threads=1.5)
        self.assert_raises_msg(TypeError, "threads must be an int", smx.softmax, x, threads=True)

    def test_out(self):
        x = np.zeros((2, 3), np.float32)
        self.assert_raises_msg(TypeError, "out must be a numpy.ndarray", smx.softmax, x, out=[0.0] * 6)
        self.assert_raises_msg(TypeError, "out has dtype float64, expected float32", smx.softmax, x,
                               out=np.zeros((2, 3)))
        self.assert_raises_msg(ValueError, "out has shape (3, 2), expected (2, 3)", smx.softmax, x,
                               out=np.zeros((3, 2), np.float32))
        self.assert_raises_msg(ValueError, "out has shape (2, 3), expected (2,)", smx.logsumexp, x,
                               out=np.zeros((2, 3), np.float32))
        self.assert_raises_msg(ValueError, "expected (2, 1)", smx.logsumexp, x, keepdims=True,
                               out=np.zeros(2, np.float32))
        ro = np.zeros((2, 3), np.float32)
        ro.flags.writeable = False
        self.assert_raises_msg(ValueError, "out is read-only", smx.softmax, x, out=ro)
        sw = np.zeros((2, 3), ">f4")
        self.assert_raises_msg(ValueError, "native byte order", smx.softmax, x.astype(">f4"), out=sw)
        z = np.lib.stride_tricks.as_strided(np.zeros(3, np.float32), (2, 3), (0, 4))
        self.assert_raises_msg(ValueError, "zero stride", smx.softmax, x, out=z)

    def test_nothing_written_on_error(self):
        x = np.ones((2, 3), np.float32)
        out = np.full((2, 3), 7.0, np.float32)
        with self.assertRaises(ValueError):
            smx.softmax(x, out=out, temperature=-1.0)
        np.testing.assert_array_equal(out, 7.0)

    def test_arguments(self):
        x = np.zeros(3, np.float32)
        self.assertRaises(TypeError, smx.softmax)
        self.assertRaises(TypeError, smx.softmax, x, nonsense=1)
        self.assertRaises(TypeError, smx.softmax, x, keepdims=True)  # only logsumexp reduces


class TestModule(unittest.TestCase):
    def test_version_and_isa(self):
        self.assertRegex(smx.__version__, r"^\d+\.\d+\.\d+$")
        # the C library's version (include/smx/smx.h), which pip's metadata also takes
        header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "smx", "smx.h")
        with open(header) as f:
            v = dict(re.findall(r"^#define SMX_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", f.read(), re.M))
        self.assertEqual(smx.__version__, "%s.%s.%s" % (v["MAJOR"], v["MINOR"], v["PATCH"]))
        self.assertIn(smx.isa(), ("scalar", "avx2", "avx512", "avx512bf16"))
        cap = os.environ.get("SMX_MAX_ISA")
        if cap:  # ctest runs the suite once per kernel set; make sure the cap took
            order = ("scalar", "avx2", "avx512", "avx512bf16")
            self.assertLessEqual(order.index(smx.isa()), order.index(cap))

    def test_signatures(self):
        import inspect
        self.assertEqual(list(inspect.signature(smx.logsumexp).parameters),
                         ["a", "axis", "temperature", "out", "algo", "threads", "masked_row", "keepdims"])
        self.assertIn("+inf", smx.softmax.__doc__)

    def test_gil_released_during_compute(self):
        # While one thread is inside a long smx call, another Python thread
        # keeps running: it records times strictly inside the call.
        x = randn((512, 20000), np.float32).T  # the gathered path: the slowest per element
        self.assertGreater(stamps_inside(lambda: smx.softmax(x, axis=0), 3), 3,
                           "no progress of other threads during smx.softmax (GIL held?)")

    def test_concurrent_calls(self):
        xs = [randn((50, 777), np.float32) for _ in range(4)]
        expect = [smx.softmax(x) for x in xs]
        got = [None] * 4

        def work(i):
            for _ in range(20):
                got[i] = smx.softmax(xs[i], threads=2)

        ths = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        for g, e in zip(got, expect):
            np.testing.assert_array_equal(g, e)


if __name__ == "__main__":
    unittest.main()
