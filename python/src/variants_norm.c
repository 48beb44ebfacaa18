/*
 * smx._smx._kd_loss and _mixture: the distillation loss and the mixture of softmaxes on C-contiguous
 * arrays of one float type (python/smx/_norm.py makes them), with the GIL released. No arithmetic here.
 */
#include "bindings.h"

#include <string.h>

#include "arrays.h"
#include "options.h"
#include "smx/smx.h"

/* a C-contiguous 2-D array of the given type, or None (NULL, no error) */
static int take(PyObject *o, int type, const char *what, npy_intp *shape, const void **p) {
  *p = NULL;
  if (o == Py_None) return 0;
  if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != 2 || PyArray_TYPE((PyArrayObject *)o) != type ||
      !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous 2-D array of one float type", what);
    return -1;
  }
  npy_intp *d = PyArray_DIMS((PyArrayObject *)o);
  if (shape[0] < 0) { shape[0] = d[0]; shape[1] = d[1]; }
  else if (d[0] != shape[0] || d[1] != shape[1]) {
    PyErr_Format(PyExc_ValueError, "%s has another shape", what);
    return -1;
  }
  *p = PyArray_DATA((PyArrayObject *)o);
  return 0;
}

const char smx_py_kd_loss_doc[] =
    "_kd_loss(student, teacher, loss, grad, temperature, standardize, reduction, threads)\n--\n\n"
    "Internal: smx_kd_loss_* on C-contiguous 2-D arrays of one float type (see smx.kd_loss).";

PyObject *smx_py_kd_loss(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"student", "teacher", "loss", "grad", "temperature", "standardize", "reduction", "threads",
                       NULL};
  (void)self;
  PyObject *s, *t, *loss, *grad;
  double temperature;
  int standardize, reduction, threads;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOdpii:_kd_loss", kw, &s, &t, &loss, &grad, &temperature,
                                   &standardize, &reduction, &threads))
    return NULL;
  if (!PyArray_Check(s) || !PyArray_Check(loss)) {
    PyErr_SetString(PyExc_TypeError, "_kd_loss: arrays expected");
    return NULL;
  }
  int type = PyArray_TYPE((PyArrayObject *)s);
  if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
    PyErr_SetString(PyExc_TypeError, "_kd_loss: float32 or float64 only");
    return NULL;
  }
  npy_intp shape[2] = {-1, -1};
  const void *sp, *tp, *gp;
  if (take(s, type, "student", shape, &sp) < 0 || take(t, type, "teacher", shape, &tp) < 0 ||
      take(grad, type, "grad", shape, &gp) < 0)
    return NULL;
  if (PyArray_TYPE((PyArrayObject *)loss) != type || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)loss) ||
      PyArray_SIZE((PyArrayObject *)loss) != (reduction == SMX_REDUCTION_NONE ? shape[0] : 1)) {
    PyErr_SetString(PyExc_ValueError, "_kd_loss: loss has the wrong type or size");
    return NULL;
  }
  void *lp = PyArray_DATA((PyArrayObject *)loss);
  smx_loss_ext e = SMX_LOSS_EXT_INIT;   /* the options' temperature and reduction are KD's */
  e.reduction = (smx_reduction)reduction;
  smx_options o = {SMX_ALGO_AUTO, temperature, 0, smx_py_threads(threads), &e};
  size_t rows = (size_t)shape[0], cols = (size_t)shape[1];
  smx_status st;
  Py_BEGIN_ALLOW_THREADS
  if (type == NPY_FLOAT64)
    st = smx_kd_loss_f64(sp, cols, tp, cols, lp, (double *)gp, cols, rows, cols, standardize, &o);
  else
    st = smx_kd_loss_f32(sp, cols, tp, cols, lp, (float *)gp, cols, rows, cols, standardize, &o);
  Py_END_ALLOW_THREADS
  if (st != SMX_OK) return smx_py_raise_status("smx.kd_loss", st);
  Py_RETURN_NONE;
}

const char smx_py_mixture_doc[] =
    "_mixture(x, w, dy, out, dw, threads)\n--\n\n"
    "Internal: smx_mixture_log_softmax(_backward)_rows_* on C-contiguous arrays: x (rows, K, n), w (rows, K),\n"
    "dy (rows, n) or None; out: y (rows, n), or dx (rows, K, n) with dy; dw (rows, K) or None.";

static int c_array(PyObject *o, int type, int nd) {
  return PyArray_Check(o) && PyArray_TYPE((PyArrayObject *)o) == type && PyArray_NDIM((PyArrayObject *)o) == nd &&
         PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o);
}

PyObject *smx_py_mixture(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"x", "w", "dy", "out", "dw", "threads", NULL};
  (void)self;
  PyObject *x, *w, *dy, *out, *dw;
  int threads;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOi:_mixture", kw, &x, &w, &dy, &out, &dw, &threads))
    return NULL;
  if (!PyArray_Check(x)) goto bad;
  int type = PyArray_TYPE((PyArrayObject *)x);
  if ((type != NPY_FLOAT32 && type != NPY_FLOAT64) || !c_array(x, type, 3) || !c_array(w, type, 2)) goto bad;
  npy_intp rows = PyArray_DIM((PyArrayObject *)x, 0), k = PyArray_DIM((PyArrayObject *)x, 1),
           n = PyArray_DIM((PyArrayObject *)x, 2);
  if (PyArray_DIM((PyArrayObject *)w, 0) != rows || PyArray_DIM((PyArrayObject *)w, 1) != k) goto bad;
  int back = dy != Py_None;
  if (back && (!c_array(dy, type, 2) || PyArray_DIM((PyArrayObject *)dy, 0) != rows ||
               PyArray_DIM((PyArrayObject *)dy, 1) != n))
    goto bad;
  if (!c_array(out, type, back ? 3 : 2) || PyArray_SIZE((PyArrayObject *)out) != (back ? rows * k * n : rows * n))
    goto bad;
  if (dw != Py_None && (!back || !c_array(dw, type, 2) || PyArray_SIZE((PyArrayObject *)dw) != rows * k)) goto bad;
  smx_options o = {SMX_ALGO_AUTO, 0.0, 0, smx_py_threads(threads), NULL };
  void *xp = PyArray_DATA((PyArrayObject *)x), *wp = PyArray_DATA((PyArrayObject *)w),
       *op = PyArray_DATA((PyArrayObject *)out);
  void *gp = back ? PyArray_DATA((PyArrayObject *)dy) : NULL, *dwp = dw != Py_None ? PyArray_DATA((PyArrayObject *)dw) : NULL;
  size_t R = (size_t)rows, K = (size_t)k, N = (size_t)n;
  smx_status st;
  Py_BEGIN_ALLOW_THREADS
  if (type == NPY_FLOAT64)
    st = back ? smx_mixture_log_softmax_backward_rows_f64(xp, N, wp, K, gp, N, op, N, dwp, K, R, K, N, &o)
              : smx_mixture_log_softmax_rows_f64(xp, N, wp, K, op, N, R, K, N, &o);
  else
    st = back ? smx_mixture_log_softmax_backward_rows_f32(xp, N, wp, K, gp, N, op, N, dwp, K, R, K, N, &o)
              : smx_mixture_log_softmax_rows_f32(xp, N, wp, K, op, N, R, K, N, &o);
  Py_END_ALLOW_THREADS
  if (st != SMX_OK) return smx_py_raise_status("smx.mixture_log_softmax", st);
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "_mixture: C-contiguous arrays of one float type and matching shapes expected");
  return NULL;
}
