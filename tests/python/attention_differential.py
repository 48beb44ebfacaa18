#!/usr/bin/env python3
"""Differential test of smx.attention and smx.torch.scaled_dot_product_attention against a float64 NumPy
reference, over random cases, bounded by time (issue 24, "keep them found").

Each case is drawn from its own seed: random shapes (decode, general, key-split and empty ones), GQA with
KV heads given as they are, repeated (broadcast by a zero stride, or copied) or broadcast over batch and
rows, strided / transposed / negative-stride / Fortran-order inputs, f32, f16, bf16 (torch) and f64 inputs,
and mixed dtypes; random masks (bool, float bias with -inf, in broadcast shapes and layouts), causal in
both alignments, windows, scale, softcap, sinks; NaN in Q, K, V or the bias. Every result is held to the
bounds of include/smx/smx_attention.h:

  * O: |O - ref| <= 1e-5 max|ref| over the tensor (f32 arithmetic), plus the one rounding of each stored
    output when the result is float16 (2^-11 relative, 2^-25 absolute for subnormals) or bfloat16 (2^-8);
    where the outputs cancel (|O| << |V|: no float32 sum can meet a bound relative to |O|) max|ref| is
    replaced by the size of the terms, max_i sum_j w_ij |v_j|, when larger; the reference is computed on
    the inputs as the library reads them (float64 rounded to float32, float16 and bfloat16 exact);
  * both plus what the float32 rounding of the scores moves (large logits: no float32 computation meets
    1e-5 there): a seen score may be off by d = 2^-24 ((2 sqrt(D) + 2) |scale| sum_d |q_d k_d| + 2 |z|), which
    moves O_i by at most 2 max d sum_j w_ij |v_j| and lse by max d;
  * lse: |lse - ref| <= 1e-5 max(1, |ref|) (tests/unit/test_attention.c's bound; the header states none);
  * a row that sees no key: O = 0 and lse = -inf (the sink with one);
  * NaN (the header's rule): a NaN score reaches exactly the rows that see its key (whole O row and lse
    NaN); a NaN in V element x of key j makes O[., x] NaN for the rows that see key j, may reach other
    rows of its KV head (0 x NaN in a tile's product), never a row that sees no key;
  * threads 1, 2 and 7 give the same bits (smx.attention; the torch wrapper runs on the calling thread).

Usage:
  attention_differential.py [--seconds S] [--seed MASTER]   run cases for S seconds (default: the
                                                            environment's SMX_SOAK_SECONDS, else 30)
  attention_differential.py --case SEED [-v]                 replay one case alone (printed on failure)
Exit status 0 when every case held, 1 otherwise.
"""
import argparse
import os
import sys
import time
import traceback

import numpy as np

import smx

try:
    import torch
    import smx.torch as smx_torch
except ImportError:  # pragma: no cover
    torch = None

MAX_WORK = 3e6     # B * Hq * Lq * Lk * max(D, Dv) per case: keeps the float64 reference to milliseconds


# ----------------------------------------------------------------------------------------------- cases

