/* Docstrings of the module's hand-written functions: language model, scores, MultiMax, Noisy Softmax,
 * the losses of variants_loss.c (module.c's table; included there only). */
#ifndef SMX_PY_DOCS_H
#define SMX_PY_DOCS_H

#define SMX_PY_F64_NOTE "float64 is computed in float32, the C API having no float64 form, and returned as float64"

PyDoc_STRVAR(cross_entropy_doc,
             "cross_entropy($module, /, logits, targets, reduction='mean', ignore_index=-100,\n"
             "              label_smoothing=0.0, z_loss=0.0, temperature=1.0, return_grad=False,\n"
             "              grad_scale=1.0, threads=0, masked_row='zero', grad_out=None)\n--\n\n"
             "Fused softmax cross-entropy, as torch.nn.functional.cross_entropy on logits / T with\n"
             "integer class targets, plus z_loss * logsumexp^2 per row. logits: [..., C] (the classes are\n"
             "the LAST axis, also for more than 2 dimensions, unlike torch's dim 1); targets: int32 or\n"
             "int64 (other integer dtypes are converted) of shape logits.shape[:-1]; a target outside\n"
             "[0, C) that is not ignore_index is a ValueError. reduction 'mean' (over the rows not\n"
             "ignored; all ignored: NaN) and 'sum' give a float, 'none' an array (ignored rows 0): float64\n"
             "for float64 logits, else float32. return_grad=True returns (loss, grad): the gradient of the\n"
             "returned loss wrt logits times grad_scale, in the logits' dtype (float16, float32, float64);\n"
             "grad_out= (an array of the logits' dtype and shape) receives it and is returned.\n"
             "float64 logits are computed in float64 (smx_cross_entropy_f64), the others in float32\n"
             "arithmetic; masked_row='nan' gives NaN\n"
             "for a row of all -inf as torch. Bounds: include/smx/smx_grad.h. The GIL is released.");
PyDoc_STRVAR(softmax_topk_doc,
             "softmax_topk($module, /, x, k, axis=-1, log=False, temperature=1.0, threads=0, masked_row='zero')\n"
             "--\n\n"
             "The k largest softmax(x / T) probabilities along axis, fused (one read, no probability row):\n"
             "(values float32, float64 for float64 x; indices int64), the axis replaced by k, values\n"
             "descending, equal logits lowest index first. log=True: log-softmax values. float16/32/64\n"
             "input, each by its own entry. A row with NaN: values NaN, indices -1. As torch.topk(torch.softmax(x), k) apart\n"
             "from the tie order (torch's is unspecified) and +inf / NaN rows. k > the axis: ValueError.");
PyDoc_STRVAR(topk_doc,
             "topk($module, /, x, k, axis=-1, threads=0)\n--\n\n"
             "The k largest values of x along axis (no normalisation): (values float32, float64 for float64\n"
             "x; indices int64), ties to the lowest index; a row with NaN gives NaN values and indices -1.");
PyDoc_STRVAR(sample_doc,
             "sample($module, /, logits, seed, step=0, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0,\n"
             "       greedy=False, method='multinomial', row_offset=0, threads=0)\n--\n\n"
             "One token per row (int64, shape logits.shape[:-1]) from softmax(logits / T) after the\n"
             "filters top_k (0 off), top_p (0 or 1 off) and min_p (0 off), in that order. Reproducible:\n"
             "Philox4x32-10 keyed by seed with counter (draw, row_offset + row, step), whatever threads.\n"
             "method 'multinomial' (inverse CDF) or 'gumbel' (Gumbel-max). greedy=True or temperature=0:\n"
             "argmax (lowest index). A row with NaN or with every logit -inf gives -1.\n"
             "float16/32/64 logits, each by its own entry (float64: (x - max) / T in double, then the\n"
             "float32 sampler). Rules: include/smx/smx_topk.h.");
