"""smx.torch.multimax: MultiMax (Zhou et al. 2024) as an autograd Function over
smx's C forward and VJP, with gradients for its input and for its learnable
ranges and scales (4-element tensors; the VJP returns their gradients summed
over the rows)."""
import numpy as np
import torch

import smx as _smx

from ._softmax import _dim, _np

__all__ = ["multimax"]


def _four(p):
    if p is None:
        return np.zeros(4)
    return np.asarray(p.detach().cpu().numpy() if torch.is_tensor(p) else p, dtype=np.float64).reshape(4)


class _MultiMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ranges, ts, dim, temperature):
        r, t = _four(ranges), _four(ts)
        y = torch.from_numpy(np.ascontiguousarray(_smx.multimax(_np(x), r, t, axis=dim, temperature=temperature)))
        y = y.to(x.dtype)   # float16 is computed in float32
        ctx.save_for_backward(x, y)
        ctx.r, ctx.t, ctx.dim, ctx.temperature = r, t, dim, temperature
        ctx.pdtype = (ranges.dtype if torch.is_tensor(ranges) else x.dtype, ts.dtype if torch.is_tensor(ts) else x.dtype)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        want_p = ctx.needs_input_grad[1] or ctx.needs_input_grad[2]
        r = _smx.multimax_backward(_np(x), _np(y), _np(dy), ctx.r, ctx.t, axis=ctx.dim, temperature=ctx.temperature,
                                   params_grad=want_p)
        dx, dr, dt = r if want_p else (r, None, None)
        dx = torch.from_numpy(np.ascontiguousarray(dx)).to(x.dtype)
        dr = torch.from_numpy(dr).to(ctx.pdtype[0]) if ctx.needs_input_grad[1] else None
        dt = torch.from_numpy(dt).to(ctx.pdtype[1]) if ctx.needs_input_grad[2] else None
        return dx, dr, dt, None, None


def multimax(t, ranges=None, ts=None, dim=-1, temperature=1.0):
    """softmax(s(t) / temperature) along dim, s(x) = x + ts[0] relu(ranges[0] - x) + ts[1] relu(x - ranges[1])
    + ts[2] relu(ranges[2] - x)^2 + ts[3] relu(x - ranges[3])^2 (None: zeros). ranges and ts may be
    4-element tensors that require grad (the paper learns them)."""
    return _MultiMax.apply(t, ranges, ts, _dim(t, dim), float(temperature))
