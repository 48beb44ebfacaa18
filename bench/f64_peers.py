#!/usr/bin/python3
"""f64 softmax peers for bench/smx_bench_f64: NumPy, SciPy and PyTorch (CPU,
float64, one thread) on the shapes of smx_bench_f64, same timing scheme
(batches of calls lasting 20 ms, medians over interleaved samples).

    /usr/bin/python3 bench/f64_peers.py [--cases 1Ki,64Ki,4Mi,4096x32000] [--reps N] [--cpu-time]
"""
import argparse
import time

import numpy as np
import scipy.special

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # the table is printed without it
    torch = None


def parse_case(s):
    if "x" in s:
        r, c = s.split("x")
        return int(r), int(c)
    mult = {"Ki": 1 << 10, "Mi": 1 << 20}
    for suf, m in mult.items():
        if s.endswith(suf):
            return 1, int(s[: -len(suf)]) * m
    return 1, int(s)


def numpy_softmax(x, out):
    m = x.max(axis=-1, keepdims=True)
    np.subtract(x, m, out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)


clock = time.perf_counter


def sample(fn):
    calls = 1
    while True:
        t0 = clock()
        for _ in range(calls):
            fn()
        t = clock() - t0
        if t >= 0.02:
            return t / calls
        calls *= 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="1Ki,64Ki,4Mi,4096x32000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cpu-time", action="store_true", help="process CPU time (steadier on a busy machine)")
    a = ap.parse_args()
    global clock
    if a.cpu_time:
        clock = time.process_time
    print("f64 peers: numpy %s, scipy %s, torch %s (1 thread); medians of %d samples of %s time, ns per element"
          % (np.__version__, scipy.__version__, torch.__version__ if torch else "absent", a.reps,
             "CPU" if a.cpu_time else "wall"))
    rng = np.random.default_rng(0x5eed)
    for case in a.cases.split(","):
        rows, cols = parse_case(case)
        x = rng.uniform(-10.0, 10.0, size=(rows, cols))
        y = np.empty_like(x)
        methods = [
            ("numpy softmax (max, exp, sum)", lambda: numpy_softmax(x, y)),
            ("scipy.special.softmax", lambda: scipy.special.softmax(x, axis=-1)),
            ("scipy.special.logsumexp", lambda: scipy.special.logsumexp(x, axis=-1)),
        ]
        if torch is not None:
            tx = torch.from_numpy(x)
            methods += [
                ("torch.softmax float64", lambda: torch.softmax(tx, -1)),
                ("torch.log_softmax float64", lambda: torch.log_softmax(tx, -1)),
                ("torch.logsumexp float64", lambda: torch.logsumexp(tx, -1)),
            ]
        for _, fn in methods:
            sample(fn)
        times = [[] for _ in methods]
        for _ in range(a.reps):
            for i, (_, fn) in enumerate(methods):
                times[i].append(sample(fn))
        n = rows * cols
        print("\n%s (%d x %d)" % (case, rows, cols))
        for (name, _), t in zip(methods, times):
            t.sort()
            print("  %-32s %10.3f ns/elem" % (name, t[len(t) // 2] * 1e9 / n))


if __name__ == "__main__":
    main()
