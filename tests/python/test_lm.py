"""The language-model functions of the Python module smx against torch:
cross_entropy (forward and the autograd gradient), softmax / log-softmax
backward (autograd), softmax_topk / topk (torch.topk of torch.softmax),
sample (reproducibility, greedy = argmax, the distribution), gumbel_softmax.

Run from ctest (PYTHONPATH=build/python), or by hand:
  PYTHONPATH=build/python /usr/bin/python3 -m unittest -v tests/python/test_lm.py
References are computed in float64 from the same float32 inputs; the
tolerances are the bounds of include/smx/smx_grad.h and smx_topk.h.
"""
import unittest

import numpy as np

import smx
from gil_probe import stamps_inside

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

EPS32 = 2.0 ** -23
RNG = np.random.default_rng(20261202)


def randn(shape, scale=3.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def torch_xent(x, t, reduction="mean", ignore=-100, eps=0.0, z=0.0, T=1.0):
    """torch's loss and gradient in float64 (z-loss: torch CE + z * lse^2 per row kept)."""
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    tt = torch.tensor(t.astype(np.int64))
    xs = xt / T
    loss = F.cross_entropy(xs, tt, reduction=reduction, ignore_index=ignore, label_smoothing=eps)
    if z > 0:
        keep = (tt != ignore).to(torch.float64)
        zl = z * torch.logsumexp(xs, dim=1) ** 2 * keep
        loss = loss + (zl if reduction == "none" else zl.sum() / (keep.sum() if reduction == "mean" else 1.0))
    (loss.sum() if reduction == "none" else loss).backward()
    return loss.detach().numpy(), xt.grad.numpy()


@unittest.skipIf(torch is None, "torch is not installed")
class CrossEntropy(unittest.TestCase):
    def check(self, x, t, **kw):
        red = kw.get("reduction", "mean")
        args = dict(reduction=red, ignore=kw.get("ignore_index", -100), eps=kw.get("label_smoothing", 0.0),
                    z=kw.get("z_loss", 0.0), T=kw.get("temperature", 1.0))
        ref_l, ref_g = torch_xent(x.astype(np.float64), t, **args)
        loss, grad = smx.cross_entropy(x, t, return_grad=True, **kw)
        only = smx.cross_entropy(x, t, **kw)
        # the loss bound of smx_grad.h: 4 eps max(1, |ref|) (each row, or the reduction)
        np.testing.assert_array_less(np.abs(np.asarray(loss, np.float64) - ref_l),
                                     4 * EPS32 * np.maximum(1.0, np.abs(ref_l)) + 1e-300)
        self.assertEqual(np.asarray(only).tolist(), np.asarray(loss).tolist())
        if red == "none":
            self.assertEqual(loss.dtype, np.float32)
            self.assertEqual(loss.shape, t.shape)
        else:
            self.assertIsInstance(loss, float)
        self.assertEqual(grad.dtype, x.dtype)
        self.assertEqual(grad.shape, x.shape)
        # gradient: a few eps of the size of its terms, (s/T)(p (1 + 2 z |lse|) + 1)
        T = args["T"]
        kept = np.sum(t != args["ignore"]) if red == "mean" else 1
        s = 1.0 / max(kept, 1)
        p = torch.softmax(torch.tensor(x.astype(np.float64) / T), dim=1).numpy()
        lse = torch.logsumexp(torch.tensor(x.astype(np.float64) / T), dim=1).numpy()[:, None]
        scale = (s / T) * (p * (1 + 2 * args["z"] * np.abs(lse)) + 1.0)
        err = np.abs(grad.astype(np.float64) - ref_g)
        self.assertTrue(np.all(err <= 8 * EPS32 * scale), "largest gradient error %g" % err.max())

    def test_reductions_and_options(self):
        x = randn((64, 37))
        t = RNG.integers(0, 37, 64)
        for red in ("mean", "sum", "none"):
            self.check(x, t, reduction=red)
            self.check(x, t.astype(np.int32), reduction=red, label_smoothing=0.1)
            self.check(x, t, reduction=red, temperature=0.7, z_loss=1e-3)
        t2 = t.copy()
        t2[::5] = -100
        self.check(x, t2)
        t2[::5] = 7
        t3 = t.copy()
        t3[::3] = 5
        self.check(x, t3, ignore_index=5, reduction="sum")

    def test_long_rows_and_large_logits(self):
        x = randn((8, 50000), scale=30.0)
        t = RNG.integers(0, 50000, 8)
        self.check(x, t)
        self.check(x, t, label_smoothing=0.2, reduction="none")

    def test_float16_and_float64(self):
        x = randn((16, 33)).astype(np.float16)
        t = RNG.integers(0, 33, 16)
        loss, grad = smx.cross_entropy(x, t, return_grad=True)
        ref_l, ref_g = torch_xent(x.astype(np.float64), t)
        self.assertLessEqual(abs(loss - ref_l), 4 * EPS32 * max(1.0, abs(ref_l)))
        self.assertEqual(grad.dtype, np.float16)
        # one float16 rounding of each gradient element
        np.testing.assert_allclose(grad.astype(np.float64), ref_g, rtol=2.0 ** -10, atol=2.0 ** -24 + 1e-7)
        l64, g64 = smx.cross_entropy(x.astype(np.float64), t, return_grad=True)
        self.assertEqual(g64.dtype, np.float64)
        buf = np.empty((16, 33), np.float64)
        l2, g2 = smx.cross_entropy(x.astype(np.float64), t, grad_out=buf)
        self.assertIs(g2, buf)
        np.testing.assert_array_equal(buf, g64)
        with self.assertRaises(TypeError):
            smx.cross_entropy(x, t, grad_out=np.empty((16, 33), np.float32))
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, grad_out=np.empty((16, 32), np.float16))

    def test_special_rows_as_torch(self):
        x = randn((4, 6))
        x[1, :] = -np.inf          # a masked row: torch gives NaN
        x[2, 3] = -np.inf          # the target masked: loss +inf, as torch
        t = np.array([0, 2, 3, 1])
        l = smx.cross_entropy(x, t, reduction="none", masked_row="nan")
        ref, _ = torch_xent(x, t, reduction="none")
        self.assertTrue(np.isnan(l[1]) and np.isnan(ref[1]))
        self.assertTrue(np.isinf(l[2]) and np.isinf(ref[2]))
        np.testing.assert_allclose(l[[0, 3]], ref[[0, 3]], rtol=4 * EPS32)
        x[1, :] = 0
        x[1, 4] = np.nan
        self.assertTrue(np.isnan(smx.cross_entropy(x, t, reduction="none")[1]))
        # every row ignored: mean is NaN (0/0), as torch
        self.assertTrue(np.isnan(smx.cross_entropy(randn((3, 4)), np.full(3, -100))))

    def test_arguments(self):
        x = randn((4, 5))
        t = np.array([0, 1, 2, 3])
        with self.assertRaisesRegex(ValueError, "target 5"):
            smx.cross_entropy(x, np.array([0, 1, 5, 3]))
        with self.assertRaisesRegex(ValueError, "target -1"):
            smx.cross_entropy(x, np.array([0, 1, -1, 3]))
        with self.assertRaises(TypeError):
            smx.cross_entropy(x, t.astype(np.float32))
        with self.assertRaises(TypeError):
            smx.cross_entropy(x, t.astype(bool))
        with self.assertRaises(TypeError):
            smx.cross_entropy(x.astype(np.int32), t)
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t[:3])
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, reduction="avg")
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, label_smoothing=1.5)
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, z_loss=-1.0)
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, temperature=0.0)
        with self.assertRaises(TypeError):
            smx.cross_entropy(x, t, ignore_index=1.5)
        with self.assertRaises(ValueError):
            smx.cross_entropy(x, t, threads=-1)


