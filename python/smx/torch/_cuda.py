"""smx.torch on CUDA tensors: softmax, log_softmax, logsumexp and cross_entropy through libsmx_cuda
(smx._smx_cuda, include/smx/smx_cuda.h, docs/cuda.md), on PyTorch's current stream of the tensor's device.

Each function takes the CUDA module `mod` that _device.route returned and builds the same autograd specs as the
CPU path (_function.Op): the forward and backward are libsmx_cuda's kernels on the tensors' own memory (the rows
API's leading dimension, _device.rows2d: a device-side copy only for layouts it cannot describe). Calls are
asynchronous, as PyTorch's: they enqueue on the current stream and return. Outputs and workspaces come from
PyTorch's caching allocator on that stream. Storage float32, float16, bfloat16 (float64: TypeError, no silent
narrowing). The cross-entropy checks its targets on the device; the call waits for that check (one
synchronisation) and raises ValueError for a target outside [0, C) that is not ignore_index, as on the CPU.
"""
import torch

from ._device import check_dim, leading_dim, rows2d
from ._function import Op, Spec

CODES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
REDUCTIONS = {"mean": 0, "sum": 1, "none": 2}   # smx_reduction


def dtype_code(fn, t):
    if t.dtype not in CODES:
        raise TypeError("smx.torch.%s: a CUDA input of dtype %s; libsmx_cuda takes float32, float16 and bfloat16 "
                        "(float64 is CPU only)" % (fn, t.dtype))
    return CODES[t.dtype]


def stream_of(device):
    """PyTorch's current stream on device, as the int libsmx_cuda takes (a cudaStream_t)."""
    return torch.cuda.current_stream(device).cuda_stream


def workspace(mod, op, rows, cols, device):
    """(tensor keeping it alive or None, address, bytes): the workspace a call needs, from PyTorch's allocator
    (aligned to far more than the 16 bytes libsmx_cuda asks; freed back to the current stream, in order)."""
    n = mod.workspace_size(op, rows, cols)
    if n == 0:
        return None, 0, 0
    w = torch.empty(n, dtype=torch.uint8, device=device)
    return w, w.data_ptr(), n


def _on(device):
    """Context: the tensor's device current (libsmx_cuda refuses memory of another device than the current)."""
    return torch.cuda.device(device) if device.type == "cuda" else _Null()


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# -------------------------------------------------------------------------- softmax, log_softmax, logsumexp

def _row_call(kw, op, x2, out, out_ld):
    mod, dev = kw["mod"], x2.device
    rows, n = x2.shape
    w, wp, wn = workspace(mod, op, rows, n, dev)
    mod.rows(op, CODES[x2.dtype], x2.data_ptr(), leading_dim(x2), out.data_ptr(), out_ld, rows, n, kw["stream"](dev),
             wp, wn, kw["T"], kw["masked_nan"])
    del w   # freed back to the stream that uses it: reused only by later work on it


def _softmax_forward(kw, needs, x):
    with _on(x.device):
        x2, lead = rows2d(x.detach(), kw["dim"])
        rows, n = x2.shape
        y = torch.empty((rows, n), dtype=x.dtype, device=x.device)
        _row_call(kw, kw["op"], x2, y, max(n, 1))
        y = y.view(lead + (n,)).movedim(-1, kw["dim"])
    return y, (y,)


def _softmax_backward(kw, saved, needs, dy):
    (y,) = saved
    mod = kw["mod"]
    with _on(y.device):
        y2, lead = rows2d(y, kw["dim"])
        d2, _ = rows2d(dy.to(y.dtype), kw["dim"])
        rows, n = y2.shape
        dx = torch.empty((rows, n), dtype=y.dtype, device=y.device)
        bop = mod.SOFTMAX_BACKWARD if kw["op"] == mod.SOFTMAX else mod.LOG_SOFTMAX_BACKWARD
        w, wp, wn = workspace(mod, bop, rows, n, y.device)
        mod.backward(0 if kw["op"] == mod.SOFTMAX else 1, CODES[y.dtype], y2.data_ptr(), leading_dim(y2),
                     d2.data_ptr(), leading_dim(d2), dx.data_ptr(), max(n, 1), rows, n, kw["stream"](y.device), wp,
                     wn, kw["T"])
        del w
    return (dx.view(lead + (n,)).movedim(-1, kw["dim"]),)


_SOFTMAX = Spec(_softmax_forward, _softmax_backward)


