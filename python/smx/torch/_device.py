"""Where an smx.torch call runs, and the row layout the C rows APIs read in place.

route(fn, device) is the one decision: None for a CPU tensor (the C library, on the tensor's memory), the
CUDA extension smx._smx_cuda (libsmx_cuda, docs/cuda.md) for a CUDA tensor, and a clear error for anything
else. A CUDA tensor is never copied to the host: without a CUDA build it raises, naming what is missing.

rows2d(t, dim) gives the 2-D (rows x n) view of t with dim last that the rows APIs take with a leading
dimension: the tensor itself when its other dimensions merge into evenly spaced rows of unit stride, else
one contiguous copy (a transposed dim, an expanded or irregular layout).
"""
import math

import torch

_CUDA = {}   # the loaded module under "module", or why it could not be loaded under "error"

NO_CUDA_BUILD = ("this smx was built without CUDA (no module smx._smx_cuda: configure with -DSMX_CUDA=ON or AUTO "
                 "where CMake finds nvcc, and build the Python module; docs/cuda.md)")


def cuda_module():
    """smx._smx_cuda, or None when this build has no CUDA (the reason is kept for the error)."""
    if "module" not in _CUDA:
        try:
            from .. import _smx_cuda
            _CUDA["module"] = _smx_cuda
        except ImportError as e:   # not built (the usual case), or built but its CUDA runtime is missing
            _CUDA["module"] = None
            _CUDA["error"] = str(e)
    return _CUDA["module"]


def device_of(t):
    """t's device; the CPU for what is not a tensor (the CPU path then names the wrong type)."""
    return t.device if isinstance(t, torch.Tensor) else _CPU


_CPU = torch.device("cpu")


def route(fn, device):
    """None (the CPU library) for a CPU device; the CUDA module for a CUDA device; else an error naming fn."""
    if device.type == "cpu":
        return None
    if device.type != "cuda":
        raise TypeError("smx.torch.%s: the input is on %s; smx runs on CPU and CUDA tensors" % (fn, device))
    mod = cuda_module()
    if mod is None:
        why = _CUDA.get("error", "")
        raise RuntimeError("smx.torch.%s: the input is a CUDA tensor (%s), but %s%s. smx never copies it to the "
                           "host: call .cpu() for the CPU library" % (fn, device, NO_CUDA_BUILD,
                                                                    "" if "_smx_cuda" in why else " (" + why + ")"))
    return mod


def check_dim(fn, dim, ndim):
    """dim as a non-negative index of a tensor of ndim >= 1 dimensions (IndexError naming dim otherwise)."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError("smx.torch.%s: dim must be an int, not %s" % (fn, type(dim).__name__))
    if ndim == 0:
        raise ValueError("smx.torch.%s: the input must have at least one dimension" % fn)
    if not -ndim <= dim < ndim:
        raise IndexError("smx.torch.%s: dim %d is out of range for a tensor of %d dimension%s"
                         % (fn, dim, ndim, "" if ndim == 1 else "s"))
    return dim % ndim


def rows2d(t, dim):
    """(v, lead): v the rows x n view of t with dim moved last (unit-stride rows, row stride >= n), or a
    contiguous copy where t has no such view; lead the shape of the other dimensions, in order."""
    m = t.movedim(dim, -1)
    n = m.shape[-1]
    lead = tuple(m.shape[:-1])
    rows = math.prod(lead)
    try:
        v = m.view(rows, n)
    except RuntimeError:   # the other dimensions do not merge into evenly spaced rows
        v = None
    if v is None or (n > 1 and v.stride(1) != 1) or (rows > 1 and v.stride(0) < max(n, 1)):
        v = m.contiguous().view(rows, n)
    return v, lead


def leading_dim(v):
    """The row stride of a rows2d view, in elements (n for a single row)."""
    return v.stride(0) if v.shape[0] > 1 else max(v.shape[1], 1)