class Case:
    """One random case: every choice is drawn from np.random.default_rng(seed), in a fixed order."""

    def __init__(self, seed, allow_torch=True, allow_nan=True):
        self.seed = seed
        r = np.random.default_rng(seed)
        self.api = "torch" if allow_torch and torch is not None and r.random() < 0.35 else "numpy"
        shape = r.choice(["general", "decode", "split", "empty"], p=[0.6, 0.25, 0.07, 0.08])
        self.shape_kind = str(shape)
        B = int(r.choice([0, 1, 2, 3], p=[0.02, 0.5, 0.3, 0.18]))
        hkv = int(r.integers(1, 4))
        g = int(r.choice([1, 1, 2, 3, 4]))
        if shape == "decode":
            lq, lk = int(r.integers(1, 5)), int(r.integers(1, 400))
        elif shape == "split":   # decode rows over >= 2 pieces of 2048 keys (the split path)
            B, hkv, g = 1, int(r.integers(1, 3)), int(r.choice([1, 2]))
            lq, lk = int(r.integers(1, 3)), int(r.integers(4097, 4700))
        elif shape == "empty":
            lq, lk = int(r.choice([0, 1, 7])), int(r.choice([0, 5]))
            if lq and lk:
                B = 0
        else:
            lq, lk = int(r.integers(1, 90)), int(r.integers(1, 200))
        D = int(r.choice([1, 2, 3, 7, 8, 16, 24, 31, 32, 64, 72, 80, 96, 128]))
        Dv = int(r.choice([1, 3, 8, 16, 17, 32, 64, 80])) if r.random() < 0.5 else D
        while B * hkv * g * lq * lk * max(D, Dv) > MAX_WORK and lk > 1:
            lk = max(1, lk // 2) if shape != "split" else lk
            if shape == "split":
                D, Dv = max(1, D // 2), max(1, Dv // 2)
                if D == 1 and Dv == 1:
                    break
        self.B, self.hkv, self.hq, self.lq, self.lk, self.D, self.Dv = B, hkv, hkv * g, lq, lk, D, Dv

        # dtypes of q, k, v as given
        if self.api == "numpy":
            dt = r.choice(["f32", "f16", "f64", "mixed"], p=[0.45, 0.25, 0.2, 0.1])
            if dt == "mixed":
                self.dtypes = [str(x) for x in r.choice(["f16", "f32", "f64"], size=3)]
            else:
                self.dtypes = [str(dt)] * 3
        else:
            self.dtypes = [str(r.choice(["f32", "f16", "bf16", "f64"], p=[0.4, 0.2, 0.2, 0.2]))] * 3
        self.spread = float(r.choice([0.5, 1.0, 2.0, 3.0]))

        # layouts: how each operand is laid out in memory (the values are the same)
        lay = ["contig", "bthd", "rowstep", "padD", "neg", "fortran"] if self.api == "numpy" else \
              ["contig", "bthd", "rowstep", "padD"]
        pl = [0.5, 0.15, 0.1, 0.1, 0.08, 0.07] if self.api == "numpy" else [0.55, 0.2, 0.15, 0.1]
        self.layouts = [str(r.choice(lay, p=pl)) for _ in range(3)]
        # broadcast dims (bit 0 batch, 1 head, 2 row) of q, k, v: values repeated by zero strides
        self.bcast = [int(r.choice([0, 1, 2, 4, 3, 6], p=[0.7, 0.06, 0.1, 0.06, 0.04, 0.04])) if r.random() < 0.3
                      else 0 for _ in range(3)]
        # KV heads: as they are (GQA), repeated to Hq by a zero stride (Hkv = 1) or by a copy
        self.kv_form = str(r.choice(["gqa", "expand"], p=[0.7, 0.3])) if g > 1 else "gqa"

        # masks and options
        self.causal = str(r.choice(["none", "bottom_right", "top_left"], p=[0.5, 0.25, 0.25]))
        self.window = None
        self.sinks = None
        self.softcap = None
        self.scale = None
        if r.random() < 0.3:
            self.scale = float(r.uniform(0.02, 1.2) * r.choice([1, 1, 1, -1]))
        self.mask_kind = str(r.choice(["none", "bool", "bias"], p=[0.45, 0.3, 0.25]))
        shapes = ["k", "qk", "hqk", "b11k", "bhqk", "b1q1"] if self.api == "numpy" else ["qk", "k", "lead"]
        self.mask_shape = str(r.choice(shapes))
        self.mask_layout = str(r.choice(["contig", "transposed", "bcast"], p=[0.7, 0.15, 0.15]))
        self.mask_keep = float(r.uniform(0.2, 1.0))
        self.mask_dtype = "f32"
        if self.mask_kind == "bias":
            self.mask_dtype = str(r.choice(["f32", "f64", "f16"] if self.api == "numpy" else ["f32", "q"]))
        if self.api == "torch" and self.mask_kind != "none":
            self.causal = "none"   # torch refuses attn_mask with is_causal
        if self.api == "torch":
            self.causal = "top_left" if self.causal != "none" else "none"
        if self.api == "numpy":
            if r.random() < 0.2:
                self.window = (int(r.integers(-1, max(2, lk + 2))), int(r.integers(-1, max(2, lk + 2))))
                if r.random() < 0.3:
                    self.window = int(r.integers(-1, max(2, lk + 2)))
            if r.random() < 0.2:
                self.sinks = (r.standard_normal(self.hq) * 2).astype(np.float32)
            if r.random() < 0.2:
                self.softcap = float(r.uniform(0.5, 30))
        # special values
        self.special = []
        if r.random() < 0.25 and allow_nan:
            where = ["q", "k", "v"] + (["bias"] if self.mask_kind == "bias" else [])
            self.special = sorted(set(str(x) for x in r.choice(where, size=int(r.integers(1, 3)))))
        self.lead = None
        if self.api == "torch":
            self.lead = str(r.choice(["3d", "4d", "5d"], p=[0.2, 0.65, 0.15]))
            if self.lead == "3d":
                self.hkv = self.hq = 1
                self.kv_form = "gqa"
        self.rng = r   # the data is drawn after the choices

    def describe(self):
        c = f"case {self.seed}: {self.api} {self.shape_kind} B={self.B} Hq={self.hq} Hkv={self.hkv} Lq={self.lq} " \
            f"Lk={self.lk} D={self.D} Dv={self.Dv} dtypes={'/'.join(self.dtypes)} layouts={'/'.join(self.layouts)}"
        if any(self.bcast):
            c += f" bcast={self.bcast}"
        if self.kv_form != "gqa":
            c += f" kv={self.kv_form}"
        if self.lead:
            c += f" lead={self.lead}"
        c += f" causal={self.causal}"
        if self.mask_kind != "none":
            c += f" mask={self.mask_kind}:{self.mask_shape}:{self.mask_layout}:{self.mask_dtype}"
        for name in ("window", "scale", "softcap"):
            if getattr(self, name) is not None:
                c += f" {name}={getattr(self, name)}"
        if self.sinks is not None:
            c += " sinks"
        if self.special:
            c += f" nan_in={','.join(self.special)}"
        return c


# ------------------------------------------------------------------------------------------- data

def rounded(x, dt):
    """x (float64) as the library reads it: float16 / bfloat16 exactly, float64 rounded to float32."""
    if dt == "f16":
        return x.astype(np.float16).astype(np.float64)
    if dt == "bf16":
        return torch.from_numpy(x).to(torch.bfloat16).to(torch.float64).numpy()
    return x.astype(np.float32).astype(np.float64)


def storage(x, dt):
    return x.astype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dt])


