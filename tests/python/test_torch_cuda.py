"""smx.torch on real CUDA tensors (libsmx_cuda through smx._smx_cuda), against smx.torch's CPU path on the
same values: softmax, log_softmax, logsumexp (forward and gradient), cross_entropy (loss and gradient),
softmax_topk (indices exact, values, gradient) and sample (the CPU's tokens where smx_cuda.h promises them),
every CUDA dtype, strided layouts, rows long enough to be split across blocks, a side stream, results the
same from run to run, and the refusals (float64, bad targets, k above the device's largest). Needs a GPU, PyTorch
with CUDA and a CUDA build of smx (scripts/check-cuda runs it); skipped otherwise."""
import unittest

try:
    import torch
except ImportError:
    torch = None


def _cuda_ready():
    if torch is None or not torch.cuda.is_available():
        return False
    from smx.torch import _device
    return _device.cuda_module() is not None


# the gap between two correct results (CPU and GPU, each within smx.h's bounds): a few storage ulps
TOL = {torch.float32: (2e-5, 1e-6), torch.float16: (4e-3, 1e-4), torch.bfloat16: (3e-2, 1e-3)} if torch else {}


@unittest.skipUnless(_cuda_ready(), "needs a GPU, torch with CUDA and smx._smx_cuda")
class CudaTensors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx.torch as st
        cls.st = st

    def close(self, a, b, dt):
        rtol, atol = TOL[dt]
        self.assertEqual(a.device.type, "cuda")
        torch.testing.assert_close(a.cpu(), b, rtol=rtol, atol=atol, equal_nan=True)

    def cases(self, dt):
        """(tensor, view of it to compute on, dim): the view is taken on each device, so that a slice stays a
        strided view on the GPU too (read in place with its leading dimension)."""
        g = torch.Generator().manual_seed(0)
        every = (slice(None),)
        yield torch.randn(64, 1000, generator=g).to(dt), every, -1
        yield torch.randn(8, 3, 33, generator=g).to(dt), every, 1
        yield torch.randn(5, 70000, generator=g).to(dt), (slice(None), slice(0, 65537)), -1   # split rows, ld 70000
        yield torch.randn(7, 300, generator=g).to(dt), every, 0                              # dim 0: copied rows
        x = torch.randn(6, 40, generator=g)
        x[0, 3] = float("-inf")
        x[1] = float("-inf")
        x[2, 5] = float("inf")
        x[3, 9] = float("nan")
        yield x.to(dt), every, -1

    def test_rows(self):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for full, idx, dim in self.cases(dt):
                for name in ("softmax", "log_softmax", "logsumexp"):
                    with self.subTest(dtype=dt, shape=tuple(full[idx].shape), dim=dim, op=name):
                        a = full.cuda()[idx].requires_grad_()
                        b = full[idx].clone().requires_grad_()
                        ya = getattr(self.st, name)(a, dim=dim, temperature=0.8)
                        yb = getattr(self.st, name)(b, dim=dim, temperature=0.8)
                        self.close(ya.detach(), yb.detach(), dt)
                        again = getattr(self.st, name)(a.detach(), dim=dim, temperature=0.8)
                        self.assertTrue(torch.equal(again.nan_to_num(7.0), ya.detach().nan_to_num(7.0)))
                        dy = torch.randn(yb.shape).to(dt)
                        (ga,) = torch.autograd.grad(ya, a, dy.cuda())
                        (gb,) = torch.autograd.grad(yb, b, dy)
                        self.close(ga, gb, dt)

    def test_side_stream(self):
        x = torch.randn(256, 5000, device="cuda")
        want = self.st.softmax(x)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = self.st.log_softmax(x)
            z = y.exp()
        torch.cuda.current_stream().wait_stream(s)
        torch.testing.assert_close(z, want, rtol=1e-5, atol=1e-7)

    def test_cross_entropy(self):
        g = torch.Generator().manual_seed(1)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for shape in ((32, 1000), (4, 50, 3), (2, 40000)):
                x = (torch.randn(shape, generator=g) * 3).to(dt)
                t = torch.randint(0, shape[1], (shape[0],) + shape[2:], generator=g)
                t.view(-1)[0] = -100
                for red in ("mean", "sum", "none"):
                    with self.subTest(dtype=dt, shape=shape, reduction=red):
                        a = x.cuda().requires_grad_()
                        b = x.float().clone().requires_grad_()
                        la = self.st.cross_entropy(a, t.cuda(), reduction=red, label_smoothing=0.1, z_loss=1e-4)
                        lb = self.st.cross_entropy(b, t, reduction=red, label_smoothing=0.1, z_loss=1e-4)
                        self.close(la.detach().float(), lb.detach(), dt)
                        up = torch.rand(lb.shape, generator=g) + 0.5
                        (ga,) = torch.autograd.grad(la, a, up.cuda().to(la.dtype))
                        (gb,) = torch.autograd.grad(lb, b, up)
                        self.close(ga.float(), gb, dt)

    def test_refusals(self):
        x = torch.randn(4, 10, device="cuda")
        with self.assertRaisesRegex(ValueError, "outside"):
            self.st.cross_entropy(x, torch.tensor([0, 10, 1, 2], device="cuda"))
        with self.assertRaisesRegex(ValueError, "target is on cpu"):
            self.st.cross_entropy(x, torch.tensor([0, 1, 1, 2]))
        with self.assertRaisesRegex(TypeError, "float64"):
            self.st.softmax(x.double())
        with self.assertRaisesRegex(ValueError, "above libsmx_cuda's largest k"):
            self.st.softmax_topk(torch.randn(2, 2000, device="cuda"), 1025)

    def test_softmax_topk(self):
        """The same indices as the CPU (smx_cuda.h), values within the bounds, the gradient of the values."""
        g = torch.Generator().manual_seed(2)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for shape, k, dim in (((64, 1000), 5, -1), ((4, 100000), 50, -1), ((8, 30, 7), 3, 1),
                                  ((2, 5000), 1024, -1)):
                full = (torch.randn(shape, generator=g) * 3).to(dt)
                full[0, 3] = float("nan")   # NaN rows: NaN values, indices -1
                for log in (False, True):
                    with self.subTest(dtype=dt, shape=shape, k=k, dim=dim, log=log):
                        a = full.cuda().requires_grad_()
                        b = full.clone().requires_grad_()
                        va, ia = self.st.softmax_topk(a, k, dim=dim, temperature=0.9, log=log)
                        vb, ib = self.st.softmax_topk(b, k, dim=dim, temperature=0.9, log=log)
                        self.assertTrue(torch.equal(ia.cpu(), ib))
                        self.close(va.detach(), vb.detach(), torch.float32)
                        up = torch.rand(vb.shape, generator=g)
                        (ga,) = torch.autograd.grad(va, a, up.cuda())
                        (gb,) = torch.autograd.grad(vb, b, up)
                        self.close(ga, gb, dt)

    def test_sample(self):
        """Greedy, Gumbel-max and top-k sampling give the CPU's tokens (smx_cuda.h: unless a draw falls within a
        double rounding of a boundary, allowed once); multinomial and top-p may differ where a draw falls within
        about 1e-7 of a boundary: at most one row in a hundred, as tests/cuda/test_cuda_sample."""
        g = torch.Generator().manual_seed(3)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            x = (torch.randn(4096, 3000, generator=g) * 2).to(dt)
            xc = x.cuda()
            for kw, same in ((dict(temperature=0.0), True), (dict(method="gumbel"), True),
                             (dict(top_k=50, temperature=0.8), True), (dict(top_k=20, method="gumbel"), True),
                             (dict(), False), (dict(top_p=0.9), False), (dict(min_p=0.05, top_p=0.95), False)):
                with self.subTest(dtype=dt, **kw):
                    a = self.st.sample(xc, seed=17, step=3, **kw)
                    b = self.st.sample(x, seed=17, step=3, **kw)
                    self.assertEqual(a.device.type, "cuda")
                    self.assertTrue(torch.equal(a, self.st.sample(xc, seed=17, step=3, **kw)))   # run to run
                    differ = int((a.cpu() != b).sum())
                    self.assertLessEqual(differ, 1 if same else x.shape[0] // 100, kw)


if __name__ == "__main__":
    unittest.main()
