"""smx's softmax variants from Python, against scipy and exact (mpmath-free)
references: sigmoid. Run by ctest as python_test_variants (and _scalar, _avx2)."""
import unittest

import numpy as np
import scipy.special as sp

import smx


def exact_sigmoid(a, t=1.0):
    """1 / (1 + exp(-a / t)) in long double, where numpy has it (x86: 64-bit significand)."""
    z = np.asarray(a, dtype=np.longdouble) / np.longdouble(t)
    return 1.0 / (1.0 + np.exp(-z))


class Sigmoid(unittest.TestCase):
    def check(self, a, t=1.0):
        y = smx.sigmoid(a, temperature=t)
        self.assertEqual(y.dtype, a.dtype)
        ref = exact_sigmoid(a, t)
        fi = np.finfo(a.dtype)
        # f16: one rounding to storage on top of the f32 bound
        rel = 3 * float(np.finfo(np.float32).eps) + (float(fi.eps) / 2 if a.dtype == np.float16 else 0.0)
        if a.dtype == np.float64:
            rel = 3 * float(fi.eps)
        err = np.abs(y.astype(np.longdouble) - ref)
        normal = ref >= fi.tiny
        self.assertTrue(np.all(err[normal] <= rel * ref[normal]), float(np.max(err[normal] / ref[normal])))
        self.assertTrue(np.all(err[~normal] <= fi.tiny))

    def test_dtypes_temperatures(self):
        rng = np.random.default_rng(1)
        for dt in (np.float16, np.float32, np.float64):
            for scale in (1.0, 30.0, 300.0):
                a = (rng.standard_normal((5, 3001)) * scale).astype(dt)
                for t in (1.0, 0.25, 7.0):
                    with self.subTest(dtype=dt.__name__, scale=scale, t=t):
                        self.check(a, t)

    def test_against_scipy(self):
        a = np.linspace(-40, 40, 10001)
        # both sides within about 2 eps of the exact value
        np.testing.assert_allclose(smx.sigmoid(a), sp.expit(a), rtol=1e-15, atol=0)
        np.testing.assert_allclose(smx.sigmoid(a.astype(np.float32)), sp.expit(a.astype(np.float32)), rtol=4e-7)

    def test_special_values(self):
        for dt in (np.float16, np.float32, np.float64):
            a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dt)
            y = smx.sigmoid(a)
            self.assertTrue(np.isnan(y[0]))
            np.testing.assert_array_equal(y[1:], np.array([1.0, 0.0, 0.5, 0.5], dtype=dt))

    def test_extreme_temperatures(self):
        a = np.array([-1e-300, -1e-310, 0.0, 1e-310, 1e-300, 5.0])
        for t in (1e-308, 5e-324, 1e300, 1.7e308):
            with self.subTest(t=t):
                y = smx.sigmoid(a, temperature=t)
                self.assertFalse(np.any(np.isnan(y)))
                np.testing.assert_allclose(y, np.asarray(exact_sigmoid(a, t), dtype=np.float64), rtol=1e-15)
        f = np.array([-1e-40, 0.0, 1e-40, 3.0], dtype=np.float32)
        y = smx.sigmoid(f, temperature=1e-45)
        np.testing.assert_array_equal(y, np.array([0.0, 0.5, 1.0, 1.0], dtype=np.float32))

    def test_layouts_in_place_threads(self):
        rng = np.random.default_rng(2)
        a = rng.standard_normal((64, 300)) * 10
        ref = smx.sigmoid(a)
        np.testing.assert_array_equal(smx.sigmoid(np.asfortranarray(a)), ref)
        np.testing.assert_array_equal(smx.sigmoid(a.T).T, ref)
        np.testing.assert_array_equal(smx.sigmoid(a[:, ::3]), ref[:, ::3])
        np.testing.assert_array_equal(smx.sigmoid(a, threads=4), ref)
        b = a.copy()
        self.assertIs(smx.sigmoid(b, out=b), b)
        np.testing.assert_array_equal(b, ref)
        np.testing.assert_array_equal(smx.sigmoid(a.reshape(4, 16, 300)), ref.reshape(4, 16, 300))
        self.assertEqual(smx.sigmoid(np.zeros((3, 0))).shape, (3, 0))

    def test_scalars_and_integers(self):
        self.assertAlmostEqual(float(smx.sigmoid(3.0)), float(sp.expit(3.0)), places=15)
        np.testing.assert_allclose(smx.sigmoid([1, 2, 3]), sp.expit(np.array([1.0, 2.0, 3.0])), rtol=4e-16)

    def test_bad_arguments(self):
        for t in (-1.0, 0.0 - 1e-300, float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                smx.sigmoid(np.ones(3), temperature=t)
        with self.assertRaises(TypeError):
            smx.sigmoid(np.ones(3, dtype=bool))
        with self.assertRaises(ValueError):
            smx.sigmoid(np.ones(3), out=np.ones(4))


if __name__ == "__main__":
    unittest.main()
