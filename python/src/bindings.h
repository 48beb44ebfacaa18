/*
 * The functions of the module's method table (module.c) by the file that defines them: the one header of
 * prototypes the binding files share. Their helpers have their own headers (arrays.h, matrix.h, options.h,
 * walk.h; ops.h for the op table's generic entries, variants_loss.h for what the losses share); the
 * hand-written docstrings are in docs.h (module.c only).
 */
#ifndef SMX_PY_BINDINGS_H
#define SMX_PY_BINDINGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* attention.c: smx.attention, attention_backward */
PyObject *smx_py_attention(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_attention_doc[];
PyObject *smx_py_attention_backward(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_attention_backward_doc[];

/* lm_ops.c: the language-model functions (include/smx/smx_grad.h and smx_topk.h) */
PyObject *smx_py_cross_entropy(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_softmax_topk(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_topk(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_sample(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_gumbel_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_gumbel_softmax_backward(PyObject *self, PyObject *args, PyObject *kwargs);

/* score_ops.c: the scores functions (include/smx/smx_scores.h); smx.NoOptimumError, created by the module's
 * init (a ValueError subclass) */
extern PyObject *smx_py_no_optimum_error;
PyObject *smx_py_score(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_ood_metrics(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_calibration(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_fit_temperature(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_kl_templates(PyObject *self, PyObject *args, PyObject *kwargs);

/* feature_ops.c: the private functions behind smx.FeatureOOD (include/smx/smx_features.h) */
PyObject *smx_py_feature_fit(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_feature_score(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_feature_save(PyObject *self, PyObject *args);
PyObject *smx_py_feature_load(PyObject *self, PyObject *args);
PyObject *smx_py_feature_info(PyObject *self, PyObject *model);
PyObject *smx_py_feature_requires(PyObject *self, PyObject *method);

/* variants_multi.c: smx.multimax, multimax_backward */
PyObject *smx_py_multimax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_multimax_backward(PyObject *self, PyObject *args, PyObject *kwargs);

/* variants_noisy.c: smx.noisy_softmax_loss, noisy_softmax_noise */
PyObject *smx_py_noisy_softmax_loss(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_noisy_softmax_noise(PyObject *self, PyObject *args, PyObject *kwargs);

/* variants_norm.c: kd_loss and the mixture of softmaxes for python/smx/_norm.py (the row variants go
 * through the generic _rows of ops.c) */
PyObject *smx_py_kd_loss(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_kd_loss_doc[];
PyObject *smx_py_mixture(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_mixture_doc[];

/* variants_sparse.c: the Fenchel-Young losses of sparsemax / entmax for python/smx/_sparse.py (the maps and
 * their VJPs go through the generic _rows) */
PyObject *smx_py_sparse_loss_rows(PyObject *self, PyObject *args);
extern const char smx_py_sparse_loss_rows_doc[];

#endif
