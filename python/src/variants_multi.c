/*
 * smx.multimax and smx.multimax_backward from NumPy: the input as a
 * C-contiguous float32 / float64 matrix along axis (matrix.h), the eight
 * parameters as doubles, one library call with the GIL released.
 */
#include "bindings.h"

#include <string.h>

#include "matrix.h"
#include "options.h"
#include "smx/smx.h"

/* four finite reals from a sequence (NULL: zeros) */
static int four(const char *fn, const char *what, PyObject *o, double v[4]) {
  memset(v, 0, 4 * sizeof(double));
  if (!o || o == Py_None) return 0;
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(o, PyArray_DescrFromType(NPY_DOUBLE), 0, 1,
                                                      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST,
                                                      NULL);
  if (!a) return -1;
  if (PyArray_SIZE(a) != 4) {
    PyErr_Format(PyExc_ValueError, "%s: %s must have 4 values", fn, what);
    Py_DECREF(a);
    return -1;
  }
  memcpy(v, PyArray_DATA(a), 4 * sizeof(double));
  Py_DECREF(a);
  for (int k = 0; k < 4; k++) {
    if (!isfinite(v[k])) {
      PyErr_Format(PyExc_ValueError, "%s: %s must be finite", fn, what);
      return -1;
    }
  }
  return 0;
}

static PyArrayObject *new_same(const smx_py_matrix *m) {
  return (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(m->arr), PyArray_DIMS(m->arr),
                                            m->dtype == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT);
}

PyObject *smx_py_multimax(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.multimax";
  static char *kw[] = {"x", "ranges", "ts", "axis", "temperature", "threads", "masked_row", NULL};
  PyObject *xo, *ro = NULL, *to = NULL, *axis = NULL, *temp = NULL, *thr = NULL, *mask = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOOOO:multimax", kw, &xo, &ro, &to, &axis, &temp, &thr, &mask))
    return NULL;
  double r[4], t[4];
  smx_options opt;
  if (four(fn, "ranges", ro, r) < 0 || four(fn, "ts", to, t) < 0) return NULL;
  if (smx_py_parse_options(fn, temp, NULL, thr, mask, &opt) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "x", xo, axis, SMX_PY_F32_F64, &m) < 0) return NULL;
  PyArrayObject *y = new_same(&m);
  PyObject *res = NULL;
  if (!y) goto done;
  smx_status s = SMX_OK;
  if (m.rows && m.cols) {
    const void *xp = PyArray_DATA(m.arr);
    void *yp = PyArray_DATA(y);
    Py_BEGIN_ALLOW_THREADS
    s = m.dtype == SMX_OP_F64 ? smx_multimax_rows_f64(xp, m.cols, yp, m.cols, m.rows, m.cols, r, t, &opt)
                              : smx_multimax_rows_f32(xp, m.cols, yp, m.cols, m.rows, m.cols, r, t, &opt);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    Py_DECREF(y);
    smx_py_raise_status(fn, s);
    goto done;
  }
  res = smx_py_matrix_restore(&m, (PyObject *)y);
done:
  Py_DECREF(m.arr);
  return res;
}

PyObject *smx_py_multimax_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.multimax_backward";
  static char *kw[] = {"x", "y", "dy", "ranges", "ts", "axis", "temperature", "threads", "params_grad", NULL};
  PyObject *xo, *yo, *dyo, *ro = NULL, *to = NULL, *axis = NULL, *temp = NULL, *thr = NULL, *pg = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOOOOO:multimax_backward", kw, &xo, &yo, &dyo, &ro, &to, &axis,
                                   &temp, &thr, &pg))
    return NULL;
  double r[4], t[4], dp[8];
  smx_options opt;
  if (four(fn, "ranges", ro, r) < 0 || four(fn, "ts", to, t) < 0) return NULL;
  if (smx_py_parse_options(fn, temp, NULL, thr, NULL, &opt) < 0) return NULL;
  int want_p = 0;
  if (pg && (want_p = PyObject_IsTrue(pg)) < 0) return NULL;
  smx_py_matrix m[3];
  PyObject *ins[3] = { xo, yo, dyo };
  const char *names[3] = { "x", "y", "dy" };
  int got = 0;
  PyObject *res = NULL;
  PyArrayObject *dx = NULL;
  for (; got < 3; got++)
    if (smx_py_matrix_in(fn, names[got], ins[got], axis, SMX_PY_F32_F64, &m[got]) < 0) goto done;
  for (int k = 1; k < 3; k++) {
    if (m[k].dtype != m[0].dtype || !PyArray_SAMESHAPE(m[k].arr, m[0].arr)) {
      PyErr_Format(PyExc_ValueError, "%s: x, y and dy must have one shape and one dtype", fn);
      goto done;
    }
  }
  if (!(dx = new_same(&m[0]))) goto done;
  smx_status s = SMX_OK;
  memset(dp, 0, sizeof dp);
  {
    const void *xp = PyArray_DATA(m[0].arr), *yp = PyArray_DATA(m[1].arr), *dyp = PyArray_DATA(m[2].arr);
    void *dxp = PyArray_DATA(dx);
    size_t n = m[0].cols, rows = m[0].rows;
    if (rows && n) {
      Py_BEGIN_ALLOW_THREADS
      s = m[0].dtype == SMX_OP_F64
              ? smx_multimax_backward_rows_f64(xp, n, yp, n, dyp, n, dxp, n, rows, n, r, t, want_p ? dp : NULL, &opt)
              : smx_multimax_backward_rows_f32(xp, n, yp, n, dyp, n, dxp, n, rows, n, r, t, want_p ? dp : NULL, &opt);
      Py_END_ALLOW_THREADS
    }
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  Py_INCREF(dx);
  PyObject *d = smx_py_matrix_restore(&m[0], (PyObject *)dx);
  if (!d || !want_p) {
    res = d;
    goto done;
  }
  npy_intp four_n = 4;
  PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &four_n, NPY_DOUBLE),
                *b = (PyArrayObject *)PyArray_SimpleNew(1, &four_n, NPY_DOUBLE);
  if (a && b) {
    memcpy(PyArray_DATA(a), dp, 4 * sizeof(double));
    memcpy(PyArray_DATA(b), dp + 4, 4 * sizeof(double));
    res = PyTuple_Pack(3, d, (PyObject *)a, (PyObject *)b);
  }
  Py_XDECREF(a);
  Py_XDECREF(b);
  Py_DECREF(d);
done:
  Py_XDECREF(dx);
  for (int k = 0; k < got; k++) Py_DECREF(m[k].arr);
  return res;
}