@unittest.skipIf(torch is None, "torch is not installed")
class Backward(unittest.TestCase):
    def test_softmax_backward_vs_autograd(self):
        for shape, T in (((32, 100), 1.0), ((3, 5000), 0.5), ((7, 1), 2.0)):
            x = randn(shape)
            xt = torch.tensor(x.astype(np.float64), requires_grad=True)
            for log in (False, True):
                f = torch.log_softmax if log else torch.softmax
                yt = f(xt / T, dim=-1)
                y = yt.detach().numpy().astype(np.float32)
                dy = randn(shape, 1.0)
                ref = torch.autograd.grad(yt, xt, torch.tensor(dy.astype(np.float64)))[0].numpy()
                fn = smx.log_softmax_backward if log else smx.softmax_backward
                dx = fn(y, dy, temperature=T)
                self.assertEqual(dx.dtype, np.float32)
                # y was rounded to float32: the bound is a few eps of the terms' size
                p = np.exp(y.astype(np.float64)) if log else y.astype(np.float64)
                size = (np.abs(dy) + np.sum(np.abs(dy) * p, axis=-1, keepdims=True)) * (1 if log else p) / T
                if log:
                    size = (np.abs(dy) + p * np.sum(np.abs(dy), axis=-1, keepdims=True)) / T
                err = np.abs(dx - ref)
                self.assertTrue(np.all(err <= 16 * EPS32 * size + 1e-30), "%s: %g" % (fn.__name__, err.max()))

    def test_axis_dtypes_out(self):
        x = randn((6, 9))
        y = smx.softmax(x, axis=0)
        dy = randn((6, 9), 1.0)
        dx = smx.softmax_backward(y, dy, axis=0)
        ref = smx.softmax_backward(np.ascontiguousarray(y.T), np.ascontiguousarray(dy.T)).T
        np.testing.assert_array_equal(dx, ref)
        d64 = smx.softmax_backward(y.astype(np.float64), dy.astype(np.float64))
        self.assertEqual(d64.dtype, np.float64)
        d16 = smx.softmax_backward(y.astype(np.float16), dy.astype(np.float16))
        self.assertEqual(d16.dtype, np.float16)
        out = np.empty_like(y)
        self.assertIs(smx.softmax_backward(y, dy, out=out), out)
        np.testing.assert_array_equal(out, smx.softmax_backward(y, dy))
        with self.assertRaises(ValueError):
            smx.softmax_backward(y, dy[:, :4])
        with self.assertRaises(TypeError):
            smx.softmax_backward(y, dy.astype(np.float64))
        with self.assertRaises(TypeError):
            smx.softmax_backward(y, dy, out=np.empty((6, 9)))


