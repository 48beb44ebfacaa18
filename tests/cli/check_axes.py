"""The smx command against SciPy for every axis, layout, dtype and engine mode.

Usage: /usr/bin/python3 check_axes.py SMX_BINARY TMPDIR
Runs smx softmax / log-softmax / logsumexp over N-d arrays (C and Fortran
order; float16, float32, float64, int16 input; --dtype overrides), with
SMX_CLI_BLOCK_BYTES set small so that whole-row blocks, whole-slab blocks and
gathered column blocks all run, through files, pipes and CSV/TSV, and checks
values, shape and dtype against scipy.special in float64. Prints one line per
failure and exits 1 if any.
"""
import io
import os
import subprocess
import sys

import numpy as np
from scipy.special import log_softmax, logsumexp, softmax

smx, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
fails = 0
runs = 0
case = 0
REF = {"softmax": softmax, "log-softmax": log_softmax, "logsumexp": logsumexp}
# worst relative error allowed per type computed in (the library's bounds are
# a few ulp; the reference is float64 of the same input values)
TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}


def run(args, env_block=None, stdin=None):
    env = dict(os.environ)
    if env_block:
        env["SMX_CLI_BLOCK_BYTES"] = str(env_block)
    return subprocess.run([smx] + args, env=env, input=stdin, capture_output=True)


def fail(msg):
    global fails
    fails += 1
    print("FAIL", msg)


def compare(tag, got, want, out_dtype, tol, log_domain=False):
    if got.dtype != np.dtype(out_dtype) or got.shape != np.shape(want):
        fail(f"{tag}: dtype {got.dtype} shape {got.shape}, want {np.dtype(out_dtype)} {np.shape(want)}")
        return
    g = got.astype(np.float64)
    w = np.asarray(want, dtype=np.float64)
    special = ~np.isfinite(w)
    if not np.array_equal(np.isnan(g), np.isnan(w)) or not np.array_equal(g[special & ~np.isnan(w)],
                                                                          w[special & ~np.isnan(w)]):
        fail(f"{tag}: special values differ")
        return
    fin = np.isfinite(w)
    # softmax: relative error above the type's smallest normal; log-domain
    # results (log-softmax, logsumexp): relative to max(|w|, 1)
    floor = 1.0 if log_domain else {np.float16: 6.2e-5, np.float32: 1.2e-38, np.float64: 1e-300}[out_dtype]
    err = np.abs(g[fin] - w[fin]) / np.maximum(np.abs(w[fin]), floor)
    if err.size and err.max() > tol:
        fail(f"{tag}: max relative error {err.max():.3g} > {tol:g}")


def expected_dtype(in_dtype, dtype_opt):
    if dtype_opt:
        return {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype_opt]
    return in_dtype if in_dtype in (np.float16, np.float64) else np.float32


def compute_tol(in_dtype, out_dtype):
    if in_dtype == np.float16 and out_dtype == np.float16:
        return TOL[np.float16]
    # computed in the wider of the input's precision and the output's
    if in_dtype == np.float64 or out_dtype == np.float64:
        t = TOL[np.float64]
    else:
        t = TOL[np.float32]
    return max(t, {np.float16: 1e-3, np.float32: 1.2e-7, np.float64: 0}[out_dtype])


def policy_ref(cmd, x, axis):
    """SciPy where it is defined; smx's documented limits for rows with NaN
    (all NaN), +inf (1/k on the k infinities) or only -inf (0, -inf, -inf)."""
    def one(row):
        if np.isnan(row).any():
            return np.full(1 if cmd == "logsumexp" else row.shape, np.nan)
        if np.isposinf(row).any():
            k = np.isposinf(row).sum()
            if cmd == "logsumexp":
                return np.array([np.inf])
            if cmd == "softmax":
                return np.where(np.isposinf(row), 1.0 / k, 0.0)
            return np.where(np.isposinf(row), -np.log(k), -np.inf)
        if np.isneginf(row).all():
            return np.array([-np.inf]) if cmd == "logsumexp" else np.full(row.shape, 0.0 if cmd == "softmax" else -np.inf)
        r = REF[cmd](row)
        return np.atleast_1d(r)
    out = np.apply_along_axis(one, axis, x)
    return out.squeeze(axis=axis) if cmd == "logsumexp" else out


