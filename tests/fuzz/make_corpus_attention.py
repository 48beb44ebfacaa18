#!/usr/bin/python3
"""Writes the seed corpus of fuzz_attention into corpus/attention/.

Run from this directory with the system python3:
    /usr/bin/python3 make_corpus_attention.py
Each seed is the byte string fuzz_attention.c reads front to back (the
order of encode() below must stay the order of its reader): one per kind,
mask, variant and layout the header offers, in valid combinations, plus
refused descriptors (bad enums, Hq not a multiple of Hkv, a zero dimension,
short row strides, non-finite and negative options) and awkward option
values. Names are the content's SHA-1, as libFuzzer names its own.
"""
import hashlib
import os
import random
import struct

OUT = "corpus/attention"

KINDS = {"softmax": 0, "sigmoid": 1, "softpick": 2, "linear": 3, "cosformer": 4, "mala": 5, "screen": 6}
DTYPES = {"f32": 0, "f16": 1, "bf16": 2}
# the option table of fuzz_attention.c's option(): selector 1 + 4 * index
TABLE = [0.5, 1.0, -1.0, 1e300, 1e-300, -1e300, float("nan"), float("inf"), float("-inf"), 3.5e38,
         1e-46, 2.0, 0.0625, -0.5, 40.0, -30.0]
OPTIONS = ["scale", "softcap", "ssmax_s", "sigmoid_bias", "qk_norm_eps", "blasst", "diff_lambda",
           "screen_r", "screen_window", "screen_eps"]
FLAGS = ["alibi", "sinks", "fox", "gate", "qk_norm", "l2_distance", "k_int8", "k_int8_jensen"]


def option(v):
    """0 -> selector 0; a table value -> its selector; k/32 (k = 1..256) -> selector 2; else 8 raw bytes."""
    if v is None or v == 0:
        return bytes([0])
    for i, t in enumerate(TABLE):
        if (t != t and v != v) or t == v:
            return bytes([1 + 4 * i])
    k = v * 32
    if k == int(k) and 1 <= k <= 256:
        return bytes([2, int(k) - 1])
    return bytes([3]) + struct.pack("<d", v)


def strides(s):
    """None: packed; (batch, head, row) explicit."""
    if s is None:
        return bytes([0])
    return bytes([2]) + struct.pack("<HHB", s[0], s[1], s[2])


