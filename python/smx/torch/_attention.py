"""smx.torch.scaled_dot_product_attention: torch.nn.functional.scaled_dot_product_attention
(PyTorch 2.x semantics) on smx's fused CPU attention, and smx.torch.attention, the
same with the options of smx.attention. Both are differentiable: the backward is
smx's (include/smx/smx_attention_backward.h), from the saved output and
log-sum-exp, never forming the Lq x Lk matrices.

A user of PyTorch 1.13, which has no fused CPU attention, can swap it in.
Differences, on purpose:
  * a query row whose mask hides every key gives 0 (torch's math path: NaN),
    and gradient 0;
  * dropout_p must be 0;
  * the backward is not itself differentiable (double backward raises).
"""
import math

import numpy as np
import torch

from .. import _smx

from torch.autograd.function import once_differentiable

__all__ = ["scaled_dot_product_attention", "attention"]

# options of smx.attention whose value is a tensor that may carry a gradient, in this order
_GRAD_OPTS = ("mask", "sink", "fox", "gate")


class _Attention(torch.autograd.Function):
    """o = smx.attention(q, k, v, **opts) with the tensor options mask / sink / fox / gate as inputs, so
    that each gets its gradient. Tensors are (B, H, L, D)."""

    @staticmethod
    def forward(ctx, opts, q, k, v, mask, sink, fox, gate):
        kw = dict(opts)
        for name, t in zip(_GRAD_OPTS, (mask, sink, fox, gate)):
            if t is not None:
                kw[name] = t.detach().numpy()
        # bfloat16 storage as its bits (NumPy has no bfloat16): read in place, results viewed back
        bf16 = q.dtype == k.dtype == v.dtype == torch.bfloat16
        if bf16:
            kw["bf16"] = True
        o, lse = _smx.attention(*_arrays(bf16, q, k, v), return_lse=True, **kw)
        out = torch.from_numpy(o)
        if bf16:
            out = out.view(torch.bfloat16)
        ctx.opts = kw
        ctx.bf16 = bf16
        ctx.dtypes = (q.dtype, k.dtype, v.dtype)
        ctx.save_for_backward(q, k, v, out, torch.from_numpy(lse))
        ctx.grad_shapes = tuple(None if t is None else t.shape for t in (mask, sink, fox, gate))
        return out if out.dtype == q.dtype else out.to(q.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        kw = dict(ctx.opts)
        want_mask = ctx.needs_input_grad[4] and "mask" in kw and kw["mask"].dtype != np.bool_
        qn, kn, vn, on, don = _arrays(ctx.bf16, q, k, v, o, do.detach().to(o.dtype).contiguous())
        g = _smx.attention_backward(qn, kn, vn, on, lse.numpy(), don, dmask=want_mask, **kw)
        res = [None]
        for name, dt in zip(("dq", "dk", "dv"), ctx.dtypes):
            t = torch.from_numpy(g[name])
            res.append((t.view(torch.bfloat16) if ctx.bf16 else t).to(dt))
        for need, name, shape in zip(ctx.needs_input_grad[4:], ("dmask", "dsink", "dfox", "dgate"), ctx.grad_shapes):
            res.append(torch.from_numpy(g[name]).reshape(shape) if need and name in g else None)
        return tuple(res)


def _arrays(bf16, *ts):
    """NumPy views of the tensors: bfloat16 as int16 bits (the module's bf16=True), else as _np gives them."""
    return tuple(t.detach().view(torch.int16).numpy() if bf16 else _np(t) for t in ts)


def _variables(*ts):
    """The tensors among ts as float32 tensors that keep their autograd graph (None stays None)."""
    return tuple(None if t is None else (t if t.dtype == torch.float32 else t.to(torch.float32)) for t in ts)


def attention(q, k, v, *, mask=None, sink=None, fox=None, gate=None, threads=None, **options):
    """smx.attention on tensors, differentiable: q (B, Hq, Lq, D), k (B, Hkv, Lk, D), v (B, Hkv, Lk, Dv).

    mask (bool, or float added to the scores: its gradient is returned), sink (Hq,), fox (B, Hq, Lk) and
    gate ((B, Hq, Lq) or (B, Hq, Lq, Dv)) are tensors that receive gradients; every other option of
    smx.attention (causal, scale, window, softcap, ssmax, alibi, radial_frame, kind, threads, ...) is passed
    as it is (threads=None: torch.get_num_threads()). qk_norm=True, or (wq, wk) weights: weights that are
    tensors requiring grad are applied here in torch (so that they get gradients) before smx's product;
    otherwise smx normalises and differentiates. The backward covers the softmax, sigmoid and softpick kinds
    with masks, sinks, softcap, SSMax, FoX, the gate, QK-norm and differential attention (diff_lambda)
    (NotImplementedError otherwise, raised by backward()). Returns (B, Hq, Lq, Dv) in q's dtype.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"smx.torch.attention: {name} must be a tensor")
        if t.device.type != "cpu":
            raise ValueError("smx.torch.attention: smx runs on CPU tensors only")
        if t.dim() != 4:
            raise ValueError(f"smx.torch.attention: {name} must be 4-d (batch, heads, length, dim)")
    for name in ("return_lse", "k_scales"):
        if name in options:
            raise ValueError(f"smx.torch.attention: {name} is not an option here (use smx.attention)")
    if "alibi" in options and isinstance(options["alibi"], torch.Tensor):
        options["alibi"] = options["alibi"].detach().to(torch.float32).numpy()
    qkn = options.get("qk_norm")
    if isinstance(qkn, (tuple, list)) and any(isinstance(w, torch.Tensor) and w.requires_grad for w in qkn):
        # RMSNorm weights that want a gradient: the norm in torch (autograd gives the weights theirs), the
        # product and its backward in smx; the NumPy module returns no weight gradients
        eps = float(options.pop("qk_norm_eps", None) or 1e-6)
        del options["qk_norm"]
        wq, wk = (torch.as_tensor(w).to(torch.float32) for w in qkn)
        q = _rms_norm(q, eps) * wq
        k = _rms_norm(k, eps) * wk
    elif isinstance(qkn, (tuple, list)):
        options["qk_norm"] = tuple(w.detach().to(torch.float32).numpy() if isinstance(w, torch.Tensor) else w
                                   for w in qkn)
    m = mask
    if m is not None:
        if not isinstance(m, torch.Tensor):
            m = torch.as_tensor(m)
        if m.dtype != torch.bool:
            m = m.to(torch.float32)
        if m.dim() > 4 or any(a not in (1, b) for a, b in zip(reversed(m.shape), reversed(
                (q.shape[0], q.shape[1], q.shape[2], k.shape[2])))):
            raise ValueError(f"smx.torch.attention: mask of shape {tuple(m.shape)} does not broadcast to "
                             "(B, Hq, Lq, Lk)")
        # expanded (a view): autograd sums the gradient back over the broadcast dimensions
        m = m.expand(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    sink, fox, gate = (None if t is None else torch.as_tensor(t) for t in (sink, fox, gate))
    sink, fox, gate = _variables(sink, fox, gate)
    # as every smx.torch function: torch's thread count unless told
    options["threads"] = torch.get_num_threads() if threads is None else threads
    return _Attention.apply(options, q, k, v, m, sink, fox, gate)


def _rms_norm(x, eps):
    """x / sqrt(mean(x^2) + eps) over the last axis, in float32 at least (as smx's qk_norm, which forms the
    mean in double)."""
    x = x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float32)
    return x * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype)


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
                                 enable_gqa=False, *, math="auto"):
    """softmax(query key^T * scale + mask) value, as torch 2.x's function (forward, CPU).

    query (..., L, E), key (..., S, E), value (..., S, Ev); leading dimensions
    equal (with enable_gqa, the head dimension -3 of key / value may divide
    query's). attn_mask: bool (True = takes part) or float (added),
    broadcastable to (..., L, S). is_causal: key j visible to query i iff
    j <= i (top-left), not allowed together with attn_mask. scale: default
    1 / sqrt(E). Returns (..., L, Ev) in query's dtype.

    bfloat16 query, key and value are read as they are (bf16 tile products
    where the CPU has AVX512_BF16). math (an smx extension): 'auto', 'f32'
    (f32 arithmetic for bfloat16 too) or 'bf16' (float32 tensors may use bf16
    tile products, as torch's allow_bf16_reduced_precision).
    """
    for t in (query, key, value):
        if not isinstance(t, torch.Tensor):
            raise TypeError("scaled_dot_product_attention: query, key and value must be tensors")
        if t.device.type != "cpu":
            raise ValueError("scaled_dot_product_attention: smx runs on CPU tensors only")
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
        mask = m
    opts = {"causal": "top_left" if is_causal else False, "scale": None if scale is None else float(scale),
            "math": math, "threads": torch.get_num_threads()}
    res = _Attention.apply(opts, q, k, v, mask, None, None, None)
    return res.reshape(lead + (L, Ev))
