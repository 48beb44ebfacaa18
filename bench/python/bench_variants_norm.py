#!/usr/bin/python3
"""The row variants (issue 13 items 3-10) against our softmax, their backward passes against their forwards,
and smx.torch forward+backward against the same functions written in torch ops, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_variants_norm.py [--rows 4096] [--cols 32000]
        [--reps 3] [--torch-reps 1] [--threads 1] [--only NAME[,NAME...]] [--no-torch]

float32 rows x cols of N(0, 4) logits (default 4096 x 32000, 0.5 GB per array). Our functions write into a
preallocated out= (as smx.softmax(x, out=y)), so that the passes are timed, not the allocation. torch runs
with the same thread count. Medians of --reps; ratios from the same run. Targets (issue 13): each forward
<= 1.3x softmax, each backward <= 1.5x its forward, smx.torch fwd+bwd >= 3x the torch-ops version.
"""
import argparse
import statistics
import time

import numpy as np
import torch

import smx
import smx.torch as st


def med(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


# the same functions in torch ops (autograd differentiates them)
def t_softpick(x, eps=1e-6):
    m = torch.where(torch.isfinite(x), x, torch.full_like(x, -float("inf"))).amax(-1, keepdim=True)
    a = torch.exp(x - m) - torch.exp(-m)
    return torch.relu(a) / (torch.where(torch.isfinite(x), a.abs(), torch.zeros_like(a)).sum(-1, keepdim=True) + eps)


def t_ssmax(x, s=1.0):
    return torch.softmax(s * np.log(x.shape[-1]) * x, -1)


def t_sigmoid(x, bias=-2.0):
    return torch.sigmoid(x + bias)


def t_softplus_l1(x):
    s = torch.nn.functional.softplus(x)
    return s / s.sum(-1, keepdim=True)


def t_sa(x):
    return x * torch.softmax(x, -1)


def t_sa_norm(x):
    lo = torch.clamp(x.amin(-1, keepdim=True), max=0)
    hi = torch.clamp(x.amax(-1, keepdim=True), min=0)
    return (x - lo) / (hi - lo) * torch.softmax(x, -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--torch-reps", type=int, default=1, help="reps of the (slow) fwd+bwd comparisons")
    ap.add_argument("--only", default="", help="comma-separated function names to run (default: all)")
    ap.add_argument("--no-torch", action="store_true", help="skip the smx.torch / torch-ops comparisons")
    a = ap.parse_args()
    th = a.threads
    torch.set_num_threads(th)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((a.rows, a.cols), dtype=np.float32) * 2).astype(np.float32)
    g = rng.standard_normal((a.rows, a.cols), dtype=np.float32)
    y = np.empty_like(x)
    dx = np.empty_like(x)
    print(f"isa {smx.isa()}, torch {torch.__version__}, {a.rows}x{a.cols} float32, {th} thread(s), "
          f"medians of {a.reps}")

    t_sm = med(lambda: smx.softmax(x, out=y, threads=th), a.reps)
    t_smb = med(lambda: smx.softmax_backward(y, g, out=dx, threads=th), a.reps)
    print(f"{'softmax':<14} fwd {t_sm * 1e3:8.1f} ms   bwd {t_smb * 1e3:8.1f} ms")
    cases = [
        ("softpick", lambda: smx.softpick(x, out=y, threads=th),
         lambda: smx.softpick_backward(x, None, g, out=dx, threads=th), st.softpick, t_softpick),
        ("ssmax", lambda: smx.ssmax(x, out=y, threads=th),
         lambda: smx.ssmax_backward(None, y, g, out=dx, threads=th), st.ssmax, t_ssmax),
        ("sigmoid(b=-2)", lambda: smx.sigmoid(x, bias=-2.0, out=y, threads=th),
         lambda: smx.sigmoid_backward(None, y, g, out=dx, threads=th), lambda t: st.sigmoid(t, bias=-2.0), t_sigmoid),
        ("softplus_l1", lambda: smx.softplus_l1(x, out=y, threads=th),
         lambda: smx.softplus_l1_backward(x, None, g, out=dx, threads=th), st.softplus_l1, t_softplus_l1),
        ("sa_softmax", lambda: smx.sa_softmax(x, out=y, threads=th),
         lambda: smx.sa_softmax_backward(x, None, g, out=dx, threads=th), st.sa_softmax, t_sa),
        ("sa_norm", lambda: smx.sa_softmax(x, normalized=True, out=y, threads=th),
         lambda: smx.sa_softmax_backward(x, None, g, normalized=True, out=dx, threads=th),
         lambda t: st.sa_softmax(t, normalized=True), t_sa_norm),
    ]
    if a.only:
        keep = a.only.split(",")
        cases = [c for c in cases if c[0] in keep]
    print(f"{'function':<14} {'fwd ms':>8} {'fwd/softmax':>12} {'bwd ms':>8} {'bwd/fwd':>8} "
          f"{'torch-ops f+b ms':>17} {'smx.torch f+b ms':>17} {'speedup':>8}")
    xt = torch.from_numpy(x)
    gt = torch.from_numpy(g)
    for name, fwd, bwd, smx_t, torch_ops in cases:
        tf = med(fwd, a.reps)
        tb = med(bwd, a.reps)

        def run_torch(f):
            xi = xt.detach().requires_grad_()
            f(xi).backward(gt)
            return xi.grad

        if a.no_torch:
            print(f"{name:<14} {tf * 1e3:8.1f} {tf / t_sm:12.2f} {tb * 1e3:8.1f} {tb / tf:8.2f}")
            continue
        tt = med(lambda: run_torch(torch_ops), a.torch_reps)
        ts = med(lambda: run_torch(smx_t), a.torch_reps)
        print(f"{name:<14} {tf * 1e3:8.1f} {tf / t_sm:12.2f} {tb * 1e3:8.1f} {tb / tf:8.2f} "
              f"{tt * 1e3:17.1f} {ts * 1e3:17.1f} {tt / ts:8.2f}")


if __name__ == "__main__":
    main()
