#!/usr/bin/python3
"""Cross-entropy forward + backward: smx (bench/lm_xent_bench) against
torch.nn.functional.cross_entropy, in one run, on 1 and 2 threads, with the
peak extra memory of each. Default 4096 x 128000 f32 logits (2 GiB; PyTorch
needs about 4 more GiB for log-softmax and the gradient).

  /usr/bin/python3 bench/python/bench_xent_torch.py [--bench build/bench/lm_xent_bench]
                   [--rows 4096] [--cols 128000] [--reps 3] [--threads 1,2]

PyTorch: x (requires_grad) -> F.cross_entropy(x, t) (mean) -> backward(), x.grad
freed between repetitions; torch.set_num_threads(n). Its peak extra memory is
the growth of the process's peak resident set (VmHWM, reset before each call)
over the resident set before the call. smx: the same measure, in its own process.
Times are medians of --reps; the ratios come from this one run."""
import argparse
import os
import subprocess
import sys
import time


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def torch_times(rows, cols, reps, nthreads):
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    x = torch.empty(rows, cols).uniform_(-2.4, 2.4).requires_grad_(True)
    t = torch.randint(0, cols, (rows,))
    out = {}
    for n in nthreads:
        torch.set_num_threads(n)
        for mode in ("fwd", "fwd+bwd"):
            ts, extra = [], 0
            for _ in range(reps):
                x.grad = None
                rss0 = status_kib("VmRSS")
                reset_peak()
                t0 = time.perf_counter()
                if mode == "fwd":
                    with torch.no_grad():
                        loss = F.cross_entropy(x, t)
                else:
                    loss = F.cross_entropy(x, t)
                    loss.backward()
                ts.append(time.perf_counter() - t0)
                extra = max(extra, status_kib("VmHWM") - rss0)
                del loss
            ts.sort()
            out[(n, mode)] = (ts[len(ts) // 2] * 1e3, extra / 1024.0)
    return out


def smx_times(bench, rows, cols, reps, nthreads):
    cmd = [bench, "--rows", str(rows), "--cols", str(cols), "--reps", str(reps), "--threads",
           ",".join(map(str, nthreads)), "--csv"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    out = {}
    for line in r.stdout.splitlines()[1:]:
        f = line.split(",")
        out[(int(f[3]), f[4])] = (float(f[5]), float(f[7]))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(here, "..", "..", "build", "bench", "lm_xent_bench"))
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=128000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    nthreads = [int(v) for v in a.threads.split(",")]
    import torch
    gib = a.rows * a.cols * 4 / 2 ** 30
    print("cross-entropy, %d x %d f32 logits (%.2f GiB), median of %d; torch %s; %d CPUs"
          % (a.rows, a.cols, gib, a.reps, torch.__version__, os.cpu_count()))
    sm = smx_times(a.bench, a.rows, a.cols, a.reps, nthreads)
    tt = torch_times(a.rows, a.cols, a.reps, nthreads)
    print("%-8s %-18s %12s %12s %8s %14s %14s" % ("threads", "mode", "smx ms", "torch ms", "speedup",
                                                  "smx extra MiB", "torch extra MiB"))
    for n in nthreads:
        for mode, smode in (("fwd", "fwd"), ("fwd+bwd", "fwd+bwd"), ("fwd+bwd", "fwd+bwd in place")):
            s_ms, s_mem = sm[(n, smode)]
            t_ms, t_mem = tt[(n, mode)]
            print("%-8d %-18s %12.1f %12.1f %7.2fx %14.1f %14.1f" % (n, smode, s_ms, t_ms, t_ms / s_ms, s_mem, t_mem))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
