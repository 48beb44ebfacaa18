"""The row variants of python/smx/_norm.py (softpick, ssmax, sa_softmax, adaptive_softmax, topk_softmax,
sigmoid with a bias, softplus_l1, standardize_softmax): forwards against float64 NumPy references written
from the papers' definitions, backwards against central finite differences in float64, special values,
axes and dtypes, and the smx.torch wrappers through torch.autograd.gradcheck."""
import unittest

import numpy as np

import smx


def sm(z):
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def ref_softpick(x, eps=1e-6):
    fin = np.isfinite(x)
    m = np.max(np.where(fin, x, -np.inf), -1, keepdims=True)
    a = np.exp(x - m) - np.exp(-m)
    return np.maximum(a, 0) / (np.where(fin, np.abs(a), 0).sum(-1, keepdims=True) + eps)


def ref_ssmax(x, s, n=None):
    n = x.shape[-1] if n is None else np.asarray(n, float)[..., None]
    return sm(s * np.log(n) * x)


def ref_sa(x, normalized=False):
    p = sm(x)
    if normalized:
        lo = np.minimum(x.min(-1, keepdims=True), 0)
        hi = np.maximum(x.max(-1, keepdims=True), 0)
        return (x - lo) / (hi - lo) * p
    return x * p


def ref_adaptive(x):
    p = sm(x)
    h = -(p * np.log(p + 1e-9)).sum(-1, keepdims=True)
    b = np.where(h > 0.5, np.maximum(np.polyval([-0.037, 0.481, -2.3, 4.917, -1.791], h), 1.0), 1.0)
    return sm(b * x)


def ref_topk(x, k):
    y = np.zeros_like(x)
    for r in np.ndindex(x.shape[:-1]):
        idx = np.argsort(-x[r], kind="stable")[:k]
        y[r][idx] = sm(x[r][idx])
    return y


def ref_softplus_l1(x):
    s = np.logaddexp(0, x)
    return s / s.sum(-1, keepdims=True)


def ref_standardize(x, t):
    z = (x - x.mean(-1, keepdims=True)) / (x.std(-1, ddof=1, keepdims=True) + 1e-7)
    return sm(z / t)


def fd_vjp(f, x, g, h=1e-6):
    """<g, df/dx> by central differences, in float64."""
    out = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        e = np.zeros_like(x)
        e[i] = h
        out[i] = ((f(x + e) - f(x - e)) * g).sum() / (2 * h)
    return out


CASES = [
    # name, forward (x -> y), backward (x, y, g -> dx), reference
    ("softpick", lambda x: smx.softpick(x, eps=1e-3), lambda x, y, g: smx.softpick_backward(x, None, g, eps=1e-3),
     lambda x: ref_softpick(x, 1e-3)),
    ("ssmax", lambda x: smx.ssmax(x, s=0.6), lambda x, y, g: smx.ssmax_backward(None, y, g, s=0.6),
     lambda x: ref_ssmax(x, 0.6)),
    ("sa_softmax", smx.sa_softmax, lambda x, y, g: smx.sa_softmax_backward(x, None, g), ref_sa),
    ("sa_softmax_normalized", lambda x: smx.sa_softmax(x, normalized=True),
     lambda x, y, g: smx.sa_softmax_backward(x, None, g, normalized=True), lambda x: ref_sa(x, True)),
    ("adaptive_softmax", smx.adaptive_softmax, lambda x, y, g: smx.adaptive_softmax_backward(x, None, g),
     ref_adaptive),
    ("topk_softmax", lambda x: smx.topk_softmax(x, 3), lambda x, y, g: smx.topk_softmax_backward(None, y, g, k=3),
     lambda x: ref_topk(x, 3)),
    ("sigmoid_bias", lambda x: smx.sigmoid(x, temperature=2.0, bias=-1.5),
     lambda x, y, g: smx.sigmoid_backward(None, y, g, temperature=2.0), lambda x: 1 / (1 + np.exp(-(x / 2 - 1.5)))),
    ("softplus_l1", smx.softplus_l1, lambda x, y, g: smx.softplus_l1_backward(x, None, g), ref_softplus_l1),
    ("standardize_softmax", lambda x: smx.standardize_softmax(x, temperature=2.0),
     lambda x, y, g: smx.standardize_softmax_backward(x, None, g, temperature=2.0),
     lambda x: ref_standardize(x, 2.0)),
]