PyDoc_STRVAR(gumbel_softmax_doc,
             "gumbel_softmax($module, /, logits, tau, seed, step=0, hard=False, threads=0, masked_row='zero')\n"
             "--\n\n"
             "softmax((logits + g) / tau) along the last axis with Gumbel noise g from Philox keyed by\n"
             "(seed, row, step, index) (the noise of sample(method='gumbel')). hard=True returns\n"
             "(y_hard, y_soft): the one-hot of argmax(logits + g) and the soft sample whose gradient the\n"
             "straight-through estimator uses. Output in the logits' dtype (float16 or float32;\n" SMX_PY_F64_NOTE
             ").");
PyDoc_STRVAR(gumbel_softmax_backward_doc,
             "gumbel_softmax_backward($module, /, y, dy, tau, threads=0)\n--\n\n"
             "dx = y * (dy - sum(dy * y)) / tau along the last axis for a soft sample y of gumbel_softmax\n"
             "(float32 result; float16/float64 inputs are converted to float32).");
PyDoc_STRVAR(score_doc,
             "score($module, /, logits, kind='msp', temperature=None, gen_gamma=None, gen_m=None,\n"
             "      templates=None, double=False, threads=0)\n--\n\n"
             "Per-sample OOD score of each row (last axis = classes), higher = more in-distribution,\n"
             "float64 of shape logits.shape[:-1]. kind: msp, max_logit (mls), energy, neg_entropy\n"
             "(entropy), margin_prob, margin_logit, gen, odin (no input perturbation), kl_matching (kl;\n"
             "needs templates=, K x K), nonuniformity. temperature: energy's (default 1) and odin's\n"
             "(default 1000). double=True: every score from double exponentials (1e-13, not f32\n"
             "rounding). The C API is float32 only:\n"
             "float16 and float64 logits are converted to float32. threads: 0 every core, 1 the calling\n"
             "thread (blocks of rows; the result does not depend on it). Definitions and bounds:\n"
             "include/smx/smx_scores.h.");
PyDoc_STRVAR(ood_metrics_doc,
             "ood_metrics($module, /, id_scores, ood_scores, tpr=0.95)\n--\n\n"
             "OOD detection metrics from 1-D scores (higher = more ID) as a dict, under the same keys\n"
             "as smx eval's JSON and report: auroc (= sklearn roc_auc_score), ap_in / ap_out (sklearn\n"
             "average_precision_score, ID / OOD positive), aupr_in_trapz / aupr_out_trapz (OpenOOD\n"
             "v1.5's trapezoid AUPR-In / AUPR-Out), fpr_idpos_exact (papers' FPR at TPR tpr, ID\n"
             "positive), fpr_oodpos_exact and fpr_oodpos_openood (OOD positive; OpenOOD v1.5),\n"
             "fpr_idpos_nearest / fpr_oodpos_nearest (hendrycks), thr_idpos_exact, thr_oodpos_exact,\n"
             "tpr, n_id, n_ood, n_tied_values. float64 scores are used as they are; float16/float32 in\n"
             "float32. NaN scores or an empty side: ValueError. Every key: docs/metrics.md.");
PyDoc_STRVAR(calibration_doc,
             "calibration($module, /, logits, labels, bins=15, temperature=1.0)\n--\n\n"
             "Top-label calibration of softmax(logits / T) against integer labels, as a dict: n, acc, nll,\n"
             "brier, ece, mce, adaptive_ece, classwise_ece, and the reliability diagram as arrays bin_lo,\n"
             "bin_hi (bins (lo, hi]), bin_count (int64), bin_conf, bin_acc (NaN for empty bins). The C\n"
             "API is float32 only: float16/float64 logits are converted to float32.");
