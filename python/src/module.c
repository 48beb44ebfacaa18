/*
 * The extension module smx._smx: method table, docstrings, version, ISA.
 * The public names are re-exported by python/smx/__init__.py.
 */
#define SMX_PY_IMPORT_ARRAY
#include "arrays.h"
#include "bindings.h"
#include "ops.h"
#include "variants_loss.h"
#include "smx/smx.h"

#define SMX_PY_COMMON_DOC                                                                                  \
  "a : array_like of float16, float32 or float64 (any strides, views, memory order); integers\n"        \
  "    (arrays, lists) are read as float64, and a 0-d input (a scalar) is one row of one element\n"      \
  "    (axis None, 0 or -1; the result is a scalar), as scipy.\n"                                           \
  "axis : int, the axis along which to normalise (default -1); None: all elements, as scipy.\n"         \
  "temperature : float > 0, finite; computes on a / temperature.\n"                                        \
  "out : ndarray of the result's shape and the input's dtype; may be the input itself (in place).\n"      \
  "algo : 'auto', 'three-pass', 'two-pass' or 'online'.\n"                                                 \
  "threads : int >= 0; 0 (default): every core this process may use; 1: the calling thread. Results\n" \
  "    never depend on it.\n"              \
  "masked_row : 'zero' (default: a row of all -inf gives 0, log-softmax -inf, logsumexp -inf)\n"          \
  "    or 'nan' (NaN, as torch.softmax).\n"                                                                \
  "+inf entries give the limit (1/k on the k entries equal to +inf, 0 elsewhere), where scipy\n"          \
  "and torch give NaN. The GIL is released while computing.\n"

PyDoc_STRVAR(softmax_doc,
             "softmax($module, /, a, axis=-1, temperature=1.0, out=None, algo='auto', threads=0, masked_row='zero')\n"
             "--\n\n"
             "exp(a / T) / sum(exp(a / T)) along axis, in the input's dtype.\n\n" SMX_PY_COMMON_DOC);
PyDoc_STRVAR(log_softmax_doc,
             "log_softmax($module, /, a, axis=-1, temperature=1.0, out=None, algo='auto', threads=0, "
             "masked_row='zero')\n"
             "--\n\n"
             "a / T - logsumexp(a / T) along axis, in the input's dtype.\n\n" SMX_PY_COMMON_DOC);
PyDoc_STRVAR(logsumexp_doc,
             "logsumexp($module, /, a, axis=-1, temperature=1.0, out=None, algo='auto', threads=0, "
             "masked_row='zero', keepdims=False)\n"
             "--\n\n"
             "log(sum(exp(a / T))) along axis (reduced; keepdims=True keeps it with length 1), in the\n"
             "input's dtype; a scalar for a 1-D input without out=. An empty axis gives -inf.\n\n"
             SMX_PY_COMMON_DOC);
PyDoc_STRVAR(sigmoid_doc,
             "sigmoid($module, /, a, temperature=1.0, out=None, threads=0)\n"
             "--\n\n"
             "1 / (1 + exp(-a / T)) elementwise, in the input's dtype (as scipy.special.expit at T = 1).\n"
             "NaN gives NaN, +inf 1, -inf 0. out may be the input itself (in place). Integers are read\n"
             "as float64. Within 3 eps (relative) of the exact value for results above the smallest\n"
             "normal number of the dtype. The GIL is released while computing.\n");
PyDoc_STRVAR(isa_doc,
             "isa($module, /)\n--\n\nThe kernel set in use: 'scalar', 'avx2', 'avx512', 'avx512bf16' or 'neon' "
             "(SMX_MAX_ISA caps it).");

#include "docs.h"

static PyObject *py_isa(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(smx_isa());
}

