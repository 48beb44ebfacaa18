"""smx.torch.scaled_dot_product_attention: torch.nn.functional.scaled_dot_product_attention
(PyTorch 2.x semantics, forward only) on smx's fused CPU attention.

A user of PyTorch 1.13, which has no fused CPU attention, can swap it in:
the Lq x Lk score matrix is never formed. Differences, on purpose:
  * forward only: an input that requires grad while grad mode is on raises
    (no silent wrong gradient);
  * a query row whose mask hides every key gives 0 (torch's math path: NaN);
  * dropout_p must be 0.
"""
import math

import numpy as np
import torch

from .. import _smx

__all__ = ["scaled_dot_product_attention"]


def _np(t):
    """A NumPy view of a CPU tensor (float16 / float32 as they are, other floats as float32)."""
    if t.dtype not in (torch.float16, torch.float32):
        t = t.to(torch.float32)
    return t.detach().numpy()


def _shape_str(x):
    x = tuple(x) if not isinstance(x, int) else (x,)
    return str(x[0]) if len(x) == 1 else str(x)


def _same(name, got, other, want, what):
    """ValueError naming the argument when got (an int or a shape) differs from the other argument's."""
    if (tuple(got) if not isinstance(got, int) else got) != (tuple(want) if not isinstance(want, int) else want):
        raise ValueError(f"scaled_dot_product_attention: {name}: {what} {_shape_str(got)} does not match "
                         f"{other}'s {_shape_str(want)}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query key^T * scale + mask) value, as torch 2.x's function (forward, CPU).

    query (..., L, E), key (..., S, E), value (..., S, Ev); leading dimensions
    equal (with enable_gqa, the head dimension -3 of key / value may divide
    query's). attn_mask: bool (True = takes part) or float (added),
    broadcastable to (..., L, S). is_causal: key j visible to query i iff
    j <= i (top-left), not allowed together with attn_mask. scale: default
    1 / sqrt(E). Returns (..., L, Ev) in query's dtype.
    """
    for t in (query, key, value):
        if not isinstance(t, torch.Tensor):
            raise TypeError("scaled_dot_product_attention: query, key and value must be tensors")
        if t.device.type != "cpu":
            raise ValueError("scaled_dot_product_attention: smx runs on CPU tensors only")
    if torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value)):
        raise RuntimeError("smx.torch.scaled_dot_product_attention is forward only: call it under torch.no_grad()")
    if dropout_p != 0.0:
        raise ValueError("smx.torch.scaled_dot_product_attention: dropout_p must be 0")
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: attn_mask and is_causal cannot both be set")
    if query.dim() < 2 or key.dim() != query.dim() or value.dim() != query.dim():
        raise ValueError("scaled_dot_product_attention: query, key and value need the same number (>= 2) of dims")
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not t.is_floating_point():
            raise RuntimeError(f"scaled_dot_product_attention: {name} must be a floating-point tensor, not {t.dtype}")
    lead = tuple(query.shape[:-2])
    L, E = query.shape[-2], query.shape[-1]
    S, Ev = key.shape[-2], value.shape[-1]
    # name the argument and the axis that disagree (a reshape below would only say "invalid shape")
    nb = query.dim() - 3 if query.dim() >= 4 else query.dim() - 2   # leading batch dims
    _same("key", key.shape[:nb], "query", query.shape[:nb], "batch")
    _same("value", value.shape[:nb], "query", query.shape[:nb], "batch")
    _same("key", key.shape[-1], "query", E, "embedding dim")
    _same("value", value.shape[-2], "key", S, "length")
    if query.dim() >= 4:
        _same("value", value.shape[-3], "key", key.shape[-3], "heads")
        hq, hk = query.shape[-3], key.shape[-3]
        if hk != hq and not enable_gqa:
            raise ValueError(f"scaled_dot_product_attention: key has {hk} heads, query {hq} (set enable_gqa=True "
                             "to share each key / value head among query heads)")
        if hk == 0 or hq % hk:
            raise ValueError(f"scaled_dot_product_attention: query's {hq} heads are not a multiple of key's {hk}")
    # as (B, H, len, dim): the head axis is -3 when there is one
    if query.dim() >= 4:
        B = int(np.prod(lead[:-1])) if lead[:-1] else 1
        q = query.reshape(B, lead[-1], L, E)
        k = key.reshape(B, key.shape[-3], S, E)
        v = value.reshape(B, value.shape[-3], S, Ev)
    else:
        B = int(np.prod(lead)) if lead else 1
        q = query.reshape(B, 1, L, E)
        k = key.reshape(B, 1, S, E)
        v = value.reshape(B, 1, S, Ev)
    mask = None
    if attn_mask is not None:
        m = attn_mask
        if not isinstance(m, torch.Tensor):
            raise TypeError("scaled_dot_product_attention: attn_mask must be a tensor")
        # as PyTorch: bool (True = takes part) or float (added); an integer mask is neither
        if m.dtype != torch.bool and not m.is_floating_point():
            raise RuntimeError(f"scaled_dot_product_attention: attn_mask must be bool or float, not {m.dtype}")
        if m.dtype != torch.bool and m.dtype != torch.float32:
            m = m.to(torch.float32)
        if m.dim() > 2 or lead:
            # checked here rather than by catching torch's error: under an ASan-preloaded interpreter
            # (the sanitizer builds' Python tests) ASan's __cxa_throw interceptor aborts on libtorch's throw
            want = lead + (L, S)
            if m.dim() > len(want) or any(a not in (1, b) for a, b in zip(reversed(m.shape), reversed(want))):
                raise ValueError(f"scaled_dot_product_attention: attn_mask of shape {tuple(m.shape)} does not "
                                 f"broadcast to {want}")
            m = torch.broadcast_to(m, want).reshape(q.shape[0], q.shape[1], L, S)
        mask = m.detach().numpy()
    out = _smx.attention(_np(q), _np(k), _np(v), causal="top_left" if is_causal else False,
                         scale=None if scale is None else float(scale), mask=mask,
                         threads=torch.get_num_threads())
    res = torch.from_numpy(out)
    if res.dtype != query.dtype:
        res = res.to(query.dtype)
    return res.reshape(lead + (L, Ev))
