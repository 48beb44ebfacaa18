#!/usr/bin/python3
"""Prefill attention on CPU, one thread: PyTorch's composed softmax(Q K^T s) V
(torch 1.13 has no fused CPU attention) against smx.torch.scaled_dot_product_attention,
same process, same tensors. GFLOP/s count only the visible scores' FLOPs.
Usage: PYTHONPATH=build/python bench_attention_torch.py [L=4096] [H=8] [D=128]"""
import sys
import time

import torch

import smx.torch as st

L = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
H = int(sys.argv[2]) if len(sys.argv) > 2 else 8
D = int(sys.argv[3]) if len(sys.argv) > 3 else 128
torch.set_num_threads(1)
torch.manual_seed(0)
q, k, v = (torch.randn(1, H, L, D) for _ in range(3))
scale = D ** -0.5
causal_mask = torch.ones(L, L, dtype=torch.bool).triu(1)


def composed(causal):
    out = torch.empty(1, H, L, D)
    for h in range(H):   # one head at a time: an L x L score matrix, as a user would hold
        s = q[:, h] @ k[:, h].transpose(-1, -2) * scale
        if causal:
            s.masked_fill_(causal_mask, float("-inf"))
        out[:, h] = torch.softmax(s, -1) @ v[:, h]
    return out


def timed(f):
    t0 = time.perf_counter()
    r = f()
    return time.perf_counter() - t0, r


flops = 4.0 * H * L * L * D
print(f"prefill B=1 H={H} L={L} D={D}, torch {torch.__version__}, 1 thread")
for causal in (False, True):
    vis = flops if not causal else 4.0 * H * D * L * (L + 1) / 2
    tt, ref = timed(lambda: composed(causal))
    with torch.no_grad():
        ts, out = timed(lambda: st.scaled_dot_product_attention(q, k, v, is_causal=causal))
    err = ((out - ref).abs().max() / ref.abs().max()).item()
    print(f"  {'causal' if causal else 'non-causal':10s} torch composed {tt:7.3f} s {vis / tt * 1e-9:6.1f} GFLOP/s | "
          f"smx fused {ts:7.3f} s {vis / ts * 1e-9:6.1f} GFLOP/s | smx/torch {tt / ts:5.2f}x | max rel diff {err:.1e}")
