#!/usr/bin/python3
"""Threads that follow the caller (issue 22 item 4): smx.torch.cross_entropy (forward + backward) and the
module's softmax_topk against torch's, at torch.get_num_threads() threads (set by --threads), each with its
defaults (smx.torch: torch's thread count; the module: threads=0, every core), interleaved rounds; prints
medians (ms) and the ratio torch / smx from the same run.

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

    def xent(f):
        def run():
            v = xt.clone().requires_grad_(True)
            f(v, tt).backward()
        return run

    cases = {"cross_entropy fwd+bwd": (xent(F.cross_entropy), xent(st.cross_entropy)),
             "softmax_topk": (lambda: torch.topk(torch.softmax(xt, -1), a.k), lambda: smx.softmax_topk(x, a.k))}
    times = {(c, w): [] for c in cases for w in (0, 1)}
    for _ in range(a.rounds):
        for c, fs in cases.items():
            for w, f in enumerate(fs):
                t0 = time.perf_counter()
                f()
                times[(c, w)].append(time.perf_counter() - t0)
    print(f"{a.rows} x {a.cols} float32, torch {torch.__version__} at {a.threads} threads, smx ISA {smx.isa()}")
    for c in cases:
        tm, sm = statistics.median(times[(c, 0)]) * 1e3, statistics.median(times[(c, 1)]) * 1e3
        print(f"{c:24s} torch {tm:8.2f} ms   smx {sm:8.2f} ms   torch/smx {tm / sm:5.2f}")


if __name__ == "__main__":
    main()
