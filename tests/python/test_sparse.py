"""sparsemax, entmax15, entmax (alpha) from Python: against float64 NumPy sort-based
oracles (Martins & Astudillo 2016, Alg. 1; the entmax package's sort-based entmax-1.5 and
its bisection, written here in NumPy), the VJPs against finite differences, the losses, and
smx.torch with gradcheck, a torch sort-based reference and a small training loop. Run by
ctest as python_test_sparse (and _scalar, _avx2)."""
import unittest

import numpy as np

import smx


def np_sparsemax(x):
    """Sort-based sparsemax along the last axis, float64 (-inf entries take no part)."""
    x = np.asarray(x, dtype=np.float64)
    z = np.sort(x, axis=-1)[..., ::-1]
    live = np.isfinite(z)
    zz = np.where(live, z, 0.0)
    k = np.arange(1, x.shape[-1] + 1)
    cs = np.cumsum(zz, axis=-1)
    ok = (1 + k * zz > cs) & live
    kz = ok.sum(-1, keepdims=True)
    tau = (np.take_along_axis(cs, kz - 1, -1) - 1) / kz
    return np.maximum(x - tau, 0.0)


def np_entmax15(x):
    """Sort-based exact entmax-1.5 (the entmax package's algorithm) in float64."""
    x = np.asarray(x, dtype=np.float64)
    z = (x - x.max(-1, keepdims=True)) / 2
    zs = np.sort(z, axis=-1)[..., ::-1]
    live = np.isfinite(zs)
    zz = np.where(live, zs, 0.0)
    rho = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(zz, -1) / rho
    mean_sq = np.cumsum(zz * zz, -1) / rho
    ss = rho * (mean_sq - mean ** 2)
    delta = np.clip((1 - ss) / rho, 0, None)
    tau = mean - np.sqrt(delta)
    support = ((tau <= zs) & live).sum(-1, keepdims=True)
    tau_star = np.take_along_axis(tau, support - 1, -1)
    return np.clip(z - tau_star, 0, None) ** 2


def np_entmax_bisect(x, alpha, n_iter=60):
    """The entmax package's bisection (ensure_sum_one) in float64."""
    x = np.asarray(x, dtype=np.float64) * (alpha - 1)
    d = x.shape[-1]
    mx = x.max(-1, keepdims=True)
    lo, hi = mx - 1.0, mx - (1.0 / d) ** (alpha - 1)
    p = lambda t: np.clip(t, 0, None) ** (1 / (alpha - 1))
    f_lo = p(x - lo).sum(-1, keepdims=True) - 1
    dm = hi - lo
    for _ in range(n_iter):
        dm = dm / 2
        tm = lo + dm
        pm = p(x - tm)
        f_m = pm.sum(-1, keepdims=True) - 1
        lo = np.where(f_m * f_lo >= 0, tm, lo)
    return pm / pm.sum(-1, keepdims=True)


class Forward(unittest.TestCase):
    def rows(self, rng, n):
        yield rng.standard_normal((6, n))
        yield 4 * rng.standard_normal((6, n))
        yield rng.integers(0, 5, (6, n)) / 4.0        # exact ties
        a = rng.standard_normal((6, n))
        a[:, ::3] = -np.inf
        a[:, min(1, n - 1)] = 0.3
        yield a

    def test_against_oracles(self):
        rng = np.random.default_rng(3)
        for n in (1, 2, 5, 17, 100, 1000):
            for x in self.rows(rng, n):
                for dt, tol in ((np.float64, 1e-13), (np.float32, 2e-6)):
                    xd = x.astype(dt)
                    xr = xd.astype(np.float64)
                    with self.subTest(n=n, dtype=dt.__name__):
                        ref = np_sparsemax(xr)
                        y = smx.sparsemax(xd)
                        self.assertEqual(y.dtype, dt)
                        np.testing.assert_allclose(y, ref, atol=tol, rtol=0)
                        np.testing.assert_array_equal(y > 0, ref > 0)       # the same support
                        np.testing.assert_array_equal(smx.sparsemax_sort(xd), y)
                        ref15 = np_entmax15(xr)
                        y15 = smx.entmax15(xd)
                        np.testing.assert_allclose(y15, ref15, atol=tol, rtol=0)
                        np.testing.assert_array_equal(y15 > 0, ref15 > 0)
                        for alpha in (1.5, 1.7, 1.25):
                            ya = smx.entmax(xd, alpha)
                            np.testing.assert_allclose(ya, np_entmax_bisect(xr, alpha), atol=10 * tol, rtol=0)
                        for y_ in (y, y15, ya):
                            self.assertTrue(np.all(y_ >= 0))
                            np.testing.assert_allclose(y_.sum(-1), 1.0, rtol=0, atol=n * 4 * np.finfo(dt).eps)
                        # bisection agrees with exact entmax-1.5
                        np.testing.assert_allclose(smx.entmax(xd, 1.5), y15, atol=10 * tol, rtol=0)

    def test_axis_out_half(self):
        rng = np.random.default_rng(4)
        x = rng.standard_normal((3, 4, 5))
        for axis in (0, 1, 2, -1):
            ref = np.moveaxis(np_sparsemax(np.moveaxis(x, axis, -1)), -1, axis)
            np.testing.assert_allclose(smx.sparsemax(x, axis=axis), ref, atol=1e-14)
        out = np.empty_like(x)
        self.assertIs(smx.entmax15(x, axis=1, out=out), out)
        np.testing.assert_allclose(out, np.moveaxis(np_entmax15(np.moveaxis(x, 1, -1)), -1, 1), atol=1e-14)
        h = x.astype(np.float16)
        np.testing.assert_allclose(smx.sparsemax(h).astype(np.float64), np_sparsemax(h.astype(np.float64)),
                                   atol=2e-3)
        self.assertEqual(float(smx.sparsemax(np.float64(3.0))), 1.0)

    def test_special_values(self):
        inf, nan = np.inf, np.nan
        self.assertTrue(np.all(smx.sparsemax([[-inf, -inf]]) == 0))
        self.assertTrue(np.all(np.isnan(smx.entmax15([[-inf, -inf]], masked_row="nan"))))
        self.assertTrue(np.all(np.isnan(smx.entmax([[1.0, nan, 2.0]], 1.3))))
        np.testing.assert_array_equal(smx.sparsemax([[inf, 1.0, inf]]), [[0.5, 0, 0.5]])
        with self.assertRaises(ValueError):
            smx.entmax([1.0, 2.0], 1.0)
        with self.assertRaises(TypeError):
            smx.sparsemax(np.array([1, 2], dtype=np.complex64))


