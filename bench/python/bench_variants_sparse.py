#!/usr/bin/python3
"""sparsemax, entmax-1.5 and bisection entmax against our softmax and against the
entmax package's algorithms written in torch ops, one run, one thread each.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_variants_sparse.py [--rows 4096 --cols 32000]

Input: rows x cols float32, scale * N(0, 1) (--scale, default 1; 0.1 puts most of a row
within reach of the support, the hard case for the candidate filter). Every smx forward writes into a preallocated
output; torch peers run with torch.set_num_threads(1) (smx: threads=1). The torch
peers are the entmax package's algorithms (sparsemax and entmax-1.5 by a full sort,
entmax_bisect with its 50 halvings) as torch.autograd.Functions whose backward is
the same support formula in torch ops. Medians of --reps runs (slow cases: fewer).
Prints a table of times and the issue's target ratios (issue 13).
"""
import argparse
import statistics
import time

import numpy as np
import torch

import smx
import smx.torch as st


def timed(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


# ---------------------------------------------------------- torch-ops peers
def _ix_like(x, dim):
    d = x.size(dim)
    rho = torch.arange(1, d + 1, device=x.device, dtype=x.dtype)
    view = [1] * x.dim()
    view[dim] = -1
    return rho.view(view)


class TorchSparsemax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        x = x - x.max(dim=dim, keepdim=True).values
        srt, _ = torch.sort(x, dim=dim, descending=True)
        cs = srt.cumsum(dim) - 1
        support = (_ix_like(x, dim) * srt > cs).sum(dim=dim, keepdim=True)
        tau = cs.gather(dim, support - 1) / support.to(x.dtype)
        y = torch.clamp(x - tau, min=0)
        ctx.dim = dim
        ctx.save_for_backward(support, y)
        return y

    @staticmethod
    def backward(ctx, g):
        support, y = ctx.saved_tensors
        g = g.clone()
        g[y == 0] = 0
        v = g.sum(dim=ctx.dim, keepdim=True) / support.to(y.dtype)
        return torch.where(y != 0, g - v, g), None


class TorchEntmax15(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        x = (x - x.max(dim=dim, keepdim=True).values) / 2
        srt, _ = torch.sort(x, dim=dim, descending=True)
        rho = _ix_like(x, dim)
        mean = srt.cumsum(dim) / rho
        mean_sq = (srt ** 2).cumsum(dim) / rho
        ss = rho * (mean_sq - mean ** 2)
        delta = torch.clamp((1 - ss) / rho, min=0)
        tau = mean - torch.sqrt(delta)
        support = (tau <= srt).sum(dim).unsqueeze(dim)
        tau_star = tau.gather(dim, support - 1)
        y = torch.clamp(x - tau_star, min=0) ** 2
        ctx.dim = dim
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gppr = y.sqrt()
        dx = g * gppr
        q = dx.sum(ctx.dim, keepdim=True) / gppr.sum(ctx.dim, keepdim=True)
        return dx - q * gppr, None


class TorchEntmaxBisect(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha=1.5, dim=-1, n_iter=50):
        d = x.shape[dim]
        x = x * (alpha - 1)
        mx = x.max(dim=dim, keepdim=True).values
        lo = mx - 1
        hi = mx - (1 / d) ** (alpha - 1)
        p = lambda t: torch.clamp(t, min=0) ** (1 / (alpha - 1))
        f_lo = p(x - lo).sum(dim) - 1
        dm = hi - lo
        for _ in range(n_iter):
            dm = dm / 2
            tm = lo + dm
            pm = p(x - tm)
            f_m = pm.sum(dim) - 1
            mask = (f_m * f_lo >= 0).unsqueeze(dim)
            lo = torch.where(mask, tm, lo)
        pm = pm / pm.sum(dim=dim).unsqueeze(dim=dim)
        ctx.alpha, ctx.dim = alpha, dim
        ctx.save_for_backward(pm)
        return pm

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gppr = torch.where(y > 0, y ** (2 - ctx.alpha), y.new_zeros(1))
        dx = g * gppr
        q = dx.sum(ctx.dim, keepdim=True) / gppr.sum(ctx.dim, keepdim=True)
        return dx - q * gppr, None, None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="x = scale * N(0,1): small scales put most entries among the candidates (the hard case)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.rows, a.cols), dtype=np.float32) * np.float32(a.scale)
    y = np.empty_like(x)
    dy = rng.standard_normal((a.rows, a.cols), dtype=np.float32)
    dx = np.empty_like(x)
    R = a.reps
    t = {}
    t["softmax"] = timed(lambda: smx.softmax(x, out=y, threads=1), R)
    t["sparsemax"] = timed(lambda: smx.sparsemax(x, out=y, threads=1), R)
    ys = smx.sparsemax(x)
    t["sparsemax_backward"] = timed(lambda: smx.sparsemax_backward(None, ys, dy, threads=1, out=dx), R)
    t["sparsemax_sort"] = timed(lambda: smx.sparsemax_sort(x, out=y, threads=1), 1)
    t["entmax15"] = timed(lambda: smx.entmax15(x, out=y, threads=1), R)
    ye = smx.entmax15(x)
    t["entmax15_backward"] = timed(lambda: smx.entmax15_backward(None, ye, dy, threads=1, out=dx), R)
    t["entmax a=1.5"] = timed(lambda: smx.entmax(x, 1.5, out=y, threads=1), R)
    ya = smx.entmax(x, 1.5)
    t["entmax a=1.5 backward"] = timed(lambda: smx.entmax_backward(None, ya, dy, 1.5, threads=1, out=dx), R)
    t["entmax a=1.7"] = timed(lambda: smx.entmax(x, 1.7, out=y, threads=1), R)
    yb = smx.entmax(x, 1.7)
    t["entmax a=1.7 backward"] = timed(lambda: smx.entmax_backward(None, yb, dy, 1.7, threads=1, out=dx), R)
    del ys, ye, ya, yb, dx

    tx = torch.from_numpy(x)
    tdy = torch.from_numpy(dy)
    with torch.no_grad():
        t["torch sparsemax (sort)"] = timed(lambda: TorchSparsemax.apply(tx, -1), 1)

    def fb(f):
        def run():
            xx = tx.detach().requires_grad_()
            f(xx).backward(tdy)
        return run
    t["smx.torch sparsemax f+b"] = timed(fb(lambda v: st.sparsemax(v, dim=-1)), R)
    t["torch sparsemax f+b"] = timed(fb(lambda v: TorchSparsemax.apply(v, -1)), 1)
    t["smx.torch entmax15 f+b"] = timed(fb(lambda v: st.entmax15(v, dim=-1)), R)
    t["torch entmax15 f+b"] = timed(fb(lambda v: TorchEntmax15.apply(v, -1)), 1)
    t["smx.torch entmax a=1.5 f+b"] = timed(fb(lambda v: st.entmax(v, 1.5, dim=-1)), R)
    t["torch entmax_bisect a=1.5 f+b"] = timed(fb(lambda v: TorchEntmaxBisect.apply(v, 1.5, -1, 50)), 1)

    print(f"isa {smx.isa()}, torch {torch.__version__}, one thread, {a.rows}x{a.cols} float32 {a.scale} * N(0,1)")
    print(f"{'case':34} {'ms':>10}")
    for k, v in t.items():
        print(f"{k:34} {v * 1e3:10.1f}")
    checks = [
        ("sparsemax / softmax", t["sparsemax"] / t["softmax"], "<=", 2.0),
        ("sort oracle / sparsemax", t["sparsemax_sort"] / t["sparsemax"], ">=", 5.0),
        ("torch sort sparsemax / sparsemax", t["torch sparsemax (sort)"] / t["sparsemax"], ">=", 10.0),
        ("entmax15 / softmax", t["entmax15"] / t["softmax"], "<=", 3.0),
        ("entmax a=1.5 (bisect) / softmax", t["entmax a=1.5"] / t["softmax"], "<=", 8.0),
        ("entmax a=1.7 (bisect) / softmax", t["entmax a=1.7"] / t["softmax"], "<=", 8.0),
        ("sparsemax backward / forward", t["sparsemax_backward"] / t["sparsemax"], "<=", 1.5),
        ("entmax15 backward / forward", t["entmax15_backward"] / t["entmax15"], "<=", 1.5),
        ("entmax a=1.5 backward / forward", t["entmax a=1.5 backward"] / t["entmax a=1.5"], "<=", 1.5),
        ("entmax a=1.7 backward / forward", t["entmax a=1.7 backward"] / t["entmax a=1.7"], "<=", 1.5),
        ("torch / smx.torch sparsemax f+b", t["torch sparsemax f+b"] / t["smx.torch sparsemax f+b"], ">=", 3.0),
        ("torch / smx.torch entmax15 f+b", t["torch entmax15 f+b"] / t["smx.torch entmax15 f+b"], ">=", 3.0),
        ("torch / smx.torch entmax a=1.5 f+b",
         t["torch entmax_bisect a=1.5 f+b"] / t["smx.torch entmax a=1.5 f+b"], ">=", 3.0),
    ]
    print(f"\n{'ratio':40} {'value':>8} {'target':>9}  met")
    for name, v, op, tgt in checks:
        ok = v <= tgt if op == "<=" else v >= tgt
        print(f"{name:40} {v:8.2f} {op + ' ' + str(tgt):>9}  {'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