def layout(x, how):
    """x (numpy, final dtype) in another memory layout with the same values."""
    if how == "bthd":
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    if how == "rowstep":
        big = np.zeros(x.shape[:2] + (2 * x.shape[2],) + x.shape[3:], x.dtype)
        big[:, :, ::2] = x
        return big[:, :, ::2]
    if how == "padD":
        big = np.zeros(x.shape[:3] + (x.shape[3] + 3,), x.dtype)
        big[..., :x.shape[3]] = x
        return big[..., :x.shape[3]]
    if how == "neg":
        return np.ascontiguousarray(x[:, :, ::-1])[:, :, ::-1]
    if how == "fortran":
        return np.asfortranarray(x)
    return np.ascontiguousarray(x)


def small_values(c, shape, bits, spread, name):
    """Random float64 values for an operand of `shape`, at extent 1 on the dims in `bits` (the caller
    repeats them by zero strides); a few NaN when the case puts them in this operand (in a repeated
    operand, the NaN repeats too, as a user's would)."""
    small = tuple(1 if bits >> i & 1 else n for i, n in enumerate(shape[:3])) + tuple(shape[3:])
    x = c.rng.standard_normal(small) * spread
    if name in c.special and x.size:
        for _ in range(int(c.rng.integers(1, 4))):
            x.flat[c.rng.integers(0, x.size)] = np.nan
    return x


def positions(c):
    """visible[i, j] from causal and window (the header's p_i: bottom-right unless causal is top-left)."""
    i = np.arange(c.lq)[:, None]
    j = np.arange(c.lk)[None, :]
    p = i if c.causal == "top_left" else i + c.lk - c.lq
    vis = np.ones((c.lq, c.lk), bool)
    if c.causal != "none":
        vis &= j <= p
    if c.window is not None:
        left, right = (c.window, -1) if isinstance(c.window, int) else c.window
        if left != -1:
            vis &= j >= p - left
        if right != -1:
            vis &= j <= p + right
    return vis


