"""smx.torch.softmax_topk and smx.torch.sample on CPU tensors: against the NumPy smx.softmax_topk and
smx.sample (the same library, bit for bit), against long double references (the top-k values within smx.h's
softmax bound, the order by (-x, index)) and float64 ones (the sampled tokens inside the float64 nucleus and
distributed as the float64 softmax), every dtype, strided layouts read in place, the special-value policy,
the gradient of the values, thread counts, and bad input (errors naming the argument). Skipped without torch."""
import math
import unittest

import numpy as np

try:
    import torch
except ImportError:
    torch = None

EPS32 = 2.0 ** -24


def ref_topk(x64, k, T=1.0, log=False):
    """long double reference along the last axis: (values, indices, (x - max) / T), order (-x, index)."""
    z = x64.astype(np.longdouble) / T
    m = z.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    vals = (z - lse) if log else np.exp(z - lse)
    n = x64.shape[-1]
    order = np.empty(x64.shape[:-1] + (k,), dtype=np.int64)
    for r in np.ndindex(*x64.shape[:-1]):
        order[r] = np.lexsort((np.arange(n), -x64[r]))[:k]
    return np.take_along_axis(vals, order, -1), order, (z - m).astype(np.float64)


@unittest.skipIf(torch is None, "torch is not installed")
class SoftmaxTopk(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx
        import smx.torch as st
        cls.smx, cls.st = smx, st

    def test_same_as_numpy(self):
        g = torch.Generator().manual_seed(0)
        for dt in (torch.float32, torch.float16):
            x = (torch.randn(3, 5, 40, generator=g) * 3).to(dt)
            for dim, k, log, T in ((-1, 5, False, 1.0), (1, 2, True, 0.7), (0, 3, False, 2.5), (-1, 40, True, 1.0)):
                with self.subTest(dtype=dt, dim=dim, k=k, log=log, T=T):
                    v, i = self.st.softmax_topk(x, k, dim=dim, temperature=T, log=log)
                    vn, inn = self.smx.softmax_topk(x.numpy(), k, axis=dim, temperature=T, log=log)
                    self.assertEqual(v.dtype, torch.float32)
                    self.assertEqual(i.dtype, torch.int64)
                    self.assertEqual(tuple(v.shape), vn.shape)
                    np.testing.assert_array_equal(v.numpy(), vn)
                    np.testing.assert_array_equal(i.numpy(), inn)

    def test_against_long_double(self):
        g = torch.Generator().manual_seed(1)
        for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            x = (torch.randn(6, 257, generator=g) * 4).to(dt)
            x64 = x.double().numpy()
            for k, log, T in ((1, False, 1.0), (7, False, 0.6), (50, True, 1.3)):
                with self.subTest(dtype=dt, k=k, log=log, T=T):
                    v, i = self.st.softmax_topk(x, k, temperature=T, log=log)
                    rv, ri, t = ref_topk(x64, k, T, log)
                    np.testing.assert_array_equal(i.numpy(), ri)   # exact, ties (bf16, f16) to the lowest index
                    self.assertEqual(v.dtype, torch.float64 if dt == torch.float64 else torch.float32)
                    eps = 2.0 ** -52 if dt == torch.float64 else EPS32
                    tsel = np.abs(np.take_along_axis(t, ri, -1))
                    err = np.abs(v.double().numpy().astype(np.longdouble) - rv).astype(np.float64)
                    rv = rv.astype(np.float64)
                    bound = 4 * eps * np.maximum(1, np.abs(rv)) if log else (4 + tsel / 2) * eps * rv
                    self.assertTrue(np.all(err <= bound), float(np.max(err / np.maximum(bound, 1e-300))))

    def test_strided_in_place_and_copied(self):
        from smx.torch._device import rows2d
        base = torch.randn(8, 3, 30, dtype=torch.float64)
        ref_v, ref_i = self.st.softmax_topk(base[:, :, :20].contiguous(), 4)
        sliced = base[:, :, :20]                                      # rows 30 apart: read in place
        v2, _ = rows2d(sliced, 2)
        self.assertEqual(v2.data_ptr(), base.data_ptr())
        self.assertEqual(v2.stride(), (30, 1))
        for t, dim in ((sliced, -1), (sliced.transpose(0, 1), 2), (base.transpose(1, 2)[:, :20, :], 1)):
            with self.subTest(shape=tuple(t.shape), stride=t.stride(), dim=dim):
                v, i = self.st.softmax_topk(t, 4, dim=dim)
                want_v = ref_v if t is sliced else ref_v.transpose(0, 1) if dim == 2 else ref_v.transpose(1, 2)
                want_i = ref_i if t is sliced else ref_i.transpose(0, 1) if dim == 2 else ref_i.transpose(1, 2)
                torch.testing.assert_close(v, want_v, rtol=0, atol=0)
                torch.testing.assert_close(i, want_i, rtol=0, atol=0)
        cols = base[:, 0, ::2]                                        # stride-2 rows: one contiguous copy
        v2, _ = rows2d(cols, 1)
        self.assertNotEqual(v2.data_ptr(), base.data_ptr())
        torch.testing.assert_close(self.st.softmax_topk(cols, 3)[0], self.st.softmax_topk(cols.contiguous(), 3)[0],
                                   rtol=0, atol=0)
        e = torch.randn(1, 10).expand(4, 10)                          # rows 0 apart: copied, not misread
        v, i = self.st.softmax_topk(e, 2)
        self.assertTrue(bool(torch.all(i == i[0])))

    def test_special_rows(self):
        inf, nan = float("inf"), float("nan")
        x = torch.tensor([[0.0, 1.0, nan, 2.0], [-inf, -inf, -inf, -inf], [1.0, inf, 0.0, inf], [-inf, 3.0, -inf, 1.0]])
        v, i = self.st.softmax_topk(x, 3)
        self.assertTrue(bool(torch.isnan(v[0]).all()))
        self.assertEqual(i[0].tolist(), [-1, -1, -1])
        self.assertEqual(i[1].tolist(), [0, 1, 2])
        self.assertEqual(v[1].tolist(), [0.0, 0.0, 0.0])
        self.assertEqual(i[2].tolist(), [1, 3, 0])
        self.assertEqual(v[2].tolist(), [0.5, 0.5, 0.0])
        self.assertEqual(i[3].tolist(), [1, 3, 0])
        self.assertEqual(v[3, 2].item(), 0.0)
        lv, _ = self.st.softmax_topk(x, 3, log=True)
        self.assertEqual(lv[1].tolist(), [-inf] * 3)
        self.assertAlmostEqual(lv[2, 0].item(), -math.log(2), places=6)

    def test_gradient(self):
        g = torch.Generator().manual_seed(2)
        for log in (False, True):
            for dim, T in ((-1, 1.0), (0, 0.6)):
                x = torch.randn(5, 9, generator=g, dtype=torch.float64, requires_grad=True)
                with self.subTest(log=log, dim=dim, T=T):
                    self.assertTrue(torch.autograd.gradcheck(
                        lambda t: self.st.softmax_topk(t, 3, dim=dim, temperature=T, log=log)[0], (x,),
                        eps=1e-6, atol=1e-8, rtol=1e-6))
        x = torch.randn(4, 30, generator=g).requires_grad_()
        w = torch.randn(4, 5, generator=g)
        v, i = self.st.softmax_topk(x, 5, temperature=0.8)
        self.assertFalse(i.requires_grad)
        (v * w).sum().backward()
        y = x.detach().clone().requires_grad_()
        (torch.softmax(y / 0.8, -1).gather(-1, i) * w).sum().backward()
        torch.testing.assert_close(x.grad, y.grad, rtol=1e-5, atol=1e-7)

    def test_second_derivative_raises(self):
        x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
        v, _ = self.st.softmax_topk(x, 2)
        (gx,) = torch.autograd.grad((v * v).sum(), x, create_graph=True)
        with self.assertRaisesRegex(RuntimeError, "no second derivative"):
            gx.sum().backward()

    def test_threads(self):
        x = torch.randn(64, 3000)
        a = self.st.softmax_topk(x, 10, threads=1)
        for th in (2, None):
            b = self.st.softmax_topk(x, 10, threads=th)
            self.assertTrue(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]))

    def test_empty_and_k0(self):
        v, i = self.st.softmax_topk(torch.randn(0, 5), 2)
        self.assertEqual(tuple(v.shape), (0, 2))
        v, i = self.st.softmax_topk(torch.randn(3, 5), 0)
        self.assertEqual(tuple(i.shape), (3, 0))

    def test_bad_input(self):
        x = torch.randn(3, 5)
        with self.assertRaisesRegex(ValueError, r"softmax_topk: k = 6 is larger than the size of dim -1 \(5\)"):
            self.st.softmax_topk(x, 6)
        with self.assertRaisesRegex(ValueError, "k must be >= 0"):
            self.st.softmax_topk(x, -1)
        with self.assertRaisesRegex(TypeError, "k must be an int"):
            self.st.softmax_topk(x, 1.5)
        with self.assertRaisesRegex(TypeError, "k must be an int"):
            self.st.softmax_topk(x, True)
        with self.assertRaisesRegex(IndexError, "dim 2 is out of range"):
            self.st.softmax_topk(x, 2, dim=2)
        with self.assertRaisesRegex(TypeError, "dim must be an int"):
            self.st.softmax_topk(x, 2, dim=None)
        with self.assertRaisesRegex(TypeError, "input has dtype torch.int32"):
            self.st.softmax_topk(x.to(torch.int32), 2)
        with self.assertRaisesRegex(TypeError, "input must be a tensor"):
            self.st.softmax_topk(x.numpy(), 2)
        with self.assertRaisesRegex(ValueError, "temperature"):
            self.st.softmax_topk(x, 2, temperature=-1.0)
        with self.assertRaisesRegex(ValueError, "at least one dimension"):
            self.st.softmax_topk(torch.tensor(1.0), 1)