PyDoc_STRVAR(fit_temperature_doc,
             "fit_temperature($module, /, logits, labels, return_info=False)\n--\n\n"
             "Temperature scaling: the T > 0 minimising the mean NLL of softmax(logits / T) on validation\n"
             "logits and labels. Returns T (return_info=True: (T, info dict with outcome, iterations,\n"
             "nll_at_1, nll_at_t, grad)). When no finite optimum exists it raises smx.NoOptimumError (a\n"
             "ValueError) whose .outcome is 'to_zero' (every sample right: NLL falls as T -> 0) or\n"
             "'to_infinity' (NLL falls as T -> inf) and .info the dict. float32 computation (float16/64\n"
             "converted).");
PyDoc_STRVAR(kl_templates_doc,
             "kl_templates($module, /, logits)\n--\n\n"
             "KL-matching templates (OpenOOD's kl_matching) from reference (validation) logits: a K x K\n"
             "float64 array whose row k is the mean softmax of the rows predicted k (one-hot e_k for a\n"
             "class never predicted; rows with NaN skipped). Pass it as score(..., 'kl_matching',\n"
             "templates=...). float32 computation (float16/64 converted).");


/* MultiMax (variants_multi.c) */
PyDoc_STRVAR(multimax_doc,
             "multimax($module, /, x, ranges=(0, 0, 0, 0), ts=(0, 0, 0, 0), axis=-1, temperature=1.0,\n"
             "         threads=0, masked_row='zero')\n--\n\n"
             "MultiMax (Zhou, Fritz and Keuper 2024): softmax(s(x) / T) along axis with the modulator\n"
             "s(x) = x + t0 (r0 - x)_+ + t1 (x - r1)_+ + t2 (r2 - x)_+^2 + t3 (x - r3)_+^2 (r = ranges,\n"
             "t = ts, four finite numbers each; zeros give softmax). float32 or float64 (float16 is\n"
             "computed as float32). Definition, special values and bound: include/smx/smx_multi.h.");
PyDoc_STRVAR(multimax_backward_doc,
             "multimax_backward($module, /, x, y, dy, ranges=(0, 0, 0, 0), ts=(0, 0, 0, 0), axis=-1,\n"
             "                  temperature=1.0, threads=0, params_grad=False)\n--\n\n"
             "Vector-Jacobian product of multimax: dx = s'(x) * y * (dy - sum(dy * y)) / T, from the input\n"
             "x, the output y and the upstream gradient dy (same shape and dtype). params_grad=True\n"
             "returns (dx, dranges, dts), the gradients of the four ranges and four scales summed over\n"
             "every row (float64 arrays of 4).");

/* Noisy Softmax (variants_noisy.c) */
PyDoc_STRVAR(noisy_softmax_loss_doc,
             "noisy_softmax_loss($module, /, logits, targets, norms, alpha=0.1, seed=0, step=0, mode='annealed',\n"
             "                   row_offset=0, reduction='mean', ignore_index=-100, return_grad=False,\n"
             "                   grad_scale=1.0, threads=0)\n"
             "--\n\n"
             "Noisy Softmax (Chen, Deng and Du, CVPR 2017): cross-entropy with the target logit f_t replaced by\n"
             "f_t - alpha * max(norms - f_t, 0) * |xi|, xi ~ N(0, 1) drawn from Philox keyed by (seed, row, step)\n"
             "(row: row_offset + the index in the flattened leading axes, so that a batch split in pieces draws\n"
             "as if whole; the values: smx.noisy_softmax_noise(rows, seed, step, row0)).\n"
             "norms: ||W_t|| ||X|| per row, of shape logits.shape[:-1] (finite, >= 0).\n"
             "mode 'annealed' (the paper's), 'free' (f_t - alpha |xi|; norms may be None) or 'amplitude'\n"
             "(f_t - alpha norms |xi|). alpha = 0 is cross-entropy.\n"
             "logits: [..., C], the classes on the LAST axis, float32 or float64 (float16 is computed and\n"
             "returned as float32); targets: integers of shape logits.shape[:-1]. reduction 'mean' (over the\n"
             "rows not ignored), 'sum' (a float) or 'none' (an array, ignored rows 0). return_grad=True returns\n"
             "(loss, grad, grad_norms): grad_scale times the gradients of the returned loss (of the sum of the\n"
             "row losses for 'none') with respect to the logits and the norms, xi held fixed. threads >= 0:\n"
             "results do not depend on it. The GIL is released. Definition, special values and bounds:\n"
             "include/smx/smx_noisy.h.");
