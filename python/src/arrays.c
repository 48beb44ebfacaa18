/* NumPy arrays in and out: see arrays.h. */
#include "arrays.h"

static int dtype_of(int type_num, smx_op_dtype *dt) {
  switch (type_num) {
  case NPY_HALF: *dt = SMX_OP_F16; return 1;
  case NPY_FLOAT: *dt = SMX_OP_F32; return 1;
  case NPY_DOUBLE: *dt = SMX_OP_F64; return 1;
  default: return 0;
  }
}

static void raise_dtype(const char *fn, const char *what, PyArray_Descr *d) {
  PyObject *name = PyObject_Str((PyObject *)d);
  if (!name) return;
  if (PyDataType_ISINTEGER(d) || PyDataType_ISBOOL(d)) {
    PyErr_Format(PyExc_TypeError,
                 "%s: %s has dtype %U; smx takes float16, float32 or float64: cast first, e.g. a.astype(numpy.float32)",
                 fn, what, name);
  } else {
    PyErr_Format(PyExc_TypeError, "%s: %s has unsupported dtype %U; smx takes float16, float32 or float64", fn, what,
                 name);
  }
  Py_DECREF(name);
}

static PyArrayObject *input(const char *fn, const char *what, PyObject *a, smx_op_dtype *dt, int ints_as_f64,
                            int bf16) {
  /* Check the dtype first so that an unsupported array is never copied. */
  PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_O(a);
  if (!arr) return NULL;
  if (ints_as_f64 && !bf16 && PyArray_ISINTEGER(arr)) {
    PyArrayObject *f = (PyArrayObject *)PyArray_FromArray(arr, PyArray_DescrFromType(NPY_DOUBLE), NPY_ARRAY_ALIGNED);
    Py_DECREF(arr);
    if (!f) return NULL;
    arr = f;
  }
  if (bf16 && (PyArray_TYPE(arr) == NPY_INT16 || PyArray_TYPE(arr) == NPY_UINT16)) {
    *dt = SMX_OP_BF16;
  } else if (bf16 || !dtype_of(PyArray_TYPE(arr), dt)) {
    raise_dtype(fn, what, PyArray_DESCR(arr));
    Py_DECREF(arr);
    return NULL;
  }
  if (PyArray_ISALIGNED(arr) && PyArray_ISNOTSWAPPED(arr)) return arr;
  /* Misaligned or byte-swapped: the one case that needs a copy. */
  PyArrayObject *c = (PyArrayObject *)PyArray_FromArray(arr, PyArray_DescrFromType(PyArray_TYPE(arr)),
                                                        NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED | NPY_ARRAY_FORCECAST);
  Py_DECREF(arr);
  return c;
}

PyArrayObject *smx_py_input(const char *fn, PyObject *a, smx_op_dtype *dt) {
  return input(fn, "the input", a, dt, 0, 0);
}

PyArrayObject *smx_py_input_real(const char *fn, PyObject *a, smx_op_dtype *dt) {
  return input(fn, "the input", a, dt, 1, 0);
}

PyArrayObject *smx_py_input_named(const char *fn, const char *what, PyObject *a, int bf16, smx_op_dtype *dt) {
  return input(fn, what, a, dt, 1, bf16);
}

int smx_py_check_out(const char *fn, PyObject *out, PyArrayObject *x, int ndim, const npy_intp *shape) {
  if (!PyArray_Check(out)) {
    PyErr_Format(PyExc_TypeError, "%s: out must be a numpy.ndarray, not %.100s", fn, Py_TYPE(out)->tp_name);
    return -1;
  }
  PyArrayObject *o = (PyArrayObject *)out;
  if (PyArray_TYPE(o) != PyArray_TYPE(x)) {
    PyObject *want = PyObject_Str((PyObject *)PyArray_DESCR(x)), *got = PyObject_Str((PyObject *)PyArray_DESCR(o));
    if (want && got)
      PyErr_Format(PyExc_TypeError, "%s: out has dtype %U, expected %U (the result's dtype)", fn, got, want);
    Py_XDECREF(want);
    Py_XDECREF(got);
    return -1;
  }
  int same = PyArray_NDIM(o) == ndim;
  for (int d = 0; same && d < ndim; d++) same = PyArray_DIM(o, d) == shape[d];
  if (!same) {
    PyObject *want = PyTuple_New(ndim);
    if (!want) return -1;
    for (int d = 0; d < ndim; d++) PyTuple_SET_ITEM(want, d, PyLong_FromSsize_t(shape[d]));
    PyObject *got = PyObject_GetAttrString(out, "shape");
    if (got) PyErr_Format(PyExc_ValueError, "%s: out has shape %R, expected %R", fn, got, want);
    Py_XDECREF(got);
    Py_DECREF(want);
    return -1;
  }
  if (!PyArray_ISWRITEABLE(o)) {
    PyErr_Format(PyExc_ValueError, "%s: out is read-only", fn);
    return -1;
  }
  if (!PyArray_ISALIGNED(o) || !PyArray_ISNOTSWAPPED(o)) {
    PyErr_Format(PyExc_ValueError, "%s: out must be aligned and in native byte order", fn);
    return -1;
  }
  for (int d = 0; d < ndim && PyArray_SIZE(o) > 0; d++) {  /* no elements, nothing to overlap */
    if (PyArray_DIM(o, d) > 1 && PyArray_STRIDE(o, d) == 0) {
      PyErr_Format(PyExc_ValueError, "%s: out has a zero stride (dimension %d): its elements overlap", fn, d);
      return -1;
    }
  }
  return 0;
}

static void span(PyArrayObject *a, char **lo, char **hi) {
  char *l = PyArray_BYTES(a), *h = PyArray_BYTES(a);
  for (int d = 0; d < PyArray_NDIM(a); d++) {
    npy_intp ext = (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
    if (ext < 0) l += ext; else h += ext;
  }
  *lo = l;
  *hi = h + PyArray_ITEMSIZE(a);
}

int smx_py_spans_overlap(PyArrayObject *a, PyArrayObject *b) {
  if (PyArray_SIZE(a) == 0 || PyArray_SIZE(b) == 0) return 0;
  char *alo, *ahi, *blo, *bhi;
  span(a, &alo, &ahi);
  span(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

int smx_py_same_elements(PyArrayObject *a, PyArrayObject *b) {
  if (PyArray_BYTES(a) != PyArray_BYTES(b) || PyArray_NDIM(a) != PyArray_NDIM(b)) return 0;
  for (int d = 0; d < PyArray_NDIM(a); d++) {
    if (PyArray_DIM(a, d) != PyArray_DIM(b, d)) return 0;
    if (PyArray_DIM(a, d) > 1 && PyArray_STRIDE(a, d) != PyArray_STRIDE(b, d)) return 0;
  }
  return 1;
}