class Backward(unittest.TestCase):
    def test_finite_differences(self):
        rng = np.random.default_rng(5)
        maps = [(smx.sparsemax, lambda y, dy: smx.sparsemax_backward(None, y, dy)),
                (smx.entmax15, lambda y, dy: smx.entmax15_backward(None, y, dy)),
                (lambda a: smx.entmax(a, 1.7), lambda y, dy: smx.entmax_backward(None, y, dy, 1.7))]
        for f, b in maps:
            for _ in range(5):
                x = rng.standard_normal((3, 9))
                dy = rng.standard_normal((3, 9))
                dx = b(f(x), dy)
                fd = np.zeros_like(x)
                h = 1e-6
                for j in range(9):
                    e = np.zeros_like(x)
                    e[:, j] = h
                    fd[:, j] = ((f(x + e) - f(x - e)) * dy).sum(-1) / (2 * h)
                np.testing.assert_allclose(dx, fd, atol=1e-6)

    def test_float32_and_axis(self):
        rng = np.random.default_rng(6)
        x = rng.standard_normal((4, 7))
        y, dy = smx.entmax15(x, axis=0), rng.standard_normal((4, 7))
        d64 = smx.entmax15_backward(None, y, dy, axis=0)
        d32 = smx.entmax15_backward(None, y.astype(np.float32), dy.astype(np.float32), axis=0)
        self.assertEqual(d32.dtype, np.float32)
        np.testing.assert_allclose(d32, d64, atol=1e-5)


