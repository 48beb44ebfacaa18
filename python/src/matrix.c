/* Inputs of the language-model and scores functions: see matrix.h. */
#include "matrix.h"

#include "options.h"

size_t smx_py_row_ld(PyArrayObject *a, size_t rows, size_t cols) {
  int nd = PyArray_NDIM(a);
  npy_intp es = PyArray_ITEMSIZE(a), step = 0, next = 0;
  if (nd < 1 || (cols > 1 && PyArray_STRIDE(a, nd - 1) != es)) return 0;
  if (rows <= 1) return cols ? cols : 1;
  for (int d = nd - 2; d >= 0; d--) { /* the row dims, innermost first, must merge into one of stride step */
    if (PyArray_DIM(a, d) == 1) continue;
    if (step == 0) step = PyArray_STRIDE(a, d);
    else if (PyArray_STRIDE(a, d) != next) return 0;
    next = PyArray_STRIDE(a, d) * PyArray_DIM(a, d);
  }
  if (step <= 0 || step % es != 0) return 0;
  return (size_t)(step / es) >= cols ? (size_t)(step / es) : 0;
}

int smx_py_matrix_in(const char *fn, const char *what, PyObject *a, PyObject *axis, int f32_only, smx_py_matrix *m) {
  memset(m, 0, sizeof *m);
  int in_place = (f32_only & SMX_PY_IN_PLACE) != 0;
  f32_only &= ~SMX_PY_IN_PLACE;
  if (axis == Py_None) {
    PyErr_Format(PyExc_TypeError, "%s: axis must be an int (the class axis), not None", fn);
    return -1;
  }
  smx_op_dtype dt;
  PyArrayObject *x = smx_py_input(fn, a, &dt);
  if (!x) return -1;
  int nd = PyArray_NDIM(x);
  if (nd < 1) {
    PyErr_Format(PyExc_ValueError, "%s: %s must have at least 1 dimension, got a 0-d array", fn, what);
    Py_DECREF(x);
    return -1;
  }
  if (smx_py_parse_axis(fn, axis, nd, &m->axis) < 0) {
    Py_DECREF(x);
    return -1;
  }
  if (m->axis != nd - 1) {
    PyArrayObject *s = (PyArrayObject *)PyArray_SwapAxes(x, m->axis, nd - 1);
    Py_DECREF(x);
    if (!(x = s)) return -1;
  }
  m->given = dt;
  m->dtype = (dt == SMX_OP_F16 && (f32_only == 0 || f32_only == SMX_PY_KEEP_F64)) ? SMX_OP_F16
             : (dt == SMX_OP_F64 && f32_only >= SMX_PY_KEEP_F64) ? SMX_OP_F64 : SMX_OP_F32;
  int type = m->dtype == SMX_OP_F16 ? NPY_HALF : m->dtype == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT;
  m->cols = (size_t)PyArray_DIM(x, nd - 1);
  m->rows = 1;
  for (int d = 0; d < nd - 1; d++) m->rows *= (size_t)PyArray_DIM(x, d);
  /* the caller's rows as they are: its dtype, aligned, native order, unit-stride rows evenly spaced */
  if (in_place && PyArray_TYPE(x) == type && PyArray_ISALIGNED(x) && PyArray_ISNOTSWAPPED(x) &&
      (m->ld = smx_py_row_ld(x, m->rows, m->cols)) != 0) {
    m->arr = x;
    return 0;
  }
  m->arr = (PyArrayObject *)PyArray_FromAny((PyObject *)x, PyArray_DescrFromType(type), 0, 0,
                                            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
  Py_DECREF(x);
  if (!m->arr) return -1;
  m->ld = m->cols ? m->cols : 1;
  return 0;
}

PyObject *smx_py_matrix_restore(const smx_py_matrix *m, PyObject *res) {
  if (!res) return NULL;
  int nd = PyArray_NDIM((PyArrayObject *)res);
  if (m->axis == nd - 1) return res;
  PyObject *s = PyArray_SwapAxes((PyArrayObject *)res, m->axis, nd - 1);
  Py_DECREF(res);
  return s;
}

PyArrayObject *smx_py_int_input(const char *fn, const char *what, PyObject *a, int want_type) {
  PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_O(a);
  if (!arr) return NULL;
  PyArray_Descr *d = PyArray_DESCR(arr);
  int t = PyArray_TYPE(arr);
  /* uint64 could not be converted to int64 without wrapping: refused like floats */
  if (!PyDataType_ISINTEGER(d) || t == NPY_ULONGLONG || (t == NPY_ULONG && sizeof(long) == 8)) {
    PyObject *name = PyObject_Str((PyObject *)d);
    if (name)
      PyErr_Format(PyExc_TypeError, "%s: %s must be an array of integers (int32 or int64), got dtype %U", fn, what,
                   name);
    Py_XDECREF(name);
    Py_DECREF(arr);
    return NULL;
  }
  int to = want_type >= 0 ? want_type : (t == NPY_INT32 ? NPY_INT32 : NPY_INT64);
  if (to == NPY_INT32 && t != NPY_INT32 && PyArray_SIZE(arr) > 0) {
    /* narrowing: refuse values that int32 cannot hold rather than wrap them */
    PyObject *mn = PyArray_Min(arr, NPY_MAXDIMS, NULL), *mx = mn ? PyArray_Max(arr, NPY_MAXDIMS, NULL) : NULL;
    long long lo = mn ? PyLong_AsLongLong(mn) : 0, hi = mx ? PyLong_AsLongLong(mx) : 0;
    Py_XDECREF(mn);
    Py_XDECREF(mx);
    if (PyErr_Occurred() || lo < INT32_MIN || hi > INT32_MAX) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "%s: %s has values outside the int32 range", fn, what);
      Py_DECREF(arr);
      return NULL;
    }
  }
  PyArrayObject *c = (PyArrayObject *)PyArray_FromAny((PyObject *)arr, PyArray_DescrFromType(to), 0, 0,
                                                      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED |
                                                          NPY_ARRAY_FORCECAST, NULL);
  Py_DECREF(arr);
  return c;
}

