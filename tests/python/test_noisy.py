"""smx.noisy_softmax_loss and smx.noisy_softmax_noise (Noisy Softmax, Chen,
Deng and Du 2017): the noise rebuilt here from the documented Philox recipe
(a Philox4x32-10 written in Python), the loss against a float64 NumPy
reference for every mode and reduction, both gradients against central
differences, alpha = 0 against smx.cross_entropy, thread-count invariance,
ignore_index, special values, argument errors; smx.torch.noisy_softmax_loss:
gradcheck in float64 and agreement with the same loss in torch ops. Run by
ctest as python_test_noisy."""
import math
import unittest

import numpy as np

import smx
from numgrad import numgrad

try:
    import torch
except ImportError:
    torch = None

M32 = 0xFFFFFFFF


def philox4x32_10(seed, ctr):
    """Salmon et al. 2011, the constants of the paper"""
    c0, c1, c2, c3 = ctr
    k0, k1 = seed & M32, seed >> 32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def xi_ref(seed, row, step):
    """the recipe of include/smx/smx_noisy.h"""
    seed, row, step = int(seed), int(row), int(step)
    w = philox4x32_10(seed, (0xFFFFFFFF, row & M32, step & M32, step >> 32))
    u1 = ((w[0] | (w[1] & 0x1FFFFF) << 32) + 0.5) * 2.0 ** -53
    u2 = ((w[2] | (w[3] & 0x1FFFFF) << 32) + 0.5) * 2.0 ** -53
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


MODES = ("annealed", "free", "amplitude")


def noisy_ref(x, t, n, alpha, seed, step, mode, red, ign=-100):
    """float64 loss of rows x C logits (per the header's definition)"""
    keep = t != ign
    ts = np.where(keep, t, 0)
    rows = np.arange(len(t))
    xi = np.array([xi_ref(seed, r, step) for r in rows])
    ft = x[rows, ts]
    amp = np.maximum(n - ft, 0) if mode == "annealed" else (np.ones_like(ft) if mode == "free" else n)
    xt = x.copy()
    xt[rows, ts] = ft - alpha * amp * np.abs(xi)
    m = xt.max(1, keepdims=True)
    lse = (m + np.log(np.exp(xt - m).sum(1, keepdims=True)))[:, 0]
    l = (lse - xt[rows, ts]) * keep
    return l.sum() if red == "sum" else l.sum() / keep.sum() if red == "mean" else l


RNG = np.random.default_rng(2017)
X = RNG.standard_normal((6, 9)) * 3
T = RNG.integers(0, 9, 6)
T[2] = -100
N = np.abs(X[np.arange(6), np.where(T >= 0, T, 0)]) + 0.5 + 3 * RNG.random(6)


