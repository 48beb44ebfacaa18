/*
 * The functions of the module's method table (module.c), by the file that defines them: one list,
 * SMX_PY_METHODS, from which module.c makes the table and this header the prototypes, so a binding is one
 * line here. Their helpers have their own headers (arrays.h, matrix.h, options.h, walk.h; ops.h for the op
 * table's generic entries, variants_loss.h for what the losses share); the hand-written docstrings are
 * module.c's and docs.h's (PyDoc_STRVAR, module.c only) or the extern strings declared below.
 */
#ifndef SMX_PY_BINDINGS_H
#define SMX_PY_BINDINGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* A calling convention: its C signature and its METH_ flags. */
#define SMX_PY_SIG_KW (PyObject * self, PyObject * args, PyObject * kwargs)
#define SMX_PY_SIG_VA (PyObject * self, PyObject * args)
#define SMX_PY_SIG_O (PyObject * self, PyObject * arg)
#define SMX_PY_SIG_NOARGS (PyObject * self, PyObject * unused)
#define SMX_PY_FLAGS_KW (METH_VARARGS | METH_KEYWORDS)
#define SMX_PY_FLAGS_VA METH_VARARGS
#define SMX_PY_FLAGS_O METH_O
#define SMX_PY_FLAGS_NOARGS METH_NOARGS

/* X(Python name, C function smx_py_<fn>, calling convention, docstring) */
#define SMX_PY_METHODS(X)                                                                                  \
  /* ops.c: the row functions, and _rows, any row operation of the op table over strided arrays          \
   * (python/smx/_rows.py); the table's rows and names */                                                \
  X(softmax, softmax, KW, softmax_doc)                                                                     \
  X(log_softmax, log_softmax, KW, log_softmax_doc)                                                         \
  X(sigmoid, sigmoid, KW, sigmoid_doc)                                                                     \
  X(logsumexp, logsumexp, KW, logsumexp_doc)                                                               \
  X(_rows, rows, KW, smx_py_rows_doc)                                                                      \
  X(_op_info, op_info, O, smx_py_op_info_doc)                                                              \
  X(_op_names, op_names, NOARGS, smx_py_op_names_doc)                                                      \
  /* tloss.c: every target loss of the op table (class TLOSS; python/smx/_losses.py) */                   \
  X(_tloss, tloss, KW, smx_py_tloss_doc)                                                                   \
  /* attention.c */                                                                                        \
  X(attention, attention, KW, smx_py_attention_doc)                                                        \
  X(attention_backward, attention_backward, KW, smx_py_attention_backward_doc)                             \
  /* lm_ops.c: the language-model functions (include/smx/smx_grad.h and smx_topk.h) */                    \
  X(cross_entropy, cross_entropy, KW, cross_entropy_doc)                                                   \
  X(softmax_topk, softmax_topk, KW, softmax_topk_doc)                                                      \
  X(topk, topk, KW, topk_doc)                                                                              \
  X(sample, sample, KW, sample_doc)                                                                        \
  X(gumbel_softmax, gumbel_softmax, KW, gumbel_softmax_doc)                                                \
  X(gumbel_softmax_backward, gumbel_softmax_backward, KW, gumbel_softmax_backward_doc)                     \
  /* lm_rows.c: smx.torch.softmax_topk and sample on a tensor's memory (python/smx/torch/_lm.py) */         \
  X(_topk_rows, topk_rows, KW, smx_py_topk_rows_doc)                                                       \
  X(_sample_rows, sample_rows, KW, smx_py_sample_rows_doc)                                                 \
  /* score_ops.c: the scores functions (include/smx/smx_scores.h) */                                       \
  X(score, score, KW, score_doc)                                                                           \
  X(ood_metrics, ood_metrics, KW, ood_metrics_doc)                                                         \
  X(calibration, calibration, KW, calibration_doc)                                                         \
  X(fit_temperature, fit_temperature, KW, fit_temperature_doc)                                             \
  X(kl_templates, kl_templates, KW, kl_templates_doc)                                                      \
  /* variants_loss.c: losses on softmax outputs */                                                         \
  X(focal_loss, focal_loss, KW, focal_loss_doc)                                                            \
  X(info_nce, info_nce, KW, info_nce_doc)                                                                  \
  X(dice_loss, dice_loss, KW, dice_loss_doc)                                                               \
  /* variants_multi.c: MultiMax */                                                                         \
  X(multimax, multimax, KW, multimax_doc)                                                                  \
  X(multimax_backward, multimax_backward, KW, multimax_backward_doc)                                       \
  /* variants_noisy.c: Noisy Softmax */                                                                    \
  X(noisy_softmax_loss, noisy_softmax_loss, KW, noisy_softmax_loss_doc)                                    \
  X(noisy_softmax_noise, noisy_softmax_noise, KW, noisy_softmax_noise_doc)                                 \
  /* variants_sparse.c: the Fenchel-Young losses of sparsemax / entmax for python/smx/_sparse.py */       \
  X(_sparse_loss_rows, sparse_loss_rows, VA, smx_py_sparse_loss_rows_doc)                                  \
  /* variants_norm.c: kd_loss and the mixture of softmaxes for python/smx/_norm.py */                     \
  X(_mixture, mixture, KW, smx_py_mixture_doc)                                                             \
  X(_kd_loss, kd_loss, KW, smx_py_kd_loss_doc)                                                             \
  /* feature_ops.c: the private functions behind smx.FeatureOOD (include/smx/smx_features.h) */            \
  X(_feature_fit, feature_fit, KW, NULL)                                                                   \
  X(_feature_score, feature_score, KW, NULL)                                                               \
  X(_feature_save, feature_save, VA, NULL)                                                                 \
  X(_feature_load, feature_load, VA, NULL)                                                                 \
  X(_feature_info, feature_info, O, NULL)                                                                  \
  X(_feature_requires, feature_requires, O, NULL)

#define SMX_PY_PROTOTYPE(py, fn, kind, doc) PyObject *smx_py_##fn SMX_PY_SIG_##kind;
SMX_PY_METHODS(SMX_PY_PROTOTYPE)
#undef SMX_PY_PROTOTYPE

/* The docstrings kept next to their functions. */
extern const char smx_py_rows_doc[], smx_py_op_info_doc[], smx_py_op_names_doc[], smx_py_tloss_doc[],
    smx_py_attention_doc[], smx_py_attention_backward_doc[], smx_py_sparse_loss_rows_doc[], smx_py_mixture_doc[],
    smx_py_kd_loss_doc[], smx_py_topk_rows_doc[], smx_py_sample_rows_doc[];

/* score_ops.c: smx.NoOptimumError, created by the module's init (a ValueError subclass). */
extern PyObject *smx_py_no_optimum_error;

#endif
