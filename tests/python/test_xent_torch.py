#!/usr/bin/python3
"""smx xent against torch.nn.functional.cross_entropy (forward and autograd
gradient), through the CLI on .npy files: every reduction, ignore_index,
label smoothing, int32 / int64 targets, temperature, z-loss (torch CE plus
z * logsumexp^2), float16 logits, and the special values where smx follows
PyTorch. Usage: test_xent_torch.py SMX_BINARY   (exit 77 = skipped: no torch)"""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("test_xent_torch: torch is not installed; skipped")
    sys.exit(77)

SMX = sys.argv[1]
EPS = 2.0 ** -23
bad = 0
checks = 0


def run(tmp, x, t, *opts, grad=True):
    xp, tp = os.path.join(tmp, "x.npy"), os.path.join(tmp, "t.npy")
    lp, gp = os.path.join(tmp, "l.npy"), os.path.join(tmp, "g.npy")
    np.save(xp, x)
    np.save(tp, t)
    for p in (lp, gp):
        if os.path.exists(p):
            os.remove(p)
    cmd = [SMX, "xent", xp, "--targets", tp, "-o", lp, "-q"] + [str(o) for o in opts]
    if grad:
        cmd += ["--grad", gp]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    return np.load(lp), (np.load(gp) if grad else None)


def torch_ref(x, t, reduction="mean", ignore=-100, eps=0.0, z=0.0, T=1.0):
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    tt = torch.tensor(t.astype(np.int64))
    xs = xt.reshape(-1, x.shape[-1]) / T
    l = F.cross_entropy(xs, tt.reshape(-1), reduction=reduction, ignore_index=ignore, label_smoothing=eps)
    if z > 0:
        keep = (tt.reshape(-1) != ignore).to(torch.float64)
        zl = z * torch.logsumexp(xs, dim=1) ** 2 * keep
        l = l + (zl if reduction == "none" else zl.sum() / (keep.sum() if reduction == "mean" else 1.0))
    (l.sum() if reduction == "none" else l).backward()
    return l.detach().numpy().reshape(t.shape if reduction == "none" else ()), xt.grad.numpy()


def close(name, got, want, loss_tol):
    """The loss bound of smx_grad.h: |err| <= 4 eps max(1, |ref|) (loss_tol = 4 eps)."""
    global bad, checks
    checks += 1
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        print("FAIL %s: shape %s vs %s" % (name, got.shape, want.shape))
        bad += 1
        return
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        err = np.abs(got - want) <= loss_tol * np.maximum(1.0, np.abs(want))
    if not np.all(same | err):
        i = np.argmax(np.where(same, 0, np.abs(got - want)))
        print("FAIL %s: worst %r vs %r" % (name, got.reshape(-1)[i], want.reshape(-1)[i]))
        bad += 1


def close_grad(name, got, want, x, t, reduction="mean", ignore=-100, eps=0.0, z=0.0, T=1.0, u=0.0, floor=0.0):
    """The gradient bound of smx_grad.h, with q = the softmax part and r = the rest:
    (6 + |x_j - max| / (2T)) eps |q_j| + 2 eps |r_j| + (s/T)|1 + 2 z lse| FLT_MIN, plus the
    storage rounding u |ref| + floor for half-precision gradients."""
    global bad, checks
    checks += 1
    got = np.asarray(got, dtype=np.float64).reshape(-1, x.shape[-1])
    want = np.asarray(want, dtype=np.float64).reshape(-1, x.shape[-1])
    x = x.astype(np.float64).reshape(-1, x.shape[-1])
    t = t.reshape(-1)
    keep = t != ignore
    s = 1.0 / max(1, keep.sum()) if reduction == "mean" else 1.0
    V = x.shape[1]
    r = np.full(x.shape, eps / V)
    r[np.arange(len(t)), np.where(keep, t, 0)] += 1 - eps
    r = np.where(keep[:, None], r * s / T, 0.0)
    q = want + r
    with np.errstate(invalid="ignore"):
        tj = np.abs(x - x.max(axis=1, keepdims=True)) / T
        m = x.max(axis=1, keepdims=True)
        lse = m / T + np.log(np.exp((x - m) / T).sum(axis=1, keepdims=True))
        bound = np.where(q != 0, (6 + tj / 2) * EPS * np.abs(q), 0.0) + 2 * EPS * np.abs(r)
        bound += s / T * np.abs(1 + 2 * z * lse) * 1.1754944e-38 + u * np.abs(want) + floor
        ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= bound)
    if not np.all(ok):
        i = np.argmax(np.where(ok, 0, np.abs(got - want) / np.maximum(bound, 1e-300)))
        print("FAIL %s: worst %r vs %r (bound %.3g)" % (name, got.reshape(-1)[i], want.reshape(-1)[i],
                                                      bound.reshape(-1)[i]))
        bad += 1