class Noise(unittest.TestCase):
    def test_recipe(self):
        xi = smx.noisy_softmax_noise(50, seed=123456789012345, step=(1 << 33) + 5)
        want = [xi_ref(123456789012345, r, (1 << 33) + 5) for r in range(50)]
        np.testing.assert_allclose(xi, want, rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(smx.noisy_softmax_noise(10, seed=123456789012345, step=(1 << 33) + 5, row0=40),
                                      xi[40:])

    def test_distinct_and_normal(self):
        a = smx.noisy_softmax_noise(200000, seed=3, step=0)
        b = smx.noisy_softmax_noise(200000, seed=3, step=1)
        self.assertEqual(len(np.unique(a)), len(a))
        self.assertFalse(np.any(a == b))
        for v in (a, b):
            self.assertLess(abs(v.mean()), 0.012)
            self.assertLess(abs(v.var() - 1), 0.016)
            self.assertLess(abs(np.abs(v).mean() - math.sqrt(2 / math.pi)), 0.007)

    def test_errors(self):
        with self.assertRaises(ValueError):
            smx.noisy_softmax_noise(-1)
        with self.assertRaises(ValueError):
            smx.noisy_softmax_noise(3, seed=-1)
        with self.assertRaises(TypeError):
            smx.noisy_softmax_noise(3, step=1.5)


class Loss(unittest.TestCase):
    def test_against_reference_and_differences(self):
        for mode in MODES:
            for red in ("mean", "sum", "none"):
                for dt in (np.float64, np.float32):
                    with self.subTest(mode=mode, red=red, dtype=dt.__name__):
                        xd, nd = X.astype(dt), N.astype(dt)
                        l, g, gn = smx.noisy_softmax_loss(xd, T, nd, alpha=0.3, seed=11, step=4, mode=mode,
                                                          reduction=red, return_grad=True)
                        self.assertEqual(g.dtype, dt)
                        self.assertEqual(gn.dtype, dt)
                        x64, n64 = xd.astype(np.float64), nd.astype(np.float64)

                        def f(x, n):
                            return noisy_ref(x, T, n, 0.3, 11, 4, mode, red)
                        tol = 1e-12 if dt == np.float64 else 2e-5
                        np.testing.assert_allclose(l, f(x64, n64), rtol=tol, atol=tol)
                        gr = numgrad(lambda z: f(z, n64), x64)
                        gnr = numgrad(lambda z: f(x64, z), n64)
                        rt, at = (1e-6, 1e-8) if dt == np.float64 else (1e-4, 1e-5)
                        np.testing.assert_allclose(g, gr, rtol=rt, atol=at)
                        np.testing.assert_allclose(gn, gnr, rtol=rt, atol=at)
                        if mode == "free":
                            np.testing.assert_array_equal(gn, 0)
                        self.assertTrue(np.all(g[2] == 0) and gn[2] == 0)   # ignored row

    def test_alpha_zero_is_cross_entropy(self):
        x = X.astype(np.float32)
        for red in ("mean", "sum", "none"):
            l, g, gn = smx.noisy_softmax_loss(x, T, N, alpha=0.0, reduction=red, return_grad=True)
            lc, gc = smx.cross_entropy(x, T, reduction=red, return_grad=True)
            np.testing.assert_allclose(l, lc, rtol=2e-6, atol=1e-7)
            np.testing.assert_allclose(g, gc, rtol=1e-5, atol=1e-7)
            np.testing.assert_array_equal(gn, 0)

    def test_noise_lowers_the_target(self):
        l0 = smx.noisy_softmax_loss(X, T, N, alpha=0.0, reduction="none")
        l1 = smx.noisy_softmax_loss(X, T, N, alpha=0.1, reduction="none")
        keep = T != -100
        self.assertTrue(np.all(l1[keep] > l0[keep]))
        # the clamp: norms below f_t (rounding) give no noise
        lc = smx.noisy_softmax_loss(X, T, np.zeros(6), alpha=5.0, reduction="none")
        pos = keep & (X[np.arange(6), np.where(keep, T, 0)] >= 0)
        np.testing.assert_allclose(lc[pos], l0[pos], rtol=1e-15)

    def test_threads_and_shapes(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((3, 40, 500)).astype(np.float32)
        t = rng.integers(0, 500, (3, 40))
        n = np.full((3, 40), 20.0, np.float32)
        r1 = smx.noisy_softmax_loss(x, t, n, seed=5, step=9, reduction="none", return_grad=True, threads=1)
        r4 = smx.noisy_softmax_loss(x, t, n, seed=5, step=9, reduction="none", return_grad=True, threads=4)
        for a, b in zip(r1, r4):
            np.testing.assert_array_equal(a, b)
        self.assertEqual(r1[0].shape, (3, 40))
        self.assertEqual(r1[2].shape, (3, 40))
        # rows are the flattened leading axes: the 2-D call is the same
        r2 = smx.noisy_softmax_loss(x.reshape(120, 500), t.reshape(-1), n.reshape(-1), seed=5, step=9,
                                    reduction="none")
        np.testing.assert_array_equal(r2, r1[0].reshape(-1))
        # in pieces with row_offset: the whole call's noise
        x2, t2, n2 = x.reshape(120, 500), t.reshape(-1), n.reshape(-1)
        p = smx.noisy_softmax_loss(x2[50:], t2[50:], n2[50:], seed=5, step=9, row_offset=50, reduction="none",
                                   return_grad=True)
        np.testing.assert_array_equal(p[0], r2[50:])
        np.testing.assert_array_equal(p[1], r1[1].reshape(120, 500)[50:])
        np.testing.assert_array_equal(p[2], r1[2].reshape(-1)[50:])

    def test_special(self):
        x = np.array([[0.0, -np.inf, 1.0], [np.nan, 0, 0], [-np.inf, 0.0, 1.0], [np.inf, 0, 0],
                      [-np.inf, -np.inf, -np.inf]])
        l, g, gn = smx.noisy_softmax_loss(x, np.array([2, 0, 0, 0, 1]), np.full(5, 3.0), reduction="none",
                                          return_grad=True)
        self.assertTrue(np.isfinite(l[0]) and g[0, 1] == 0)
        self.assertTrue(np.isnan(l[1]) and np.all(np.isnan(g[1])) and np.isnan(gn[1]))
        self.assertEqual(l[2], np.inf)
        self.assertTrue(np.all(np.isfinite(g[2])) and np.isfinite(gn[2]))
        self.assertTrue(np.isnan(l[3]) and np.isnan(l[4]))

    def test_errors(self):
        x = X.astype(np.float32)
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, T, N, alpha=-0.1)
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, T, N, alpha=np.inf)
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, T, N[:5])
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, T, None)
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, T, N, mode="gaussian")
        bad = N.copy()
        bad[0] = np.nan
        # the value itself in the message (it printed a literal %g: issue 24 item 10)
        with self.assertRaisesRegex(ValueError, r"norms must be finite and >= 0 \(row 0: nan\)"):
            smx.noisy_softmax_loss(x, T, bad)
        bad[0] = -1
        with self.assertRaisesRegex(ValueError, r"\(row 0: -1.0\)"):
            smx.noisy_softmax_loss(x, T, bad)
        bad = N.copy()
        bad[2] = np.nan   # the ignored row's norm is not read
        smx.noisy_softmax_loss(x, T, bad)
        smx.noisy_softmax_loss(x, T, None, mode="free")
        t = T.copy()
        t[0] = 9
        with self.assertRaises(ValueError):
            smx.noisy_softmax_loss(x, t, N)


