/*
 * smx._smx._topk_rows and _sample_rows: smx.torch.softmax_topk and smx.torch.sample on a tensor's own memory
 * (python/smx/torch/_lm.py). The input is a 2-D NumPy view, rows x cols, of the tensor: unit-stride columns
 * and rows evenly spaced at least a row apart, which is what the rows API's leading dimension describes, so
 * a strided tensor is read in place. float16, float32, float64, or bfloat16 bits (an int16 array with
 * bf16=True: NumPy has no bfloat16). The outputs are C-contiguous arrays that smx.torch allocated as
 * tensors. One library call with the GIL released.
 */
#include "bindings.h"

#include <stdint.h>

#include "arrays.h"
#include "lm_ops.h"
#include "matrix.h"
#include "options.h"
#include "smx/smx.h"

/* rows, cols and the leading dimension (in elements) of a 2-D input view; -1 with an exception if the rows
 * API cannot read it in place (smx.torch makes a contiguous copy before it comes to that). */
static int leading_dim(const char *fn, PyArrayObject *a, size_t *rows, size_t *cols, size_t *ld) {
  if (PyArray_NDIM(a) != 2) {
    PyErr_Format(PyExc_ValueError, "%s: x must be 2-D (rows x cols), got %d dimensions", fn, PyArray_NDIM(a));
    return -1;
  }
  npy_intp r = PyArray_DIM(a, 0), c = PyArray_DIM(a, 1), sr = PyArray_STRIDE(a, 0), sc = PyArray_STRIDE(a, 1);
  npy_intp es = PyArray_ITEMSIZE(a);
  *rows = (size_t)r;
  *cols = (size_t)c;
  *ld = c > 0 ? (size_t)c : 1;
  if (r == 0 || c == 0) return 0; /* nothing is read */
  if (c > 1 && sc != es) {
    PyErr_Format(PyExc_ValueError, "%s: x must have unit-stride rows (column stride %zd bytes)", fn, (Py_ssize_t)sc);
    return -1;
  }
  if (r > 1) {
    if (sr < 0 || sr % es != 0 || (size_t)(sr / es) < *ld) {
      PyErr_Format(PyExc_ValueError, "%s: x's rows must be evenly spaced at least a row apart (row stride %zd "
                   "bytes, rows of %zd elements of %zd bytes)", fn, (Py_ssize_t)sr, (Py_ssize_t)c, (Py_ssize_t)es);
      return -1;
    }
    *ld = (size_t)(sr / es);
  }
  return 0;
}

/* An output: a writable C-contiguous array of type `type`, rows x width (width < 0: 1-D of rows). */
static int check_out(const char *fn, const char *what, PyObject *o, int type, size_t rows, npy_intp width) {
  if (!PyArray_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a numpy.ndarray, not %.100s", fn, what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyArrayObject *a = (PyArrayObject *)o;
  int nd = width < 0 ? 1 : 2;
  if (PyArray_TYPE(a) != type || PyArray_NDIM(a) != nd || PyArray_DIM(a, 0) != (npy_intp)rows ||
      (nd == 2 && PyArray_DIM(a, 1) != width) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a) ||
      !PyArray_ISALIGNED(a)) {
    PyErr_Format(PyExc_ValueError, "%s: %s must be a writable C-contiguous array of %zu x %zd of type %d", fn, what,
                 rows, (Py_ssize_t)width, type);
    return -1;
  }
  return 0;
}

/* The result of a call that writes into the caller's arrays: None, or NULL with fn's error raised. */
static PyObject *none_or_raise(const char *fn, smx_status s) {
  if (s != SMX_OK) return smx_py_raise_status(fn, s);
  Py_INCREF(Py_None);
  return Py_None;
}

const char smx_py_topk_rows_doc[] =
    "_topk_rows(fn, x, values, indices, k, log, temperature, threads, masked_row, bf16)\n--\n\n"
    "Internal: smx_(log_)softmax_topk_rows on a 2-D view x (unit-stride columns, rows evenly spaced: read in\n"
    "place) into values (rows x k; float32, float64 for float64 x) and indices (rows x k, int64), both\n"
    "C-contiguous. fn names the caller in errors. Returns None.";

static smx_status topk_call(smx_op_dtype dt, int log, const void *x, size_t ld, void *v, int64_t *ix, size_t rows,
                            size_t cols, size_t k, const smx_options *o) {
  switch (dt) {
    case SMX_OP_F16:
      return log ? smx_log_softmax_topk_rows_f16(x, ld, v, ix, rows, cols, k, o)
                 : smx_softmax_topk_rows_f16(x, ld, v, ix, rows, cols, k, o);
    case SMX_OP_BF16:
      return log ? smx_log_softmax_topk_rows_bf16(x, ld, v, ix, rows, cols, k, o)
                 : smx_softmax_topk_rows_bf16(x, ld, v, ix, rows, cols, k, o);
    case SMX_OP_F64:
      return log ? smx_log_softmax_topk_rows_f64(x, ld, v, ix, rows, cols, k, o)
                 : smx_softmax_topk_rows_f64(x, ld, v, ix, rows, cols, k, o);
    default:
      return log ? smx_log_softmax_topk_rows_f32(x, ld, v, ix, rows, cols, k, o)
                 : smx_softmax_topk_rows_f32(x, ld, v, ix, rows, cols, k, o);
  }
}