def encode(kind="softmax", dtype="f32", causal=0, mask=0, batch=1, hkv=1, group=1, lq=8, lk=16, dqk=8, dv=8,
           q=None, k=None, v=None, opad=0, window=None, mask_strides=(0, 0, 0, 0), flags=(), gate_ew=False,
           screen_flags=0, radial=0, nsa=0, threads=1, rt=0, seed=1, not_multiple=False, **opts):
    b = bytes([KINDS.get(kind, kind) if isinstance(kind, str) else kind, DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype,
               causal, mask, batch, hkv, 250 if not_multiple else group, lq,
               lk if lk < 140 else 250 + (lk - 4096) // 37, dqk, dv])
    b += strides(q) + strides(k) + strides(v) + bytes([opad])
    if window is None:
        b += bytes([0, 0, 0])
    else:
        b += bytes([1, window[0] & 0xff, window[1] & 0xff])
    for s in mask_strides:
        b += bytes([0]) if s == 0 else bytes([1]) + struct.pack("<H", s)
    f = 0
    for i, name in enumerate(FLAGS):
        if name in flags:
            f |= 1 << i
    f |= (1 if gate_ew else 0) << 8
    f |= screen_flags << 10
    b += struct.pack("<H", f)
    b += bytes([0, radial]) if radial else bytes([1])
    b += bytes([0, nsa - 1]) if nsa else bytes([1])
    b += bytes([threads + 1])
    for name in OPTIONS:
        b += option(opts.get(name))
    b += bytes([rt]) + struct.pack("<Q", seed)
    return b


def mask_packed(batch, hq, lq, lk, bcast_batch=True, bcast_head=False):
    return (0 if bcast_batch else hq * lq * lk, 0 if bcast_head else lq * lk, lk, 1)


seeds = {
    "plain": encode(),
    "mha-f16": encode(dtype="f16", hkv=2, lq=20, lk=40, dqk=16, dv=12),
    "gqa-bf16-causal": encode(dtype="bf16", hkv=2, group=3, lq=17, lk=33, causal=1, dqk=24, dv=24),
    "top-left": encode(causal=2, lq=30, lk=20, dqk=8, dv=8),
    "lq-gt-lk": encode(causal=1, lq=40, lk=10),
    "decode": encode(hkv=2, group=4, lq=1, lk=120, dqk=32, dv=32),
    "decode-split": encode(hkv=1, group=2, lq=1, lk=4096 + 37 * 3, dqk=8, dv=8),
    "window": encode(window=(5, 2), lq=30, lk=30),
    "window-unbounded": encode(window=(-1, 3), causal=1, lq=30, lk=40),
    "bool-mask": encode(mask=1, lq=12, lk=20, mask_strides=mask_packed(1, 1, 12, 20)),
    "bias-mask": encode(mask=2, lq=12, lk=20, batch=2, mask_strides=mask_packed(2, 1, 12, 20)),
    "bias-broadcast-rows": encode(mask=2, lq=6, lk=9, mask_strides=(0, 0, 0, 1)),
    "alibi": encode(flags=("alibi",), lq=20, lk=20, group=2),
    "radial": encode(radial=4, lq=32, lk=32),
    "softcap": encode(softcap=4.0, lq=10, lk=30),
    "ssmax": encode(ssmax_s=0.5, causal=1, lq=16, lk=16),
    "sinks": encode(flags=("sinks",), mask=1, lq=8, lk=8, mask_strides=mask_packed(1, 1, 8, 8)),
    "fox": encode(flags=("fox",), causal=1, lq=16, lk=24),
    "gate": encode(flags=("gate",), lq=6, lk=6),
    "gate-ew": encode(flags=("gate",), gate_ew=True, lq=6, lk=6, dv=5),
    "qk-norm": encode(flags=("qk_norm",), qk_norm_eps=0.0625, lq=9, lk=9),
    "l2": encode(flags=("l2_distance",), lq=12, lk=15),
    "int8": encode(flags=("k_int8",), lq=12, lk=70),
    "int8-jensen": encode(flags=("k_int8", "k_int8_jensen"), lq=1, lk=90, group=4, hkv=2),
    "blasst": encode(blasst=-30.0, lq=16, lk=130),
    "diff": encode(diff_lambda=0.5, dqk=16, lq=10, lk=20),
    "nsa": encode(nsa=2, lq=20, lk=130, causal=1),
    "sigmoid": encode(kind="sigmoid", sigmoid_bias=-1.0, lq=12, lk=20),
    "softpick": encode(kind="softpick", lq=12, lk=20),
    "linear": encode(kind="linear", lq=12, lk=20, causal=1),
    "cosformer": encode(kind="cosformer", lq=12, lk=20),
    "mala": encode(kind="mala", lq=12, lk=20, causal=1),
    "screen": encode(kind="screen", screen_r=0.5, lq=12, lk=20),
    "screen-window": encode(kind="screen", screen_r=1.0, screen_window=2.0, causal=1, lq=12, lk=20, screen_flags=1),
    "screen-per-head": encode(kind="screen", hkv=2, group=2, lq=5, lk=20, rt=0x28),
    "screen-bad-width": encode(kind="screen", lq=5, lk=20, rt=0x18),
    "screen-notanh-int8": encode(kind="screen", screen_r=0.5, flags=("k_int8",), screen_flags=2, lq=5, lk=20),
    "strided": encode(q=(600, 40, 10), k=(900, 50, 9), v=(900, 50, 9), opad=2, lq=4, lk=5, dqk=8, dv=8, hkv=1, group=2,
                      batch=2),
    "broadcast-kv": encode(k=(0, 0, 8), v=(0, 0, 8), batch=2, hkv=2, group=1, lq=4, lk=6),
    "empty-batch": encode(batch=0),
    "empty-keys": encode(lk=0),
    "threads-7": encode(threads=7, lq=40, lk=40, hkv=2),
    # refused
    "bad-kind": encode(kind=8),
    "bad-dtype": encode(dtype=3),
    "bad-causal": encode(causal=3),
    "bad-mask-kind": encode(mask=3),
    "not-multiple": encode(hkv=2, not_multiple=True),
    "zero-dim": encode(dqk=0),
    "short-row-stride": encode(q=(100, 50, 3), lq=4, dqk=8),
    "nan-scale": encode(scale=float("nan")),
    "inf-softcap": encode(softcap=float("inf")),
    "negative-softcap": encode(softcap=-1.0),
    "blasst-positive": encode(blasst=0.5),
    "window-minus-2": encode(window=(-2, 0)),
    "threads-minus-1": encode(threads=-1),
    "sigmoid-sinks": encode(kind="sigmoid", flags=("sinks",)),
    "linear-window": encode(kind="linear", window=(3, 3)),
    "screen-bias": encode(kind="screen", screen_r=0.5, mask=2, mask_strides=(0, 0, 16, 1)),
    "diff-odd": encode(diff_lambda=0.5, dqk=7),
    "jensen-alone": encode(flags=("k_int8_jensen",)),
    # awkward values (issue 24 item 4: either refused or computed right)
    "softcap-1e300": encode(softcap=1e300),
    "softcap-1e-300": encode(softcap=1e-300),
    "scale-1e300": encode(scale=1e300),
    "scale-1e-46": encode(scale=1e-46),
    "ssmax-negative": encode(ssmax_s=-1.0),
}

rng = random.Random(24)
for n in range(24):
    kind = rng.choice(["softmax", "softmax", "linear", "cosformer", "mala", "screen"])
    kw = dict(kind=kind, dtype=rng.choice(list(DTYPES)), causal=rng.randrange(3), batch=rng.randrange(1, 3),
              hkv=rng.randrange(1, 4), group=rng.choice([1, 2, 4]), lq=rng.randrange(1, 40), lk=rng.randrange(1, 130),
              dqk=rng.randrange(1, 40), dv=rng.randrange(1, 40), threads=rng.randrange(0, 8), seed=rng.getrandbits(64),
              rt=rng.choice([0, 1, 2, 0x40]))
    if kind == "screen":
        kw["screen_r"] = rng.choice([0.25, 0.5, 1.0])
    seeds["random-%02d" % n] = encode(**kw)

os.makedirs(OUT, exist_ok=True)
for name in os.listdir(OUT):
    os.unlink(os.path.join(OUT, name))
for name, data in seeds.items():
    with open(os.path.join(OUT, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), OUT))
