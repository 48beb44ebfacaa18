#!/usr/bin/python3
"""The Python module's language-model and scores functions against their torch /
scikit-learn counterparts on the same arrays, single-threaded, interleaved
rounds; prints medians (ms) and the ratio peer / smx from the same run.

  PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_lm_py.py [--rows R] [--cols C] [--rounds N]
"""
import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import average_precision_score, roc_auc_score

import smx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cols", type=int, default=32000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((a.rows, a.cols)) * 3).astype(np.float32)
    t = rng.integers(0, a.cols, a.rows)
    xt, tt = torch.from_numpy(x), torch.from_numpy(t)
    s_id, s_ood = rng.standard_normal(1_000_000) + 1, rng.standard_normal(1_000_000)
    y = np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    s = np.r_[s_id, s_ood]

    def torch_xent_grad():
        v = xt.clone().requires_grad_(True)
        F.cross_entropy(v, tt).backward()
        return v.grad

    cases = [
        ("cross_entropy fwd", lambda: smx.cross_entropy(x, t), lambda: F.cross_entropy(xt, tt)),
        ("cross_entropy fwd+grad", lambda: smx.cross_entropy(x, t, return_grad=True), torch_xent_grad),
        ("softmax_topk k=50", lambda: smx.softmax_topk(x, 50), lambda: torch.topk(torch.softmax(xt, -1), 50)),
        ("sample top_p=0.9", lambda: smx.sample(x, 1, top_p=0.9),
         lambda: torch.multinomial(torch.softmax(xt, -1), 1)),  # peer: plain multinomial, no top-p
        ("ood_metrics 2x1M (auroc+ap)", lambda: smx.ood_metrics(s_id, s_ood),
         lambda: (roc_auc_score(y, s), average_precision_score(y, s))),
    ]
    times = {name: ([], []) for name, _, _ in cases}
    for r in range(a.rounds):
        for name, f_smx, f_peer in cases:
            pair = [(0, f_smx), (1, f_peer)] if r % 2 == 0 else [(1, f_peer), (0, f_smx)]
            for which, f in pair:
                t0 = time.perf_counter()
                f()
                times[name][which].append(time.perf_counter() - t0)
    print("%d x %d float32, %d rounds, 1 thread (medians)" % (a.rows, a.cols, a.rounds))
    print("%-30s %10s %10s %8s" % ("case", "smx ms", "peer ms", "peer/smx"))
    for name, (ts, tp) in times.items():
        ms, mp = statistics.median(ts) * 1e3, statistics.median(tp) * 1e3
        print("%-30s %10.2f %10.2f %8.2f" % (name, ms, mp, mp / ms))


if __name__ == "__main__":
    main()