static PyMethodDef methods[] = {
    {"softmax", (PyCFunction)(void (*)(void))smx_py_softmax, METH_VARARGS | METH_KEYWORDS, softmax_doc},
    {"log_softmax", (PyCFunction)(void (*)(void))smx_py_log_softmax, METH_VARARGS | METH_KEYWORDS, log_softmax_doc},
    {"sigmoid", (PyCFunction)(void (*)(void))smx_py_sigmoid, METH_VARARGS | METH_KEYWORDS, sigmoid_doc},
    {"logsumexp", (PyCFunction)(void (*)(void))smx_py_logsumexp, METH_VARARGS | METH_KEYWORDS, logsumexp_doc},
    {"isa", py_isa, METH_NOARGS, isa_doc},
    {"attention", (PyCFunction)(void (*)(void))smx_py_attention, METH_VARARGS | METH_KEYWORDS, smx_py_attention_doc},
    {"attention_backward", (PyCFunction)(void (*)(void))smx_py_attention_backward, METH_VARARGS | METH_KEYWORDS,
     smx_py_attention_backward_doc},
#define SMX_PY_FN(name) {#name, (PyCFunction)(void (*)(void))smx_py_##name, METH_VARARGS | METH_KEYWORDS, name##_doc}
    SMX_PY_FN(cross_entropy),
    SMX_PY_FN(softmax_topk), SMX_PY_FN(topk), SMX_PY_FN(sample), SMX_PY_FN(gumbel_softmax),
    SMX_PY_FN(gumbel_softmax_backward), SMX_PY_FN(score), SMX_PY_FN(ood_metrics), SMX_PY_FN(calibration),
    SMX_PY_FN(fit_temperature), SMX_PY_FN(kl_templates),
    /* losses on softmax outputs (variants_loss.c) */
    SMX_PY_FN(focal_loss), SMX_PY_FN(info_nce), SMX_PY_FN(dice_loss),
    /* MultiMax (variants_multi.c) */
    SMX_PY_FN(multimax), SMX_PY_FN(multimax_backward),
    /* Noisy Softmax (variants_noisy.c) */
    SMX_PY_FN(noisy_softmax_loss), SMX_PY_FN(noisy_softmax_noise),
#undef SMX_PY_FN
    {"_sparse_loss_rows", smx_py_sparse_loss_rows, METH_VARARGS, smx_py_sparse_loss_rows_doc},
    {"_rows", (PyCFunction)(void (*)(void))smx_py_rows, METH_VARARGS | METH_KEYWORDS, smx_py_rows_doc},
    {"_op_info", smx_py_op_info, METH_O, smx_py_op_info_doc},
    {"_op_names", smx_py_op_names, METH_NOARGS, smx_py_op_names_doc},
    /* every target loss of the op table (tloss.c; python/smx/_losses.py) */
    {"_tloss", (PyCFunction)(void (*)(void))smx_py_tloss, METH_VARARGS | METH_KEYWORDS, smx_py_tloss_doc},
    {"_mixture", (PyCFunction)(void (*)(void))smx_py_mixture, METH_VARARGS | METH_KEYWORDS, smx_py_mixture_doc},
    {"_kd_loss", (PyCFunction)(void (*)(void))smx_py_kd_loss, METH_VARARGS | METH_KEYWORDS, smx_py_kd_loss_doc},
    /* smx.FeatureOOD's private functions (feature_ops.c) */
    {"_feature_fit", (PyCFunction)(void (*)(void))smx_py_feature_fit, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_feature_score", (PyCFunction)(void (*)(void))smx_py_feature_score, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_feature_save", smx_py_feature_save, METH_VARARGS, NULL},
    {"_feature_load", smx_py_feature_load, METH_VARARGS, NULL},
    {"_feature_info", smx_py_feature_info, METH_O, NULL},
    {"_feature_requires", smx_py_feature_requires, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_smx", "smx: exact, fast softmax over NumPy arrays (C extension).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__smx(void) {
  import_array();
  if (smx_version_number() != SMX_VERSION_NUMBER) {
    PyErr_Format(PyExc_ImportError, "smx: linked library %s does not match the header %d.%d.%d",
                 smx_version_string(), SMX_VERSION_MAJOR, SMX_VERSION_MINOR, SMX_VERSION_PATCH);
    return NULL;
  }
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  /* fit_temperature's "no finite optimum" (SMX_E_NO_OPTIMUM): a ValueError with .outcome and .info */
  if (!smx_py_no_optimum_error &&
      !(smx_py_no_optimum_error = PyErr_NewException("smx.NoOptimumError", PyExc_ValueError, NULL))) {
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(smx_py_no_optimum_error);
  if (PyModule_AddObject(m, "NoOptimumError", smx_py_no_optimum_error) < 0) {
    Py_DECREF(smx_py_no_optimum_error);
    Py_DECREF(m);
    return NULL;
  }
  if (PyModule_AddStringConstant(m, "__version__", smx_version_string()) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
