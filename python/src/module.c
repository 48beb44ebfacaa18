/*
 * The extension module smx._smx: method table, docstrings, version, ISA.
 * The public names are re-exported by python/smx/__init__.py.
 */
#define SMX_PY_IMPORT_ARRAY
#include "arrays.h"
#include "bindings.h"
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

#define SMX_PY_ENTRY(py, fn, kind, doc) {#py, (PyCFunction)(void (*)(void))smx_py_##fn, SMX_PY_FLAGS_##kind, doc},
static PyMethodDef methods[] = {
    {"isa", py_isa, METH_NOARGS, isa_doc},
    SMX_PY_METHODS(SMX_PY_ENTRY)
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
