"""smx's losses on softmax outputs (focal, soft Dice, spherical Z-loss,
InfoNCE / CLIP): NumPy functions against float64 references written in
NumPy (loss and analytic gradient), central finite differences of every
gradient in float64, thread-count invariance, special values, argument
errors; smx.torch wrappers: gradcheck in float64 and agreement with the same
loss written in torch ops. Run by ctest as python_test_variants_loss."""
import unittest

import numpy as np

import smx
from numgrad import numgrad

try:
    import torch
except ImportError:
    torch = None


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def logsumexp(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis, keepdims=True))).squeeze(axis)


def reduce(l, keep, red):
    return l.sum() if red == "sum" else l.sum() / keep.sum() if red == "mean" else l


def focal_ref(x, t, gamma, alpha, red, ign=-100):
    keep = t != ign
    ts = np.where(keep, t, 0)
    lp = np.log(softmax(x))[np.arange(len(t)), ts]
    a = alpha[ts] if alpha is not None else 1.0
    return reduce(-a * (1 - np.exp(lp)) ** gamma * lp * keep, keep, red)


def zloss_ref(x, t, a, b, red, ign=-100):
    keep = t != ign
    ts = np.where(keep, t, 0)
    mu = x.mean(1)
    sd = np.sqrt((x * x).mean(1) - mu * mu)
    z = (x[np.arange(len(t)), ts] - mu) / sd
    return reduce(np.logaddexp(0, a * (b - z)) / a * keep, keep, red)


def nce_ref(s, t, temp, sym, red, ign=-100):
    r = np.arange(s.shape[0]) if t is None else t
    keep = r != ign
    rs = np.where(keep, r, 0)
    L = s / temp
    pos = L[np.arange(len(rs)), rs]
    l = logsumexp(L, 1) - pos
    if sym:
        l = (l + logsumexp(L, 0)[rs] - pos) / 2
    return reduce(l * keep, keep, red)


def dice_ref(x, g, smooth, red):
    P = softmax(x).reshape(-1, x.shape[-1])
    G = g.reshape(-1, x.shape[-1])
    d = (2 * (P * G).sum(0) + smooth) / (P.sum(0) + G.sum(0) + smooth)
    l = 1 - d
    return l.mean() if red == "mean" else l.sum() if red == "sum" else l


RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 9)) * 3
T = RNG.integers(0, 9, 6)
T[2] = -100


