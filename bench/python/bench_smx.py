#!/usr/bin/python3
"""smx.softmax against scipy.special.softmax, torch.softmax and the C library.

(--op log_softmax or logsumexp: the same for those; --threads N gives smx, the
C library and torch N threads, scipy has one.)

All on the same float32 array (default 4096 x 32000), single-threaded
(torch.set_num_threads(1), smx threads=1). The C library is called through
ctypes on build/libsmx.so with a preallocated output: its speed without any
Python overhead. Each runner is timed `--repeats` times, interleaved (so a
busy machine slows all alike; the order rotates each round), and the median is reported, with ratios from
this one run.

  PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_smx.py [--build build]
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np


def load_clib(path, op="softmax", threads=1):
    lib = ctypes.CDLL(path)

    class Options(ctypes.Structure):  # smx_options in include/smx/smx.h
        _fields_ = [("algo", ctypes.c_int), ("temperature", ctypes.c_double),
                    ("flags", ctypes.c_uint32), ("threads", ctypes.c_int)]

    f = getattr(lib, "smx_%s_rows_f32" % op)
    f.restype = ctypes.c_int
    if op == "logsumexp":
        f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(Options)]
    else:
        f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
                      ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(Options)]
    opt = Options(0, 1.0, 0, threads)

    def run(x, y):
        rows, cols = x.shape
        if op == "logsumexp":
            s = f(x.ctypes.data, cols, y.ctypes.data, rows, cols, ctypes.byref(opt))
        else:
            s = f(x.ctypes.data, cols, y.ctypes.data, cols, rows, cols, ctypes.byref(opt))
        if s != 0:
            raise RuntimeError("smx_%s_rows_f32 returned %d" % (op, s))
    return run


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=32000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--op", choices=("softmax", "log_softmax", "logsumexp"), default="softmax")
    p.add_argument("--threads", type=int, default=1, help="for smx, the C library and torch (default 1)")
    p.add_argument("--build", default=os.path.join(root, "build"), help="CMake build folder (default: build)")
    args = p.parse_args()

    sys.path.insert(0, os.path.join(args.build, "python"))
    import smx
    import scipy
    import scipy.special
    op = args.op
    runners = []
    x = (np.random.default_rng(1).standard_normal((args.rows, args.cols)) * 4).astype(np.float32)
    y = np.empty_like(x) if op != "logsumexp" else np.empty(args.rows, np.float32)
    clib = load_clib(os.path.join(args.build, "libsmx.so"), op, args.threads)
    f_smx_op = getattr(smx, op)

    def f_smx(a, **kw):
        return f_smx_op(a, threads=args.threads, **kw)
    f_scipy = getattr(scipy.special, op)
    names = {"C": "C library (ctypes, out preallocated)", "Cfresh": "C library (ctypes, fresh np.empty out)",
             "smx_out": "smx.%s(x, out=y)" % op, "smx": "smx.%s(x)" % op,
             "scipy": "scipy.special.%s(x, axis=-1)" % op, "torch": "torch.%s(t, dim=-1)" % op}
    runners.append((names["C"], lambda: clib(x, y)))
    # a fresh output costs the kernel's zeroing of new pages, in C as in Python
    runners.append((names["Cfresh"], lambda: clib(x, np.empty_like(y))))
    runners.append((names["smx_out"], lambda: f_smx(x, out=y)))
    runners.append((names["smx"], lambda: f_smx(x)))
    runners.append((names["scipy"], lambda: f_scipy(x, axis=-1)))
    try:
        import torch
        torch.set_num_threads(args.threads)
        t = torch.from_numpy(x)  # the same buffer
        f_torch = getattr(torch, op)
        runners.append((names["torch"], lambda: f_torch(t, dim=-1)))
        torch_version = torch.__version__
    except ImportError:
        torch_version = "not installed"

    # accuracy next to speed: the largest deviation from a float64 reference on some rows
    x64 = x[:64].astype(np.float64)
    ref = f_scipy(x64, axis=-1)
    errs = {"smx": np.abs(f_smx(x[:64]) - ref).max(),
            "scipy": np.abs(f_scipy(x[:64], axis=-1) - ref).max()}
    if torch_version != "not installed":
        errs["torch"] = np.abs(f_torch(torch.from_numpy(x[:64]), dim=-1).numpy() - ref).max()

    times = {name: [] for name, _ in runners}
    for name, fn in runners:  # warm-up (page faults of fresh outputs, thread pools)
        fn()
    for rep in range(args.repeats):
        # each round starts one runner later, so that none always follows the
        # same neighbour (a fresh output after scipy's or torch's frees costs more)
        k = rep % len(runners)
        for name, fn in runners[k:] + runners[:k]:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}

    print("%s of float32 %d x %d, %s, median of %d interleaved runs" %
          (op, args.rows, args.cols, "single-threaded" if args.threads <= 1 else "%d threads" % args.threads,
           args.repeats))
    print("numpy %s, scipy %s, torch %s, smx %s (isa %s)" %
          (np.__version__, scipy.__version__, torch_version, smx.__version__, smx.isa()))
    gb = (x.nbytes + y.nbytes) / 1e9  # read x, write y
    base = med[names["smx"]]
    print("%-40s %10s %8s %14s" % ("runner", "median s", "GB/s", "time / smx(x)"))
    for name, _ in runners:
        print("%-40s %10.4f %8.2f %14.2f" % (name, med[name], gb / med[name], med[name] / base))
    print("max |y - float64 reference| on 64 rows: " + ", ".join("%s %.2e" % kv for kv in errs.items()))
    print("ratios (higher is better for smx; softmax targets: scipy >= 3, torch >= 1.5, C/smx >= 0.9):")
    print("  scipy / smx                                 = %.2f" % (med[names["scipy"]] / base))
    if names["torch"] in med:
        print("  torch / smx                                 = %.2f" % (med[names["torch"]] / base))
    c, cf = med[names["C"]], med[names["Cfresh"]]
    print("  C(out preallocated) / smx(x, out=y)         = %.2f   (same work: the module's overhead)" %
          (c / med[names["smx_out"]]))
    print("  C(fresh output) / smx(x)                    = %.2f   (both write into new memory)" % (cf / base))
    print("  C(out preallocated) / smx(x)                = %.2f" % (c / base))


if __name__ == "__main__":
    main()
