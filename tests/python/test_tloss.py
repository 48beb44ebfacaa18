"""The op table's target losses (signature class TLOSS) from Python, generically over every TLOSS op the table
lists (smx.sdpo_loss, smx.spherical_z_loss, ... made by smx._losses with no Python code per op): every dtype of
the table against the float64 loss of the same rounded logits, the reductions, ignore_index and grad_scale
against the 'none' rows, the gradient against float64 central differences, in-place reading of row-strided
views (no copy) and copies of the other layouts (same bits), thread counts, refusals (clear errors naming the
argument, the inputs untouched), smx.torch autograd against the NumPy gradient and the double-backward error.
S-DPO on its own: the paper's form -log sigmoid(-log sum_{j != w} exp(beta (m_j - m_w))) computed independently
in float64 for beta in {0.1, 1, 5}, -inf padded rejected items, cols = 1, and torch's composed autograd of that
form for the gradient. Run by ctest as python_test_tloss (and _scalar, _avx2)."""
import inspect
import math
import tracemalloc
import unittest

import numpy as np

import smx
from smx import _losses, _smx
from numgrad import numgrad

try:
    import torch
    import smx.torch as st
except ImportError:
    torch = None

OPS = _losses.ops()                      # {py: op-table info}: every TLOSS op with a Python name
U = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24}


def params_of(info):
    """A valid value of each parameter: the table's default, else 1 clipped to the range."""
    return {p[0]: p[2] if p[2] is not None else min(max(1.0, p[3]), p[4]) for p in info["params"]}


