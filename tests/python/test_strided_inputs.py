"""Non-contiguous logits through the bindings that read the caller's rows in place (python/src/matrix.c,
SMX_PY_IN_PLACE): cross_entropy, softmax_topk (also log=True), topk, sample, gumbel_softmax, focal_loss, the scores
(score, calibration, fit_temperature, kl_templates), InfoNCE, Dice and Noisy Softmax; and the float64
logits of sample, cross_entropy and top-k through their float64 entries. Every view
(rows sliced with a step, a sub-block at an offset, leading axes that merge, a transposed array, a class
axis with a step, negative strides) in every dtype the function accepts must give exactly the result of the
same values made C-contiguous: the library sees the caller's row stride, or one copy where the rows are not
unit-stride and evenly spaced."""
import unittest

import numpy as np

import smx

RNG = np.random.default_rng(2312)


def views(dtype):
    """(name, view) pairs of logits with 9 classes, each a different memory layout."""
    base = (RNG.standard_normal((12, 20)) * 3).astype(dtype)
    cube = (RNG.standard_normal((3, 4, 9)) * 3).astype(dtype)
    return [
        ("rows with a step", base[::2, :9]),
        ("a block at an offset", base[1:7, 5:14]),
        ("3-d, leading axes merge", cube),
        ("3-d, a middle slice", (RNG.standard_normal((5, 3, 9)) * 3).astype(dtype)[1:4]),
        ("transposed", np.ascontiguousarray(base[:9, :6]).T),
        ("class axis with a step", base[:5, ::2]),
        ("negative row stride", base[::-1, :9]),
        ("negative class stride", base[:6, 8::-1]),
    ]


def targets_for(x):
    return (np.arange(int(np.prod(x.shape[:-1])), dtype=np.int64) % x.shape[-1]).reshape(x.shape[:-1])


