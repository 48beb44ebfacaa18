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
diagonal), symmetric (CLIP).

MultiMax (forward, and forward + backward with the parameter gradients)
against smx.softmax (+ smx.softmax_backward) on the same matrix, and the
same function in torch ops (the modulator, then torch.softmax).

Noisy Softmax (alpha 0.1, norms |x_t| + 5, gradients for the logits and the
norms): in the table, and a line with its forward alone and forward +
backward against smx.cross_entropy's, the backward taken as the difference."""
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


def torch_noisy(z, t, n, xi):
    ft = z.gather(1, t[:, None])[:, 0]
    fn = ft - 0.1 * torch.clamp(n - ft, min=0) * xi
    return F.cross_entropy(z.scatter(1, t[:, None], fn[:, None]), t)


def noisy_line(x, t, n, th, reps):
    nf = med(lambda: smx.noisy_softmax_loss(x, t, n, alpha=0.1, threads=th), reps)
    nb = med(lambda: smx.noisy_softmax_loss(x, t, n, alpha=0.1, return_grad=True, threads=th), reps)
    xf = med(lambda: smx.cross_entropy(x, t, threads=th), reps)
    xb = med(lambda: smx.cross_entropy(x, t, return_grad=True, threads=th), reps)
    print("noisy_softmax fwd %.3f s, fwd+bwd %.3f s (bwd/fwd %.2f); cross_entropy fwd %.3f s, fwd+bwd %.3f s "
          "(bwd/fwd %.2f); noisy/xent fwd %.2f, fwd+bwd %.2f"
          % (nf, nb, (nb - nf) / nf, xf, xb, (xb - xf) / xf, nf / xf, nb / xb))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=("losses", "multimax"), default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((a.rows, a.cols), dtype=np.float32) * 2.0)
    t = rng.integers(0, a.cols, a.rows)
    th = a.threads
    nrm = np.abs(x[np.arange(a.rows), t]) + 5.0
    nrm_t = torch.from_numpy(nrm).requires_grad_(True)
    xi_t = torch.from_numpy(np.abs(smx.noisy_softmax_noise(a.rows, seed=0, step=0)).astype(np.float32))
    cases = [
        ("focal", lambda: smx.focal_loss(x, t, gamma=2.0, return_grad=True, threads=th),
         lambda z, tt: st.focal_loss(z, tt, gamma=2.0), torch_focal),
        ("spherical_z", lambda: smx.spherical_z_loss(x, t, return_grad=True, threads=th),
         lambda z, tt: st.spherical_z_loss(z, tt), torch_zloss),
        ("dice", lambda: smx.dice_loss(x, t, return_grad=True, threads=th),
         lambda z, tt: st.dice_loss(z, tt), torch_dice),
        ("info_nce", lambda: smx.info_nce(x, temperature=0.07, return_grad=True, threads=th),
         lambda z, tt: st.info_nce(z, temperature=0.07), torch_nce),
        ("noisy", lambda: smx.noisy_softmax_loss(x, t, nrm, alpha=0.1, return_grad=True, threads=th),
         lambda z, tt: st.noisy_softmax_loss(z, tt, nrm_t, alpha=0.1),
         lambda z, tt: torch_noisy(z, tt, nrm_t, xi_t)),
    ]
    if th != 1:
        print("note: the smx.torch wrappers call smx with threads=1")
    if a.only == "multimax":
        multimax_table(x, th, a.reps)
        return
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
    noisy_line(x, t, nrm, th, a.reps)
    if a.only is None:
        multimax_table(x, th, a.reps)


def multimax_table(x, th, reps):
    r, ts = [0.3, -0.2, 1.0, 0.5], [0.7, 1.3, -0.4, 0.9]
    sm = med(lambda: smx.softmax(x, threads=th), reps)
    mm = med(lambda: smx.multimax(x, r, ts, threads=th), reps)
    y = smx.multimax(x, r, ts, threads=th)
    ys = smx.softmax(x, threads=th)
    dy = np.random.default_rng(1).standard_normal(x.shape, dtype=np.float32)   # not all ones: no cancelling
    dyt = torch.from_numpy(dy)
    smb = med(lambda: smx.softmax_backward(ys, dy, threads=th), reps)
    mmb = med(lambda: smx.multimax_backward(x, y, dy, r, ts, threads=th, params_grad=True), reps)
    rt = torch.tensor(r, requires_grad=True)
    tt = torch.tensor(ts, requires_grad=True)

    def torch_mm(z):
        s = (z + tt[0] * torch.relu(rt[0] - z) + tt[1] * torch.relu(z - rt[1]) + tt[2] * torch.relu(rt[2] - z) ** 2
             + tt[3] * torch.relu(z - rt[3]) ** 2)
        return torch.softmax(s, -1)

    def run(f):
        z = torch.from_numpy(x).requires_grad_(True)
        f(z).backward(dyt)
    s_st = med(lambda: run(lambda z: st.multimax(z, rt, tt)), reps)
    s_t = med(lambda: run(torch_mm), reps)
    print("multimax fwd %.3f s (softmax %.3f s, ratio %.2f); bwd %.3f s (softmax_backward %.3f s, ratio %.2f; "
          "bwd/fwd %.2f)" % (mm, sm, mm / sm, mmb, smb, mmb / smb, mmb / mm))
    print("multimax fwd+bwd: smx.torch %.3f s, torch ops %.3f s, torch/smx.torch %.2f" % (s_st, s_t, s_t / s_st))


if __name__ == "__main__":
    main()