def to_bf16(x):
    """float values rounded to bfloat16 (nearest even), as int16 bit patterns."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return b.astype(np.uint16).view(np.int16)


def from_bf16(h):
    return (h.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def call(py, x, t, dtype, **kw):
    """smx.<py> on logits x (float64) stored as dtype; returns (loss, grad, the float64 logits it saw)."""
    info = OPS[py]
    if dtype == "bf16":
        xb = to_bf16(x)
        vals = _losses.values("test", info, dict(params_of(info), **{k: kw.pop(k) for k in list(kw)
                                                                     if k in params_of(info)}))
        r = _smx._tloss(info["name"], xb, t, *vals, bf16=True, return_grad=True, **kw)
        g = r[1]
        return r[0], (from_bf16(g) if g.dtype == np.int16 else g.astype(np.float64)), from_bf16(xb)
    npdt = {"f64": np.float64, "f32": np.float32, "f16": np.float16}[dtype]
    xs = x.astype(npdt)
    loss, grad = getattr(smx, py)(xs, t, return_grad=True, **kw)
    return loss, grad, xs.astype(np.float64)


RNG = np.random.default_rng(23)
X = RNG.standard_normal((7, 6)) * 2
T = RNG.integers(0, 6, 7)
T[3] = -100


class TableLosses(unittest.TestCase):
    def test_every_op_is_exported(self):
        self.assertIn("sdpo_loss", OPS)
        self.assertIn("spherical_z_loss", OPS)
        for py in OPS:
            self.assertIn(py, smx.__all__)
            self.assertTrue(callable(getattr(smx, py)))
            self.assertIn("Bound:", getattr(smx, py).__doc__)
            f, names = getattr(smx, py), [p[0] for p in OPS[py]["params"]]
            self.assertEqual(list(inspect.signature(f).parameters), ["logits", "targets"] + names + [
                "reduction", "ignore_index", "return_grad", "grad_scale", "threads"])
            with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'axis'"):
                f(X, T, axis=-1)
            with self.assertRaisesRegex(TypeError, "multiple values for argument 'logits'"):
                f(X, T, logits=X)
            with self.assertRaisesRegex(TypeError, "missing required argument: 'targets'"):
                f(X)
            # positional and keyword calls agree
            pv = [p[2] for p in OPS[py]["params"]]
            self.assertEqual(f(X, T, *pv, "sum"), f(logits=X, targets=T, reduction="sum"))

    def test_every_dtype_against_f64(self):
        for py, info in OPS.items():
            for dt in ("f32", "f16", "bf16"):
                with self.subTest(op=py, dtype=dt):
                    loss, grad, x64 = call(py, X, T, dt, reduction="none")
                    ref_l, ref_g = smx.__dict__[py](x64, T, reduction="none", return_grad=True)
                    own = dt in info["dtypes"]
                    # the loss is float32 arithmetic on the rounded logits; the gradient is stored in the dtype
                    # (float32 where the op has no row of that half type)
                    self.assertEqual(loss.dtype, np.float32)
                    # the losses' common float32 bound, 16 eps (|ref| + G), plus the storage rounding u |ref|
                    tol = (4 * U[dt] if own else 0.0) + 16 * U["f32"]
                    gmax = np.abs(ref_g).max()
                    np.testing.assert_allclose(loss, ref_l, rtol=16 * U["f32"], atol=16 * U["f32"])
                    self.assertTrue(np.all(np.abs(grad - ref_g) <= tol * (np.abs(ref_g) + gmax) + 1e-30),
                                    "%s %s: gradient off by %g" % (py, dt, np.abs(grad - ref_g).max()))
                    if not own and dt == "f16":   # computed in float32: the float32 call's bits
                        l32, g32 = getattr(smx, py)(X.astype(np.float16).astype(np.float32), T, reduction="none",
                                                    return_grad=True)
                        np.testing.assert_array_equal(loss, l32)
                        np.testing.assert_array_equal(grad, g32)

    def test_reductions_ignore_index_grad_scale(self):
        for py in OPS:
            for dt in (np.float64, np.float32):
                with self.subTest(op=py, dtype=dt.__name__):
                    x = X.astype(dt)
                    t = T.copy()
                    t[[3, 5]] = -1
                    ln, gn = getattr(smx, py)(x, t, reduction="none", ignore_index=-1, return_grad=True)
                    self.assertEqual(ln.dtype, dt)
                    self.assertEqual(gn.dtype, dt)
                    self.assertEqual(ln[[3, 5]].tolist(), [0.0, 0.0])
                    self.assertFalse(np.any(gn[[3, 5]]))
                    keep = t != -1
                    rtol = 1e-13 if dt == np.float64 else 1e-5
                    ls, gs = getattr(smx, py)(x, t, reduction="sum", ignore_index=-1, return_grad=True)
                    lm, gm = getattr(smx, py)(x, t, reduction="mean", ignore_index=-1, return_grad=True)
                    self.assertIsInstance(ls, float)
                    np.testing.assert_allclose(ls, ln.astype(np.float64).sum(), rtol=rtol)
                    np.testing.assert_allclose(lm, ln.astype(np.float64).sum() / keep.sum(), rtol=rtol)
                    np.testing.assert_allclose(gs, gn, rtol=rtol, atol=1e-30)
                    np.testing.assert_allclose(gm, gn / keep.sum(), rtol=rtol, atol=1e-30)
                    _, g2 = getattr(smx, py)(x, t, reduction="sum", ignore_index=-1, grad_scale=-2.5,
                                             return_grad=True)
                    np.testing.assert_allclose(g2, -2.5 * gs, rtol=rtol, atol=1e-30)
                    # -100 is a class index like any other once ignore_index is -1: out of range here
                    with self.assertRaisesRegex(ValueError, "target -100 .row 3."):
                        getattr(smx, py)(x, T, ignore_index=-1)

    def test_gradient_central_differences(self):
        for py in OPS:
            for red in ("sum", "mean"):
                with self.subTest(op=py, reduction=red):
                    f = getattr(smx, py)
                    _, g = f(X, T, reduction=red, return_grad=True)
                    ng = numgrad(lambda z: f(z, T, reduction=red), X)
                    np.testing.assert_allclose(g, ng, rtol=1e-6, atol=1e-8)

    def test_layouts(self):
        base = RNG.standard_normal((40, 3, 13)) * 2
        # in place: rows whose leading axes merge (ld 39; ld 13 for 7 classes); copied: rows not evenly
        # spaced, a negative row step, a Fortran array, a negative class stride
        for x in (base[:, 1], base[:, :, :7], base[::2], base[::-2], np.asfortranarray(base[::2]), base[..., ::-1]):
            t = RNG.integers(0, x.shape[-1], x.shape[:-1])
            for py in OPS:
                with self.subTest(op=py, shape=x.shape, strides=x.strides):
                    f = getattr(smx, py)
                    want = f(np.ascontiguousarray(x), t, reduction="none", return_grad=True)
                    got = f(x, t, reduction="none", return_grad=True)
                    np.testing.assert_array_equal(got[0], want[0])
                    np.testing.assert_array_equal(got[1], want[1])

    def test_row_strided_view_is_not_copied(self):
        big = RNG.standard_normal((4000, 500))
        x = big[::2]                              # every other row: ld = 1000, read in place
        t = RNG.integers(0, 500, 2000)
        for py in OPS:
            with self.subTest(op=py):
                tracemalloc.start()
                getattr(smx, py)(x, t, reduction="sum", threads=1)
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                self.assertLess(peak, x.nbytes // 8, "the logits were copied")

    def test_threads_bitwise(self):
        x = RNG.standard_normal((300, 77)).astype(np.float32)
        t = RNG.integers(0, 77, 300)
        for py in OPS:
            with self.subTest(op=py):
                a, b = (getattr(smx, py)(x, t, reduction="none", return_grad=True, threads=n) for n in (1, 3))
                np.testing.assert_array_equal(a[0], b[0])
                np.testing.assert_array_equal(a[1], b[1])

    def test_refusals(self):
        for py, info in OPS.items():
            f = getattr(smx, py)
            x = X.copy()
            cases = [
                (ValueError, "targets has shape", lambda: f(x, T[:5])),
                (ValueError, r"target 6 \(row 1\) is outside \[0, 6\)", lambda: f(x, np.array([0, 6, 0, 0, 0, 0, 0]))),
                (TypeError, "targets must be an array of integers.*uint64", lambda: f(x, T.clip(0).astype(np.uint64))),
                (TypeError, "targets must be an array of integers", lambda: f(x, T.astype(np.float64))),
                (TypeError, "logits must be float16, float32 or float64", lambda: f(x.astype(np.int64), T)),
                (ValueError, "logits must have at least 1 dimension", lambda: f(np.float64(1.0), np.int64(0))),
                (ValueError, "logits have no classes", lambda: f(np.zeros((2, 0)), np.array([-100, -100]))),
                (ValueError, "reduction must be", lambda: f(x, T, reduction="avg")),
                (ValueError, "grad_scale must be finite and nonzero", lambda: f(x, T, grad_scale=0.0)),
                (TypeError, "ignore_index must be an int", lambda: f(x, T, ignore_index=1.5)),
            ]
            for p in info["params"]:
                lo, hi = p[3], p[4]
                if lo > -1.7e308:
                    cases.append((ValueError, "%s must be a number in" % p[0], lambda p=p, lo=lo: f(x, T, **{
                        p[0]: lo / 2 if lo > 0 else lo - 1})))
                cases.append((ValueError, "%s must be a number in" % p[0], lambda p=p: f(x, T, **{p[0]: math.nan})))
                cases.append((TypeError, "%s must be a number" % p[0], lambda p=p: f(x, T, **{p[0]: "one"})))
            for exc, msg, fn in cases:
                with self.subTest(op=py, error=msg):
                    with self.assertRaisesRegex(exc, "smx.%s: %s" % (py, msg) if "smx" not in msg else msg):
                        fn()
                    np.testing.assert_array_equal(x, X)   # the input is never written

    def test_empty_and_single_row(self):
        for py in OPS:
            with self.subTest(op=py):
                f = getattr(smx, py)
                l, g = f(np.zeros((0, 4)), np.zeros(0, np.int64), reduction="none", return_grad=True)
                self.assertEqual(l.shape, (0,))
                self.assertEqual(g.shape, (0, 4))
                self.assertEqual(f(np.zeros((0, 4)), np.zeros(0, np.int64), reduction="sum"), 0.0)
                one = f(X[0], T[0], reduction="none")              # 1-D logits: one row, a 0-d result
                self.assertEqual(one.shape, ())
                self.assertEqual(one, f(X[:1], T[:1], reduction="none")[0])


def sdpo_paper(m, w, beta):
    """S-DPO (Chen et al. 2024, eq. 8) as the paper writes it, in float64: -log sigmoid(-log sum_{j != w}
    exp(beta (m_j - m_w))) per row."""
    out = np.empty(len(w))
    with np.errstate(divide="ignore", over="ignore"):
        for r, (row, k) in enumerate(zip(m, w)):
            rej = np.delete(row, k)
            s = np.exp(beta * (rej - row[k])).sum()
            z = -np.log(s)
            out[r] = -np.log(1.0 / (1.0 + np.exp(-z)))
    return out


class SDPO(unittest.TestCase):
    def test_paper_form(self):
        m = RNG.standard_normal((9, 8))
        w = RNG.integers(0, 8, 9)
        for beta in (0.1, 1.0, 5.0):
            with self.subTest(beta=beta):
                got = smx.sdpo_loss(m, w, beta=beta, reduction="none")
                np.testing.assert_allclose(got, sdpo_paper(m, w, beta), rtol=1e-12, atol=1e-14)
                got32 = smx.sdpo_loss(m.astype(np.float32), w, beta=beta, reduction="none")
                np.testing.assert_allclose(got32, sdpo_paper(m.astype(np.float32).astype(np.float64), w, beta),
                                           rtol=1e-5, atol=1e-6)

    def test_padded_rejected_items(self):
        m = RNG.standard_normal((5, 7))
        w = np.array([0, 3, 6, 2, 1])
        m[0, 4:] = -np.inf        # fewer rejected items in some rows: -inf padding takes no part
        m[1, [0, 6]] = -np.inf
        m[4, 2:] = -np.inf
        for beta in (0.1, 1.0, 5.0):
            with self.subTest(beta=beta):
                l, g = smx.sdpo_loss(m, w, beta=beta, reduction="none", return_grad=True)
                np.testing.assert_allclose(l, sdpo_paper(m, w, beta), rtol=1e-12, atol=1e-14)
                self.assertFalse(np.any(g[np.isinf(m)]))
                short = smx.sdpo_loss(m[0, :4], w[0], beta=beta, reduction="none")   # the row without padding
                np.testing.assert_allclose(short, l[0], rtol=1e-15)

    def test_single_column(self):
        # nothing rejected: the sum is empty, -log 0 = +inf, sigmoid(+inf) = 1, loss 0
        m = RNG.standard_normal((4, 1))
        self.assertEqual(sdpo_paper(m, np.zeros(4, np.int64), 1.0).tolist(), [0.0] * 4)
        for dt in (np.float64, np.float32, np.float16):
            with self.subTest(dtype=dt.__name__):
                l, g = smx.sdpo_loss(m.astype(dt), np.zeros(4, np.int64), reduction="none", return_grad=True)
                self.assertEqual(l.tolist(), [0.0] * 4)
                self.assertEqual(g.tolist(), [[0.0]] * 4)

    def test_beta_range(self):
        for beta in (0.0, -1.0, 1e-310, math.inf, math.nan):
            with self.subTest(beta=beta):
                with self.assertRaisesRegex(ValueError, "smx.sdpo_loss: beta must be a number in"):
                    smx.sdpo_loss(X, T, beta=beta)
        smx.sdpo_loss(X, T, beta=2.3e-308)                  # DBL_MIN and up: 1 / beta is finite
        smx.sdpo_loss(X, T, beta=1e300)


@unittest.skipIf(torch is None, "torch is not installed")
class TorchTableLosses(unittest.TestCase):
    def test_exported(self):
        for py in OPS:
            self.assertTrue(callable(getattr(st, py)))
            self.assertIn("Bound:", getattr(st, py).__doc__)

    def test_autograd_against_numpy(self):
        x0 = torch.from_numpy(RNG.standard_normal((6, 3, 5)))   # (N, C, d): the classes on dim 1
        t = torch.from_numpy(RNG.integers(0, 3, (6, 5)))
        t[2, 1] = -100
        up = torch.from_numpy(RNG.standard_normal((6, 5)))
        for py in OPS:
            for red in ("mean", "sum", "none"):
                with self.subTest(op=py, reduction=red):
                    x = x0.clone().requires_grad_()
                    loss = getattr(st, py)(x, t, reduction=red)
                    (loss * up).sum().backward() if red == "none" else loss.backward()
                    xn = x0.movedim(1, -1).numpy()
                    ln, gn = getattr(smx, py)(xn, t.numpy(), reduction=red, return_grad=True)
                    if red == "none":
                        gn = gn * up.numpy()[..., None]
                    np.testing.assert_allclose(loss.detach().numpy(), ln, rtol=1e-14)
                    np.testing.assert_allclose(x.grad.movedim(1, -1).numpy(), gn, rtol=1e-14, atol=1e-300)

    def test_gradcheck_and_double_backward(self):
        g = torch.Generator().manual_seed(5)
        x = torch.randn(4, 6, generator=g, dtype=torch.float64, requires_grad=True)
        t = torch.tensor([0, 5, -100, 2])
        for py in OPS:
            with self.subTest(op=py):
                f = getattr(st, py)
                self.assertTrue(torch.autograd.gradcheck(lambda z: f(z, t, reduction="sum"), (x,), eps=1e-6,
                                                         atol=1e-7, rtol=1e-5))
                (gx,) = torch.autograd.grad(f(x, t), x, create_graph=True)
                with self.assertRaisesRegex(RuntimeError, "no second derivative"):
                    gx.sum().backward()

    def test_half(self):
        x0 = torch.from_numpy(RNG.standard_normal((5, 9)))
        t = torch.tensor([0, 3, 8, 1, -100])
        for py in OPS:
            for dt, u in ((torch.float16, U["f16"]), (torch.bfloat16, U["bf16"])):
                with self.subTest(op=py, dtype=dt):
                    xh = x0.to(dt).requires_grad_()
                    xr = x0.to(dt).double().requires_grad_()   # the same rounded logits in float64
                    lh, lr = getattr(st, py)(xh, t), getattr(st, py)(xr, t)
                    self.assertEqual(lh.dtype, dt)
                    lh.backward()
                    lr.backward()
                    self.assertEqual(xh.grad.dtype, dt)
                    self.assertLessEqual(abs(float(lh) - float(lr)), 2 * u * max(1.0, abs(float(lr))))
                    gmax = float(xr.grad.abs().max())
                    err = (xh.grad.double() - xr.grad).abs()
                    self.assertTrue(bool((err <= 4 * u * (xr.grad.abs() + gmax)).all()), "error %g" % float(err.max()))

    def test_refusals(self):
        x = torch.zeros(3, 4)
        for py in OPS:
            f = getattr(st, py)
            with self.subTest(op=py):
                with self.assertRaisesRegex(TypeError, "smx.torch.%s: target must be a tensor of class indices" % py):
                    f(x, torch.zeros(3))
                with self.assertRaisesRegex(ValueError, "smx.torch.%s: target has shape" % py):
                    f(x, torch.zeros(4, dtype=torch.int64))
                with self.assertRaisesRegex(ValueError, "smx.torch.%s: reduction" % py):
                    f(x, torch.zeros(3, dtype=torch.int64), reduction="avg")

    def test_sdpo_composed_autograd(self):
        """The gradient against torch's autograd of the paper's form, with -inf padded rejected items."""
        m0 = torch.from_numpy(RNG.standard_normal((6, 8)))
        m0[1, 5:] = -math.inf
        m0[4, [0, 7]] = -math.inf
        w = torch.tensor([0, 2, 7, 3, 4, 1])
        for beta in (0.1, 1.0, 5.0):
            with self.subTest(beta=beta):
                a = m0.clone().requires_grad_()
                b = m0.clone().requires_grad_()
                la = st.sdpo_loss(a, w, beta=beta, reduction="none")
                mw = b.gather(1, w[:, None])
                rejected = torch.ones_like(b, dtype=torch.bool).scatter_(1, w[:, None], False)
                s = torch.where(rejected, torch.exp(beta * (b - mw)), torch.zeros((), dtype=b.dtype)).sum(1)
                lb = -torch.log(torch.sigmoid(-torch.log(s)))
                torch.testing.assert_close(la, lb, rtol=1e-12, atol=1e-14)
                up = torch.from_numpy(RNG.standard_normal(6))
                (la * up).sum().backward()
                (lb * up).sum().backward()
                torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-14)


if __name__ == "__main__":
    unittest.main()
