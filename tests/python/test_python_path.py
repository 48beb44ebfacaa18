"""One Python path (issue 23 item 3) and threads that follow the caller (issue 22 item 4): half-precision
torch tensors for every row op against a float64 reference within the half bound; strided and
negative-stride inputs and outputs through the walker without full-size copies; threads 1 vs 2 bitwise;
the double-backward error; shape errors naming the argument; one threads default everywhere. Runs in
ctest as python_test_python_path (and _scalar, _avx2)."""
import inspect
import tracemalloc
import unittest

import numpy as np
import torch

import smx
import smx.torch as st

U = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
# smx.torch row maps: (function, keyword arguments)
ROW_OPS = [(st.softmax, {}), (st.log_softmax, {}), (st.logsumexp, {}), (st.sigmoid, {}), (st.softpick, {}),
           (st.ssmax, {}), (st.sa_softmax, {}), (st.adaptive_softmax, {}), (st.topk_softmax, {"k": 3}),
           (st.softplus_l1, {}), (st.standardize_softmax, {}), (st.sparsemax, {}), (st.entmax15, {}),
           (st.entmax, {"alpha": 1.3}), (st.multimax, {})]
# NumPy row maps with a backward, and their parameters
NP_OPS = [("softpick", {}), ("ssmax", {"s": 0.7}), ("sa_softmax", {}), ("adaptive_softmax", {}),
          ("topk_softmax", {"k": 3}), ("softplus_l1", {}), ("standardize_softmax", {}), ("sparsemax", {}),
          ("entmax15", {}), ("entmax", {"alpha": 1.7})]