class TestForward(unittest.TestCase):
    def test_against_references(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((5, 37)) * 2
        for name, f, _, ref in CASES:
            with self.subTest(name):
                np.testing.assert_allclose(f(x), ref(x), rtol=1e-12, atol=1e-15)
                np.testing.assert_allclose(f(x.astype(np.float32)), ref(x), rtol=3e-6, atol=1e-7)
                self.assertEqual(f(x.astype(np.float32)).dtype, np.float32)
                self.assertEqual(f(x.astype(np.float16)).dtype, np.float16)

    def test_axis_and_threads(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((4, 6, 9))
        np.testing.assert_allclose(smx.softpick(x, axis=1), np.moveaxis(ref_softpick(np.moveaxis(x, 1, -1)), -1, 1),
                                   rtol=1e-12, atol=1e-15)
        big = rng.standard_normal((64, 1000)).astype(np.float32)
        for f in (smx.softpick, smx.softplus_l1, smx.sa_softmax, smx.adaptive_softmax):
            self.assertTrue(np.array_equal(f(big), f(big, threads=4)))

    def test_ssmax_lengths(self):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((4, 8))
        n = np.array([1, 2, 5, 8])
        np.testing.assert_allclose(smx.ssmax(x, s=0.5, n=n), ref_ssmax(x, 0.5, n), rtol=1e-12, atol=1e-15)
        self.assertTrue(np.allclose(smx.ssmax(x[:1, :1], s=0.5), 1.0))

    def test_masked_entries(self):
        x = np.array([[1.0, -np.inf, 0.5, -2.0], [-np.inf] * 4])
        for name, f, _, _ in CASES:
            if name in ("sigmoid_bias", "standardize_softmax"):
                continue
            with self.subTest(name):
                y = f(x)
                self.assertFalse(np.isnan(y).any(), name)
                self.assertEqual(y[0, 1], 0.0)
                self.assertTrue((y[1] == 0).all())
        self.assertEqual(smx.standardize_softmax(x)[0, 1], 0.0)
        self.assertTrue(np.isnan(smx.softpick(np.array([1.0, np.nan]))).all())

    def test_softpick_rectified(self):
        y = smx.softpick(np.array([-1.0, 0.0, 2.0, 3.0]))
        self.assertEqual(y[0], 0.0)
        self.assertEqual(y[1], 0.0)
        self.assertLess(y.sum(), 1.0)

    def test_topk_ties_lowest_index(self):
        y = smx.topk_softmax(np.array([1.0, 2.0, 2.0, 2.0, 0.0]), 2)
        np.testing.assert_allclose(y, [0, 0.5, 0.5, 0, 0])

    def test_sigmoid_bias_zero_is_sigmoid(self):
        x = np.linspace(-5, 5, 11)
        self.assertTrue(np.array_equal(smx.sigmoid(x, bias=0.0), smx._smx.sigmoid(x)))


class TestBackward(unittest.TestCase):
    def test_finite_differences(self):
        rng = np.random.default_rng(4)
        x = rng.standard_normal((3, 11)) * 1.5
        g = rng.standard_normal((3, 11))
        for name, f, b, _ in CASES:
            with self.subTest(name):
                dx = b(x, f(x), g)
                np.testing.assert_allclose(dx, fd_vjp(f, x, g), rtol=1e-6, atol=1e-8)
                # f32: the same VJP within float rounding
                x32, g32 = x.astype(np.float32), g.astype(np.float32)
                np.testing.assert_allclose(b(x32, f(x32), g32), dx, rtol=2e-4, atol=2e-5)

    def test_adaptive_beta_active(self):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 64)) * 0.3   # high entropy: beta > 1 and its gradient term on
        g = rng.standard_normal((2, 64))
        np.testing.assert_allclose(smx.adaptive_softmax_backward(x, None, g), fd_vjp(smx.adaptive_softmax, x, g),
                                   rtol=1e-6, atol=1e-8)


def ref_kd(s, t, temp, standardize=True):
    if standardize:
        z = lambda v: (v - v.mean(-1, keepdims=True)) / (v.std(-1, ddof=1, keepdims=True) + 1e-7)
        s, t = z(s), z(t)
    ls = s / temp - np.log(np.exp(s / temp - (s / temp).max(-1, keepdims=True)).sum(-1, keepdims=True)) - (
        s / temp).max(-1, keepdims=True)
    pt = sm(t / temp)
    return temp ** 2 * (pt * (np.log(pt) - ls)).sum(-1)


