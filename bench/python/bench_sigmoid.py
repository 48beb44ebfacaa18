#!/usr/bin/python3
"""smx.sigmoid against torch.sigmoid and scipy.special.expit, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_sigmoid.py [--reps 7]

Each case is a float32 and a float64 array (N(0, 4) values) of 4Ki (in L1),
256Ki (in L2) and 16Mi elements (out of cache); every contender writes into a
preallocated output (torch: out=, scipy: out=, smx: out=), one thread, so
that only the elementwise work is timed. Contenders are timed in turns and the
medians of --reps rounds reported, with GB/s (one read, one write) and the
ratios torch / smx and scipy / smx from the same run.
"""
import argparse
import statistics
import time

import numpy as np
import scipy.special as sp
import torch

import smx


def timed(fn, reps):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"isa {smx.isa()}, torch {torch.__version__}, one thread, medians of {a.reps}")
    print(f"{'dtype':8} {'n':>9} {'smx GB/s':>9} {'torch GB/s':>10} {'scipy GB/s':>10} {'torch/smx':>9} {'scipy/smx':>9}")
    for dt in (np.float32, np.float64):
        for n in (1 << 12, 1 << 18, 1 << 24):
            x = (rng.standard_normal(n) * 4).astype(dt)
            y = np.empty_like(x)
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            reps = a.reps if n <= 1 << 18 else max(3, a.reps // 2)
            inner = max(1, (1 << 22) // n)   # enough work per timing in cache

            def run(f):
                def g():
                    for _ in range(inner):
                        f()
                return g
            ts = {k: [] for k in ("smx", "torch", "scipy")}
            fns = {"smx": run(lambda: smx.sigmoid(x, out=y)), "torch": run(lambda: torch.sigmoid(tx, out=ty)),
                   "scipy": run(lambda: sp.expit(x, out=y))}
            for r in range(reps):   # in turns, so that drift hits every contender alike
                for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                    ts[k] += timed(fns[k], 1)
            med = {k: statistics.median(v) / inner for k, v in ts.items()}
            gbs = {k: 2 * x.nbytes / v / 1e9 for k, v in med.items()}
            print(f"{np.dtype(dt).name:8} {n:>9} {gbs['smx']:9.1f} {gbs['torch']:10.1f} {gbs['scipy']:10.1f} "
                  f"{med['torch'] / med['smx']:9.2f} {med['scipy'] / med['smx']:9.2f}")


if __name__ == "__main__":
    main()
