"""smx: exact, fast softmax, log-softmax and log-sum-exp over NumPy arrays,
and what is built on softmax scores.

A thin layer over the C library (libsmx, linked statically into smx._smx):
float16, float32 and float64 arrays of any layout, any axis (None: all
elements, as scipy), results in the input's dtype, the GIL released while
computing; integer inputs are read as float64 and scalars as one element, as
scipy.special. See help(smx.softmax).

Elementwise: sigmoid (scipy.special.expit, with a temperature).

Attention: attention (fused, FlashAttention-2 style: masks, GQA, sinks and
the variants of docs/attention.md; smx.torch.scaled_dot_product_attention
for torch tensors).
Sparse probability maps: sparsemax, entmax15, entmax (alpha), their _backward
VJPs and the losses sparsemax_loss, entmax15_loss, entmax_loss (smx._sparse).

Language-model logits: softmax_backward, log_softmax_backward, cross_entropy
(torch.nn.functional.cross_entropy semantics, fused, with its gradient),
softmax_topk, topk, sample (reproducible top-k / top-p / min-p sampling),
gumbel_softmax, gumbel_softmax_backward.
Losses on softmax outputs, fused with their gradients: focal_loss, dice_loss,
info_nce (InfoNCE / CLIP), and every target loss of the op table (smx._losses):
spherical_z_loss (de Brebisson and Vincent's Z-loss), sdpo_loss (S-DPO, Chen et al. 2024).
MultiMax (Zhou et al. 2024): multimax, multimax_backward.
Noisy Softmax (Chen, Deng and Du 2017): noisy_softmax_loss, noisy_softmax_noise.
Scores: score (MSP, energy, ... per sample), ood_metrics (AUROC, AUPR,
FPR@95TPR), calibration (ECE and the reliability diagram), fit_temperature,
kl_templates (for score kind "kl_matching").

Threads: every function takes threads=0 by default, meaning every core this
process may run on; threads=1 is the calling thread only, n up to n threads.
Results never depend on it. (smx.torch's functions take threads=None:
torch.get_num_threads().)

Deliberate differences from scipy.special and torch:
  * a row of all -inf gives softmax 0, log_softmax -inf and logsumexp -inf
    (scipy and torch give NaN); masked_row="nan" gives NaN like torch;
  * +inf entries give the limit: 1/k on the k entries equal to +inf, 0
    elsewhere (scipy and torch give NaN).
"""
from ._smx import (NoOptimumError, __version__, attention, attention_backward, calibration, cross_entropy, fit_temperature, gumbel_softmax,
                   gumbel_softmax_backward, isa, kl_templates, log_softmax, logsumexp, ood_metrics, sample,
                   score, sigmoid, softmax, softmax_topk, topk)
from ._rows import log_softmax_backward, softmax_backward  # noqa: E402

__all__ = ["softmax", "log_softmax", "logsumexp", "sigmoid", "isa", "__version__", "attention", "attention_backward",
           "softmax_backward", "log_softmax_backward", "cross_entropy",
           "softmax_topk", "topk", "sample", "gumbel_softmax", "gumbel_softmax_backward",
           "score", "ood_metrics", "calibration", "fit_temperature", "kl_templates", "NoOptimumError"]

# losses on softmax outputs (include/smx/smx_losses.h)
from ._smx import dice_loss, focal_loss, info_nce  # noqa: E402

__all__ += ["focal_loss", "dice_loss", "info_nce"]

# the op table's target losses (class TLOSS: sdpo_loss, spherical_z_loss, ...), made from the table
from ._losses import LOSSES as _TLOSSES  # noqa: E402

globals().update(_TLOSSES)
__all__ += list(_TLOSSES)

# MultiMax (Zhou et al. 2024) and its gradient
from ._smx import multimax, multimax_backward  # noqa: E402

__all__ += ["multimax", "multimax_backward"]
from ._sparse import (entmax, entmax15, entmax15_backward, entmax15_loss, entmax_backward, entmax_loss,  # noqa: E402
                      sparsemax, sparsemax_backward, sparsemax_loss, sparsemax_sort)

__all__ += ["sparsemax", "sparsemax_sort", "entmax15", "entmax", "sparsemax_backward", "entmax15_backward",
            "entmax_backward", "sparsemax_loss", "entmax15_loss", "entmax_loss"]

from ._norm import (kd_loss, mixture_log_softmax, mixture_log_softmax_backward, adaptive_softmax, adaptive_softmax_backward, sa_softmax, sa_softmax_backward, sigmoid,
                    sigmoid_backward, softpick, softpick_backward, softplus_l1, softplus_l1_backward, ssmax,
                    ssmax_backward, standardize_softmax, standardize_softmax_backward, topk_softmax,
                    topk_softmax_backward)

__all__ += ["softpick", "softpick_backward", "ssmax", "ssmax_backward", "sa_softmax", "sa_softmax_backward",
            "adaptive_softmax", "adaptive_softmax_backward", "topk_softmax", "topk_softmax_backward",
            "sigmoid_backward", "softplus_l1", "softplus_l1_backward", "standardize_softmax",
            "standardize_softmax_backward", "kd_loss", "mixture_log_softmax", "mixture_log_softmax_backward"]

# Noisy Softmax (Chen, Deng and Du 2017): the loss and its Philox noise
from ._smx import noisy_softmax_loss, noisy_softmax_noise  # noqa: E402

__all__ += ["noisy_softmax_loss", "noisy_softmax_noise"]

# Feature-based OOD scores (Mahalanobis, kNN, ViM, residual, ReAct): smx_features.h, docs/scores.md section 8
from ._features import FeatureOOD  # noqa: E402

__all__ += ["FeatureOOD"]