class TestKD(unittest.TestCase):
    def test_loss_and_gradient(self):
        rng = np.random.default_rng(6)
        s = rng.standard_normal((4, 10)) * 2
        t = rng.standard_normal((4, 10)) * 3
        for std in (True, False):
            for red, f in (("none", lambda v: v), ("mean", np.mean), ("sum", np.sum)):
                with self.subTest(std=std, red=red):
                    loss, g = smx.kd_loss(s, t, temperature=2.0, standardize=std, reduction=red, return_grad=True)
                    np.testing.assert_allclose(loss, f(ref_kd(s, t, 2.0, std)), rtol=1e-12, atol=1e-14)
                    red_loss = lambda v: np.sum(smx.kd_loss(v, t, temperature=2.0, standardize=std, reduction=red))
                    np.testing.assert_allclose(g, fd_vjp(red_loss, s, np.ones(1)), rtol=1e-6, atol=1e-8)
        l32 = smx.kd_loss(s.astype(np.float32), t.astype(np.float32), temperature=2.0)
        self.assertEqual(l32.dtype, np.float32)
        np.testing.assert_allclose(l32, np.mean(ref_kd(s, t, 2.0)), rtol=1e-5)

    def test_against_torch_kd(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch missing")
        rng = np.random.default_rng(7)
        s = rng.standard_normal((5, 12))
        t = rng.standard_normal((5, 12))
        ts, tt = torch.from_numpy(s), torch.from_numpy(t)
        z = lambda v: (v - v.mean(-1, keepdim=True)) / (1e-7 + v.std(-1, keepdim=True))
        temp = 3.0
        ref = torch.nn.functional.kl_div(torch.log_softmax(z(ts) / temp, 1), torch.softmax(z(tt) / temp, 1),
                                         reduction="none").sum(1).mean() * temp ** 2
        self.assertAlmostEqual(float(smx.kd_loss(s, t, temperature=temp)), float(ref), places=12)


class TestMixture(unittest.TestCase):
    def test_values_and_gradients(self):
        rng = np.random.default_rng(9)
        x = rng.standard_normal((2, 3, 4, 7)) * 2   # (..., K = 4, n = 7)
        w = rng.standard_normal((2, 3, 4))
        g = rng.standard_normal((2, 3, 7))
        pi = sm(w)[..., None]
        ref = np.log((pi * sm(x)).sum(-2))
        np.testing.assert_allclose(smx.mixture_log_softmax(x, w), ref, rtol=1e-12, atol=1e-13)
        dx, dw = smx.mixture_log_softmax_backward(x, w, g)
        np.testing.assert_allclose(dx, fd_vjp(lambda v: smx.mixture_log_softmax(v, w), x, g), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dw, fd_vjp(lambda v: smx.mixture_log_softmax(x, v), w, g), rtol=1e-6, atol=1e-8)
        y32 = smx.mixture_log_softmax(x.astype(np.float32), w.astype(np.float32))
        self.assertEqual(y32.dtype, np.float32)
        np.testing.assert_allclose(y32, ref, rtol=1e-5, atol=1e-5)

    def test_no_underflow(self):
        # probabilities far below the double range: the log-sum-exp keeps them
        x = np.array([[[0.0, -2000.0], [0.0, -2100.0]]])
        y = smx.mixture_log_softmax(x, np.zeros((1, 2)))
        self.assertTrue(np.isfinite(y).all())
        self.assertAlmostEqual(y[0, 1], -2000.0 - np.log(2.0), places=9)

    def test_empty_axes(self):
        """Issue 24 item 10: K = 0 gave NumPy's reshape error; n = 0 too (and an unwritten dw)."""
        for fn in (lambda x, w: smx.mixture_log_softmax(x, w),
                   lambda x, w: smx.mixture_log_softmax_backward(x, w, np.zeros(x.shape[:-2] + x.shape[-1:]))):
            with self.assertRaisesRegex(ValueError, r"no mixture components \(K = 0\)"):
                fn(np.zeros((2, 0, 5)), np.zeros((2, 0)))
        self.assertEqual(smx.mixture_log_softmax(np.zeros((2, 3, 0)), np.zeros((2, 3))).shape, (2, 0))
        self.assertEqual(smx.mixture_log_softmax(np.zeros((0, 3, 4)), np.zeros((0, 3))).shape, (0, 4))
        dx, dw = smx.mixture_log_softmax_backward(np.zeros((2, 3, 0)), np.full((2, 3), 7.0), np.zeros((2, 0)))
        self.assertEqual(dx.shape, (2, 3, 0))
        self.assertTrue(np.array_equal(dw, np.zeros((2, 3))))   # a sum over no output
        for fn in (smx.softpick, smx.ssmax, smx.sa_softmax, smx.softplus_l1, smx.standardize_softmax):
            self.assertEqual(fn(np.zeros((3, 0))).shape, (3, 0))


class TestTorch(unittest.TestCase):
    def setUp(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("torch missing")

    def test_gradcheck(self):
        import torch
        import smx.torch as st
        torch.manual_seed(0)
        fns = [("softpick", lambda t: st.softpick(t, dim=-1, eps=1e-3)), ("ssmax", lambda t: st.ssmax(t, s=0.7)),
               ("sa_softmax", st.sa_softmax), ("sa_norm", lambda t: st.sa_softmax(t, normalized=True)),
               ("adaptive", st.adaptive_softmax), ("topk", lambda t: st.topk_softmax(t, 3)),
               ("sigmoid", lambda t: st.sigmoid(t, temperature=1.5, bias=-0.5)), ("softplus_l1", st.softplus_l1),
               ("standardize", lambda t: st.standardize_softmax(t, temperature=2.0)),
               ("dim0", lambda t: st.softpick(t, dim=0, eps=1e-3))]
        for name, f in fns:
            with self.subTest(name):
                t = (torch.randn(3, 7, dtype=torch.float64) * 1.5).requires_grad_()
                self.assertTrue(torch.autograd.gradcheck(f, (t,), eps=1e-6, atol=1e-6))

    def test_parameter_gradcheck(self):
        """SSMax's s and sigmoid's temperature and bias as learned one-element tensors, with -inf and
        saturated entries (their x . g terms must be 0, never NaN)."""
        import torch
        import smx.torch as st
        torch.manual_seed(1)
        x = (torch.randn(4, 9, dtype=torch.float64) * 1.5)
        x[1, 3] = -float("inf")
        x = x.requires_grad_()
        lens = np.array([9, 5, 2, 1])
        for s0 in (0.7, 1e-3):   # gradcheck steps s both ways, and s must be >= 0
            with self.subTest(s=s0):
                s = torch.tensor(s0, dtype=torch.float64, requires_grad=True)
                self.assertTrue(torch.autograd.gradcheck(lambda a, b: st.ssmax(a, s=b), (x, s), eps=1e-6, atol=1e-6))
                self.assertTrue(torch.autograd.gradcheck(lambda b: st.ssmax(x.detach(), s=b, n=lens), (s,),
                                                         eps=1e-6, atol=1e-6))
        # a plain number and a tensor give the same forward
        self.assertTrue(torch.equal(st.ssmax(x.detach(), s=0.7), st.ssmax(x.detach(), s=torch.tensor(0.7, dtype=torch.float64))))
        z = (torch.randn(3, 5, dtype=torch.float64) * 2.0)
        z[0, 0], z[1, 1] = float("inf"), -float("inf")
        z = z.requires_grad_()
        t = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
        b = torch.tensor(-0.4, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(lambda a, u, v: st.sigmoid(a, temperature=u, bias=v), (z, t, b),
                                                 eps=1e-6, atol=1e-6))
        self.assertTrue(torch.autograd.gradcheck(lambda v: st.sigmoid(z.detach(), temperature=2.0, bias=v), (b,)))
        self.assertTrue(torch.autograd.gradcheck(lambda u: st.sigmoid(z.detach(), temperature=u), (t,)))
        with self.assertRaises(ValueError):
            st.sigmoid(z, bias=torch.zeros(2))

    def test_kd_gradcheck(self):
        import torch
        import smx.torch as st
        s = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
        t = torch.randn(3, 6, dtype=torch.float64)
        for red in ("mean", "sum", "none"):
            with self.subTest(red):
                self.assertTrue(torch.autograd.gradcheck(lambda v: st.kd_loss(v, t, 2.0, True, red), (s,)))

    def test_mixture_gradcheck(self):
        import torch
        import smx.torch as st
        x = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
        w = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(st.mixture_log_softmax, (x, w)))

    def test_matches_numpy(self):
        import torch
        import smx.torch as st
        t = torch.randn(4, 9, dtype=torch.float32)
        self.assertTrue(np.array_equal(st.softpick(t).numpy(), smx.softpick(t.numpy())))


if __name__ == "__main__":
    unittest.main()
