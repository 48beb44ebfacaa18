"""smx.torch.softmax, log_softmax, logsumexp and cross_entropy: autograd
Functions whose forward and backward run smx's C kernels on the tensors'
memory (CPU, float32 / float64 computed in their own precision; float16 as
smx does). Non-contiguous inputs are made contiguous; the class dimension is
handed to smx as its axis (smx moves it last itself)."""
import numpy as np
import torch

import smx as _smx

__all__ = ["softmax", "log_softmax", "logsumexp", "cross_entropy"]


def _np(t):
    """A NumPy view of a CPU tensor (contiguous copy when it is not)."""
    if t.device.type != "cpu":
        raise TypeError("smx.torch: tensors must be on the CPU, got %s" % t.device)
    return t.detach().contiguous().numpy()


def _dim(t, dim):
    return dim + t.dim() if dim < 0 else dim


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, log, temperature):
        f = _smx.log_softmax if log else _smx.softmax
        y = torch.from_numpy(np.ascontiguousarray(f(_np(x), axis=dim, temperature=temperature)))
        ctx.save_for_backward(y)
        ctx.dim, ctx.log, ctx.temperature = dim, log, temperature
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        f = _smx.log_softmax_backward if ctx.log else _smx.softmax_backward
        dx = f(_np(y), _np(dy), axis=ctx.dim, temperature=ctx.temperature)
        return torch.from_numpy(np.ascontiguousarray(dx)), None, None, None


class _LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim, temperature):
        xn = _np(x)
        out = np.asarray(_smx.logsumexp(xn, axis=dim, keepdims=True, temperature=temperature), dtype=xn.dtype)
        if not keepdim:
            out = out.reshape(out.shape[:dim] + out.shape[dim + 1:])
        ctx.save_for_backward(x)
        ctx.dim, ctx.keepdim, ctx.temperature = dim, keepdim, temperature
        return torch.from_numpy(np.ascontiguousarray(out))

    @staticmethod
    def backward(ctx, dy):
        # d lse(x/T) / dx = softmax(x/T) / T: smx's softmax, scaled by the upstream gradient
        (x,) = ctx.saved_tensors
        p = torch.from_numpy(np.ascontiguousarray(_smx.softmax(_np(x), axis=ctx.dim, temperature=ctx.temperature)))
        shape = list(x.shape)
        shape[ctx.dim] = 1
        dx = p.mul_(dy.reshape(shape))
        if ctx.temperature != 1.0:
            dx.div_(ctx.temperature)
        return dx, None, None, None


def softmax(t, dim=-1, temperature=1.0):
    """softmax(t / temperature) along dim (torch.softmax's semantics, except that a row of
    all -inf gives 0 instead of NaN); the gradient is smx.softmax_backward."""
    return _Softmax.apply(t, _dim(t, dim), False, float(temperature))


def log_softmax(t, dim=-1, temperature=1.0):
    """log_softmax(t / temperature) along dim; the gradient is smx.log_softmax_backward."""
    return _Softmax.apply(t, _dim(t, dim), True, float(temperature))


def logsumexp(t, dim=-1, keepdim=False, temperature=1.0):
    """log(sum(exp(t / temperature))) along dim (torch.logsumexp); gradient softmax * dy."""
    return _LogSumExp.apply(t, _dim(t, dim), bool(keepdim), float(temperature))


class _CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, target, reduction, ignore_index, label_smoothing, z_loss):
        # x: [..., C] with the classes last (the caller moved them there)
        want = ctx.needs_input_grad[0]
        r = _smx.cross_entropy(_np(x), _np(target), reduction=reduction, ignore_index=ignore_index,
                               label_smoothing=label_smoothing, z_loss=z_loss, return_grad=want)
        loss, grad = r if want else (r, None)
        ctx.reduction = reduction
        if want:
            ctx.save_for_backward(torch.from_numpy(np.ascontiguousarray(grad)).to(x.dtype))
        return torch.as_tensor(np.asarray(loss), dtype=x.dtype)

    @staticmethod
    def backward(ctx, dl):
        (g,) = ctx.saved_tensors
        # the gradient of the (reduced) loss, or per row for 'none': scaled by the upstream gradient
        if ctx.reduction != "none" and bool(dl == 1):
            return g, None, None, None, None, None   # loss.backward() itself: no extra pass
        dx = g * (dl.unsqueeze(-1) if ctx.reduction == "none" else dl)
        return dx, None, None, None, None, None


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0,
                  z_loss=0.0):
    """torch.nn.functional.cross_entropy(input, target, ignore_index=, reduction=, label_smoothing=)
    with class-index targets, fused in smx (forward and gradient in one call), plus z_loss * lse^2
    per row (PaLM's auxiliary loss). input: (C,), (N, C) or (N, C, d1, ...) as torch. The loss is
    computed in float32 arithmetic (smx's cross-entropy has no float64 form) and returned in the
    input's dtype. Per-class weights are not supported."""
    if weight is not None:
        raise NotImplementedError("smx.torch.cross_entropy: per-class weight is not supported")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("smx.torch.cross_entropy: reduction must be 'mean', 'sum' or 'none'")
    if target.is_floating_point():
        raise NotImplementedError("smx.torch.cross_entropy: only class-index targets are supported")
    if input.dim() == 1:
        x, t = input.unsqueeze(0), target.reshape(1)
        out = _CrossEntropy.apply(x, t, reduction, int(ignore_index), float(label_smoothing), float(z_loss))
        return out.reshape(()) if reduction == "none" else out
    x = input.movedim(1, -1) if input.dim() > 2 else input
    return _CrossEntropy.apply(x, target, reduction, int(ignore_index), float(label_smoothing), float(z_loss))
