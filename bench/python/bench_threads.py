#!/usr/bin/python3
"""Threads that follow the caller (issue 22 item 4): smx.torch.cross_entropy (forward + backward) and the
module's softmax_topk against torch's, at torch.get_num_threads() threads (set by --threads), each with its
defaults (smx.torch: torch's thread count; the module: threads=0, every core), interleaved rounds; prints
medians (ms) and the ratio torch / smx from the same run, and smx on one thread (its old default).

  PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_threads.py [--threads 2] [--rows 512] [--cols 32000]
"""
import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import smx
import smx.torch as st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((a.rows, a.cols)) * 3).astype(np.float32)
    xt, tt = torch.from_numpy(x), torch.from_numpy(rng.integers(0, a.cols, a.rows))

    def xent(f, **kw):
        def run():
            v = xt.clone().requires_grad_(True)
            f(v, tt, **kw).backward()
        return run

    # torch; smx with its defaults (the caller's threads); smx on one thread (as before issue 22 item 4)
    cases = {"cross_entropy fwd+bwd": (xent(F.cross_entropy), xent(st.cross_entropy),
                                       xent(st.cross_entropy, threads=1)),
             "softmax_topk": (lambda: torch.topk(torch.softmax(xt, -1), a.k), lambda: smx.softmax_topk(x, a.k),
                              lambda: smx.softmax_topk(x, a.k, threads=1))}
    times = {(c, w): [] for c in cases for w in (0, 1, 2)}
    for _ in range(a.rounds):
        for c, fs in cases.items():
            for w, f in enumerate(fs):
                t0 = time.perf_counter()
                f()
                times[(c, w)].append(time.perf_counter() - t0)
    print(f"{a.rows} x {a.cols} float32, torch {torch.__version__} at {a.threads} threads, smx ISA {smx.isa()}")
    for c in cases:
        tm, sm, s1 = (statistics.median(times[(c, w)]) * 1e3 for w in (0, 1, 2))
        print(f"{c:24s} torch {tm:8.2f} ms   smx {sm:8.2f} ms (torch/smx {tm / sm:5.2f})   "
              f"smx 1 thread {s1:8.2f} ms (torch/smx {tm / s1:5.2f})")


if __name__ == "__main__":
    main()