def rng_x(shape, seed=0, scale=3.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


class HalfTorch(unittest.TestCase):
    def check(self, got, want, u, what):
        got, want = got.double(), want.double()
        tol = 4 * u * want.abs() + 4 * u * max(float(want.abs().max()), 1e-30)
        bad = (got - want).abs() > tol
        self.assertFalse(bool(bad.any()), "%s: max error %g, bound %g" % (what, float((got - want).abs().max()),
                                                                         float(tol.max())))

    def test_every_row_op_half_vs_float64(self):
        x64 = torch.from_numpy(rng_x((6, 33)))
        for dt, u in U.items():
            for f, kw in ROW_OPS:
                with self.subTest(op=f.__name__, dtype=dt):
                    xh = x64.to(dt)
                    xr = xh.double().requires_grad_()      # the reference sees the same rounded input
                    xh = xh.requires_grad_()
                    y, yr = f(xh, **kw), f(xr, **kw)
                    self.assertEqual(y.dtype, dt)
                    self.check(y, yr.detach(), u, "forward")
                    g = torch.from_numpy(rng_x(tuple(y.shape), 1, 1.0))
                    (y * g.to(dt)).sum().backward()
                    (yr * g.to(dt).double()).sum().backward()
                    self.assertEqual(xh.grad.dtype, dt)
                    self.check(xh.grad, xr.grad, 4 * u, "backward")

    def test_reference_is_torch(self):
        x = torch.from_numpy(rng_x((5, 40)))
        for f, ref in ((st.softmax, torch.softmax), (st.log_softmax, torch.log_softmax),
                       (st.logsumexp, torch.logsumexp)):
            np.testing.assert_allclose(f(x, dim=-1).numpy(), ref(x, -1).numpy(), rtol=1e-13, atol=1e-13)

    def test_cross_entropy_half(self):
        x = torch.from_numpy(rng_x((8, 50)))
        t = torch.randint(0, 50, (8,), generator=torch.Generator().manual_seed(0))
        ref = torch.nn.functional.cross_entropy(x, t)
        for dt, u in U.items():
            with self.subTest(dtype=dt):
                xr = x.to(dt).double()
                got = st.cross_entropy(x.to(dt), t)
                self.assertEqual(got.dtype, dt)
                want = torch.nn.functional.cross_entropy(xr, t)
                self.assertLessEqual(abs(float(got) - float(want)), 4 * u * max(1.0, abs(float(ref))))


    def test_every_loss_half(self):
        # the losses compute half storage in float32 (cross_entropy: f16 on smx's own rows): loss and gradient
        # against the float64 computation on the same rounded logits
        x = torch.from_numpy(rng_x((6, 9), 2, 1.0))
        t = torch.tensor([0, 3, 8, 1, 1, 5])
        teacher = torch.from_numpy(rng_x((6, 9), 3, 1.0)).to(torch.bfloat16)   # exact in every dtype below
        losses = [("cross_entropy", lambda v: st.cross_entropy(v, t)), ("focal", lambda v: st.focal_loss(v, t)),
                  ("dice", lambda v: st.dice_loss(v, t)), ("z", lambda v: st.spherical_z_loss(v, t)),
                  ("info_nce", lambda v: st.info_nce(v[:, :6])), ("sparsemax", lambda v: st.sparsemax_loss(v, t)),
                  ("entmax15", lambda v: st.entmax15_loss(v, t)), ("kd", lambda v: st.kd_loss(v, teacher.to(v.dtype))),
                  ("noisy", lambda v: st.noisy_softmax_loss(v, t, torch.full((6,), 3.0, dtype=v.dtype)))]
        for dt, u in U.items():
            for name, f in losses:
                with self.subTest(loss=name, dtype=dt):
                    xh = x.to(dt).requires_grad_()
                    xr = x.to(dt).double().requires_grad_()
                    lh, lr = f(xh), f(xr)
                    self.assertEqual(lh.dtype, dt)
                    lh.backward()
                    lr.backward()
                    self.check(lh.detach(), lr.detach(), u, "loss")
                    self.check(xh.grad, xr.grad, u, "gradient")


class Strided(unittest.TestCase):
    def test_negative_strides_and_strided_out(self):
        base = rng_x((40, 90))
        for name, kw in NP_OPS:
            f, b = getattr(smx, name), getattr(smx, name + "_backward")
            for dtype in (np.float32, np.float64):
                x = base.astype(dtype)[::-2, ::-3]          # negative and non-unit steps
                for axis in (-1, 0):
                    with self.subTest(op=name, dtype=dtype, axis=axis):
                        want = f(np.ascontiguousarray(x), axis=axis, **kw)
                        out = np.zeros((x.shape[1], x.shape[0]), dtype).T     # a Fortran-order out
                        self.assertIs(f(x, axis=axis, out=out, **kw), out)
                        np.testing.assert_array_equal(out, want)
                        dy = base.astype(dtype)[1::2, ::-3]      # another strided view
                        wb = b(np.ascontiguousarray(x), want, np.ascontiguousarray(dy), axis=axis, **kw)
                        np.testing.assert_array_equal(b(x, out, dy, axis=axis, **kw), wb)

    def test_no_full_size_copy(self):
        x = rng_x((2000, 1000))[:, ::-1]                    # 16 MB, negative stride
        out = np.empty_like(x)
        for name, kw in NP_OPS:
            with self.subTest(op=name):
                tracemalloc.start()
                getattr(smx, name)(x, out=out, threads=1, **kw)
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                self.assertLess(peak, x.nbytes // 8, "a copy of the input was made")

    def test_torch_strided(self):
        x = torch.from_numpy(rng_x((30, 20)))
        for f, kw in ROW_OPS:
            with self.subTest(op=f.__name__):
                xt = x.t()                                   # non-contiguous
                d = {} if f is st.sigmoid else {"dim": 0}
                np.testing.assert_array_equal(f(xt, **d, **kw).numpy(), f(xt.contiguous(), **d, **kw).numpy())


class Threads(unittest.TestCase):
    def test_numpy_threads_identical(self):
        x = rng_x((3000, 64))
        for name, kw in NP_OPS + [("softmax", {}), ("log_softmax", {}), ("logsumexp", {})]:
            with self.subTest(op=name):
                f = getattr(smx, name)
                np.testing.assert_array_equal(f(x, threads=1, **kw), f(x, threads=2, **kw))
                np.testing.assert_array_equal(f(x.T, axis=0, threads=1, **kw), f(x.T, axis=0, threads=2, **kw))
        t = np.random.default_rng(0).integers(0, 64, 3000)
        np.testing.assert_array_equal(smx.cross_entropy(x, t, threads=1), smx.cross_entropy(x, t, threads=2))
        for a, b in zip(smx.softmax_topk(x, 5, threads=1), smx.softmax_topk(x, 5, threads=2)):
            np.testing.assert_array_equal(a, b)
        for kind in ("msp", "energy", "neg_entropy", "gen"):
            np.testing.assert_array_equal(smx.score(x, kind, threads=1), smx.score(x, kind, threads=2))

    def test_torch_follows_torch_threads(self):
        x = torch.from_numpy(rng_x((3000, 64))).float()
        old = torch.get_num_threads()
        try:
            res = []
            for n in (1, 2):
                torch.set_num_threads(n)
                res.append([st.softmax(x), st.sparsemax(x), st.cross_entropy(x, torch.zeros(3000, dtype=torch.long))])
            for a, b in zip(*res):
                self.assertTrue(torch.equal(a, b))
        finally:
            torch.set_num_threads(old)

    def test_one_default(self):
        # every public function of the module takes threads=0 (every core), of smx.torch threads=None (torch's)
        single = {"isa", "ood_metrics", "calibration", "fit_temperature", "kl_templates",
                  "noisy_softmax_noise", "NoOptimumError", "__version__"}   # no threaded library entry yet
        for name in smx.__all__:
            if name in single:
                continue
            with self.subTest(fn=name):
                p = inspect.signature(getattr(smx, name)).parameters
                self.assertIn("threads", p)
                self.assertEqual(p["threads"].default, 0)
        for name in dir(st):
            f = getattr(st, name)
            if name.startswith("_") or not inspect.isfunction(f) or name == "scaled_dot_product_attention":
                continue
            with self.subTest(fn="smx.torch." + name):
                p = inspect.signature(f).parameters
                self.assertIn("threads", p)
                self.assertIsNone(p["threads"].default)

    def test_backward_argument_order(self):
        # x, y, dy, the op's parameters, then axis, out, threads: the same for every row map's backward
        for name, _ in NP_OPS:
            with self.subTest(op=name):
                names = list(inspect.signature(getattr(smx, name + "_backward")).parameters)
                self.assertEqual(names[:3], ["x", "y", "dy"])
                self.assertEqual(names[-3:], ["axis", "out", "threads"])


class Errors(unittest.TestCase):
    def test_double_backward_raises(self):
        x = torch.from_numpy(rng_x((4, 9))).requires_grad_()
        t = torch.tensor([1, 2, 3, 4])
        for name, f in (("softmax", lambda v: st.softmax(v)[:, 0].sum()),
                        ("sparsemax", lambda v: st.sparsemax(v)[:, 0].sum()),
                        ("cross_entropy", lambda v: st.cross_entropy(v, t))):
            with self.subTest(op=name):
                g, = torch.autograd.grad(f(x), x, create_graph=True)
                with self.assertRaisesRegex(RuntimeError, "no second derivative"):
                    g.sum().backward()

    def test_shape_errors_name_the_argument(self):
        x = rng_x((3, 5))
        with self.assertRaisesRegex(ValueError, "dy has shape"):
            smx.softpick_backward(x, None, x[:, :4])
        with self.assertRaisesRegex(ValueError, "out has shape"):
            smx.entmax15(x, out=np.empty((5, 3)))
        with self.assertRaisesRegex(ValueError, "n must have"):
            smx.ssmax(x, n=[1, 2])
        with self.assertRaisesRegex(ValueError, "dy has shape"):
            smx.mixture_log_softmax_backward(rng_x((2, 3, 5)), rng_x((2, 3)), rng_x((2, 4)))
        with self.assertRaisesRegex(ValueError, "target has shape"):
            st.cross_entropy(torch.zeros(3, 5), torch.zeros(4, dtype=torch.long))

    def test_backward_names_what_it_reads(self):
        x = rng_x((3, 5))
        with self.assertRaisesRegex(ValueError, "x is required"):
            smx.softpick_backward(None, smx.softpick(x), x)
        with self.assertRaisesRegex(ValueError, "y is required"):
            smx.sparsemax_backward(x, None, x)

    def test_parameter_errors_name_the_parameter(self):
        with self.assertRaisesRegex(ValueError, "k must be"):
            smx.topk_softmax(rng_x((2, 4)), 0)
        with self.assertRaisesRegex(ValueError, "alpha must be"):
            smx.entmax(rng_x((2, 4)), alpha=1.0)


if __name__ == "__main__":
    unittest.main()
