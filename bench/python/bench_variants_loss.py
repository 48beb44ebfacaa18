#!/usr/bin/python3
"""The losses on softmax outputs, forward + backward, on rows x cols f32
logits (default 4096 x 32000), in one run at one thread count:

  smx      the NumPy function with return_grad=True (loss and gradient, fused)
  xent     smx.cross_entropy(return_grad=True) on the same logits: the reference cost
  smx.torch  the autograd wrapper: loss.backward() on a leaf tensor
  torch    the same loss written in torch ops, loss.backward()

  PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_variants_loss.py
      [--rows 4096] [--cols 32000] [--reps 3] [--threads 1]

Times are medians of --reps (seconds); ratios from this one run. InfoNCE
runs on the rows x cols matrix as the similarity matrix (targets: the
diagonal), symmetric (CLIP)."""
import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

import smx
import smx.torch as st


def med(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


def torch_focal(z, t):
    lp = torch.log_softmax(z, 1).gather(1, t[:, None])[:, 0]
    return (-(1 - lp.exp()) ** 2 * lp).mean()


def torch_zloss(z, t):
    zz = (z - z.mean(1, keepdim=True)) / z.std(1, unbiased=False, keepdim=True)
    return F.softplus(1.0 * (0.0 - zz.gather(1, t[:, None])[:, 0])).mean()


def torch_dice(z, t):
    p = torch.softmax(z, 1)
    oh = F.one_hot(t, z.shape[1]).to(z.dtype)
    return 1 - ((2 * (p * oh).sum(0) + 1) / (p.sum(0) + oh.sum(0) + 1)).mean()


def torch_nce(z, _t):
    lab = torch.arange(z.shape[0])
    # the column term over the targeted columns (the first rows ones), down all rows
    return (F.cross_entropy(z / 0.07, lab) + F.cross_entropy(z[:, : z.shape[0]].t() / 0.07, lab)) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((a.rows, a.cols), dtype=np.float32) * 2.0)
    t = rng.integers(0, a.cols, a.rows)
    th = a.threads
    cases = [
        ("focal", lambda: smx.focal_loss(x, t, gamma=2.0, return_grad=True, threads=th),
         lambda z, tt: st.focal_loss(z, tt, gamma=2.0), torch_focal),
        ("spherical_z", lambda: smx.spherical_z_loss(x, t, return_grad=True, threads=th),
         lambda z, tt: st.spherical_z_loss(z, tt), torch_zloss),
        ("dice", lambda: smx.dice_loss(x, t, return_grad=True, threads=th),
         lambda z, tt: st.dice_loss(z, tt), torch_dice),
        ("info_nce", lambda: smx.info_nce(x, temperature=0.07, return_grad=True, threads=th),
         lambda z, tt: st.info_nce(z, temperature=0.07), torch_nce),
    ]
    if th != 1:
        print("note: the smx.torch wrappers call smx with threads=1")
    xe = med(lambda: smx.cross_entropy(x, t, return_grad=True, threads=th), a.reps)
    print("%d x %d f32, %d thread(s), median of %d; smx.cross_entropy fwd+bwd: %.3f s" % (a.rows, a.cols, th, a.reps, xe))
    print("%-12s %9s %9s %9s %9s %10s %12s" % ("loss", "smx", "smx.torch", "torch", "/xent", "torch/smx",
                                              "torch/smx.torch"))
    tt = torch.from_numpy(t)
    for name, f_np, f_st, f_t in cases:
        s_np = med(f_np, a.reps)

        def run(f):
            z = torch.from_numpy(x).requires_grad_(True)
            f(z, tt).backward()
        s_st = med(lambda: run(f_st), a.reps)
        s_t = med(lambda: run(f_t), a.reps)
        print("%-12s %9.3f %9.3f %9.3f %9.2f %10.2f %12.2f" % (name, s_np, s_st, s_t, s_np / xe, s_t / s_np,
                                                               s_t / s_st))


if __name__ == "__main__":
    main()