PyObject *smx_py_topk_rows(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kw[] = {"fn", "x", "values", "indices", "k", "log", "temperature", "threads", "masked_row", "bf16",
                       NULL};
  const char *fn;
  PyObject *xo, *vo, *io, *ko, *temp, *thr, *mask;
  int log, bf16;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOOOpOOOp:_topk_rows", kw, &fn, &xo, &vo, &io, &ko, &log, &temp,
                                   &thr, &mask, &bf16))
    return NULL;
  smx_options o;
  if (smx_py_parse_options(fn, temp, NULL, thr, mask, &o) < 0) return NULL;
  long long k;
  if (smx_py_int_arg(fn, "k", ko, 0, INT64_MAX, &k) < 0) return NULL;
  smx_op_dtype dt;
  PyArrayObject *x = smx_py_input_named(fn, "input", xo, bf16, &dt);
  if (!x) return NULL;
  PyObject *res = NULL;
  size_t rows, cols, ld;
  if (leading_dim(fn, x, &rows, &cols, &ld) < 0) goto done;
  if ((unsigned long long)k > cols) {
    PyErr_Format(PyExc_ValueError, "%s: k = %lld is larger than the dimension (%zu)", fn, k, cols);
    goto done;
  }
  if (check_out(fn, "values", vo, dt == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT, rows, (npy_intp)k) < 0 ||
      check_out(fn, "indices", io, NPY_INT64, rows, (npy_intp)k) < 0)
    goto done;
  smx_status s = SMX_OK;
  if (rows > 0 && k > 0) {
    const void *xp = PyArray_DATA(x);
    void *vp = PyArray_DATA((PyArrayObject *)vo);
    int64_t *ip = PyArray_DATA((PyArrayObject *)io);
    Py_BEGIN_ALLOW_THREADS
    s = topk_call(dt, log, xp, ld, vp, ip, rows, cols, (size_t)k, &o);
    Py_END_ALLOW_THREADS
  }
  res = none_or_raise(fn, s);
done:
  Py_DECREF(x);
  return res;
}

const char smx_py_sample_rows_doc[] =
    "_sample_rows(fn, x, tokens, seed, step, temperature, top_k, top_p, min_p, method, row_offset, threads, bf16)\n"
    "--\n\nInternal: smx_sample_rows on a 2-D view x (as _topk_rows) into tokens (rows, int64, C-contiguous).\n"
    "Returns None.";

static smx_status sample_call(smx_op_dtype dt, const void *x, size_t ld, int64_t *tok, size_t rows, size_t cols,
                              const smx_sample_params *p, uint64_t seed, uint64_t step, const smx_options *o) {
  switch (dt) {
    case SMX_OP_F16: return smx_sample_rows_f16(x, ld, tok, rows, cols, p, seed, step, o);
    case SMX_OP_BF16: return smx_sample_rows_bf16(x, ld, tok, rows, cols, p, seed, step, o);
    case SMX_OP_F64: return smx_sample_rows_f64(x, ld, tok, rows, cols, p, seed, step, o);
    default: return smx_sample_rows_f32(x, ld, tok, rows, cols, p, seed, step, o);
  }
}

PyObject *smx_py_sample_rows(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static char *kw[] = {"fn", "x", "tokens", "seed", "step", "temperature", "top_k", "top_p", "min_p", "method",
                       "row_offset", "threads", "bf16", NULL};
  const char *fn;
  PyObject *xo, *to, *so, *stepo, *temp, *tk, *tp, *mp, *meth, *ro, *thr;
  int bf16;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOOOOOOOOOOp:_sample_rows", kw, &fn, &xo, &to, &so, &stepo, &temp,
                                   &tk, &tp, &mp, &meth, &ro, &thr, &bf16))
    return NULL;
  smx_sample_params p;
  uint64_t seed, step;
  if (smx_py_u64_arg(fn, "seed", so, &seed) < 0 || smx_py_u64_arg(fn, "step", stepo, &step) < 0 ||
      smx_py_sample_params(fn, temp, tk, tp, mp, NULL, meth, ro, &p) < 0)
    return NULL;
  smx_options o;
  if (smx_py_parse_options(fn, NULL, NULL, thr, NULL, &o) < 0) return NULL;
  smx_op_dtype dt;
  PyArrayObject *x = smx_py_input_named(fn, "logits", xo, bf16, &dt);
  if (!x) return NULL;
  PyObject *res = NULL;
  size_t rows, cols, ld;
  if (leading_dim(fn, x, &rows, &cols, &ld) < 0) goto done;
  if (cols == 0 && rows > 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last dimension of size 0)", fn);
    goto done;
  }
  if (check_out(fn, "tokens", to, NPY_INT64, rows, -1) < 0) goto done;
  smx_status s = SMX_OK;
  if (rows > 0) {
    const void *xp = PyArray_DATA(x);
    int64_t *tp_ = PyArray_DATA((PyArrayObject *)to);
    Py_BEGIN_ALLOW_THREADS
    s = sample_call(dt, xp, ld, tp_, rows, cols, &p, seed, step, &o);
    Py_END_ALLOW_THREADS
  }
  res = none_or_raise(fn, s);
done:
  Py_DECREF(x);
  return res;
}