@unittest.skipIf(torch is None, "torch is not installed")
class TopK(unittest.TestCase):
    def test_vs_torch(self):
        for rows, cols, k in ((16, 1000, 5), (3, 70000, 50), (5, 8, 8), (4, 3, 1)):
            x = randn((rows, cols))
            for log in (False, True):
                v, i = smx.softmax_topk(x, k, log=log, temperature=0.8)
                f = torch.log_softmax if log else torch.softmax
                rv, ri = torch.topk(f(torch.tensor(x.astype(np.float64) / 0.8), dim=-1), k, dim=-1)
                self.assertEqual(v.dtype, np.float32)
                self.assertEqual(i.dtype, np.int64)
                np.testing.assert_array_equal(i, ri.numpy())
                rv = rv.numpy()
                if log:
                    bound = 4 * EPS32 * np.maximum(1.0, np.abs(rv))
                else:
                    t = (np.take_along_axis(x, i, -1) - x.max(-1, keepdims=True)) / 0.8
                    bound = (4 + np.abs(t) / 2) * EPS32 * rv
                self.assertTrue(np.all(np.abs(v - rv) <= bound))
            v, i = smx.topk(x, k)
            rv, ri = torch.topk(torch.tensor(x), k, dim=-1)
            np.testing.assert_array_equal(v, rv.numpy())
            np.testing.assert_array_equal(i, ri.numpy())

    def test_axis_ties_special(self):
        x = randn((7, 11))
        v0, i0 = smx.softmax_topk(x, 3, axis=0)
        v1, i1 = smx.softmax_topk(np.ascontiguousarray(x.T), 3)
        self.assertEqual(v0.shape, (3, 11))
        np.testing.assert_array_equal(i0, i1.T)
        np.testing.assert_array_equal(v0, v1.T)
        t = np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], np.float32)
        self.assertEqual(smx.topk(t, 3)[1].tolist(), [[1, 2, 4]])   # ties: lowest index first
        t[0, 3] = np.nan
        v, i = smx.softmax_topk(t, 2)
        self.assertTrue(np.all(np.isnan(v)) and i.tolist() == [[-1, -1]])
        v, i = smx.softmax_topk(np.array([1.0, np.inf, 0.0, np.inf], np.float32), 3)
        self.assertEqual(i.tolist(), [1, 3, 0])
        self.assertEqual(v.tolist(), [0.5, 0.5, 0.0])
        v16, _ = smx.softmax_topk(x.astype(np.float16), 2)
        self.assertEqual(v16.dtype, np.float32)
        with self.assertRaisesRegex(ValueError, "larger than the axis"):
            smx.softmax_topk(x, 12)
        with self.assertRaises(ValueError):
            smx.softmax_topk(x, -1)
        with self.assertRaises(TypeError):
            smx.softmax_topk(x, 2.0)
        self.assertEqual(smx.softmax_topk(x, 0)[0].shape, (7, 0))


