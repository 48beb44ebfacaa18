#!/usr/bin/python3
"""smx attention (the CLI) against a composed NumPy form: causal and not, GQA,
--scale, --window, --lse, float64 and float16 inputs, and its usage errors.
Usage: test_attention_cli.py SMX_BINARY"""
import os
import subprocess
import sys
import tempfile

import numpy as np

SMX = sys.argv[1]
bad = 0


def composed(q, k, v, scale, causal, window=None):
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, 1).astype(np.float64), np.repeat(v, g, 1).astype(np.float64)
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    pos = np.arange(L)[:, None] + S - L
    j = np.arange(S)[None, :]
    vis = np.ones((L, S), bool)
    if causal:
        vis &= j <= pos
    if window is not None:
        vis &= j >= pos - window
    s = np.where(vis, s, -np.inf)
    m = np.max(s, -1, keepdims=True)
    p = np.exp(s - m)
    lse = (np.log(p.sum(-1, keepdims=True)) + m)[..., 0]
    return (p / p.sum(-1, keepdims=True)) @ v, lse


def check(name, cond):
    global bad
    if not cond:
        bad += 1
        print("FAIL", name)


rng = np.random.default_rng(1)
with tempfile.TemporaryDirectory() as tmp:
    f = {n: os.path.join(tmp, n + ".npy") for n in "qkvol"}
    for causal, window, dtype, scale in [(False, None, np.float32, None), (True, None, np.float64, 0.3),
                                         (True, 5, np.float16, None)]:
        q = rng.standard_normal((2, 4, 9, 16)).astype(dtype)
        k = rng.standard_normal((2, 2, 13, 16)).astype(dtype)
        v = rng.standard_normal((2, 2, 13, 8)).astype(dtype)
        for n, a in zip("qkv", (q, k, v)):
            np.save(f[n], a)
        cmd = [SMX, "attention", f["q"], f["k"], f["v"], "-o", f["o"], "--lse", f["l"]]
        if causal:
            cmd.append("--causal")
        if window is not None:
            cmd += ["--window", str(window)]
        if scale is not None:
            cmd += ["--scale", str(scale)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(f"{cmd[2:]} exit {r.returncode}: {r.stderr}", r.returncode == 0)
        if r.returncode:
            continue
        want, lse = composed(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                             scale if scale is not None else 16 ** -0.5, causal, window)
        o, l = np.load(f["o"]), np.load(f["l"])
        check(f"dtype {dtype}: output {o.dtype} {o.shape}", o.dtype == np.float32 and o.shape == (2, 4, 9, 8))
        check(f"dtype {dtype}: values", np.abs(o - want).max() <= 1e-5 * np.abs(want).max())
        check(f"dtype {dtype}: lse", np.abs(l - lse).max() <= 1e-5 * max(1, np.abs(lse).max()))
    # screening: r 0.6, Softmask window 7, causal; against the paper's equations in float64
    q = rng.standard_normal((1, 2, 9, 6)).astype(np.float32)
    k = rng.standard_normal((1, 1, 13, 6)).astype(np.float32)
    v = rng.standard_normal((1, 1, 13, 8)).astype(np.float32)
    sf = [os.path.join(tmp, "screen_" + n + ".npy") for n in "qkv"]
    for n, a in zip(sf, (q, k, v)):
        np.save(n, a)
    r = subprocess.run([SMX, "attention", *sf, "-o", f["o"], "--kind", "screen", "--screen-r", "0.6",
                        "--screen-window", "7", "--causal"], capture_output=True, text=True)
    check(f"screen exit {r.returncode}: {r.stderr}", r.returncode == 0)
    if r.returncode == 0:
        un = lambda x: x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
        s = un(q[0].astype(np.float64)) @ un(k[0, 0].astype(np.float64)).T
        d = np.arange(13)[None, :] - (np.arange(9)[:, None] + 4)
        a = np.maximum(1 - (1 - s) / 0.6, 0) ** 2 * np.where((d <= 0) & (d > -7), 0.5 * (np.cos(np.pi * d / 7) + 1), 0)
        hh = a @ un(v[0, 0].astype(np.float64))
        nn = np.linalg.norm(hh, axis=-1, keepdims=True)
        want = np.where(nn > 0, np.tanh(nn) / np.where(nn > 0, nn, 1), 1) * hh
        o = np.load(f["o"])[0]
        check("screen values", np.abs(o - want).max() <= 1e-5 * max(np.abs(want).max(), 1e-30))
    # --math bf16: bf16 tile products where the CPU has them (else f32 with a note), within the bf16 bound
    # against the reference of the inputs rounded to bf16 (here exact: they are bf16 values); f32 is the default
    def bf(x):
        u = x.astype(np.float32).view(np.uint32)
        return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).view(np.float32)   # nearest even
    q = bf(rng.standard_normal((1, 2, 40, 24)))
    k = bf(rng.standard_normal((1, 2, 70, 24)))
    v = bf(rng.standard_normal((1, 2, 70, 20)))
    mf = [os.path.join(tmp, "math_" + n + ".npy") for n in "qkv"]
    for n, a in zip(mf, (q, k, v)):
        np.save(n, a)
    want, _ = composed(q, k, v, 24 ** -0.5, True)
    outs = {}
    for m, isa in (("auto", ""), ("f32", ""), ("bf16", ""), ("bf16", "avx512")):
        env = dict(os.environ, SMX_MAX_ISA=isa) if isa else dict(os.environ)
        r = subprocess.run([SMX, "attention", *mf, "-o", f["o"], "--causal", "--math", m], capture_output=True,
                           text=True, env=env)
        check(f"--math {m} {isa} exit {r.returncode}: {r.stderr}", r.returncode == 0)
        if r.returncode == 0:
            outs[m, isa] = np.load(f["o"])
            note = "computed in f32" in r.stderr
            native = subprocess.run([SMX, "info"], capture_output=True, text=True, env=env).stdout
            native = "kernels in use: avx512bf16" in native
            check(f"--math {m} {isa}: note {note}", note == (m == "bf16" and not native))
            tol = (2 ** -8 * np.abs(v).max() if m == "bf16" and native else 0) + 1e-5 * np.abs(want).max()
            check(f"--math {m} {isa}: values", np.abs(outs[m, isa] - want).max() <= tol)
    if ("auto", "") in outs and ("f32", "") in outs:
        check("--math auto is f32 for f32 inputs", np.array_equal(outs["auto", ""], outs["f32", ""]))
    if ("bf16", "avx512") in outs and ("f32", "") in outs:
        check("--math bf16 capped at avx512 is f32", np.array_equal(outs["bf16", "avx512"], outs["f32", ""]))
    # usage errors: exit 1 and a message, no output
    for args in (["attention", f["q"], f["k"]], ["attention", f["q"], f["k"], f["v"]],
                 ["attention", f["q"], f["k"], f["v"], "-o", f["o"], "--window", "x"],
                 ["attention", f["q"], f["k"], f["v"], "-o", f["o"], "--bogus"],
                 ["attention", f["q"], f["k"], f["v"], "-o", f["o"], "--math", "fp8"],
                 ["attention", f["q"], f["k"], f["v"], "-o", f["o"], "--kind", "screen"],
                 ["attention", f["q"], f["k"], f["v"], "-o", f["o"], "--kind", "screen", "--screen-r", "2"]):
        r = subprocess.run([SMX] + args, capture_output=True, text=True)
        check(f"{args}: exit {r.returncode}", r.returncode == 1 and "smx:" in r.stderr)
    np.save(f["k"], rng.standard_normal((2, 3, 13, 16)).astype(np.float32))   # 4 heads over 3
    r = subprocess.run([SMX, "attention", f["q"], f["k"], f["v"], "-o", f["o"]], capture_output=True, text=True)
    check(f"bad heads: exit {r.returncode}", r.returncode == 2)
print("test_attention_cli:", "ok" if not bad else f"{bad} failed")
sys.exit(1 if bad else 0)