rng = np.random.default_rng(2024)
with tempfile.TemporaryDirectory() as tmp:
    for shape, scale in (((7, 11), 3.0), ((3, 5, 257), 10.0), ((64, 4099), 2.0), ((2, 50000), 30.0)):
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        t = rng.integers(0, shape[-1], shape[:-1])
        t.reshape(-1)[::5] = -100
        for red in ("mean", "sum", "none"):
            for eps, z, T, tdt in ((0.0, 0.0, 1.0, np.int64), (0.1, 0.0, 1.0, np.int32), (0.3, 1e-3, 0.7, np.int64),
                                   (1.0, 0.0, 2.0, np.int32)):
                opts = ["--reduction", red, "--label-smoothing", eps, "--z-loss", z, "-t", T, "--threads", 2]
                l, g = run(tmp, x, t.astype(tdt), *opts)
                rl, rg = torch_ref(x, t, red, -100, eps, z, T)
                what = "%s %s eps %g z %g T %g %s" % (shape, red, eps, z, T, tdt.__name__)
                close(what + " loss", l, rl, 4 * EPS)
                close_grad(what + " grad", g, rg, x, t, red, -100, eps, z, T)
        # a real class as the ignore index
        t2 = rng.integers(0, 3, shape[:-1])
        l, g = run(tmp, x, t2, "--ignore-index", 1)
        rl, rg = torch_ref(x, t2, "mean", 1)
        close("%s ignore_index 1 loss" % (shape,), l, rl, 4 * EPS)
        close_grad("%s ignore_index 1 grad" % (shape,), g, rg, x, t2, "mean", 1)

    # float16 logits: torch on the widened values; the gradient is rounded to f16 once
    x16 = (rng.standard_normal((16, 3000)) * 4).astype(np.float16)
    t16 = rng.integers(0, 3000, 16)
    l, g = run(tmp, x16, t16, "--reduction", "sum", "--label-smoothing", 0.05)
    rl, rg = torch_ref(x16.astype(np.float32), t16, "sum", eps=0.05)
    close("f16 loss", l, rl, 4 * EPS)
    if g.dtype != np.float16:
        print("FAIL f16 gradient dtype %s" % g.dtype)
        bad += 1
    close_grad("f16 grad", g, rg, x16.astype(np.float32), t16, "sum", eps=0.05, u=2.0 ** -11, floor=2.0 ** -25)

    # special values where smx and PyTorch agree: -inf at the target, masked entries, all rows ignored
    xs = np.array([[1.0, -np.inf, 2.0], [0.5, -np.inf, -np.inf], [3.0, 1.0, 2.0]], dtype=np.float32)
    ts = np.array([1, 0, 2])
    l, g = run(tmp, xs, ts, "--reduction", "none")
    rl, rg = torch_ref(xs, ts, "none")
    close("special none loss", l, rl, 4 * EPS)
    close_grad("special none grad", g, rg, xs, ts, "none")
    l, g = run(tmp, xs, np.array([-100, -100, -100]))
    rl, rg = torch_ref(xs, np.array([-100, -100, -100]), "mean")
    close("all ignored: NaN loss, zero gradient", l, rl, 4 * EPS)
    close_grad("all ignored gradient", g, rg, xs, np.array([-100, -100, -100]), "mean")

print("test_xent_torch: %d checks, %d failed" % (checks, bad))
sys.exit(1 if bad else 0)
