/*
 * The Fenchel-Young losses of sparsemax, entmax15 and entmax for Python: the C library's loss entries on
 * C-contiguous 2-D arrays that python/smx/_sparse.py prepares. op: 0 sparsemax, 1 entmax15, 2 entmax
 * (alpha). The GIL is released while computing.
 */
#include "bindings.h"

#include "arrays.h"
#include "options.h"
#include "smx/smx.h"

static int rows2d(PyObject *o, PyArrayObject **a, int writable) {
  if (!PyArray_Check(o)) { PyErr_SetString(PyExc_TypeError, "expected an ndarray"); return -1; }
  *a = (PyArrayObject *)o;
  if (PyArray_NDIM(*a) != 2 || !PyArray_IS_C_CONTIGUOUS(*a) || !PyArray_ISNOTSWAPPED(*a) ||
      (writable && !PyArray_ISWRITEABLE(*a))) {
    PyErr_SetString(PyExc_ValueError, "expected a C-contiguous, native, 2-D array");
    return -1;
  }
  return 0;
}

static PyObject *status_error(smx_status s) {
  PyErr_Format(s == SMX_E_NOMEM ? PyExc_MemoryError : PyExc_ValueError, "smx: %s", smx_status_string(s));
  return NULL;
}

const char smx_py_sparse_loss_rows_doc[] =
    "_sparse_loss_rows(op, logits, targets, alpha, reduction, ignore_index, grad_scale, threads, masked_nan, "
    "loss, grad): the Fenchel-Young losses on C-contiguous arrays";

PyObject *smx_py_sparse_loss_rows(PyObject *self, PyObject *args) {
  (void)self;
  int op, reduction, threads, masked_nan;
  double alpha, grad_scale;
  long long ignore;
  PyObject *xo, *to, *lo, *go;
  PyArrayObject *x, *tg, *l, *g = NULL;
  if (!PyArg_ParseTuple(args, "iOOdiLdiiOO", &op, &xo, &to, &alpha, &reduction, &ignore, &grad_scale, &threads,
                        &masked_nan, &lo, &go))
    return NULL;
  if (rows2d(xo, &x, 0)) return NULL;
  if (go != Py_None && rows2d(go, &g, 1)) return NULL;
  if (!PyArray_Check(to) || !PyArray_Check(lo)) { PyErr_SetString(PyExc_TypeError, "expected ndarrays"); return NULL; }
  tg = (PyArrayObject *)to;
  l = (PyArrayObject *)lo;
  int t = PyArray_TYPE(x);
  size_t rows = (size_t)PyArray_DIM(x, 0), cols = (size_t)PyArray_DIM(x, 1);
  if (PyArray_TYPE(tg) != NPY_INT64 || !PyArray_IS_C_CONTIGUOUS(tg) || (size_t)PyArray_SIZE(tg) != rows ||
      PyArray_TYPE(l) != t || !PyArray_IS_C_CONTIGUOUS(l) || !PyArray_ISWRITEABLE(l) ||
      (size_t)PyArray_SIZE(l) != (reduction == SMX_REDUCTION_NONE ? rows : 1) ||
      (g && (PyArray_TYPE(g) != t || (size_t)PyArray_DIM(g, 0) != rows || (size_t)PyArray_DIM(g, 1) != cols))) {
    PyErr_SetString(PyExc_ValueError, "targets, loss or grad do not match the logits");
    return NULL;
  }
  smx_loss_ext e = SMX_LOSS_EXT_INIT;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0u, smx_py_threads(threads), &e };
  e.reduction = (smx_reduction)reduction;
  e.ignore_index = ignore;
  e.grad_scale = grad_scale;
  o.flags = masked_nan ? SMX_FLAG_MASKED_ROW_NAN : 0u;
  const void *xp = PyArray_DATA(x);
  const int64_t *tp = PyArray_DATA(tg);
  void *lp = PyArray_DATA(l), *gp = g ? PyArray_DATA(g) : NULL;
  smx_status s = SMX_E_INVALID_ARG;
  Py_BEGIN_ALLOW_THREADS
  if (t == NPY_FLOAT32) {
    if (op == 0) s = smx_sparsemax_loss_f32(xp, cols, tp, lp, gp, cols, rows, cols, &o);
    else if (op == 1) s = smx_entmax15_loss_f32(xp, cols, tp, lp, gp, cols, rows, cols, &o);
    else s = smx_entmax_loss_f32(xp, cols, tp, lp, gp, cols, rows, cols, alpha, &o);
  } else if (t == NPY_FLOAT64) {
    if (op == 0) s = smx_sparsemax_loss_f64(xp, cols, tp, lp, gp, cols, rows, cols, &o);
    else if (op == 1) s = smx_entmax15_loss_f64(xp, cols, tp, lp, gp, cols, rows, cols, &o);
    else s = smx_entmax_loss_f64(xp, cols, tp, lp, gp, cols, rows, cols, alpha, &o);
  }
  Py_END_ALLOW_THREADS
  if (s != SMX_OK) return status_error(s);
  Py_RETURN_NONE;
}
