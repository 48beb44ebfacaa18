"""smx.torch's CUDA path (python/smx/torch/_cuda.py) checked without a GPU: its functions take the CUDA module
as an argument, so here they run on CPU tensors against CpuAsCuda, an object with the signatures of
smx._smx_cuda whose calls go to the CPU library (libsmx.so through ctypes, the same functions the CUDA ones
mirror, with the same pointers, leading dimensions, sizes, dtype codes and options). The results must equal
smx.torch's CPU path: this checks the plumbing (row layout, leading dimensions, output shapes, workspace,
stream, autograd, the target check, the sampling parameters), not the kernels (tests/cuda on a GPU; scripts/check-cuda).

In a CUDA build the real smx._smx_cuda is also loaded and called with the same argument lists: without a GPU
(or with host pointers) it must refuse with an exception, which checks that its signatures are those used
here. Run with the path of libsmx.so as SMX_LIBRARY (ctest sets it); skipped without torch."""
import ctypes as ct
import os
import unittest

try:
    import torch
except ImportError:
    torch = None

STREAM = 0x5EED   # the stream CpuAsCuda expects: the one the test's stream function gives


class Options(ct.Structure):
    _fields_ = [("algo", ct.c_int), ("temperature", ct.c_double), ("flags", ct.c_uint32), ("threads", ct.c_int),
                ("loss", ct.c_void_p)]


class LossExt(ct.Structure):
    _fields_ = [("reduction", ct.c_int), ("ignore_index", ct.c_int64), ("grad_scale", ct.c_double),
                ("label_smoothing", ct.c_double), ("z_loss", ct.c_double)]


class SampleParams(ct.Structure):
    _fields_ = [("temperature", ct.c_double), ("top_k", ct.c_size_t), ("top_p", ct.c_double), ("min_p", ct.c_double),
                ("greedy", ct.c_int), ("method", ct.c_int), ("row_offset", ct.c_uint64)]