@unittest.skipIf(torch is None, "torch is not installed")
class Sample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx
        import smx.torch as st
        cls.smx, cls.st = smx, st

    CASES = (dict(), dict(temperature=0.7, top_k=5), dict(top_p=0.8), dict(min_p=0.1, method="gumbel"),
             dict(temperature=0.0), dict(top_k=3, top_p=0.9, min_p=0.05, method="gumbel"))

    def test_same_as_numpy(self):
        g = torch.Generator().manual_seed(3)
        x = torch.randn(2, 16, 300, generator=g) * 2
        for dt in (torch.float32, torch.float16):
            xd = x.to(dt)
            for kw in self.CASES:
                with self.subTest(dtype=dt, **kw):
                    t = self.st.sample(xd, seed=11, step=4, **kw)
                    self.assertEqual(t.dtype, torch.int64)
                    self.assertEqual(tuple(t.shape), (2, 16))
                    np.testing.assert_array_equal(t.numpy(), self.smx.sample(xd.numpy(), 11, step=4, **kw))
        # bfloat16 widens exactly to float32: the same tokens as the float32 row
        xb = x.to(torch.bfloat16)
        for kw in self.CASES:
            with self.subTest(dtype="bfloat16", **kw):
                np.testing.assert_array_equal(self.st.sample(xb, seed=5, **kw).numpy(),
                                              self.smx.sample(xb.float().numpy(), 5, **kw))

    def test_row_offset_and_strides(self):
        x = torch.randn(12, 50, dtype=torch.float64)
        whole = self.st.sample(x, seed=2, top_p=0.9)
        parts = torch.cat([self.st.sample(x[:5], seed=2, top_p=0.9),
                           self.st.sample(x[5:], seed=2, top_p=0.9, row_offset=5)])
        self.assertTrue(torch.equal(whole, parts))
        wide = torch.randn(12, 80, dtype=torch.float64)
        wide[:, :50] = x
        self.assertTrue(torch.equal(self.st.sample(wide[:, :50], seed=2, top_p=0.9), whole))   # read in place
        self.assertTrue(torch.equal(self.st.sample(x.t().contiguous().t(), seed=2, top_p=0.9), whole))
        self.assertTrue(torch.equal(self.st.sample(x, seed=2, top_p=0.9, threads=1), whole))

    def test_against_float64(self):
        """Tokens inside the float64 nucleus; frequencies of many rows of one logit vector near the float64
        softmax (independent Philox streams per row)."""
        g = torch.Generator().manual_seed(4)
        row = torch.randn(12, generator=g, dtype=torch.float64) * 1.5
        rows = 20000
        x = row.expand(rows, 12)
        p = torch.softmax(row / 0.9, 0).numpy()
        for method in ("multinomial", "gumbel"):
            with self.subTest(method=method):
                tok = self.st.sample(x, temperature=0.9, method=method, seed=7).numpy()
                freq = np.bincount(tok, minlength=12) / rows
                sd = np.sqrt(p * (1 - p) / rows)
                self.assertTrue(np.all(np.abs(freq - p) <= 5 * sd + 1e-12), (freq, p))
        order = np.argsort(-p, kind="stable")
        keep = order[:np.searchsorted(np.cumsum(p[order]), 0.7) + 1]
        tok = self.st.sample(x[:2000], temperature=0.9, top_p=0.7, seed=8).numpy()
        self.assertTrue(set(tok.tolist()) <= set(keep.tolist()))
        self.assertEqual(set(tok.tolist()), set(keep.tolist()))
        greedy = self.st.sample(torch.randn(40, 33, dtype=torch.float64), temperature=0.0)
        self.assertEqual(greedy.shape, (40,))

    def test_special_rows(self):
        inf, nan = float("inf"), float("nan")
        x = torch.tensor([[0.0, nan, 1.0], [-inf, -inf, -inf], [0.0, inf, 5.0], [-inf, 2.0, -inf]])
        for dt in (torch.float32, torch.float64, torch.bfloat16):
            t = self.st.sample(x.to(dt), seed=1).tolist()
            self.assertEqual(t[:4], [-1, -1, 1, 1])
        self.assertEqual(self.st.sample(torch.tensor([3.0, 9.0, 1.0])).item(), 1)   # 1-D: one token, 0-d

    def test_bad_input(self):
        x = torch.randn(3, 5)
        for kw, err, msg in ((dict(top_p=1.5), ValueError, "top_p must be in"),
                             (dict(min_p=-0.1), ValueError, "min_p must be in"),
                             (dict(temperature=-1.0), ValueError, "temperature must be >= 0"),
                             (dict(top_k=-2), ValueError, "top_k must be in"),
                             (dict(method="beam"), ValueError, "method must be 'multinomial' or 'gumbel'"),
                             (dict(seed=-1), ValueError, "seed must be in"),
                             (dict(step=1.5), TypeError, "step must be an int")):
            with self.subTest(**kw):
                with self.assertRaisesRegex(err, "smx.torch.sample: " + msg):
                    self.st.sample(x, **kw)
        with self.assertRaisesRegex(TypeError, "logits has dtype torch.int64"):
            self.st.sample(torch.zeros(2, 3, dtype=torch.int64))
        with self.assertRaisesRegex(ValueError, "no classes"):
            self.st.sample(torch.zeros(2, 0))
        with self.assertRaisesRegex(ValueError, "at least one dimension"):
            self.st.sample(torch.tensor(1.0))