class Losses(unittest.TestCase):
    def check(self, mine, ref, x, rtol32=2e-5):
        """mine(x, red) -> (loss, grad); ref(x, red) -> loss (float64 NumPy)."""
        for red in ("mean", "sum", "none"):
            for dt in (np.float64, np.float32):
                with self.subTest(red=red, dtype=dt.__name__):
                    xd = x.astype(dt)
                    l, g = mine(xd, red)
                    self.assertEqual(g.dtype, dt)
                    x64 = xd.astype(np.float64)
                    lr = ref(x64, red)
                    gr = numgrad(lambda z: ref(z, red), x64)
                    tol = 1e-12 if dt == np.float64 else rtol32
                    np.testing.assert_allclose(l, lr, rtol=tol, atol=tol)
                    # finite differences: about 1e-9 absolute in float64
                    np.testing.assert_allclose(g, gr, rtol=1e-6 if dt == np.float64 else 1e-4,
                                               atol=1e-8 if dt == np.float64 else 1e-5)
                    lo = mine(xd, red)[0]
                    np.testing.assert_array_equal(lo, l)   # deterministic

    def test_focal(self):
        alpha = RNG.random(9)
        for gamma in (0.0, 0.5, 2.0):
            for a in (None, alpha):
                self.check(lambda x, red: smx.focal_loss(x, T, gamma=gamma, alpha=a, reduction=red, return_grad=True),
                           lambda x, red: focal_ref(x, T, gamma, a, red), X)

    def test_focal_gamma0_is_cross_entropy(self):
        x = X.astype(np.float32)
        l, g = smx.focal_loss(x, T, gamma=0.0, return_grad=True)
        lc, gc = smx.cross_entropy(x, T, return_grad=True)
        np.testing.assert_allclose(l, lc, rtol=1e-6)
        np.testing.assert_allclose(g, gc, rtol=1e-5, atol=1e-7)

    def test_focal_special(self):
        x = np.array([[0.0, -np.inf, 1.0], [np.nan, 0, 0], [50.0, 0.0, 0.0], [np.inf, 0, 0]])
        l, g = smx.focal_loss(x, np.array([1, 0, 0, 0]), reduction="none", return_grad=True)
        self.assertEqual(l[0], np.inf)
        self.assertTrue(np.all(np.isfinite(g[0])))
        self.assertTrue(np.isnan(l[1]) and np.all(np.isnan(g[1])))
        self.assertTrue(np.isfinite(l[2]) and np.all(np.isfinite(g[2])))   # p_t = 1 - 4e-22
        self.assertTrue(np.isnan(l[3]))

    def test_zloss(self):
        for a, b in ((1.0, 0.0), (0.3, 5.0), (4.0, -1.0)):
            self.check(lambda x, red: smx.spherical_z_loss(x, T, a=a, b=b, reduction=red, return_grad=True),
                       lambda x, red: zloss_ref(x, T, a, b, red), X)

    def test_zloss_invariance_and_special(self):
        x = X[:3].copy()
        t = np.array([0, 1, 2])
        l1 = smx.spherical_z_loss(x, t, a=0.5, b=2.0, reduction="none")
        l2 = smx.spherical_z_loss(x * 3.5 - 7.0, t, a=0.5, b=2.0, reduction="none")
        np.testing.assert_allclose(l1, l2, rtol=1e-12)   # shift and scale invariant (the paper's point)
        l, g = smx.spherical_z_loss(np.ones((1, 4)), np.array([0]), reduction="none", return_grad=True)
        self.assertTrue(np.isnan(l[0]) and np.all(np.isnan(g)))

    def test_info_nce(self):
        s = RNG.standard_normal((7, 7)) * 2
        for temp in (1.0, 0.3):
            for sym in (False, True):
                self.check(lambda x, red: smx.info_nce(x, temperature=temp, symmetric=sym, reduction=red,
                                                       return_grad=True),
                           lambda x, red: nce_ref(x, None, temp, sym, red), s, rtol32=5e-5)
        s = RNG.standard_normal((5, 8))
        t = np.array([3, 0, 7, -100, 2])
        self.check(lambda x, red: smx.info_nce(x, t, temperature=0.5, reduction=red, return_grad=True),
                   lambda x, red: nce_ref(x, t, 0.5, True, red), s)
        with self.assertRaises(ValueError):
            smx.info_nce(s, np.array([3, 3, 1, 2, 0]))   # a column positive twice

    def test_dice(self):
        x = RNG.standard_normal((4, 3, 5))
        t = RNG.integers(0, 5, (4, 3))
        soft = softmax(RNG.standard_normal((4, 3, 5)))
        for smooth in (1.0, 1e-5):
            self.check(lambda z, red: smx.dice_loss(z, t, smooth=smooth, reduction=red, return_grad=True),
                       lambda z, red: dice_ref(z, np.eye(5)[t], smooth, red), x)
            self.check(lambda z, red: smx.dice_loss(z, soft.astype(z.dtype), smooth=smooth, reduction=red,
                                                    return_grad=True),
                       lambda z, red: dice_ref(z, soft, smooth, red), x)

    def test_threads_bitwise(self):
        x = RNG.standard_normal((257, 300)).astype(np.float32)
        t = RNG.integers(0, 300, 257)
        for f in (lambda **k: smx.focal_loss(x, t, return_grad=True, **k),
                  lambda **k: smx.spherical_z_loss(x, t, return_grad=True, **k),
                  lambda **k: smx.dice_loss(x, t, return_grad=True, **k),
                  lambda **k: smx.info_nce(x, temperature=0.1, return_grad=True, **k)):
            a, b = f(threads=1), f(threads=3)
            self.assertEqual(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])

    def test_errors(self):
        with self.assertRaises(ValueError):
            smx.focal_loss(X, np.full(6, 9))
        with self.assertRaises(ValueError):
            smx.focal_loss(X, T, gamma=-1.0)
        with self.assertRaises(ValueError):
            smx.focal_loss(X, T, alpha=np.ones(3))
        with self.assertRaises(ValueError):
            smx.spherical_z_loss(X, T, a=0.0)
        with self.assertRaises(ValueError):
            smx.dice_loss(X, T, smooth=-1.0)
        with self.assertRaises(ValueError):
            smx.info_nce(np.zeros((5, 3)))


