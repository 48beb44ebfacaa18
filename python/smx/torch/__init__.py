"""smx.torch: smx's functions as torch.autograd.Functions on CPU tensors (and CUDA tensors for the softmax family).

Imported on its own (``import smx.torch``), never by ``import smx``, so that
smx works without PyTorch. Each function takes tensors and a ``dim`` under the
name of its NumPy counterpart (smx.torch.softmax(t, dim=-1), ...); the forward
and the backward both run smx's C kernels on the tensors' memory (any strides;
float16, bfloat16, float32, float64), never torch's autograd of a torch
re-implementation. Every function takes threads=None: torch.get_num_threads(),
so smx follows torch.set_num_threads (results never depend on it). A second
derivative raises (torch's once_differentiable convention).

softmax_topk and sample are the language-model head's fused top-k and reproducible sampling (the NumPy
smx.softmax_topk and smx.sample on tensors). CUDA tensors: softmax, log_softmax, logsumexp, cross_entropy,
softmax_topk and sample run libsmx_cuda (smx._smx_cuda, in a CUDA build) on PyTorch's current stream, with
autograd where a backward exists; the other functions raise for a CUDA tensor, and so do these without a CUDA
build: smx never copies a CUDA tensor to the host (_device.route).
"""
import torch  # noqa: F401  (an ImportError here says PyTorch is missing)
from ._rows import (adaptive_softmax, entmax, entmax15, log_softmax, logsumexp, mixture_log_softmax,  # noqa: E402,F401
                    multimax, sa_softmax, sigmoid, softmax, softpick, softplus_l1, sparsemax, ssmax,
                    standardize_softmax, topk_softmax)
from ._losses import (cross_entropy, dice_loss, entmax15_loss, entmax_loss, focal_loss, info_nce,  # noqa: E402,F401
                      kd_loss, noisy_softmax_loss, sparsemax_loss)
from ._losses import TLOSSES as _TLOSSES  # noqa: E402

globals().update(_TLOSSES)   # the op table's target losses: spherical_z_loss, sdpo_loss, ...
from ._attention import attention, scaled_dot_product_attention  # noqa: E402,F401
from ._lm import sample, softmax_topk  # noqa: E402,F401