class CpuAsCuda:
    """smx._smx_cuda's interface over the CPU library (see the module's doc)."""
    SOFTMAX, LOG_SOFTMAX, LOGSUMEXP, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD, CROSS_ENTROPY = range(6)
    MAX_TOPK = 1024
    SFX = ("f32", "f16", "bf16")

    def __init__(self, path):
        self.lib = ct.CDLL(path)
        self.calls = []
        self.refused = False
        self.workspaces = {}

    def _fn(self, name):
        f = getattr(self.lib, name)
        f.restype = ct.c_int
        return f

    def _check(self, s, stream, ws, ws_bytes, op, rows, cols):
        if stream != STREAM:
            raise AssertionError("the call did not run on the caller's stream: %r" % (stream,))
        need = self.workspace_size(op, rows, cols)
        if need and (ws == 0 or ws_bytes < need):
            raise AssertionError("workspace %d bytes at %#x, %d needed" % (ws_bytes, ws, need))
        if s != 0:
            raise ValueError("smx status %d" % s)

    def workspace_size(self, op, rows, cols):
        # not libsmx_cuda's sizes: enough to check that the caller asks for one, allocates it and passes it
        return 64 + 8 * rows if op == self.CROSS_ENTROPY else (40 * rows if cols > 16384 else 0)

    def rows(self, op, dt, x, ldx, y, ldy, rows, cols, stream, ws, ws_bytes, t, masked):
        o = Options(0, t, 1 if masked else 0, 1, None)
        self.calls.append(("rows", op, dt, ldx, ldy, rows, cols))
        z = ct.c_size_t
        if op == self.LOGSUMEXP:
            s = self._fn("smx_logsumexp_rows_" + self.SFX[dt])(ct.c_void_p(x), z(ldx), ct.c_void_p(y), z(rows),
                                                                z(cols), ct.byref(o))
        else:
            name = ("smx_softmax_rows_", "smx_log_softmax_rows_")[op] + self.SFX[dt]
            s = self._fn(name)(ct.c_void_p(x), z(ldx), ct.c_void_p(y), z(ldy), z(rows), z(cols), ct.byref(o))
        self._check(s, stream, ws, ws_bytes, op, rows, cols)

    def backward(self, op, dt, y, ldy, dy, lddy, dx, lddx, rows, cols, stream, ws, ws_bytes, t):
        o = Options(0, t, 0, 1, None)
        self.calls.append(("backward", op, dt, ldy, lddy, lddx, rows, cols))
        z = ct.c_size_t
        name = ("smx_softmax_backward_rows_", "smx_log_softmax_backward_rows_")[op] + self.SFX[dt]
        s = self._fn(name)(ct.c_void_p(y), z(ldy), ct.c_void_p(dy), z(lddy), ct.c_void_p(dx), z(lddx), z(rows),
                           z(cols), ct.byref(o))
        self._check(s, stream, ws, ws_bytes, self.SOFTMAX_BACKWARD + op, rows, cols)

    def cross_entropy(self, dt, x, ld, tg, loss, grad, ldg, lse, rows, cols, stream, ws, ws_bytes, red, ignore, ls,
                      zl, gs, t, masked):
        le = LossExt(red, ignore, gs, ls, zl)
        o = Options(0, t, 1 if masked else 0, 1, ct.cast(ct.pointer(le), ct.c_void_p))
        self.calls.append(("cross_entropy", dt, ld, ldg, rows, cols, red))
        z, p = ct.c_size_t, ct.c_void_p
        s = self._fn("smx_cross_entropy_" + self.SFX[dt])(p(x), z(ld), p(tg), p(loss), p(grad or None), z(ldg),
                                                          p(lse or None), z(rows), z(cols), ct.byref(o))
        # libsmx_cuda finds bad targets on the device and writes nothing; cross_entropy_status reports it
        self.refused = s == 10
        self._check(0 if self.refused else s, stream, ws, ws_bytes, self.CROSS_ENTROPY, rows, cols)
        self.workspaces[ws] = self.refused

    def cross_entropy_status(self, stream, ws, ws_bytes):
        if stream != STREAM or ws not in self.workspaces:
            raise AssertionError("status asked of another stream or workspace")
        if self.workspaces[ws]:
            raise ValueError("smx._smx_cuda.cross_entropy_status: a target is outside [0, classes)")


    # fused top-k and sampling (smx._smx_cuda.topk / sample)
    def topk_workspace_size(self, rows, cols, k):
        return 0 if cols <= 16384 else (40 + 8 * k) * rows * ((cols + 16383) // 16384)

    def topk(self, dt, log, x, ldx, values, indices, rows, cols, k, stream, ws, ws_bytes, t, masked):
        o = Options(0, t, 1 if masked else 0, 1, None)
        self.calls.append(("topk", dt, log, ldx, rows, cols, k))
        z, p = ct.c_size_t, ct.c_void_p
        name = ("smx_softmax_topk_rows_", "smx_log_softmax_topk_rows_")[int(log)] + self.SFX[dt]
        s = self._fn(name)(p(x), z(ldx), p(values), p(indices), z(rows), z(cols), z(k), ct.byref(o))
        need = self.topk_workspace_size(rows, cols, k)
        if need and (ws == 0 or ws_bytes < need):
            raise AssertionError("top-k workspace %d bytes, %d needed" % (ws_bytes, need))
        self._check(s, stream, 0, 0, self.SOFTMAX, 0, 0)

    def sample_workspace_size(self, rows, cols, t, top_k, top_p, min_p, method, row_offset):
        return 64 * rows if 0 < top_k < cols else 0

    def sample(self, dt, x, ldx, tokens, rows, cols, stream, ws, ws_bytes, seed, step, t, top_k, top_p, min_p, method,
               row_offset):
        prm = SampleParams(t, top_k, top_p, min_p, 0, method, row_offset)
        self.calls.append(("sample", dt, ldx, rows, cols))
        z, p = ct.c_size_t, ct.c_void_p
        s = self._fn("smx_sample_rows_" + self.SFX[dt])(p(x), z(ldx), p(tokens), z(rows), z(cols), ct.byref(prm),
                                                        ct.c_uint64(seed), ct.c_uint64(step), None)
        need = self.sample_workspace_size(rows, cols, t, top_k, top_p, min_p, method, row_offset)
        if need and (ws == 0 or ws_bytes < need):
            raise AssertionError("sampling workspace %d bytes, %d needed" % (ws_bytes, need))
        self._check(s, stream, 0, 0, self.SOFTMAX, 0, 0)

def stream(device):
    return STREAM


@unittest.skipIf(torch is None, "torch is not installed")
class CudaPathOnCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx.torch as st
        from smx.torch import _cuda
        cls.st, cls.cu = st, _cuda
        path = os.environ.get("SMX_LIBRARY")
        if not path:
            raise unittest.SkipTest("SMX_LIBRARY (the path of libsmx.so) is not set")
        cls.mod = CpuAsCuda(path)

    def assert_same(self, a, b, exact=True):
        self.assertEqual(a.dtype, b.dtype)
        self.assertEqual(a.shape, b.shape)
        if exact:
            torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
        else:
            torch.testing.assert_close(a, b, equal_nan=True)

    def inputs(self, dt):
        g = torch.Generator().manual_seed(5)
        base = torch.randn(4, 6, 40, generator=g) * 3
        base[0, 1, 5] = float("-inf")
        base[1, 2, :] = float("-inf")
        return [(base.to(dt), -1), (base.to(dt), 1), (base.to(dt)[:, :, :25], -1), (base.to(dt).transpose(0, 2), 0),
                (base.to(dt)[0], 0)]

    def test_rows_forward_backward(self):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for x, dim in self.inputs(dt):
                for name in ("softmax", "log_softmax", "logsumexp"):
                    for T in (1.0, 0.6):
                        with self.subTest(dtype=dt, shape=tuple(x.shape), stride=x.stride(), dim=dim, op=name, T=T):
                            a = x.clone().requires_grad_() if x.is_contiguous() else x.detach().requires_grad_()
                            b = x.detach().clone().requires_grad_()
                            ya = getattr(self.cu, name)(self.mod, a, dim, temperature=T, stream=stream)
                            yb = getattr(self.st, name)(b, dim, temperature=T)
                            self.assert_same(ya, yb)
                            dy = torch.randn(yb.shape, generator=torch.Generator().manual_seed(6)).to(dt)
                            if name != "logsumexp":
                                dy = dy.transpose(0, -1).contiguous().transpose(0, -1)   # a strided upstream gradient
                            (ga,) = torch.autograd.grad(ya, a, dy)
                            (gb,) = torch.autograd.grad(yb, b, dy)
                            self.assert_same(ga, gb, exact=name != "logsumexp")
        self.assertIn(("rows", 0, 0, 40, 40, 24, 40), self.mod.calls)   # (4, 6, 40) dim -1: one call of 24 rows
        self.assertIn(("rows", 0, 0, 40, 25, 24, 25), self.mod.calls)   # [..., :25]: read in place, ld 40

    def test_keepdim_and_long_rows(self):
        x = torch.randn(3, 20000).requires_grad_()
        y = self.cu.logsumexp(self.mod, x, 1, keepdim=True, stream=stream)
        self.assertEqual(tuple(y.shape), (3, 1))
        self.assert_same(y, self.st.logsumexp(x.detach(), 1, keepdim=True))
        y.sum().backward()
        torch.testing.assert_close(x.grad, torch.softmax(x.detach(), 1))
        y = self.cu.softmax(self.mod, x, 1, stream=stream)   # above 16384: the fake asks for a workspace
        self.assert_same(y, self.st.softmax(x.detach(), 1))

    def test_cross_entropy(self):
        g = torch.Generator().manual_seed(7)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for shape in ((5, 11), (2, 11, 3)):
                x = (torch.randn(shape, generator=g) * 2).to(dt)
                tshape = (shape[0],) + shape[2:]
                t = torch.randint(0, 11, tshape, generator=g)
                t.view(-1)[1] = -100
                for red in ("mean", "sum", "none"):
                    for ls, zl in ((0.0, 0.0), (0.1, 1e-3)):
                        with self.subTest(dtype=dt, shape=shape, reduction=red, ls=ls, z=zl):
                            a = x.clone().requires_grad_()
                            b = x.clone().requires_grad_()
                            xa = a.movedim(1, -1) if a.dim() > 2 else a
                            la = self.cu.cross_entropy(self.mod, xa, t, reduction=red, label_smoothing=ls, z_loss=zl,
                                                       stream=stream)
                            lb = self.st.cross_entropy(b, t, reduction=red, label_smoothing=ls, z_loss=zl)
                            # the CPU path computes bfloat16 in float32, the CUDA one has bfloat16 rows
                            self.assert_same(la, lb, exact=dt != torch.bfloat16)
                            up = torch.rand(la.shape, generator=g).to(dt) + 0.5
                            (ga,) = torch.autograd.grad(la, a, up)
                            (gb,) = torch.autograd.grad(lb, b, up)
                            self.assert_same(ga, gb, exact=dt == torch.float32)

    def test_cross_entropy_refusals(self):
        x = torch.randn(4, 6)
        with self.assertRaisesRegex(ValueError, "outside"):
            self.cu.cross_entropy(self.mod, x, torch.tensor([0, 6, 1, 2]), stream=stream)
        with self.assertRaisesRegex(ValueError, "label_smoothing must be in"):
            self.cu.cross_entropy(self.mod, x, torch.tensor([0, 1, 1, 2]), label_smoothing=2.0, stream=stream)
        with self.assertRaisesRegex(ValueError, "z_loss must be >= 0"):
            self.cu.cross_entropy(self.mod, x, torch.tensor([0, 1, 1, 2]), z_loss=-1.0, stream=stream)

    def test_refusals(self):
        x = torch.randn(3, 4)
        with self.assertRaisesRegex(TypeError, "softmax: a CUDA input of dtype torch.float64; libsmx_cuda takes"):
            self.cu.softmax(self.mod, x.double(), -1, stream=stream)
        with self.assertRaisesRegex(ValueError, "log_softmax: temperature must be > 0 and finite"):
            self.cu.log_softmax(self.mod, x, -1, temperature=0.0, stream=stream)
        with self.assertRaisesRegex(IndexError, "logsumexp: dim 2 is out of range"):
            self.cu.logsumexp(self.mod, x, 2, stream=stream)

    def test_softmax_topk(self):
        from smx.torch import _lm
        g = torch.Generator().manual_seed(8)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            base = (torch.randn(3, 5, 60, generator=g) * 3).to(dt)
            base[0, 0, 7] = float("nan")
            base[1, 1] = float("-inf")
            for x, k, dim, log in ((base, 5, -1, False), (base[:, :, :40], 3, -1, True), (base, 2, 1, False),
                                   (torch.randn(2, 20000, generator=g).to(dt), 4, -1, False)):
                with self.subTest(dtype=dt, shape=tuple(x.shape), k=k, dim=dim, log=log):
                    a = x.detach().requires_grad_()
                    b = x.detach().clone().requires_grad_()
                    va, ia = _lm._softmax_topk(self.mod, stream, a, k, dim, 0.9, log, None)
                    vb, ib = self.st.softmax_topk(b, k, dim=dim, temperature=0.9, log=log)
                    self.assert_same(va, vb)
                    self.assert_same(ia, ib)
                    up = torch.rand(vb.shape, generator=g)
                    (ga,) = torch.autograd.grad(va, a, up)
                    (gb,) = torch.autograd.grad(vb, b, up)
                    self.assert_same(ga, gb)
        self.assertIn(("topk", 0, True, 60, 15, 40, 3), self.mod.calls)   # the [..., :40] slice read in place
        with self.assertRaisesRegex(ValueError, "k = 1025 is above libsmx_cuda's largest k"):
            _lm._softmax_topk(self.mod, stream, torch.randn(2, 2000), 1025, -1, 1.0, False, None)
        with self.assertRaisesRegex(TypeError, "float64"):
            _lm._softmax_topk(self.mod, stream, torch.randn(2, 20, dtype=torch.float64), 3, -1, 1.0, False, None)

    def test_sample(self):
        from smx.torch import _lm
        g = torch.Generator().manual_seed(9)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            x = (torch.randn(4, 6, 300, generator=g) * 2).to(dt)
            for kw in (dict(), dict(temperature=0.7, top_k=5), dict(top_p=0.8, method="gumbel"), dict(min_p=0.1),
                       dict(temperature=0.0), dict(top_k=3, row_offset=9)):
                with self.subTest(dtype=dt, **kw):
                    for view in (x, x[:, :, :200]):
                        p = _lm.sample_params(**dict(dict(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0,
                                                          method="multinomial", seed=4, step=2, row_offset=0), **kw))
                        a = self.cu.sample(self.mod, view, p, stream=stream)
                        b = self.st.sample(view, seed=4, step=2, **kw)
                        self.assert_same(a, b)
        for kw, err, msg in ((dict(top_p=1.5), ValueError, r"top_p must be in \[0, 1\]"),
                             (dict(min_p=-0.1), ValueError, r"min_p must be in \[0, 1\]"),
                             (dict(temperature=-1.0), ValueError, "temperature must be >= 0"),
                             (dict(top_k=-2), ValueError, "top_k must be in"),
                             (dict(method="beam"), ValueError, "method must be 'multinomial' or 'gumbel'"),
                             (dict(method=1), TypeError, "method must be a str"),
                             (dict(seed=-1), ValueError, "seed must be in"),
                             (dict(step=1.5), TypeError, "step must be an int")):
            args = dict(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, method="multinomial", seed=0, step=0,
                        row_offset=0)
            args.update(kw)
            with self.subTest(**kw):
                with self.assertRaisesRegex(err, "smx.torch.sample: " + msg):
                    _lm.sample_params(**args)
                with self.assertRaisesRegex(err, "smx.torch.sample: " + msg):   # the CPU binding says the same
                    self.st.sample(torch.randn(2, 5), **kw)

    def test_second_derivative_raises(self):
        x = torch.randn(3, 5, requires_grad=True)
        y = self.cu.softmax(self.mod, x, -1, stream=stream)
        (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
        with self.assertRaisesRegex(RuntimeError, "no second derivative"):
            g.sum().backward()


@unittest.skipIf(torch is None, "torch is not installed")
class RealCudaModule(unittest.TestCase):
    """smx._smx_cuda itself, in a CUDA build: the argument lists used above, refused for host memory."""

    @classmethod
    def setUpClass(cls):
        from smx.torch import _device
        cls.mod = _device.cuda_module()
        if cls.mod is None:
            raise unittest.SkipTest("this build has no smx._smx_cuda (no CUDA)")

    def test_interface(self):
        m = self.mod
        for name in ("SOFTMAX", "LOG_SOFTMAX", "LOGSUMEXP", "SOFTMAX_BACKWARD", "LOG_SOFTMAX_BACKWARD",
                     "CROSS_ENTROPY", "MAX_TOPK"):
            self.assertEqual(getattr(m, name), getattr(CpuAsCuda, name))
        self.assertEqual(m.topk_workspace_size(4, 1000, 5), 0)
        self.assertEqual(m.sample_workspace_size(4, 1000, 1.0, 0, 1.0, 0.0, 0, 0), 0)
        self.assertGreaterEqual(m.device_count(), 0)
        self.assertEqual(m.workspace_size(m.SOFTMAX, 8, 1000), 0)
        self.assertGreater(m.workspace_size(m.CROSS_ENTROPY, 8, 1000), 0)
        with self.assertRaises(ValueError):
            m.workspace_size(99, 1, 1)
        x = torch.randn(2, 3)
        y = torch.empty(2, 3)
        t = torch.zeros(2, dtype=torch.int64)
        loss = torch.empty(())
        calls = (lambda: m.rows(0, 0, x.data_ptr(), 3, y.data_ptr(), 3, 2, 3, 0, 0, 0, 1.0, False),
                 lambda: m.backward(0, 0, x.data_ptr(), 3, x.data_ptr(), 3, y.data_ptr(), 3, 2, 3, 0, 0, 0, 1.0),
                 lambda: m.cross_entropy(0, x.data_ptr(), 3, t.data_ptr(), loss.data_ptr(), 0, 3, 0, 2, 3, 0, 0, 0,
                                         0, -100, 0.0, 0.0, 0.0, 1.0, False),
                 lambda: m.topk(0, False, x.data_ptr(), 3, y.data_ptr(), t.data_ptr(), 2, 3, 1, 0, 0, 0, 1.0, False),
                 lambda: m.sample(0, x.data_ptr(), 3, t.data_ptr(), 2, 3, 0, 0, 0, 1, 0, 1.0, 0, 1.0, 0.0, 0, 0))
        for c in calls:
            with self.assertRaisesRegex((ValueError, RuntimeError), r"smx._smx_cuda\.\w+: .*smx status"):
                c()
        with self.assertRaisesRegex(ValueError, "dtype code 3"):
            m.rows(0, 3, x.data_ptr(), 3, y.data_ptr(), 3, 2, 3, 0, 0, 0, 1.0, False)


if __name__ == "__main__":
    unittest.main()