@unittest.skipIf(torch is None, "torch is not installed")
class TorchLosses(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx.torch as st
        cls.st = st

    def gradcheck(self, f, x):
        self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-7, rtol=1e-5))

    def test_gradcheck_f64(self):
        st = self.st
        g = torch.Generator().manual_seed(0)
        x = torch.randn(5, 7, generator=g, dtype=torch.float64, requires_grad=True)
        x4 = torch.randn(2, 4, 3, 2, generator=g, dtype=torch.float64, requires_grad=True)
        t = torch.tensor([0, 3, 6, -100, 2])
        t4 = torch.randint(0, 4, (2, 3, 2), generator=g)
        soft = torch.softmax(torch.randn(5, 7, generator=g, dtype=torch.float64), 1)
        alpha = torch.rand(7, generator=g, dtype=torch.float64)
        for red in ("mean", "sum", "none"):
            with self.subTest(red=red):
                self.gradcheck(lambda z: st.focal_loss(z, t, gamma=2.0, alpha=alpha, reduction=red), x)
                self.gradcheck(lambda z: st.focal_loss(z, t4, gamma=1.5, reduction=red), x4)
                self.gradcheck(lambda z: st.spherical_z_loss(z, t, a=0.7, b=1.5, reduction=red), x)
                self.gradcheck(lambda z: st.info_nce(z, temperature=0.5, symmetric=False,
                                                     reduction=red), x)
        for red in ("mean", "sum"):
            with self.subTest(red=red):
                self.gradcheck(lambda z: st.dice_loss(z, t, reduction=red), x)
                self.gradcheck(lambda z: st.dice_loss(z, soft, smooth=1e-3, reduction=red), x)
                self.gradcheck(lambda z: st.dice_loss(z, t4, reduction=red), x4)
                self.gradcheck(lambda z: st.info_nce(z, temperature=0.3, reduction=red), x)
        self.gradcheck(lambda z: st.dice_loss(z, t, reduction="none").sum(), x)
        self.gradcheck(lambda z: st.info_nce(z, reduction="none").mean(), x)

    def test_against_torch_ops(self):
        st = self.st
        g = torch.Generator().manual_seed(1)
        x0 = torch.randn(8, 10, generator=g, dtype=torch.float64) * 2
        t = torch.randint(0, 10, (8,), generator=g)

        def both(mine, ref):
            a = x0.clone().requires_grad_(True)
            b = x0.clone().requires_grad_(True)
            la, lb = mine(a), ref(b)
            torch.testing.assert_close(la, lb, rtol=1e-10, atol=1e-12)
            la.backward()
            lb.backward()
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-9, atol=1e-12)

        def focal_t(z):
            lp = torch.log_softmax(z, 1).gather(1, t[:, None])[:, 0]
            return (-(1 - lp.exp()) ** 2 * lp).mean()

        def z_t(z):
            zz = (z - z.mean(1, keepdim=True)) / z.std(1, unbiased=False, keepdim=True)
            return (torch.nn.functional.softplus(0.5 * (3.0 - zz.gather(1, t[:, None])[:, 0])) / 0.5).mean()

        def dice_t(z):
            p = torch.softmax(z, 1)
            oh = torch.nn.functional.one_hot(t, 10).to(z.dtype)
            return 1 - ((2 * (p * oh).sum(0) + 1) / (p.sum(0) + oh.sum(0) + 1)).mean()

        def nce_t(z):
            lab = torch.arange(8)
            return (torch.nn.functional.cross_entropy(z[:, :8] / 0.2, lab) +
                    torch.nn.functional.cross_entropy(z[:, :8].t() / 0.2, lab)) / 2

        both(lambda z: st.focal_loss(z, t), focal_t)
        both(lambda z: st.spherical_z_loss(z, t, a=0.5, b=3.0), z_t)
        both(lambda z: st.dice_loss(z, t), dice_t)
        both(lambda z: st.info_nce(z[:, :8], temperature=0.2), nce_t)


if __name__ == "__main__":
    unittest.main()