@unittest.skipIf(torch is None, "torch is not installed")
class Torch(unittest.TestCase):
    def test_gradcheck(self):
        import smx.torch as st
        x = torch.tensor(X[:, :7], dtype=torch.float64, requires_grad=True)
        t = torch.tensor(np.where(T >= 0, T % 7, -100))
        n = torch.tensor(N + 2, dtype=torch.float64, requires_grad=True)
        for mode in MODES:
            for red in ("mean", "sum", "none"):
                with self.subTest(mode=mode, red=red):
                    self.assertTrue(torch.autograd.gradcheck(
                        lambda a, b: st.noisy_softmax_loss(a, t, b, alpha=0.2, seed=3, step=8, mode=mode,
                                                           reduction=red), (x, n)))

    def test_against_torch_ops(self):
        import smx.torch as st
        x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        n = torch.tensor(N, dtype=torch.float64, requires_grad=True)
        t = torch.tensor(T)
        loss = st.noisy_softmax_loss(x, t, n, alpha=0.1, seed=1, step=2)
        loss.backward()
        xr = x.detach().clone().requires_grad_(True)
        nr = n.detach().clone().requires_grad_(True)
        xi = torch.tensor(smx.noisy_softmax_noise(6, seed=1, step=2)).abs()
        keep = t != -100
        ts = torch.where(keep, t, 0)
        ft = xr.gather(1, ts[:, None])[:, 0]
        fn = ft - 0.1 * torch.clamp(nr - ft, min=0) * xi
        z = xr.scatter(1, ts[:, None], fn[:, None])
        ref = torch.nn.functional.cross_entropy(z, t)
        ref.backward()
        self.assertAlmostEqual(loss.item(), ref.item(), places=12)
        torch.testing.assert_close(x.grad, xr.grad, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(n.grad, nr.grad, rtol=1e-10, atol=1e-12)

    def test_float32_and_class_dim(self):
        import smx.torch as st
        x = torch.randn(4, 5, 3, generator=torch.Generator().manual_seed(0))   # (N, C, d)
        t = torch.randint(0, 5, (4, 3), generator=torch.Generator().manual_seed(1))
        n = torch.full((4, 3), 9.0)
        l = st.noisy_softmax_loss(x, t, n, reduction="none")
        self.assertEqual(l.shape, (4, 3))
        want = smx.noisy_softmax_loss(x.movedim(1, -1).contiguous().numpy(), t.numpy(), n.numpy(), reduction="none")
        np.testing.assert_array_equal(l.numpy(), want)


if __name__ == "__main__":
    unittest.main()