int smx_py_int_arg(const char *fn, const char *what, PyObject *o, long long lo, long long hi, long long *v) {
  long long r;
  int overflow;
  if (smx_py_parse_int(fn, what, o, &r, &overflow) < 0) return -1;
  if (overflow || r < lo || r > hi) {
    PyErr_Format(PyExc_ValueError, "%s: %s must be in [%lld, %lld], got %R", fn, what, lo, hi, o);
    return -1;
  }
  *v = r;
  return 0;
}

int smx_py_u64_arg(const char *fn, const char *what, PyObject *o, uint64_t *v) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be an int, not %.100s", fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  unsigned long long u = PyLong_AsUnsignedLongLong(i);
  Py_DECREF(i);
  if (u == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s: %s must be in [0, 2**64), got %R", fn, what, o);
    return -1;
  }
  *v = u;
  return 0;
}

int smx_py_real_arg(const char *fn, const char *what, PyObject *o, double *v) {
  if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o) || PyNumber_Check(o))) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a real number, not %.100s", fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  double r = PyFloat_AsDouble(o);
  if (r == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: %s must be a real number, not %.100s", fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  if (r != r) {
    PyErr_Format(PyExc_ValueError, "%s: %s must not be NaN", fn, what);
    return -1;
  }
  *v = r;
  return 0;
}

PyObject *smx_py_loss_result(int none, PyArrayObject *loss, PyArrayObject *grad, PyArrayObject *grad2) {
  PyObject *l;
  if (none) {
    Py_INCREF(loss);
    l = (PyObject *)loss;
  } else {
    l = PyFloat_FromDouble(PyArray_TYPE(loss) == NPY_DOUBLE ? *(double *)PyArray_DATA(loss)
                                                            : *(float *)PyArray_DATA(loss));
  }
  if (!l || !grad) return l;
  PyObject *r = grad2 ? PyTuple_Pack(3, l, (PyObject *)grad, (PyObject *)grad2) : PyTuple_Pack(2, l, (PyObject *)grad);
  Py_DECREF(l);
  return r;
}