def positive(fn, what, v):
    """v as a float > 0 and finite, else ValueError naming it (the CPU path's rule)."""
    v = float(v)
    if not 0.0 < v < float("inf"):
        raise ValueError("smx.torch.%s: %s must be > 0 and finite, got %r" % (fn, what, v))
    return v


def _kw(fn, mod, t, dim, temperature, stream):
    dtype_code(fn, t)
    positive(fn, "temperature", temperature)
    return {"mod": mod, "dim": check_dim(fn, dim, t.dim()), "T": float(temperature), "masked_nan": False,
            "stream": stream or stream_of}


def softmax(mod, t, dim=-1, temperature=1.0, stream=None):
    """smx.torch.softmax of a CUDA tensor (stream: a function of the device giving the stream; None:
    PyTorch's current one)."""
    kw = _kw("softmax", mod, t, dim, temperature, stream)
    kw["op"] = mod.SOFTMAX
    return Op.apply(_SOFTMAX, kw, t)


def log_softmax(mod, t, dim=-1, temperature=1.0, stream=None):
    """smx.torch.log_softmax of a CUDA tensor."""
    kw = _kw("log_softmax", mod, t, dim, temperature, stream)
    kw["op"] = mod.LOG_SOFTMAX
    return Op.apply(_SOFTMAX, kw, t)


def _lse_forward(kw, needs, x):
    with _on(x.device):
        x2, lead = rows2d(x.detach(), kw["dim"])
        out = torch.empty(x2.shape[0], dtype=torch.float32, device=x.device)   # libsmx_cuda writes floats
        _row_call(kw, kw["mod"].LOGSUMEXP, x2, out, 1)
        out = out.view(lead).to(x.dtype)
    return (out.unsqueeze(kw["dim"]) if kw["keepdim"] else out), (x,)


def _lse_backward(kw, saved, needs, dy):
    # d lse(x/T) / dx = softmax(x/T) / T: libsmx_cuda's softmax, scaled by the upstream gradient
    (x,) = saved
    p, _ = _softmax_forward(dict(kw, op=kw["mod"].SOFTMAX), None, x)
    p.mul_(dy if kw["keepdim"] else dy.unsqueeze(kw["dim"]))
    return (p.div_(kw["T"]) if kw["T"] != 1.0 else p,)


_LSE = Spec(_lse_forward, _lse_backward)


def logsumexp(mod, t, dim=-1, keepdim=False, temperature=1.0, stream=None):
    """smx.torch.logsumexp of a CUDA tensor (the result in the input's dtype, computed in float32)."""
    kw = _kw("logsumexp", mod, t, dim, temperature, stream)
    kw["keepdim"] = bool(keepdim)
    return Op.apply(_LSE, kw, t)


# ------------------------------------------------------------------------------------------- cross_entropy

def _xent_forward(kw, needs, x):
    mod, dev = kw["mod"], x.device
    want = any(needs)
    with _on(dev):
        x2, lead = rows2d(x.detach(), x.dim() - 1)
        rows, n = x2.shape
        tg = kw["target"].reshape(rows)
        none = kw["reduction"] == "none"
        loss = torch.empty(rows if none else (), dtype=torch.float32, device=dev)
        grad = torch.empty((rows, n), dtype=x.dtype, device=dev) if want else None
        w, wp, wn = workspace(mod, mod.CROSS_ENTROPY, rows, n, dev)
        s = kw["stream"](dev)
        mod.cross_entropy(CODES[x.dtype], x2.data_ptr(), leading_dim(x2), tg.data_ptr(), loss.data_ptr(),
                          grad.data_ptr() if want else 0, max(n, 1), 0, rows, n, s, wp, wn,
                          REDUCTIONS[kw["reduction"]], kw["ignore_index"], kw["label_smoothing"], kw["z_loss"], 0.0,
                          1.0, False)
        mod.cross_entropy_status(s, wp, wn)   # waits: a refused target raises here, as on the CPU
        del w
        loss = (loss.view(lead) if none else loss).to(x.dtype)
    return loss, ((grad.view(x.shape),) if want else ())


def _xent_backward(kw, saved, needs, dl):
    if not saved:
        return (None,)
    (g,) = saved
    if kw["reduction"] != "none":
        return (g * dl.to(g.dtype),)
    return (g * dl.to(g.dtype).unsqueeze(-1),)


_XENT = Spec(_xent_forward, _xent_backward)