def make_mask(c):
    """(the mask as passed, its float64 values broadcast to (B, Hq, Lq, Lk) as the library reads them)"""
    if c.mask_kind == "none":
        return None, None
    r = c.rng
    B, H, L, S = c.B, c.hq, c.lq, c.lk
    if c.api == "numpy":
        shp = {"k": (S,), "qk": (L, S), "hqk": (1, H, L, S), "b11k": (B, 1, 1, S), "bhqk": (B, H, L, S),
               "b1q1": (B, 1, L, 1)}[c.mask_shape]
    else:
        lead = torch_lead(c)
        shp = {"qk": (L, S), "k": (S,), "lead": lead[:1] + (1,) * (len(lead) - 1) + (L, S)}[c.mask_shape]
    if c.mask_kind == "bool":
        m = r.random(shp) < c.mask_keep
        if len(shp) >= 2 and shp[-2] > 1 and r.random() < 0.5:
            m[..., r.integers(0, shp[-2]), :] = False   # a row that sees no key
    else:
        m = r.standard_normal(shp) * 2
        m[r.random(shp) < 0.1] = -np.inf
        if "bias" in c.special and m.size:
            m.flat[r.integers(0, m.size)] = np.nan
    full_shape = (B, H, L, S)
    if c.api == "numpy":
        dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[c.mask_dtype] if c.mask_kind == "bias" else bool
        passed = m.astype(dt)
        vals = passed.astype(np.float32).astype(np.float64) if c.mask_kind == "bias" else passed
        if c.mask_layout == "transposed" and passed.ndim >= 2:
            passed = np.ascontiguousarray(np.swapaxes(passed, -1, -2)).swapaxes(-1, -2)
        elif c.mask_layout == "bcast" and passed.ndim >= 1 and passed.shape[-1] > 0:
            # one value per row repeated over the keys by a zero stride
            passed = np.broadcast_to(passed[..., :1], passed.shape)
            vals = np.broadcast_to(vals[..., :1], vals.shape)
        full = np.broadcast_to(vals, full_shape)
        return passed, full
    # torch: bool, float32 or the query's dtype
    if c.mask_kind == "bool":
        t = torch.from_numpy(m)
        vals = m
    else:
        tdt = torch.float32 if c.mask_dtype == "f32" else torch_dtype(c.dtypes[0])
        t = torch.from_numpy(m).to(tdt)
        vals = t.to(torch.float64).numpy()
        if tdt != torch.float32:   # the wrapper turns it into float32
            vals = t.to(torch.float32).to(torch.float64).numpy()
    if c.mask_layout == "transposed" and t.dim() >= 2:
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
    lead = torch_lead(c)
    full = np.broadcast_to(vals, lead + (L, S)).reshape(B, H, L, S)
    return t, full


