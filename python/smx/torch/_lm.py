"""smx.torch.softmax_topk and smx.torch.sample: the language-model head's fused top-k and reproducible
sampling (include/smx/smx_topk.h) on tensors, as the NumPy smx.softmax_topk and smx.sample.

CPU tensors run the C rows APIs on the tensor's own memory (a leading dimension: no copy unless the rows are
not evenly spaced with unit stride, see _device.rows2d), on torch.get_num_threads() threads unless told.
CUDA tensors run libsmx_cuda's fused top-k and sampling (_cuda.py) on PyTorch's current stream; without a
CUDA build they raise (_device.route), never copying to the host.

softmax_topk is differentiable in its values: dL/dx is smx's softmax (log-softmax) backward at the full row's
softmax with the upstream gradient scattered to the selected indices, since v_j = p[i_j] (log p[i_j]).
"""
import operator

import torch

import smx._smx as _c

from . import _cuda
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
    if kw["mod"] is not None:
        values, indices = _cuda.topk_forward(kw, x)
        return (values, indices), (x, indices)
    d, k = kw["dim"], kw["k"]
    v2, lead = rows2d(x.detach(), d)
    rows, n = v2.shape
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
    if kw["mod"] is not None:
        return _cuda.topk_backward(kw, x, g)
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
    threads=None: torch.get_num_threads() (results never depend on it). CUDA tensors (float32, float16,
    bfloat16; k up to 1024): libsmx_cuda's fused top-k on the current stream, the same indices as the CPU."""
    fn = "softmax_topk"
    _check_dtype(fn, t, "input")
    return _softmax_topk(route(fn, t.device), None, t, k, dim, temperature, log, threads)


def _softmax_topk(mod, stream, t, k, dim, temperature, log, threads):
    """softmax_topk on the CPU library (mod None) or the CUDA module mod (stream: a function of the device
    giving the stream; None: PyTorch's current one)."""
    fn = "softmax_topk"
    k = _int(fn, "k", k)
    if k < 0:
        raise ValueError("smx.torch.softmax_topk: k must be >= 0, got %d" % k)
    d = check_dim(fn, dim, t.dim())
    if k > t.shape[d]:
        raise ValueError("smx.torch.softmax_topk: k = %d is larger than the size of dim %d (%d)" % (k, dim, t.shape[d]))
    kw = {"k": k, "dim": d, "log": bool(log), "T": float(temperature), "threads": threads_of(threads), "mod": mod}
    if mod is not None:
        _cuda.dtype_code(fn, t)
        kw.update(T=_cuda.positive(fn, "temperature", temperature), stream=stream or _cuda.stream_of)
    return _TopkOp.apply(kw, t)


def sample(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, method="multinomial", seed=0, step=0,
           row_offset=0, threads=None):
    """One token per row of logits (classes on the last dim), as the NumPy smx.sample: temperature (0:
    greedy), then top_k (0: off), top_p (1 or 0: off), min_p (0: off), then a draw by method 'multinomial'
    or 'gumbel' from Philox streams keyed by (seed, row_offset + row, step), so a row's token never depends
    on the thread count or the batch it came in. Returns int64 tokens of the logits' shape without the last
    dim; -1 for a row with NaN or with no entry above -inf. float16, bfloat16, float32, float64 (no
    gradient). threads=None: torch.get_num_threads(). CUDA tensors (float32, float16, bfloat16): libsmx_cuda's
    sampling on the current stream, tokens on the device; the same token as the CPU for greedy, Gumbel-max
    and top-k sampling, and for multinomial / top-p except within about 1e-7 of a boundary (smx_cuda.h)."""
    fn = "sample"
    _check_dtype(fn, logits, "logits")
    mod = route(fn, logits.device)
    if logits.dim() == 0:
        raise ValueError("smx.torch.sample: logits must have at least one dimension")
    if mod is not None:
        return _cuda.sample(mod, logits, sample_params(temperature, top_k, top_p, min_p, method, seed, step,
                                                       row_offset))
    v2, lead = rows2d(logits.detach(), logits.dim() - 1)
    tokens = torch.empty(v2.shape[0], dtype=torch.int64)
    xn, bf16 = view(v2, "logits")
    _c._sample_rows("smx.torch.sample", xn, tokens.numpy(), seed, step, temperature, top_k, top_p, min_p, method,
                    row_offset, threads_of(threads), bf16)
    return tokens.view(lead)


def sample_params(temperature, top_k, top_p, min_p, method, seed, step, row_offset):
    """The sampling parameters checked as the C binding checks them for the CPU (the same messages): a dict."""
    fn = "smx.torch.sample"

    def real(what, v, ok, rule):
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
            raise TypeError("%s: %s must be a real number, not %s" % (fn, what, type(v).__name__))
        f = float(v)
        if not ok(f):
            raise ValueError("%s: %s must be %s, got %r" % (fn, what, rule, v))
        return f

    def u64(what, v):
        i = _int("sample", what, v)
        if not 0 <= i < 2 ** 64:
            raise ValueError("%s: %s must be in [0, 2**64), got %r" % (fn, what, v))
        return i

    p = {"temperature": real("temperature", temperature, lambda f: 0.0 <= f < float("inf"),
                             ">= 0 and finite (0: greedy)"),
         "top_k": _int("sample", "top_k", top_k)}
    if not 0 <= p["top_k"] < 2 ** 63:
        raise ValueError("%s: top_k must be in [0, %d], got %r" % (fn, 2 ** 63 - 1, top_k))
    p["top_p"] = real("top_p", top_p, lambda f: 0.0 <= f <= 1.0, "in [0, 1] (0 or 1: off)")
    p["min_p"] = real("min_p", min_p, lambda f: 0.0 <= f <= 1.0, "in [0, 1] (0: off)")
    if not isinstance(method, str):
        raise TypeError("%s: method must be a str ('multinomial' or 'gumbel')" % fn)
    if method not in ("multinomial", "gumbel"):
        raise ValueError("%s: method must be 'multinomial' or 'gumbel', got %r" % (fn, method))
    p.update(method=method, seed=u64("seed", seed), step=u64("step", step), row_offset=u64("row_offset", row_offset))
    return p