class Losses(unittest.TestCase):
    def test_values_and_gradients(self):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((5, 8))
        t = np.array([0, 3, -100, 7, 2])
        for name, fn, p in (("sparsemax", smx.sparsemax_loss, np_sparsemax),
                            ("entmax15", smx.entmax15_loss, np_entmax15),
                            ("entmax", lambda *a, **k: smx.entmax_loss(a[0], a[1], 1.5, *a[2:], **k), np_entmax15)):
            with self.subTest(name):
                l, g = fn(x, t, reduction="none", return_grad=True)
                pr = p(x)
                alpha = 2.0 if name == "sparsemax" else 1.5
                om = (1 - (pr ** alpha).sum(-1)) / (alpha * (alpha - 1))
                tt = np.where(t < 0, 0, t)
                ref = om + (pr * x).sum(-1) - x[np.arange(5), tt]
                ref[t < 0] = 0
                np.testing.assert_allclose(l, ref, atol=1e-10)
                gref = pr - np.eye(8)[tt]
                gref[t < 0] = 0
                np.testing.assert_allclose(g, gref, atol=1e-10)
                lm, gm = fn(x, t, return_grad=True)
                np.testing.assert_allclose(lm, ref.sum() / 4, rtol=1e-12)
                np.testing.assert_allclose(gm, gref / 4, atol=1e-12)
                np.testing.assert_allclose(fn(x, t, reduction="sum"), ref.sum(), rtol=1e-12)
                self.assertTrue(np.all(l >= -1e-12))

    def test_bad_targets_and_empty_classes(self):
        """Issue 24 items 5 and 10: uint64 targets wrapped (2**64 - 100 read as -100, the row ignored), and
        0 classes gave NumPy's reshape error."""
        x = np.zeros((2, 4))
        losses = (("sparsemax_loss", smx.sparsemax_loss), ("entmax15_loss", smx.entmax15_loss),
                  ("entmax_loss", lambda *a, **k: smx.entmax_loss(a[0], a[1], 1.3, **k)))
        for name, fn in losses:
            with self.subTest(name):
                with self.assertRaisesRegex(TypeError, "target must be an array of integers .* got dtype uint64"):
                    fn(x, np.array([2 ** 64 - 100, 1], np.uint64))
                with self.assertRaisesRegex(TypeError, "target must be an array of integers"):
                    fn(x, np.array([1.0, 2.0]))
                self.assertEqual(fn(x, np.array([3, 1], np.uint32)), fn(x, np.array([3, 1])))   # narrower unsigned: fine
                with self.assertRaisesRegex(ValueError, "logits have no classes"):
                    fn(np.zeros((3, 0)), np.zeros(3, np.int64))
                self.assertEqual(fn(np.zeros((0, 0)), np.zeros(0, np.int64), reduction="none").shape, (0,))
        # the forward maps on an empty class axis: empty results, like smx.softmax
        for fn in (smx.sparsemax, smx.entmax15, smx.sparsemax_sort, lambda a: smx.entmax(a, 1.3)):
            self.assertEqual(fn(np.zeros((3, 0))).shape, (3, 0))


class Torch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("torch is not installed")

    def test_gradcheck(self):
        import torch
        import smx.torch as st
        torch.manual_seed(0)
        x = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
        t = torch.tensor([1, 0, 6, 3, 2])
        fns = [lambda a: st.sparsemax(a, dim=-1), lambda a: st.sparsemax(a, dim=0), lambda a: st.entmax15(a, dim=1),
               lambda a: st.entmax(a, 1.7, dim=-1), lambda a: st.entmax(a, 1.3, dim=0),
               lambda a: st.sparsemax_loss(a, t), lambda a: st.entmax15_loss(a, t, reduction="none"),
               lambda a: st.entmax_loss(a, t, 1.6, reduction="sum")]
        for f in fns:
            self.assertTrue(torch.autograd.gradcheck(f, (x,)))

    def test_against_torch_sort_reference(self):
        import torch
        import smx.torch as st

        def torch_sparsemax(z, dim=-1):
            # the entmax package's sort-based algorithm, written in torch ops
            z = z - z.max(dim=dim, keepdim=True).values
            zs, _ = torch.sort(z, dim=dim, descending=True)
            rho = torch.arange(1, z.shape[dim] + 1, dtype=z.dtype)
            shape = [1] * z.dim()
            shape[dim] = -1
            rho = rho.view(shape)
            cs = zs.cumsum(dim) - 1
            support = (rho * zs > cs).sum(dim=dim, keepdim=True)
            tau = cs.gather(dim, support - 1) / support.to(z.dtype)
            return torch.clamp(z - tau, min=0)

        x = torch.randn(8, 50, dtype=torch.float64, requires_grad=True)
        y1 = st.sparsemax(x)
        y2 = torch_sparsemax(x)
        torch.testing.assert_close(y1, y2, atol=1e-13, rtol=0)
        g = torch.randn(8, 50, dtype=torch.float64)
        (d1,) = torch.autograd.grad(y1, x, g)
        (d2,) = torch.autograd.grad(y2, x, g)
        torch.testing.assert_close(d1, d2, atol=1e-12, rtol=0)

    def test_training_loop(self):
        """A small classifier trained through smx.torch.sparsemax (where entmax.sparsemax would be)."""
        import torch
        import smx.torch as st
        torch.manual_seed(1)
        n, d, c = 256, 10, 4
        w_true = torch.randn(d, c)
        xs = torch.randn(n, d)
        ys = (xs @ w_true).argmax(1)
        lin = torch.nn.Linear(d, c)
        opt = torch.optim.SGD(lin.parameters(), lr=0.5)
        first = None
        for step in range(60):
            p = st.sparsemax(lin(xs), dim=-1)
            loss = -(p.gather(1, ys[:, None]) + 1e-3).log().mean() + st.sparsemax_loss(lin(xs), ys)
            opt.zero_grad()
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        acc = (st.sparsemax(lin(xs), dim=-1).argmax(1) == ys).float().mean().item()
        self.assertLess(loss.item(), first)
        self.assertGreater(acc, 0.8)


if __name__ == "__main__":
    unittest.main()