class Sample(unittest.TestCase):
    def test_reproducible_and_greedy(self):
        x = randn((200, 1000))
        for method in ("multinomial", "gumbel"):
            a = smx.sample(x, 42, step=3, method=method, top_p=0.9, top_k=50)
            b = smx.sample(x, 42, step=3, method=method, top_p=0.9, top_k=50, threads=2)
            c = smx.sample(x, 43, step=3, method=method, top_p=0.9, top_k=50)
            self.assertEqual(a.dtype, np.int64)
            self.assertEqual(a.shape, (200,))
            np.testing.assert_array_equal(a, b)
            self.assertFalse(np.array_equal(a, c))
            # pieces with row_offset draw as the whole batch
            p = np.concatenate([smx.sample(x[:70], 42, step=3, method=method, top_p=0.9, top_k=50),
                                smx.sample(x[70:], 42, step=3, method=method, top_p=0.9, top_k=50, row_offset=70)])
            np.testing.assert_array_equal(a, p)
        am = x.argmax(-1)
        np.testing.assert_array_equal(smx.sample(x, 1, greedy=True), am)
        np.testing.assert_array_equal(smx.sample(x, 1, temperature=0.0), am)
        np.testing.assert_array_equal(smx.sample(x, 1, top_k=1), am)
        np.testing.assert_array_equal(smx.sample(x.astype(np.float64), 1, greedy=True), am)
        top2 = np.argsort(-x, axis=-1)[:, :2]
        s = smx.sample(x, 9, top_k=2)
        self.assertTrue(np.all((s == top2[:, 0]) | (s == top2[:, 1])))

    def test_distribution(self):
        row = np.array([0.0, 1.0, -1.0, 2.0, -np.inf], np.float32)
        x = np.tile(row, (40000, 1))
        p = np.exp(row.astype(np.float64) - 2.0)
        p /= p.sum()
        for method in ("multinomial", "gumbel"):
            s = smx.sample(x, 7, method=method)
            f = np.bincount(s, minlength=5) / len(s)
            sigma = np.sqrt(p * (1 - p) / len(s))
            self.assertTrue(np.all(np.abs(f - p) <= 5 * sigma + 1e-12), "%s: %s vs %s" % (method, f, p))
            self.assertEqual(f[4], 0.0)

    def test_special_and_arguments(self):
        x = randn((3, 6))
        x[1] = -np.inf
        x[2, 2] = np.nan
        self.assertEqual(smx.sample(x, 0)[1:].tolist(), [-1, -1])
        self.assertEqual(smx.sample(randn((6,)), 0).shape, ())
        with self.assertRaises(ValueError):
            smx.sample(x, 0, top_p=1.5)
        with self.assertRaises(ValueError):
            smx.sample(x, 0, min_p=-0.1)
        with self.assertRaises(ValueError):
            smx.sample(x, 0, temperature=-1.0)
        with self.assertRaises(ValueError):
            smx.sample(x, 0, method="beam")
        with self.assertRaises(ValueError):
            smx.sample(x, -1)
        with self.assertRaises(TypeError):
            smx.sample(x, 1.5)
        with self.assertRaises(ValueError):
            smx.sample(np.zeros((2, 0), np.float32), 0)


