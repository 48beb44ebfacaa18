"""smx.torch: smx's functions as torch.autograd.Functions on CPU tensors.

Imported on its own (``import smx.torch``), never by ``import smx``, so that
smx works without PyTorch. Each function takes tensors and a ``dim`` under the
name of its NumPy counterpart (smx.torch.softmax(t, dim=-1), ...); the forward
and the backward both run smx's C kernels on the tensors' memory, never
torch's autograd of a torch re-implementation.
"""
import torch  # noqa: F401  (an ImportError here says PyTorch is missing)
from ._softmax import cross_entropy, log_softmax, logsumexp, softmax  # noqa: E402,F401
from ._losses import dice_loss, focal_loss, info_nce, spherical_z_loss  # noqa: E402,F401
from ._multi import multimax  # noqa: E402,F401
from ._attention import attention, scaled_dot_product_attention  # noqa: E402,F401
from ._sparse import entmax, entmax15, entmax15_loss, entmax_loss, sparsemax, sparsemax_loss  # noqa: F401,E402
from ._norm import (kd_loss, mixture_log_softmax, adaptive_softmax, sa_softmax, sigmoid, softpick, softplus_l1, ssmax,  # noqa: F401
                    standardize_softmax, topk_softmax)
from ._noisy import noisy_softmax_loss  # noqa: E402,F401
