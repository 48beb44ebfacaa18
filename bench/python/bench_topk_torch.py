#!/usr/bin/python3
"""torch.topk(torch.softmax(x)) against smx's fused softmax + top-k, in one run.

    /usr/bin/python3 bench/python/bench_topk_torch.py [--lib build/libsmx.so]
        [--rows 4096] [--cols 128000] [--ks 1,5,50] [--threads 1,2] [--reps 3]

The same float32 matrix (LM-like logits, 2.5 * N(0, 1)) goes to both: torch
through torch.softmax(x, -1) then torch.topk(p, k, -1) (Debian python3-torch,
torch.set_num_threads(T)), smx through smx_softmax_topk_rows_f32 called with
ctypes on the tensor's memory (smx_options.threads = T). Times are medians of
--reps runs of the whole call; ratio = torch / smx. The indices are compared
(rows where equal probabilities from different logits order differently may
differ; the count is printed).
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np
import torch


class Options(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("temperature", ctypes.c_double), ("flags", ctypes.c_uint32),
                ("threads", ctypes.c_int)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(here, "..", "..", "build", "libsmx.so"))
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=128000)
    ap.add_argument("--ks", default="1,5,50")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    lib = ctypes.CDLL(a.lib)
    fn = lib.smx_softmax_topk_rows_f32
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(Options)]
    lib.smx_isa.restype = ctypes.c_char_p

    torch.manual_seed(0)
    x = torch.randn(a.rows, a.cols, dtype=torch.float32) * 2.5
    xp = x.data_ptr()
    print(f"torch {torch.__version__}, smx isa {lib.smx_isa().decode()}; {a.rows} x {a.cols} f32 "
          f"({a.rows * a.cols * 4 / 2**30:.2f} GiB); median of {a.reps}")
    print(f"{'thr':<4}{'k':<5}{'smx fused ms':>13}{'torch ms':>11}{'ratio':>8}  check")
    for t in [int(v) for v in a.threads.split(",")]:
        torch.set_num_threads(t)
        opt = Options(0, 0.0, 0, t)
        for k in [int(v) for v in a.ks.split(",")]:
            vals = np.empty((a.rows, k), dtype=np.float32)
            idx = np.empty((a.rows, k), dtype=np.int64)
            ts, tt = [], []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                st = fn(xp, a.cols, a.rows, a.cols, k, vals.ctypes.data, idx.ctypes.data, ctypes.byref(opt))
                ts.append(time.perf_counter() - t0)
                if st != 0:
                    sys.exit(f"smx_softmax_topk_rows_f32: status {st}")
                t0 = time.perf_counter()
                tv, ti = torch.topk(torch.softmax(x, -1), k, -1)
                tt.append(time.perf_counter() - t0)
                del tv
            differ = int((ti.numpy() != idx).sum())
            s, q = statistics.median(ts), statistics.median(tt)
            print(f"{t:<4}{k:<5}{1e3 * s:>13.1f}{1e3 * q:>11.1f}{q / s:>7.2f}x  {differ}/{a.rows * k} indices differ",
                  flush=True)


if __name__ == "__main__":
    main()