class StridedInputs(unittest.TestCase):
    def same(self, got, want, what):
        if isinstance(got, tuple):
            for g, w in zip(got, want):
                self.same(g, w, what)
            return
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=what)

    def check(self, fn, dtypes, name):
        for dt in dtypes:
            for what, v in views(dt):
                c = np.ascontiguousarray(v)
                self.assertFalse(np.shares_memory(c, v) and not v.flags.c_contiguous)
                self.same(fn(v), fn(c), f"{name} {np.dtype(dt).name} {what}")

    def test_cross_entropy(self):
        self.check(lambda x: smx.cross_entropy(x, targets_for(x), reduction="none", return_grad=True),
                   (np.float16, np.float32, np.float64), "cross_entropy")
        self.check(lambda x: smx.cross_entropy(x, targets_for(x), label_smoothing=0.1, z_loss=1e-3),
                   (np.float32,), "cross_entropy (smoothing, z-loss)")

    def test_softmax_topk(self):
        self.check(lambda x: smx.softmax_topk(x, 4), (np.float16, np.float32, np.float64), "softmax_topk")
        self.check(lambda x: smx.softmax_topk(x, 3, log=True, temperature=0.7), (np.float16, np.float32),
                   "softmax_topk log")
        # the class axis given: a view whose rows are the other axis
        for dt in (np.float16, np.float32):
            x = (RNG.standard_normal((9, 14)) * 3).astype(dt)[:, ::2]
            self.same(smx.softmax_topk(x, 2, axis=0), smx.softmax_topk(np.ascontiguousarray(x), 2, axis=0),
                      f"softmax_topk axis=0 {np.dtype(dt).name}")

    def test_topk(self):
        self.check(lambda x: smx.topk(x, 5), (np.float16, np.float32, np.float64), "topk")

    def test_sample(self):
        self.check(lambda x: smx.sample(x, seed=7, temperature=0.8, top_p=0.9), (np.float16, np.float32, np.float64),
                   "sample")
        self.check(lambda x: smx.sample(x, seed=3, top_k=3, method="gumbel"), (np.float32,), "sample gumbel")

    def test_sample_float64_computes_in_float64(self):
        # 1e8 and 1e8 + 1 are one float32: only the float64 entry sees that the second is larger
        x = np.array([[1e8, 1e8 + 1.0, 3.0]])
        self.assertEqual(int(smx.sample(x, seed=0, greedy=True)[0]), 1)
        self.assertEqual(int(smx.sample(x.astype(np.float32), seed=0, greedy=True)[0]), 0)
        # and at T = 1 the float64 row's gap of 1 is a 1 : e odds, not a tie: over many seeds, token 1 wins
        # about e / (1 + e) = 73% of the draws (float32 would give 50%)
        n = 4000
        tok = smx.sample(np.repeat(x, n, axis=0), seed=5)
        self.assertTrue(0.70 < np.mean(tok == 1) < 0.76, np.mean(tok == 1))

    def test_cross_entropy_float64_computes_in_float64(self):
        x = np.array([[1e8, 1e8 + 1.0], [0.5, -2.0]])
        t = np.array([0, 1])
        loss, grad = smx.cross_entropy(x, t, reduction="none", return_grad=True)
        self.assertEqual(loss.dtype, np.float64)
        self.assertEqual(grad.dtype, np.float64)
        want = np.array([np.log1p(np.e), np.logaddexp(0.5, -2.0) + 2.0])
        np.testing.assert_allclose(loss, want, rtol=4e-16)
        e = np.exp(x - x.max(axis=1, keepdims=True))   # x - max is exact here; x - lse would not be at 1e8
        p = e / e.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(grad, p - np.eye(2)[t], rtol=1e-15, atol=1e-16)
        # float32 sees 1e8 and 1e8 + 1 as one value: log 2
        self.assertAlmostEqual(float(smx.cross_entropy(x.astype(np.float32), t, reduction="none")[0]), np.log(2.0), 6)

    def test_topk_float64_computes_in_float64(self):
        x = np.array([[1e8, 1e8 + 1.0, 3.0], [2.5, -1.0, 2.5 + 2.0 ** -40]])
        v, i = smx.softmax_topk(x, 2)
        self.assertEqual(v.dtype, np.float64)
        np.testing.assert_array_equal(i, [[1, 0], [2, 0]])   # 2.5 + 2^-40 is above 2.5 only in float64
        e = np.exp(x - x.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(v, np.take_along_axis(p, i, axis=1), rtol=1e-15)
        rv, ri = smx.topk(x, 1)
        self.assertEqual(rv.dtype, np.float64)
        np.testing.assert_array_equal(rv[:, 0], x.max(axis=1))

    def test_gumbel_softmax(self):
        self.check(lambda x: smx.gumbel_softmax(x, 0.7, seed=9), (np.float16, np.float32, np.float64),
                   "gumbel_softmax")
        self.check(lambda x: smx.gumbel_softmax(x, 1.3, seed=2, hard=True), (np.float32,), "gumbel_softmax hard")

    def test_focal_loss(self):
        self.check(lambda x: smx.focal_loss(x, targets_for(x), reduction="none", return_grad=True),
                   (np.float32, np.float64), "focal_loss")

    def test_batch_losses(self):
        def mat(x):   # the 2-D losses take a matrix: a 3-d view's first slice keeps its layout
            return x if x.ndim == 2 else x[0]

        for sym in (False, True):
            self.check(lambda x: smx.info_nce(mat(x), targets=np.arange(mat(x).shape[0]) % mat(x).shape[1],
                                              temperature=0.5, symmetric=sym and mat(x).shape[0] <= mat(x).shape[1],
                                              reduction="none", return_grad=True),
                       (np.float32, np.float64), f"info_nce symmetric={sym}")
        self.check(lambda x: smx.dice_loss(x, targets_for(x), reduction="none", return_grad=True),
                   (np.float32, np.float64), "dice_loss")
        self.check(lambda x: smx.noisy_softmax_loss(x, targets_for(x), np.abs(x).max(axis=-1).astype(x.dtype) + 1,
                                                    seed=4, reduction="none", return_grad=True),
                   (np.float32, np.float64), "noisy_softmax_loss")

    def test_scores(self):
        def labels(x):
            return np.arange(int(np.prod(x.shape[:-1])), dtype=np.int64) % x.shape[-1]

        def flat(x):   # calibration and the fits take a matrix; its rows keep the view's layout
            return x.reshape(-1, x.shape[-1]) if x.ndim == 2 else x[0]

        for kind in ("msp", "energy", "max_logit"):
            self.check(lambda x: smx.score(x, kind), (np.float16, np.float32, np.float64), f"score {kind}")
        self.check(lambda x: smx.kl_templates(flat(x)), (np.float32,), "kl_templates")
        def fit_labels(x):   # mostly the argmax, one row in three off by one: a finite optimum T
            t = np.argmax(x, axis=-1)
            t[::3] = (t[::3] + 1) % x.shape[-1]
            return t.astype(np.int64)

        self.check(lambda x: smx.fit_temperature(flat(x), fit_labels(flat(x))), (np.float32,), "fit_temperature")
        for dt in (np.float32,):
            for what, v in views(dt):
                v = flat(v)
                got, want = smx.calibration(v, labels(v)), smx.calibration(np.ascontiguousarray(v), labels(v))
                for key in want:
                    self.same(got[key], want[key], f"calibration {what} {key}")

    def test_in_place_is_read_in_place(self):
        # a view whose rows are evenly spaced: the binding must read it at its row stride, so the padding
        # between its rows (NaN here) never reaches a result
        x = np.full((6, 16), np.nan, dtype=np.float32)
        x[:, :9] = RNG.standard_normal((6, 9))
        v = x[:, :9]
        t = targets_for(v)
        loss = smx.cross_entropy(v, t, reduction="none")
        self.assertTrue(np.all(np.isfinite(loss)))
        vals, idx = smx.softmax_topk(v, 9)
        self.assertTrue(np.all(np.isfinite(vals)) and np.all(idx < 9))
        self.assertTrue(np.all(smx.sample(v, seed=1) < 9))


if __name__ == "__main__":
    unittest.main()
