"""smx.torch.noisy_softmax_loss: Noisy Softmax (Chen, Deng and Du, CVPR 2017)
as an autograd Function over smx's fused C loss, with gradients for the
logits and for the norms ||W_t|| ||X|| (the noise xi, drawn from Philox
keyed by (seed, row, step), held fixed). Class dimension 1 as in
torch.nn.functional.cross_entropy ((C,), (N, C) or (N, C, d1, ...)); the
norms have the targets' shape."""
import numpy as np
import torch

import smx as _smx

from ._losses import _classes_last
from ._softmax import _np

__all__ = ["noisy_softmax_loss"]


class _NoisyLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, norms, tn, kw):
        want = ctx.needs_input_grad[0] or (norms is not None and ctx.needs_input_grad[1])
        nn = None if norms is None else _np(norms.to(x.dtype))
        r = _smx.noisy_softmax_loss(_np(x), tn, nn, return_grad=want, **kw)
        loss = r[0] if want else r
        ctx.reduction = kw["reduction"]
        ctx.has_norms = norms is not None
        if want:
            g = torch.from_numpy(np.ascontiguousarray(r[1])).to(x.dtype)    # f16: computed in f32
            gr = torch.from_numpy(np.ascontiguousarray(r[2])).to(x.dtype)
            ctx.save_for_backward(g, gr)
        return torch.as_tensor(np.asarray(loss), dtype=x.dtype)

    @staticmethod
    def backward(ctx, dl):
        g, gr = ctx.saved_tensors
        if ctx.reduction == "none":
            gx, gn = g * dl.unsqueeze(-1), gr * dl
        elif bool(dl == 1):   # loss.backward() on the loss itself: the saved gradients as they are (no extra pass)
            gx, gn = g, gr
        else:
            gx, gn = g * dl, gr * dl
        return gx, (gn if ctx.has_norms else None), None, None


def noisy_softmax_loss(logits, target, norms, alpha=0.1, seed=0, step=0, mode="annealed", row_offset=0,
                       reduction="mean", ignore_index=-100):
    """Noisy Softmax over dim 1: cross-entropy with the target logit f_t replaced by
    f_t - alpha * max(norms - f_t, 0) * |xi|, norms = ||W_t|| ||X|| per sample (the target's shape),
    xi ~ N(0, 1) per (seed, row, step) (smx.noisy_softmax_noise; row = row_offset + the place in the
    flattened target). mode 'annealed' (the paper's), 'free' (norms may be None) or 'amplitude'.
    Differentiable in logits and norms."""
    x, t, sq = _classes_last(logits, target)
    n = norms
    if n is not None and not torch.is_tensor(n):
        n = torch.as_tensor(n, dtype=x.dtype)
    if n is not None and sq:
        n = n.reshape(1)
    kw = dict(alpha=float(alpha), seed=int(seed), step=int(step), mode=mode, row_offset=int(row_offset),
              reduction=reduction, ignore_index=int(ignore_index))
    out = _NoisyLoss.apply(x, n, _np(t.to(torch.int64)), kw)
    return out.reshape(()) if sq and reduction == "none" and out.dim() == 1 else out
