"""smx.torch.softmax_topk and smx.torch.sample: the language-model head's fused top-k and reproducible
sampling (include/smx/smx_topk.h) on tensors, as the NumPy smx.softmax_topk and smx.sample.

CPU tensors run the C rows APIs on the tensor's own memory (a leading dimension: no copy unless the rows are
not evenly spaced with unit stride, see _device.rows2d), on torch.get_num_threads() threads unless told.
CUDA tensors raise NotImplementedError until libsmx_cuda has these kernels (_device.route), never copying to
the host.

softmax_topk is differentiable in its values: dL/dx is smx's softmax (log-softmax) backward at the full row's
softmax with the upstream gradient scattered to the selected indices, since v_j = p[i_j] (log p[i_j]).
"""
import operator

import torch

import smx._smx as _c

from ._device import check_dim, route, rows2d
from ._function import no_second_derivative, rows, threads_of, view

__all__ = ["softmax_topk", "sample"]

_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _check_dtype(fn, t, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError("smx.torch.%s: %s must be a tensor, not %s" % (fn, what, type(t).__name__))
    if t.dtype not in _DTYPES:
        raise TypeError("smx.torch.%s: %s has dtype %s; smx takes float16, bfloat16, float32 or float64"
                        % (fn, what, t.dtype))


def _int(fn, what, v):
    try:
        if isinstance(v, bool):
            raise TypeError
        return operator.index(v)
    except TypeError:
        raise TypeError("smx.torch.%s: %s must be an int, not %s" % (fn, what, type(v).__name__)) from None


def _topk_forward(kw, x):
    d, k = kw["dim"], kw["k"]
    v2, lead = rows2d(x.detach(), d)
    rows, n = v2.shape
    if k > n:
        raise ValueError("smx.torch.softmax_topk: k = %d is larger than the size of dim %d (%d)" % (k, kw["dim_in"], n))
    vdt = torch.float64 if x.dtype == torch.float64 else torch.float32
    values = torch.empty((rows, k), dtype=vdt)
    indices = torch.empty((rows, k), dtype=torch.int64)
    xn, bf16 = view(v2, "input")
    _c._topk_rows("smx.torch.softmax_topk", xn, values.numpy(), indices.numpy(), k, kw["log"], kw["T"],
                  kw["threads"], "zero", bf16)
    values = values.view(lead + (k,)).movedim(-1, d)
    indices = indices.view(lead + (k,)).movedim(-1, d)
    return (values, indices), (x, indices)


def _topk_backward(kw, saved, dv):
    x, indices = saved
    d = kw["dim"]
    ok = indices >= 0   # a NaN row has indices -1 (its gradient is NaN through the softmax below anyway)
    g = torch.zeros_like(x).scatter_add_(d, torch.where(ok, indices, torch.zeros((), dtype=indices.dtype)),
                                         torch.where(ok, dv, torch.zeros((), dtype=dv.dtype)).to(x.dtype))
    name = "log_softmax" if kw["log"] else "softmax"
    y = rows(name, 0, x, dim=d, temperature=kw["T"], threads=kw["threads"])
    return rows(name, 1, None, y, g, dim=d, temperature=kw["T"], threads=kw["threads"])


class _TopkOp(torch.autograd.Function):
    """The values are differentiable, the indices not (as torch.topk)."""

    @staticmethod
    def forward(ctx, kw, x):
        (values, indices), saved = _topk_forward(kw, x)
        ctx.kw = kw
        ctx.save_for_backward(*saved)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, dv, di):
        with torch.no_grad():
            dx = _topk_backward(ctx.kw, ctx.saved_tensors, dv)
        if torch.is_grad_enabled():   # create_graph=True: a gradient of this gradient raises, naming smx
            dx = no_second_derivative([dx])[0]
        return None, dx


def softmax_topk(t, k, dim=-1, temperature=1.0, log=False, threads=None):
    """The k largest entries of softmax(t / temperature) along dim (log=True: of log_softmax) in one read of
    the row, as the NumPy smx.softmax_topk: returns (values, indices), dim of size k, values descending, equal
    logits in increasing index order. values: float32 (float64 for a float64 input); indices: int64.
    float16, bfloat16, float32, float64. Special rows as the library: a row with NaN gives NaN values and
    indices -1; +inf entries share the probability; a row of all -inf gives indices 0..k-1 and values 0
    (log: -inf). k in [0, size of dim]. Differentiable in the values (smx's softmax backward).
    threads=None: torch.get_num_threads() (results never depend on it)."""
    fn = "softmax_topk"
    _check_dtype(fn, t, "input")
    route(fn, t.device, cuda=False)
    k = _int(fn, "k", k)
    if k < 0:
        raise ValueError("smx.torch.softmax_topk: k must be >= 0, got %d" % k)
    d = check_dim(fn, dim, t.dim())
    kw = {"k": k, "dim": d, "dim_in": dim, "log": bool(log), "T": float(temperature),
          "threads": threads_of(threads)}
    return _TopkOp.apply(kw, t)


def sample(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, method="multinomial", seed=0, step=0,
           row_offset=0, threads=None):
    """One token per row of logits (classes on the last dim), as the NumPy smx.sample: temperature (0:
    greedy), then top_k (0: off), top_p (1 or 0: off), min_p (0: off), then a draw by method 'multinomial'
    or 'gumbel' from Philox streams keyed by (seed, row_offset + row, step), so a row's token never depends
    on the thread count or the batch it came in. Returns int64 tokens of the logits' shape without the last
    dim; -1 for a row with NaN or with no entry above -inf. float16, bfloat16, float32, float64 (no
    gradient). threads=None: torch.get_num_threads()."""
    fn = "sample"
    _check_dtype(fn, logits, "logits")
    route(fn, logits.device, cuda=False)
    if logits.dim() == 0:
        raise ValueError("smx.torch.sample: logits must have at least one dimension")
    v2, lead = rows2d(logits.detach(), logits.dim() - 1)
    tokens = torch.empty(v2.shape[0], dtype=torch.int64)
    xn, bf16 = view(v2, "logits")
    _c._sample_rows("smx.torch.sample", xn, tokens.numpy(), seed, step, temperature, top_k, top_p, min_p, method,
                    row_offset, threads_of(threads), bf16)
    return tokens.view(lead)