def cross_entropy(mod, x, target, ignore_index=-100, reduction="mean", label_smoothing=0.0, z_loss=0.0,
                  stream=None):
    """smx.torch.cross_entropy of CUDA logits x with their classes last (the caller moved them) and integer
    targets of x.shape[:-1] on the same device."""
    dtype_code("cross_entropy", x)
    if not 0.0 <= float(label_smoothing) <= 1.0:
        raise ValueError("smx.torch.cross_entropy: label_smoothing must be in [0, 1], got %r" % (label_smoothing,))
    if not 0.0 <= float(z_loss) < float("inf"):
        raise ValueError("smx.torch.cross_entropy: z_loss must be >= 0 and finite, got %r" % (z_loss,))
    if target.device != x.device:
        raise ValueError("smx.torch.cross_entropy: target is on %s, the input on %s; they must be on one device"
                         % (target.device, x.device))
    kw = {"mod": mod, "target": target.detach().to(torch.int64).contiguous(), "reduction": reduction,
          "ignore_index": int(ignore_index), "label_smoothing": float(label_smoothing), "z_loss": float(z_loss),
          "stream": stream or stream_of}
    return Op.apply(_XENT, kw, x)


# ------------------------------------------------------------------------------- softmax_topk and sample

def topk_forward(kw, x):
    """(values float32, indices int64) of the fused softmax + top-k of CUDA x along kw["dim"] (shapes as
    _lm's CPU path: dim of size k, in place)."""
    mod, dev, d, k = kw["mod"], x.device, kw["dim"], kw["k"]
    if k > mod.MAX_TOPK:
        raise ValueError("smx.torch.softmax_topk: k = %d is above libsmx_cuda's largest k (%d)" % (k, mod.MAX_TOPK))
    with _on(dev):
        x2, lead = rows2d(x.detach(), d)
        rows, n = x2.shape
        values = torch.empty((rows, k), dtype=torch.float32, device=dev)
        indices = torch.empty((rows, k), dtype=torch.int64, device=dev)
        nbytes = mod.topk_workspace_size(rows, n, k)
        w = torch.empty(nbytes, dtype=torch.uint8, device=dev) if nbytes else None
        mod.topk(CODES[x.dtype], kw["log"], x2.data_ptr(), leading_dim(x2), values.data_ptr(), indices.data_ptr(),
                 rows, n, k, kw["stream"](dev), w.data_ptr() if nbytes else 0, nbytes, kw["T"], False)
        del w
    return values.view(lead + (k,)).movedim(-1, d), indices.view(lead + (k,)).movedim(-1, d)


def topk_backward(kw, x, g):
    """dL/dx of the top-k values: libsmx_cuda's softmax (log-softmax) backward at the full row, the upstream
    gradient g scattered to the selected entries (the CPU path's formula, _lm._topk_backward)."""
    mod = kw["mod"]
    rk = dict(kw, op=mod.LOG_SOFTMAX if kw["log"] else mod.SOFTMAX, masked_nan=False)
    y, _ = _softmax_forward(rk, None, x)
    return _softmax_backward(rk, (y,), None, g)[0]


METHODS = {"multinomial": 0, "gumbel": 1}   # smx_sample_method


def sample(mod, logits, p, stream=None):
    """int64 tokens (CUDA) of libsmx_cuda's sampling over the last dim; p: the checked parameters of
    _lm.sample_params (temperature, top_k, top_p, min_p, method, seed, step, row_offset)."""
    dtype_code("sample", logits)
    stream = stream or stream_of
    dev = logits.device
    with _on(dev):
        x2, lead = rows2d(logits.detach(), logits.dim() - 1)
        rows, n = x2.shape
        if n == 0 and rows > 0:
            raise ValueError("smx.torch.sample: logits have no classes (last dimension of size 0)")
        if 0 < p["top_k"] < n and p["top_k"] > mod.MAX_TOPK:
            raise ValueError("smx.torch.sample: top_k = %d is above libsmx_cuda's largest k (%d)"
                             % (p["top_k"], mod.MAX_TOPK))
        tokens = torch.empty(rows, dtype=torch.int64, device=dev)
        q = (p["temperature"], p["top_k"], p["top_p"], p["min_p"], METHODS[p["method"]], p["row_offset"])
        nbytes = mod.sample_workspace_size(rows, n, *q)
        w = torch.empty(nbytes, dtype=torch.uint8, device=dev) if nbytes else None
        mod.sample(CODES[logits.dtype], x2.data_ptr(), leading_dim(x2), tokens.data_ptr(), rows, n, stream(dev),
                   w.data_ptr() if nbytes else 0, nbytes, p["seed"], p["step"], *q)
        del w
    return tokens.view(lead)