@unittest.skipIf(torch is None, "torch is not installed")
class Devices(unittest.TestCase):
    """The routing of a tensor's device (smx.torch._device.route): CUDA tensors never go to the host."""

    def test_cuda_without_a_cuda_build(self):
        from smx.torch import _device
        if _device.cuda_module() is not None:
            self.skipTest("this build has smx._smx_cuda")
        for fn in ("softmax", "cross_entropy", "softmax_topk", "sample"):
            with self.assertRaisesRegex(RuntimeError, r"smx.torch.%s: the input is a CUDA tensor \(cuda:1\), but "
                                        r"this smx was built without CUDA .*-DSMX_CUDA=ON.* never copies" % fn):
                _device.route(fn, torch.device("cuda", 1))

    def test_cuda_build_routes_cuda_tensors(self):
        from smx.torch import _device
        mod = _device.cuda_module()
        if mod is None:
            self.skipTest("this build has no smx._smx_cuda")
        self.assertIs(_device.route("softmax", torch.device("cuda", 0)), mod)

    def test_cpu_and_other_devices(self):
        from smx.torch import _device
        self.assertIsNone(_device.route("softmax", torch.device("cpu")))
        with self.assertRaisesRegex(TypeError, "smx.torch.softmax: the input is on meta; smx runs on CPU and CUDA"):
            _device.route("softmax", torch.device("meta"))
        import smx.torch as st
        m = torch.empty(2, 3, device="meta")
        for f in (lambda: st.softmax_topk(m, 1), lambda: st.sample(m), lambda: st.softmax(m),
                  lambda: st.logsumexp(m), lambda: st.cross_entropy(m, torch.zeros(2, dtype=torch.int64))):
            with self.assertRaisesRegex(TypeError, "on meta"):
                f()


if __name__ == "__main__":
    unittest.main()