shapes = [(9,), (5, 6), (3, 4, 5), (2, 3, 4, 5), (1, 1, 3), (4, 1, 2)]
STRIDE = max(1, int(os.environ.get("SMX_CLI_AXES_STRIDE", "1")))
sel = -1
in_dtypes = [np.float32, np.float64, np.float16, np.int16]
for shp in shapes:
    for order in "CF":
        for dt in in_dtypes:
            x = (rng.standard_normal(shp) * 4).astype(dt)
            if dt != np.int16 and x.size > 3:
                x.flat[1] = -np.inf  # a masked entry in some row
            x = np.asfortranarray(x) if order == "F" else np.ascontiguousarray(x)
            src = f"{tmp}/ax_in.npy"
            np.save(src, x)
            xr = x.astype(np.float64)
            for ax in range(-len(shp), len(shp)):
                for cmd in REF:
                    # SMX_CLI_AXES_STRIDE=k: every k-th case only (CI's sanitizer run)
                    sel += 1
                    if sel % STRIDE:
                        continue
                    want = policy_ref(cmd, xr, ax)
                    # every case with tiny blocks (gathered columns), and once more with
                    # another block size (whole slabs / whole rows) and another --dtype
                    other = "f16" if dt == np.float16 else "f64" if dt != np.float64 else "f32"
                    case = (case + 1) % 4  # the second run for half the cases (quick under ASan)
                    combos = ((24, None), ((200, 1 << 20)[case // 2], other)) if case % 2 else ((24, None),)
                    for block, dtype_opt in combos:
                        args = [cmd, src, "-o", f"{tmp}/ax_out.npy", "--axis", str(ax), "-q"]
                        if dtype_opt:
                            args += ["--dtype", dtype_opt]
                        r = run(args, block)
                        runs += 1
                        tag = f"{cmd} {shp} {order} {np.dtype(dt).name} axis {ax} block {block} dtype {dtype_opt}"
                        if r.returncode != 0:
                            fail(f"{tag}: exit {r.returncode} {r.stderr.decode()}")
                            continue
                        odt = expected_dtype(dt, dtype_opt)
                        compare(tag, np.load(f"{tmp}/ax_out.npy"), want, odt, compute_tol(dt, odt), cmd != "softmax")

# pipes: stdin to stdout, with the out-of-order mode forcing both spools
x = rng.standard_normal((6, 50, 7)).astype(np.float32)
np.save(f"{tmp}/pipe_in.npy", x)
raw = open(f"{tmp}/pipe_in.npy", "rb").read()
for axis in (0, 1, 2):
    for block in (64, 1 << 20):
        r = run(["softmax", "-", "-o", "-", "--axis", str(axis)], block, raw)
        runs += 1
        if r.returncode != 0 or r.stderr:
            fail(f"pipe axis {axis} block {block}: exit {r.returncode} {r.stderr.decode()}")
            continue
        compare(f"pipe axis {axis} block {block}", np.load(io.BytesIO(r.stdout)), softmax(x.astype(np.float64), axis=axis),
                np.float32, TOL[np.float32])
xf = np.asfortranarray(x)
np.save(f"{tmp}/pipe_f.npy", xf)
r = run(["logsumexp", "-", "-o", "-", "--axis", "1"], 64, open(f"{tmp}/pipe_f.npy", "rb").read())
runs += 1
if r.returncode != 0:
    fail(f"fortran pipe: exit {r.returncode} {r.stderr.decode()}")
else:
    compare("fortran pipe", np.load(io.BytesIO(r.stdout)), logsumexp(x.astype(np.float64), axis=1), np.float32,
            TOL[np.float32])

# text: CSV and TSV both ways, numbers that round-trip, specials
x = rng.standard_normal((7, 5)) * 10
x[2, 1] = -np.inf
x[3, :] = -np.inf
x[4, 4] = np.inf
x[5, 0] = np.nan
np.savetxt(f"{tmp}/t_in.csv", x, delimiter=",", fmt="%.17g")
np.savetxt(f"{tmp}/t_in.tsv", x, delimiter="\t", fmt="%.17g")
np.save(f"{tmp}/t_in.npy", x)
for ext, sep in (("csv", ","), ("tsv", "\t")):
    for cmd in REF:
        for axis in (0, 1, -1):
            for dtype_opt in (None, "f32", "f16"):
                args = [cmd, f"{tmp}/t_in.{ext}", "-o", f"{tmp}/t_out.{ext}", "--axis", str(axis)]
                if dtype_opt:
                    args += ["--dtype", dtype_opt]
                r = run(args, 96)
                runs += 1
                tag = f"text {ext} {cmd} axis {axis} dtype {dtype_opt}"
                if r.returncode != 0:
                    fail(f"{tag}: exit {r.returncode} {r.stderr.decode()}")
                    continue
                got = np.loadtxt(f"{tmp}/t_out.{ext}", delimiter=sep, ndmin=1 if cmd == "logsumexp" else 2)
                odt = expected_dtype(np.float64, dtype_opt)
                want = policy_ref(cmd, x, axis)
                # text of float64 must round-trip: equal to the .npy result bit for bit
                r2 = run([cmd, f"{tmp}/t_in.npy", "-o", f"{tmp}/t_ref.npy", "--axis", str(axis)] +
                         (["--dtype", dtype_opt] if dtype_opt else []), 96)
                ref = np.load(f"{tmp}/t_ref.npy").astype(np.float64)
                if not np.array_equal(got.astype(odt), ref.astype(odt), equal_nan=True):
                    fail(f"{tag}: text differs from the .npy result")
                compare(tag, got.astype(odt), want, odt, compute_tol(np.float64, odt), cmd != "softmax")

print(f"check_axes: {runs} runs, {fails} failures")
sys.exit(1 if fails else 0)
