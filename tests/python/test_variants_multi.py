"""smx.multimax and multimax_backward against float64 references written in
NumPy, finite differences of the VJP (input and parameters) in float64,
special values, threads; smx.torch.multimax gradcheck in float64 (input,
ranges and scales). Run by ctest as python_test_variants_multi."""
import unittest

import numpy as np

import smx

try:
    import torch
except ImportError:
    torch = None

R = np.array([0.3, -0.2, 1.0, 0.5])
T = np.array([0.7, 1.3, -0.4, 0.9])


def modulate(x, r, t):
    relu = lambda v: np.maximum(v, 0.0)  # noqa: E731
    return x + t[0] * relu(r[0] - x) + t[1] * relu(x - r[1]) + t[2] * relu(r[2] - x) ** 2 + t[3] * relu(x - r[3]) ** 2


def ref(x, r, t, temp=1.0):
    s = modulate(x, r, t) / temp
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class MultiMax(unittest.TestCase):
    def test_forward(self):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((7, 50)) * 2
        for dt, tol in ((np.float64, 1e-14), (np.float32, 2e-6)):
            for temp in (1.0, 0.3):
                y = smx.multimax(x.astype(dt), R, T, temperature=temp)
                self.assertEqual(y.dtype, dt)
                np.testing.assert_allclose(y, ref(x.astype(dt).astype(np.float64), R, T, temp), rtol=tol, atol=tol)
        np.testing.assert_allclose(smx.multimax(x), smx.softmax(x), rtol=1e-15)   # zero parameters: softmax
        np.testing.assert_allclose(smx.multimax(x.T, R, T, axis=0).T, smx.multimax(x, R, T), rtol=1e-15)

    def test_vjp_finite_differences(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((3, 6)) * 1.5
        dy = rng.standard_normal((3, 6))
        y = smx.multimax(x, R, T, temperature=0.8)
        dx, dr, dts = smx.multimax_backward(x, y, dy, R, T, temperature=0.8, params_grad=True)
        f = lambda xx, rr, tt: np.sum(ref(xx, rr, tt, 0.8) * dy)  # noqa: E731
        h = 1e-6
        for i in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[i] += h
            xm[i] -= h
            self.assertAlmostEqual(dx[i], (f(xp, R, T) - f(xm, R, T)) / (2 * h), delta=1e-7)
        for k in range(4):
            e = np.zeros(4)
            e[k] = h
            self.assertAlmostEqual(dr[k], (f(x, R + e, T) - f(x, R - e, T)) / (2 * h), delta=1e-7)
            self.assertAlmostEqual(dts[k], (f(x, R, T + e) - f(x, R, T - e)) / (2 * h), delta=1e-7)

    def test_special_and_threads(self):
        x = np.array([[-np.inf, 0.0, 1.0], [-np.inf] * 3, [np.inf, 2.0, np.inf], [np.nan, 0.0, 0.0]])
        y = smx.multimax(x, R, T)
        self.assertEqual(y[0, 0], 0.0)
        np.testing.assert_array_equal(y[1], 0.0)
        np.testing.assert_array_equal(y[2], [0.5, 0.0, 0.5])
        self.assertTrue(np.all(np.isnan(y[3])))
        self.assertTrue(np.all(np.isnan(smx.multimax(x, R, T, masked_row="nan")[1])))
        rng = np.random.default_rng(2)
        x = rng.standard_normal((300, 257)).astype(np.float32)
        np.testing.assert_array_equal(smx.multimax(x, R, T, threads=1), smx.multimax(x, R, T, threads=3))
        with self.assertRaises(ValueError):
            smx.multimax(x, [0, 0, 0])
        with self.assertRaises(ValueError):
            smx.multimax(x, [0, 0, 0, np.inf])


@unittest.skipIf(torch is None, "torch is not installed")
class TorchMultiMax(unittest.TestCase):
    def test_gradcheck_f64(self):
        import smx.torch as st
        g = torch.Generator().manual_seed(0)
        x = torch.randn(3, 4, 5, generator=g, dtype=torch.float64, requires_grad=True)
        r = torch.tensor(R, requires_grad=True)
        t = torch.tensor(T, requires_grad=True)
        for dim in (-1, 1, 0):
            self.assertTrue(torch.autograd.gradcheck(lambda a, b, c: st.multimax(a, b, c, dim=dim, temperature=0.9),
                                                     (x, r, t), eps=1e-6, atol=1e-7, rtol=1e-5))


if __name__ == "__main__":
    unittest.main()
