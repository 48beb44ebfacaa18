#!/usr/bin/python3
"""Attention forward + backward on CPU: smx.torch.scaled_dot_product_attention (smx's fused forward and
its FlashAttention-2 backward, include/smx/smx_attention_backward.h) against PyTorch's composed
softmax(Q K^T s) V under autograd (torch 1.13 has no fused CPU attention), same process, same tensors,
1 and 2 threads. GFLOP/s count the visible scores' forward FLOPs (4 L^2 D per head, half when causal)
times 3.5: the backward as 2.5 forwards, as FlashAttention counts it.
Usage: PYTHONPATH=build/python bench_attention_backward_torch.py [L=4096] [H=8] [D=128] [repeats=1]"""
import sys
import time

import torch

import smx.torch as st

L = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
H = int(sys.argv[2]) if len(sys.argv) > 2 else 8
D = int(sys.argv[3]) if len(sys.argv) > 3 else 128
R = int(sys.argv[4]) if len(sys.argv) > 4 else 1
torch.manual_seed(0)
q0, k0, v0 = (torch.randn(1, H, L, D) for _ in range(3))
do = torch.randn(1, H, L, D)
scale = D ** -0.5
causal_mask = torch.ones(L, L, dtype=torch.bool).triu(1)


def leaves():
    return [t.clone().requires_grad_() for t in (q0, k0, v0)]


def composed(causal):
    q, k, v = leaves()
    outs = []
    for h in range(H):   # one head at a time: an L x L score matrix per head, as a user would hold
        s = q[:, h] @ k[:, h].transpose(-1, -2) * scale
        if causal:
            s = s.masked_fill(causal_mask, float("-inf"))
        outs.append(torch.softmax(s, -1) @ v[:, h])
    torch.stack(outs, 1).backward(do)
    return [t.grad for t in (q, k, v)]


def fused(causal):
    q, k, v = leaves()
    st.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(do)
    return [t.grad for t in (q, k, v)]


def median_time(f):
    ts, r = [], None
    for _ in range(R):
        t0 = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2], r


print(f"forward + backward B=1 H={H} L={L} D={D}, torch {torch.__version__}, median of {R}")
for threads in (1, 2):
    torch.set_num_threads(threads)   # smx.torch follows torch's thread count
    for causal in (False, True):
        fwd = 4.0 * H * L * L * D if not causal else 4.0 * H * D * L * (L + 1) / 2
        flops = 3.5 * fwd
        ts, gs = median_time(lambda: fused(causal))
        tt, gt = median_time(lambda: composed(causal))
        err = max(((a - b).abs().max() / b.abs().max()).item() for a, b in zip(gs, gt))
        print(f"  {threads} thread{'s' if threads > 1 else ' '} {'causal' if causal else 'non-causal':10s} "
              f"torch composed {tt:7.2f} s {flops / tt * 1e-9:6.1f} GFLOP/s | smx {ts:7.2f} s "
              f"{flops / ts * 1e-9:6.1f} GFLOP/s | smx/torch {tt / ts:5.2f}x | max rel diff of dq dk dv {err:.1e}",
              flush=True)