class GumbelSoftmax(unittest.TestCase):
    def test_soft_hard_backward(self):
        x = randn((50, 30))
        y = smx.gumbel_softmax(x, 0.5, 11, step=2)
        np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-5)
        np.testing.assert_array_equal(y, smx.gumbel_softmax(x, 0.5, 11, step=2))
        self.assertFalse(np.array_equal(y, smx.gumbel_softmax(x, 0.5, 12, step=2)))
        hard, soft = smx.gumbel_softmax(x, 1.0, 11, hard=True)
        self.assertTrue(np.all(hard.sum(-1) == 1.0))
        # the hard sample is the Gumbel-max token of the same noise
        np.testing.assert_array_equal(hard.argmax(-1), smx.sample(x, 11, method="gumbel"))
        np.testing.assert_array_equal(soft.argmax(-1), hard.argmax(-1))
        dy = randn((50, 30), 1.0)
        dx = smx.gumbel_softmax_backward(y, dy, 0.5)
        y64 = y.astype(np.float64)
        ref = y64 * (dy - np.sum(dy * y64, -1, keepdims=True)) / 0.5
        np.testing.assert_allclose(dx, ref, rtol=0, atol=1e-5 * np.abs(dy).max())
        self.assertEqual(smx.gumbel_softmax(x.astype(np.float16), 1.0, 1).dtype, np.float16)
        with self.assertRaises(ValueError):
            smx.gumbel_softmax(x, 0.0, 1)
        with self.assertRaises(ValueError):
            smx.gumbel_softmax_backward(y, dy[:3], 1.0)


class TinyTemperatures(unittest.TestCase):
    # subnormal temperatures are positive finite numbers: the T -> 0 limit, never NaN
    def test_limit_everywhere(self):
        x = np.array([[1, 3, 3, -2, -np.inf, 2.75], [0, -1, 0, -5, -0.5, -2]], np.float32)
        t = np.array([1, 0])
        for T in (5e-324, 1e-310, 8e-309, 1e-300, 1e-40):
            with self.subTest(T=T):
                v, i = smx.softmax_topk(x, 2, temperature=T)
                np.testing.assert_array_equal(v, [[0.5, 0.5], [0.5, 0.5]])
                v, i = smx.softmax_topk(x, 2, log=True, temperature=T)
                np.testing.assert_allclose(v, np.full((2, 2), -np.log(2.0)), rtol=1e-6)
                loss, grad = smx.cross_entropy(x, t, reduction="none", temperature=T, return_grad=True)
                np.testing.assert_allclose(loss, [np.log(2.0), np.log(2.0)], rtol=1e-6)
                self.assertFalse(np.isnan(grad).any())
                tok = smx.sample(x, seed=1, temperature=T)
                self.assertIn(tok[0], (1, 2))
                self.assertIn(tok[1], (0, 2))
                y = smx.softmax(x, temperature=T)
                for f in (smx.softmax_backward, smx.log_softmax_backward):
                    yy = y if f is smx.softmax_backward else smx.log_softmax(x, temperature=T)
                    dx = f(yy, np.zeros_like(x), temperature=T)
                    np.testing.assert_array_equal(dx, np.zeros_like(x))
                np.testing.assert_array_equal(smx.gumbel_softmax_backward(y, np.zeros_like(x), T), np.zeros_like(x))
                g = smx.gumbel_softmax(x, T, seed=2)
                np.testing.assert_array_equal(np.sort(g, axis=-1)[:, -1], [1, 1])


class ReleasesTheGIL(unittest.TestCase):
    def test_other_threads_run(self):
        # While one thread is inside long smx calls, another Python thread keeps
        # running: it records times strictly inside the calls.
        x = randn((256, 50000))
        t = RNG.integers(0, 50000, 256)
        calls = (lambda: smx.cross_entropy(x, t, return_grad=True), lambda: smx.softmax_topk(x, 50),
                 lambda: smx.sample(x, 1, top_p=0.9), lambda: smx.softmax_backward(x, x))
        for call in calls:
            self.assertGreater(stamps_inside(call, 4), 3, "no progress of other threads during the call (GIL held?)")


if __name__ == "__main__":
    unittest.main()