def torch_dtype(dt):
    return {"f16": torch.float16, "f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}[dt]


def torch_lead(c):
    """The torch case's leading dims: (B,) for 3-d, (B, Hq) for 4-d, (a, b, Hq) with a b = B for 5-d."""
    if c.lead == "3d":
        return (c.B,)
    if c.lead == "5d" and c.B in (2, 3):
        return (1, c.B, c.hq)
    return (c.B, c.hq)


# ------------------------------------------------------------------------------------------- reference

def reference(c, q, k, v, bias_or_bool):
    """float64 O, lse and the NaN expectations (must, may) of the header's rule.
    q (B, Hq, Lq, D), k (B, Hkv, Lk, D), v (B, Hkv, Lk, Dv) as float64 values the library reads."""
    g = c.hq // c.hkv if c.hkv else 1
    kk = np.repeat(k, g, axis=1)
    vv = np.repeat(v, g, axis=1)
    scale = c.scale if c.scale is not None else 1.0 / np.sqrt(c.D)
    scale = float(np.float32(scale))   # the plan keeps it as a float
    with np.errstate(invalid="ignore", over="ignore"):
        s = np.einsum("bhid,bhjd->bhij", q, kk) * scale
        if c.softcap is not None:
            cap = float(np.float32(c.softcap))
            s = cap * np.tanh(s / cap)
        seen = np.broadcast_to(positions(c), s.shape).copy()
        if bias_or_bool is not None:
            if bias_or_bool.dtype == bool:
                seen &= bias_or_bool
            else:
                s = s + bias_or_bool
        seen &= ~(s == -np.inf)                     # a -inf bias removes the key
        # what the float32 score of a seen key may be off by: the dot product's rounding, 2 sqrt(D) units of
        # |scale| sum_d |q_d k_d| (random-signed roundings grow as sqrt(D); D units, the worst case of any
        # summation order, would hide most of what the 1e-5 bound checks), 2 more for scaling q, and the
        # bias / cap roundings
        absqk = np.einsum("bhid,bhjd->bhij", np.abs(np.nan_to_num(q)), np.abs(np.nan_to_num(kk))) * abs(scale)
        zerr = 2.0 ** -24 * ((2 * np.sqrt(c.D) + 2) * absqk + 2 * np.abs(np.nan_to_num(s, posinf=0, neginf=0)))
        zerr = np.where(seen, zerr, 0.0).max(-1) if c.lk else np.zeros(s.shape[:-1])
        nan_score = np.isnan(s) & seen
        row_nan = nan_score.any(-1)                 # (B, H, Lq)
        z = np.where(seen & ~np.isnan(s), s, -np.inf)
        m = z.max(-1) if c.lk else np.full(s.shape[:-1], -np.inf)
        sink = None
        if c.sinks is not None:
            sink = c.sinks.astype(np.float64)[None, :, None]
            m = np.maximum(m, sink)
        m_safe = np.where(np.isfinite(m), m, 0.0)
        p = np.exp(z - m_safe[..., None])
        den = p.sum(-1) + (np.exp(sink - m_safe) if sink is not None else 0.0)
        vnan = np.isnan(vv)
        o = np.einsum("bhij,bhjx->bhix", p, np.where(vnan, 0.0, vv))
        ok = den > 0
        o = np.where(ok[..., None], o / np.where(ok, den, 1.0)[..., None], 0.0)
        # the size of the terms each output sums: the error scale where the output cancels
        mag = np.einsum("bhij,bhjx->bhix", p, np.where(vnan, 0.0, np.abs(vv)))
        mag = np.where(ok[..., None], mag / np.where(ok, den, 1.0)[..., None], 0.0)
        lse = np.where(ok, m_safe + np.log(np.where(ok, den, 1.0)), -np.inf)
    # NaN expectations: the row's NaN score, V's NaN columns of keys it sees (must); a NaN in V may also
    # reach the other rows of its KV head that see some key (the kernels multiply whole tiles of a task's
    # rows, where a hidden key's weight is 0 and 0 x NaN is NaN), never a row that sees none
    must = np.broadcast_to(row_nan[..., None], o.shape).copy()
    may = must.copy()
    if vnan.any():
        must |= np.einsum("bhij,bhjx->bhix", seen.astype(np.float64), vnan.astype(np.float64)) > 0
        sees_any = seen.any(-1)[..., None]                    # (B, H, Lq, 1)
        col_nan = vnan.any(2)[:, :, None, :]                  # (B, H, 1, Dv)
        may |= must | (sees_any & col_nan)
    lse = np.where(row_nan, np.nan, lse)
    return o, lse, must, may, mag, zerr


# ------------------------------------------------------------------------------------------- checks

def out_bound(out_dtype):
    """(relative to max|ref|, absolute) bound on O for a result of this dtype"""
    if out_dtype == "f16":
        return 1e-5 + 2.0 ** -11 * 1.001, 2.0 ** -25
    if out_dtype == "bf16":
        return 1e-5 + 2.0 ** -8 * 1.001, 2.0 ** -134
    return 1e-5, 0.0


def check_o(fails, what, got, ref, must, may, mag, zerr, out_dtype, lk):
    if got.shape != ref.shape:
        fails.append(f"{what}: shape {got.shape}, expected {ref.shape}")
        return
    if not got.size:
        return
    gn = np.isnan(got)
    if (must & ~gn).any():
        idx = tuple(int(x[0]) for x in np.nonzero(must & ~gn))
        fails.append(f"{what}: {int((must & ~gn).sum())} elements not NaN that see a NaN (first at {idx}: "
                     f"{got[idx]!r})")
    if (gn & ~may).any():
        idx = tuple(int(x[0]) for x in np.nonzero(gn & ~may))
        fails.append(f"{what}: {int((gn & ~may).sum())} NaN elements that see no NaN (first at {idx}, ref "
                     f"{ref[idx]!r})")
    checked = ~may | (may & ~gn & ~must)   # NaN-free positions (a 'may' that came out finite must be right)
    checked &= ~must
    if not checked.any():
        return
    if not np.isfinite(got[checked]).all():
        idx = tuple(int(x[0]) for x in np.nonzero(checked & ~np.isfinite(got)))
        fails.append(f"{what}: non-finite value {got[idx]!r} at {idx} (ref {ref[idx]!r})")
        return
    # the header's bound is relative to max|ref| over the tensor; where the outputs cancel (weighted means of
    # many terms of both signs: |O| << |V|) no float32 sum meets it, so it is taken against the size of the
    # terms, max_i sum_j w_ij |v_j|, when that is larger
    scale = max(np.abs(ref[checked]).max(), mag[checked].max())
    rel, ab = out_bound(out_dtype)
    # plus the row's length (smx_attention.h): the f32 sums across the Lk / 64 key tiles run in order, each
    # step rounding once
    rel += 2.0 ** -23 * lk / 64
    # plus what the scores' float32 rounding moves: O_i = sum_j w_j v_j with z_j off by d_j moves by
    # sum_j w_j d_j (v_j - O_i), at most 2 max_j |d_j| sum_j w_j |v_j| (large logits: the header's 1e-5
    # alone cannot hold there)
    lim = rel * scale + ab + 2 * zerr[..., None] * mag
    over = checked & (np.abs(got - ref) > lim)
    if over.any():
        full = np.where(over, np.abs(got - ref) - lim, -1.0)
        idx = np.unravel_index(int(np.argmax(full)), full.shape)
        e = abs(got[idx] - ref[idx])
        fails.append(f"{what}: {int(over.sum())} elements off; worst at {tuple(int(x) for x in idx)}: got {got[idx]!r}, "
                     f"ref {ref[idx]!r}, error {e:.3g} > bound {lim[idx]:.3g} ({e / max(scale, 1e-300):.3g} of "
                     f"max(max|ref|, max sum w|v|) {scale:.3g})")


def check_lse(fails, got, ref, zerr):
    if got.shape != ref.shape:
        fails.append(f"lse: shape {got.shape}, expected {ref.shape}")
        return
    g = got.astype(np.float64)
    rn, gn = np.isnan(ref), np.isnan(g)
    if (rn != gn).any():
        idx = tuple(int(x[0]) for x in np.nonzero(rn != gn))
        fails.append(f"lse: {int((rn != gn).sum())} rows NaN where ref is not or the reverse (first {idx}: got "
                     f"{g[idx]!r}, ref {ref[idx]!r})")
    ninf = ref == -np.inf
    if (ninf & (g != -np.inf)).any():
        idx = tuple(int(x[0]) for x in np.nonzero(ninf & (g != -np.inf)))
        fails.append(f"lse: row {idx} sees no key: got {g[idx]!r}, expected -inf")
    fin = np.isfinite(ref)
    if fin.any():
        # lse moves by at most the largest score error
        lim = 1e-5 * np.maximum(1.0, np.abs(np.where(fin, ref, 0.0))) + zerr
        err = np.abs(g - np.where(fin, ref, 0.0))
        over = fin & ~(err <= lim)
        if over.any():
            full = np.where(over, np.where(np.isnan(err), np.inf, err - lim), -1.0)
            idx = np.unravel_index(int(np.argmax(full)), full.shape)
            fails.append(f"lse: {int(over.sum())} rows off; worst at {tuple(int(x) for x in idx)}: got {g[idx]!r}, "
                         f"ref {ref[idx]!r}, error {err[idx]:.3g} > bound {lim[idx]:.3g}")


# ------------------------------------------------------------------------------------------- running

def run_numpy(c, fails):
    B, hq, hkv, lq, lk, D, Dv = c.B, c.hq, c.hkv, c.lq, c.lk, c.D, c.Dv
    shapes = ((B, hq, lq, D), (B, hkv, lk, D), (B, hkv, lk, Dv))
    smalls = [small_values(c, sh, bits, sp, name)
              for sh, bits, sp, name in zip(shapes, c.bcast, (c.spread, 1.0, 1.0), "qkv")]
    mask, mfull = make_mask(c)
    # the values the library reads: each operand in its dtype, computed in float32 (float16 storage only
    # when all three are float16); a repeated operand is passed as a zero-stride view of its small array
    arrs, vals = [], []
    for x, sh, dt, lay, bits in zip(smalls, shapes, c.dtypes, c.layouts, c.bcast):
        a = storage(x, dt)
        arrs.append(np.broadcast_to(a, sh) if bits else layout(a, lay))
        vals.append(np.broadcast_to(rounded(x, dt), sh))
    qv, kv, vv = vals
    kq, vq = arrs[1], arrs[2]
    ref_k, ref_v = kv, vv
    if c.kv_form == "expand":   # the KV heads repeated to Hq: by a zero stride when Hkv = 1, else copied
        g = hq // hkv
        if hkv == 1:
            kq = np.broadcast_to(kq, (B, hq, lk, D))
            vq = np.broadcast_to(vq, (B, hq, lk, Dv))
        else:
            kq, vq = np.repeat(kq, g, axis=1), np.repeat(vq, g, axis=1)
        ref_k, ref_v = np.repeat(kv, g, axis=1), np.repeat(vv, g, axis=1)
    cc = c if c.kv_form == "gqa" else _as_mha(c)
    o_ref, lse_ref, must, may, mag, zerr = reference(cc, qv, ref_k, ref_v, mfull)
    causal = {"none": False, "bottom_right": True, "top_left": "top_left"}[c.causal]
    kw = dict(causal=causal, scale=c.scale, window=c.window, mask=mask, sink=c.sinks, softcap=c.softcap)
    outs = []
    for th in (1, 2, 7):
        o, lse = smx.attention(arrs[0], kq, vq, return_lse=True, threads=th, **kw)
        outs.append((o, lse))
    o, lse = outs[0]
    want_dt = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[c.dtypes[0]]
    if o.dtype != want_dt:
        fails.append(f"O: dtype {o.dtype}, expected q's {np.dtype(want_dt)}")
    for th, (o2, l2) in zip((2, 7), outs[1:]):
        if o2.tobytes() != o.tobytes() or l2.tobytes() != lse.tobytes():
            fails.append(f"threads {th}: bits differ from threads 1")
    o_only = smx.attention(arrs[0], kq, vq, threads=2, **kw)
    if o_only.tobytes() != o.tobytes():
        fails.append("return_lse=False: O differs from return_lse=True")
    check_o(fails, "O", o.astype(np.float64), o_ref, must, may, mag, zerr, c.dtypes[0], c.lk)
    check_lse(fails, lse, lse_ref, zerr)


def _as_mha(c):
    """the case seen with its KV heads repeated (Hkv = Hq) for the reference"""
    cc = Case.__new__(Case)
    cc.__dict__.update(c.__dict__)
    cc.hkv = c.hq
    return cc


def run_torch(c, fails):
    B, hq, hkv, lq, lk, D, Dv = c.B, c.hq, c.hkv, c.lq, c.lk, c.D, c.Dv
    shapes = ((B, hq, lq, D), (B, hkv, lk, D), (B, hkv, lk, Dv))
    smalls = [small_values(c, sh, bits, sp, name)
              for sh, bits, sp, name in zip(shapes, c.bcast, (c.spread, 1.0, 1.0), "qkv")]
    mask, mfull = make_mask(c)
    dt = c.dtypes[0]
    tdt = torch_dtype(dt)
    # the wrapper computes float16 in float16 storage and everything else in float32
    comp = "f16" if dt == "f16" else "f32"

    def as_torch(x, sh, lay, bits):
        t = torch.from_numpy(x).to(tdt)
        if bits:   # the values repeated by expand (zero strides)
            return t.expand(*sh)
        if lay == "bthd":
            return t.transpose(1, 2).contiguous().transpose(1, 2)
        if lay == "rowstep":
            big = torch.zeros(sh[0], sh[1], 2 * sh[2], sh[3], dtype=tdt)
            big[:, :, ::2] = t
            return big[:, :, ::2]
        if lay == "padD":
            big = torch.zeros(sh[:3] + (sh[3] + 3,), dtype=tdt)
            big[..., :sh[3]] = t
            return big[..., :sh[3]]
        return t

    tq, tk, tv = (as_torch(x, sh, lay, bits) for x, sh, lay, bits in zip(smalls, shapes, c.layouts, c.bcast))
    vals = [t.to(torch.float64).numpy() for t in (tq, tk, tv)]
    if dt == "f64":
        vals = [x.astype(np.float32).astype(np.float64) for x in vals]
    gqa = hkv != hq
    if c.kv_form == "expand":
        if hkv == 1:
            tk, tv = tk.expand(B, hq, lk, D), tv.expand(B, hq, lk, Dv)
        else:
            tk, tv = tk.repeat_interleave(hq // hkv, 1), tv.repeat_interleave(hq // hkv, 1)
        vals[1], vals[2] = np.repeat(vals[1], hq // hkv, 1), np.repeat(vals[2], hq // hkv, 1)
        gqa = False
    cc = c if c.kv_form == "gqa" else _as_mha(c)
    o_ref, _, must, may, mag, zerr = reference(cc, vals[0], vals[1], vals[2], mfull)
    lead = torch_lead(c)

    def shaped(t, heads):
        if c.lead == "3d":
            return t.reshape((B,) + t.shape[2:])
        if len(lead) == 3:
            return t.reshape(lead[:2] + (heads,) + t.shape[2:])
        return t

    args = (shaped(tq, hq), shaped(tk, tk.shape[1]), shaped(tv, tv.shape[1]))
    with torch.no_grad():
        out = smx_torch.scaled_dot_product_attention(*args, attn_mask=mask, is_causal=c.causal == "top_left",
                                                     scale=c.scale, enable_gqa=gqa)
    if out.dtype != tdt:
        fails.append(f"O: dtype {out.dtype}, expected query's {tdt}")
    want_shape = lead + (lq, Dv)
    if tuple(out.shape) != want_shape:
        fails.append(f"O: shape {tuple(out.shape)}, expected {want_shape}")
        return
    got = out.to(torch.float64).numpy().reshape(B, hq, lq, Dv)
    check_o(fails, "O", got, o_ref, must, may, mag, zerr, dt if dt in ("f16", "bf16") else comp, c.lk)


def run_case(seed, allow_torch=True, verbose=False, allow_nan=True):
    """Runs one case; returns (Case, list of failure messages)."""
    c = Case(seed, allow_torch, allow_nan)
    if verbose:
        print(c.describe())
    fails = []
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            (run_torch if c.api == "torch" else run_numpy)(c, fails)
    except Exception:   # an exception on a valid case is a finding too
        fails.append("raised: " + traceback.format_exc().strip().splitlines()[-1] +
                     ("\n" + traceback.format_exc() if verbose else ""))
    return c, fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("SMX_SOAK_SECONDS", "30")))
    ap.add_argument("--seed", type=int, default=None, help="master seed (default: from the clock, printed)")
    ap.add_argument("--case", type=int, default=None, help="replay the case of this seed alone")
    ap.add_argument("--no-torch", action="store_true", help="smx.attention only")
    ap.add_argument("--no-nan", action="store_true", help="no NaN inputs (a case's other choices are the same)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    allow_torch = not a.no_torch
    if a.case is not None:
        c, fails = run_case(a.case, allow_torch, verbose=True, allow_nan=not a.no_nan)
        for f in fails:
            print("  FAIL " + f)
        print("ok" if not fails else f"{len(fails)} failures")
        return 1 if fails else 0
    master = a.seed if a.seed is not None else int(time.time_ns() % (1 << 62))
    print(f"attention_differential: master seed {master}, {a.seconds:g} s, torch "
          f"{'on' if allow_torch and torch is not None else 'off'} (replay a case: --case SEED; "
          f"the whole run: --seed {master})", flush=True)
    mr = np.random.default_rng(master)
    t0 = time.monotonic()
    n = 0
    counts = {}
    failed = []
    while time.monotonic() - t0 < a.seconds:
        seed = int(mr.integers(0, 1 << 62))
        c, fails = run_case(seed, allow_torch, a.verbose, not a.no_nan)
        n += 1
        key = c.api + ("+nan" if c.special else "")
        counts[key] = counts.get(key, 0) + 1
        if fails:
            failed.append(seed)
            if len(failed) <= 20:
                print("FAIL " + c.describe(), flush=True)
                for f in fails[:4]:
                    print("  " + f, flush=True)
                print(f"  replay: {sys.argv[0]} --case {seed}", flush=True)
    el = time.monotonic() - t0
    print(f"attention_differential: {n} cases in {el:.1f} s ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}), "
          f"{len(failed)} failed" + (f": seeds {failed[:50]}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
