"""smx.torch's softmax, log_softmax, logsumexp and cross_entropy: gradcheck in
float64 (softmax, log_softmax, logsumexp; smx's cross-entropy is float32 only,
so its wrapper is checked against torch's own function and gradient within the
float32 bound instead), and agreement with torch's own functions. Skipped without torch."""
import unittest

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "torch is not installed")
class TorchSoftmax(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import smx.torch as st
        cls.st = st

    def test_gradcheck_f64(self):
        g = torch.Generator().manual_seed(0)
        st = self.st
        for shape, dim in (((3, 7), -1), ((4, 5, 6), 1), ((2, 3, 4), 0), ((9,), 0)):
            x = torch.randn(*shape, generator=g, dtype=torch.float64, requires_grad=True)
            for name, f in (("softmax", lambda t: st.softmax(t, dim=dim)),
                            ("log_softmax", lambda t: st.log_softmax(t, dim=dim)),
                            ("softmax T", lambda t: st.softmax(t, dim=dim, temperature=0.7)),
                            ("log_softmax T", lambda t: st.log_softmax(t, dim=dim, temperature=1.9)),
                            ("logsumexp", lambda t: st.logsumexp(t, dim=dim)),
                            ("logsumexp keepdim", lambda t: st.logsumexp(t, dim=dim, keepdim=True, temperature=0.5))):
                with self.subTest(name=name, shape=shape, dim=dim):
                    self.assertTrue(torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-8, rtol=1e-6))

    def test_non_contiguous(self):
        x = torch.randn(6, 8, dtype=torch.float64).t().requires_grad_(True)   # (8, 6), strided
        self.assertTrue(torch.autograd.gradcheck(lambda t: self.st.log_softmax(t, dim=-1), (x,)))

    def test_against_torch(self):
        g = torch.Generator().manual_seed(1)
        for dt, tol in ((torch.float32, 2e-6), (torch.float64, 1e-14)):
            x = (torch.randn(5, 300, generator=g) * 4).to(dt)
            dy = torch.randn(5, 300, generator=g).to(dt)
            for mine, ref in ((self.st.softmax, torch.softmax), (self.st.log_softmax, torch.log_softmax)):
                a = x.clone().requires_grad_(True)
                b = x.clone().requires_grad_(True)
                ya, yb = mine(a, dim=1), ref(b, dim=1)
                torch.testing.assert_close(ya, yb, rtol=tol, atol=tol)
                (ya * dy).sum().backward()
                (yb * dy).sum().backward()
                torch.testing.assert_close(a.grad, b.grad, rtol=10 * tol, atol=10 * tol)
            a = x.clone().requires_grad_(True)
            b = x.clone().requires_grad_(True)
            la, lb = self.st.logsumexp(a, dim=1), torch.logsumexp(b, dim=1)
            torch.testing.assert_close(la, lb, rtol=tol, atol=tol)
            (la * dy[:, 0]).sum().backward()
            (lb * dy[:, 0]).sum().backward()
            torch.testing.assert_close(a.grad, b.grad, rtol=10 * tol, atol=10 * tol)

    def test_cross_entropy_against_torch(self):
        g = torch.Generator().manual_seed(2)
        for shape, tshape in (((6, 11), (6,)), ((3, 11, 4), (3, 4)), ((11,), ())):
            x0 = torch.randn(*shape, generator=g, dtype=torch.float64) * 3
            t = torch.randint(0, 11, tshape, generator=g)
            if t.dim() > 0:
                t.view(-1)[0] = -100
            for red in ("mean", "sum", "none"):
                for ls in (0.0, 0.2):
                    with self.subTest(shape=shape, red=red, ls=ls):
                        a = x0.clone().requires_grad_(True)
                        b = x0.clone().requires_grad_(True)
                        la = self.st.cross_entropy(a, t, reduction=red, label_smoothing=ls)
                        lb = F.cross_entropy(b, t, reduction=red, label_smoothing=ls)
                        self.assertEqual(la.shape, lb.shape)
                        self.assertEqual(la.dtype, torch.float64)
                        torch.testing.assert_close(la, lb, rtol=1e-6, atol=1e-6)
                        w = torch.randn(lb.shape, generator=g, dtype=torch.float64)
                        (la * w).sum().backward()
                        (lb * w).sum().backward()
                        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-6)

    def test_cross_entropy_z_loss(self):
        x = torch.randn(4, 9, dtype=torch.float64, requires_grad=True)
        t = torch.tensor([1, 2, 3, 4])
        la = self.st.cross_entropy(x, t, z_loss=1e-2)
        y = x.detach().clone().requires_grad_(True)
        lb = F.cross_entropy(y, t) + 1e-2 * (torch.logsumexp(y, dim=1) ** 2).mean()
        torch.testing.assert_close(la, lb, rtol=1e-6, atol=1e-6)
        la.backward()
        lb.backward()
        torch.testing.assert_close(x.grad, y.grad, rtol=1e-5, atol=1e-6)

    def test_train_step(self):
        # the wrappers inside a small model: one optimiser step lowers the loss as torch's does
        torch.manual_seed(3)
        lin = torch.nn.Linear(5, 4)
        x, t = torch.randn(32, 5), torch.randint(0, 4, (32,))
        opt = torch.optim.SGD(lin.parameters(), lr=0.5)
        l0 = self.st.cross_entropy(self.st.log_softmax(lin(x), dim=1), t)
        opt.zero_grad()
        l0.backward()
        opt.step()
        l1 = self.st.cross_entropy(lin(x), t)
        self.assertLess(float(l1), float(l0))


if __name__ == "__main__":
    unittest.main()
