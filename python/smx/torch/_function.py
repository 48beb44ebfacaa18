"""The one autograd Function of smx.torch, and the tensor plumbing every function shares.

Every smx.torch function is `Op.apply(spec, kw, *tensors)`: spec.forward(kw, needs, *tensors) returns the
output and the tensors its backward needs; spec.backward(kw, saved, needs, grad) the gradient of each
tensor (None where not needed). The specs come from the op table (_rows.py) or fuse a loss with its
gradient (_losses.py). Backward runs smx's C backward entries and is not itself differentiable: a second
derivative raises (torch's once_differentiable convention) instead of coming out silently constant.

Tensors reach C as NumPy views of their own memory and strides (bfloat16 as int16 bit patterns, which
NumPy lacks): no copy to a contiguous float32 / float64 tensor. threads: None (the default) is
torch.get_num_threads(), so smx follows torch.set_num_threads; results never depend on it.
"""
import numpy as np
import torch
from torch._C import _functions as _torch_functions

from .. import _rows as _nprows

HALF = (torch.float16, torch.bfloat16)


def threads_of(threads):
    """The thread count for smx: torch's own unless given."""
    return torch.get_num_threads() if threads is None else int(threads)


def view(t, name="input"):
    """(NumPy view of a CPU tensor's memory, is_bf16)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError("smx.torch: %s must be a tensor, not %s" % (name, type(t).__name__))
    if t.device.type != "cpu":
        raise TypeError("smx.torch: %s must be on the CPU, got %s" % (name, t.device))
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy(), True
    if t.dtype not in (torch.float16, torch.float32, torch.float64):
        raise TypeError("smx.torch: %s has dtype %s; smx takes float16, bfloat16, float32 or float64"
                        % (name, t.dtype))
    return t.numpy(), False


def empty_like(t, shape=None):
    """An output tensor: t's layout where it is dense (empty_like keeps it), else contiguous; or `shape`."""
    return torch.empty(shape, dtype=t.dtype) if shape is not None else torch.empty_like(t)


def rows(name, backward, x, y=None, dy=None, dim=-1, params=None, n=None, temperature=0.0, threads=None,
         masked_row="zero", out_shape=None):
    """One row operation of the op table on tensors (smx._rows.run): the output as a new tensor."""
    ref = next(t for t in (x, y, dy) if t is not None)
    out = empty_like(ref, out_shape)
    ins = [None if t is None else view(t, nm) for t, nm in ((x, "input"), (y, "y"), (dy, "grad"))]
    bf16 = ref.dtype == torch.bfloat16
    if any(v is not None and v[1] != bf16 for v in ins) or any(t is not None and t.dtype != ref.dtype
                                                               for t in (x, y, dy)):
        raise TypeError("smx.torch.%s: tensors of one dtype expected" % name)
    _nprows.run(name, backward, *[None if v is None else v[0] for v in ins], axis=dim, out=view(out)[0],
                params=params, n=n, temperature=temperature, threads=threads_of(threads), masked_row=masked_row,
                bf16=bf16)
    return out


def finite_dot(x, g):
    """sum of x * g over the entries where x is finite (g is 0 at the others: masked or saturated)."""
    return torch.where(torch.isfinite(x), x * g, torch.zeros((), dtype=g.dtype)).sum()


def scalar(p, name):
    """A parameter given as a number, or as a one-element tensor that may be learned: (value, tensor)."""
    if torch.is_tensor(p):
        if p.numel() != 1:
            raise ValueError(f"smx.torch: {name} must hold one value, got shape {tuple(p.shape)}")
        return float(p.detach().reshape(()).item()), p
    return float(p), None


def from_np(a, dtype):
    """A NumPy result as a tensor of dtype (bfloat16 results come through float32)."""
    return torch.from_numpy(np.ascontiguousarray(a)).to(dtype)


class Spec:
    """forward(kw, needs, *tensors) -> (out, saved); backward(kw, saved, needs, grad) -> grads."""

    def __init__(self, forward, backward):
        self.forward, self.backward = forward, backward


def no_second_derivative(grads):
    """grads (None where absent) wrapped so that differentiating them raises, naming smx: as torch's
    once_differentiable does, but also when a gradient itself does not require grad."""
    grads = list(grads)
    live = [i for i, g in enumerate(grads) if g is not None]
    err = _torch_functions.DelayedError(b"smx.torch: no second derivative (the backward is smx's C kernel, "
                                        b"marked once_differentiable); differentiate it with torch's own "
                                        b"functions", len(live))
    wrapped = err(*[grads[i].detach().requires_grad_() for i in live])
    for i, g in zip(live, wrapped if isinstance(wrapped, tuple) else (wrapped,)):
        grads[i] = g
    return grads


class Op(torch.autograd.Function):
    """The one Function: forward and backward from a spec (see the module's doc)."""

    @staticmethod
    def forward(ctx, spec, kw, *tensors):
        out, saved = spec.forward(kw, ctx.needs_input_grad[2:], *tensors)
        ctx.spec, ctx.kw = spec, kw
        ctx.save_for_backward(*saved)
        return out

    @staticmethod
    def backward(ctx, grad):
        with torch.no_grad():
            grads = list(ctx.spec.backward(ctx.kw, ctx.saved_tensors, ctx.needs_input_grad[2:], grad))
        if torch.is_grad_enabled():   # create_graph=True: a gradient of these gradients raises, naming smx
            grads = no_second_derivative(grads)
        return (None, None) + tuple(grads)