PyDoc_STRVAR(noisy_softmax_noise_doc,
             "noisy_softmax_noise($module, /, rows, seed=0, step=0, row0=0)\n--\n\n"
             "The noise xi of smx.noisy_softmax_loss for rows row0 .. row0 + rows - 1 (float64): Box-Muller\n"
             "on the Philox4x32-10 block of key seed and counter (0xFFFFFFFF, row, step low, step high);\n"
             "the recipe is in include/smx/smx_noisy.h.");


/* losses on softmax outputs (variants_loss.c) */
#define SMX_PY_LOSS_COMMON_DOC                                                                              \
  "logits: [..., C], the classes on the LAST axis (as smx.cross_entropy), float32 or float64 (float16\n"  \
  "is computed and returned as float32); targets: integers of shape logits.shape[:-1].\n"                 \
  "reduction 'mean' (over the rows not ignored), 'sum' (a float) or 'none' (an array, ignored rows 0);\n" \
  "return_grad=True returns (loss, grad), grad_scale times the gradient of the returned loss (of the\n"   \
  "sum of the row losses for 'none') in the computing dtype. threads >= 0: results do not depend on it.\n" \
  "The GIL is released. Definitions, special values and bounds: include/smx/smx_losses.h.\n"

PyDoc_STRVAR(focal_loss_doc,
             "focal_loss($module, /, logits, targets, gamma=2.0, alpha=None, reduction='mean', ignore_index=-100,\n"
             "           return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "Focal loss on softmax (Lin et al. 2017): -alpha_t (1 - p_t)^gamma log p_t per row, p = softmax\n"
             "over the classes; gamma = 0 and no alpha is cross-entropy. alpha: None or C per-class weights.\n"
             SMX_PY_LOSS_COMMON_DOC);

PyDoc_STRVAR(info_nce_doc,
             "info_nce($module, /, sim, targets=None, temperature=1.0, symmetric=True, reduction='mean',\n"
             "         ignore_index=-100, return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "InfoNCE over a 2-D similarity matrix sim (rows x cols): the cross-entropy of each row of\n"
             "sim / temperature against its positive column (targets[r], default r: the diagonal);\n"
             "symmetric=True (CLIP) averages it with the cross-entropy of that column (down the rows).\n"
             "Symmetric targets must be distinct. reduction 'mean' / 'sum' give a float, 'none' one\n"
             "value per row; return_grad=True returns (loss, grad wrt sim). float32 or float64.\n"
             "Definition and bounds: include/smx/smx_losses.h. The GIL is released.");
PyDoc_STRVAR(dice_loss_doc,
             "dice_loss($module, /, logits, targets, smooth=1.0, reduction='mean', ignore_index=-100,\n"
             "          return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "Soft Dice loss of softmax(logits) (classes on the last axis) summed over every other axis:\n"
             "Dice_c = (2 sum P G + smooth) / (sum P + sum G + smooth) per class c; 'mean' gives\n"
             "1 - mean_c Dice_c, 'sum' sum_c (1 - Dice_c), 'none' the C values 1 - Dice_c. targets: integer\n"
             "classes of shape logits.shape[:-1] (one-hot; ignore_index rows left out) or a float array of\n"
             "the logits' shape (soft targets). return_grad=True returns (loss, grad). float32 or float64.\n"
             "Definition and bounds: include/smx/smx_losses.h. The GIL is released.");

#endif
