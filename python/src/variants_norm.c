/*
 * smx._smx._vnorm_rows: one call of a row variant's rows entry point on
 * C-contiguous 2-D float32 / float64 arrays (python/smx/_norm.py makes them:
 * the axis moved last, dtypes resolved), with the GIL released. No
 * arithmetic here: argument checks, then smx_op_rows on the op's table row (include/smx/smx_ops.h).
 */
#include "variants_norm.h"

#include <string.h>

#include "arrays.h"
#include "options.h"
#include "smx/smx.h"

const char smx_py_vnorm_rows_doc[] =
    "_vnorm_rows(name, backward, x, y, dy, out, p, k, lens, temperature, threads)\n--\n\n"
    "Internal: the rows form of the operation `name`, its C stem (smx_op_find; see smx.softpick and friends).";

/* _vnorm_rows's two parameter slots, p and k, as the op's parameter values (its table row, smx_ops.h): each
 * whole-number parameter (int, bool, size_t) takes k, each other one p; every op it serves has at most one of
 * each. k above 2^53 (not exact as a double) becomes 2^53: for top-k softmax, the only op with a count, every
 * k >= cols is the same softmax. */
static int vn_params(const smx_op_info *op, double p, Py_ssize_t k, double *v) {
  if (op->nvalues > 2) return -1;
  double kk = k < 0 ? 0.0 : (double)k > 0x1p53 ? 0x1p53 : (double)k;
  for (size_t i = 0; i < op->nparams; i++) {
    smx_param_type t = op->params[i].type;
    if (t == SMX_PARAM_DOUBLE4) return -1;
    v[i] = t == SMX_PARAM_DOUBLE ? p : kk;
  }
  return 0;
}

/* a C-contiguous 2-D array of the given type, or None (NULL, no error) */
static int take(PyObject *o, int type, const char *what, npy_intp *shape, const void **p) {
  *p = NULL;
  if (o == Py_None) return 0;
  if (!PyArray_Check(o) || PyArray_NDIM((PyArrayObject *)o) != 2 || PyArray_TYPE((PyArrayObject *)o) != type ||
      !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o)) {
    PyErr_Format(PyExc_TypeError, "_vnorm_rows: %s must be a C-contiguous 2-D array of one float type", what);
    return -1;
  }
  npy_intp *d = PyArray_DIMS((PyArrayObject *)o);
  if (shape[0] < 0) { shape[0] = d[0]; shape[1] = d[1]; }
  else if (d[0] != shape[0] || d[1] != shape[1]) {
    PyErr_Format(PyExc_ValueError, "_vnorm_rows: %s has another shape", what);
    return -1;
  }
  *p = PyArray_DATA((PyArrayObject *)o);
  return 0;
}

PyObject *smx_py_vnorm_rows(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"name", "backward", "x", "y", "dy", "out", "p", "k", "lens", "temperature", "threads", NULL};
  (void)self;
  const char *name;
  int backward;
  PyObject *x, *y, *dy, *out, *lens;
  double p, temperature;
  Py_ssize_t k;
  int threads;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "spOOOOdnOdi:_vnorm_rows", kw, &name, &backward, &x, &y, &dy, &out,
                                   &p, &k, &lens, &temperature, &threads))
    return NULL;
  if (!PyArray_Check(out)) {
    PyErr_SetString(PyExc_TypeError, "_vnorm_rows: out must be an array");
    return NULL;
  }
  int type = PyArray_TYPE((PyArrayObject *)out);
  if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
    PyErr_SetString(PyExc_TypeError, "_vnorm_rows: float32 or float64 only");
    return NULL;
  }
  npy_intp shape[2] = {-1, -1};
  smx_op_call a;
  memset(&a, 0, sizeof a);
  const void *o;
  if (take(out, type, "out", shape, &o) < 0 || take(x, type, "x", shape, &a.x) < 0 || take(y, type, "y", shape, &a.y) < 0 ||
      take(dy, type, "dy", shape, &a.dy) < 0)
    return NULL;
  a.out = (void *)o;
  a.backward = backward;
  a.dtype = type == NPY_FLOAT64 ? SMX_OP_F64 : SMX_OP_F32;
  a.rows = (size_t)shape[0];
  a.cols = (size_t)shape[1];
  a.ldx = a.ldy = a.lddy = a.ldo = a.cols;
  /* name is the op's C stem (the table's); messages use its Python name */
  const smx_op_info *op = NULL;
  double v[2];
  if (smx_op_find(name, &op) != SMX_OK || vn_params(op, p, k, v) < 0)
    return smx_py_raise_status(name, SMX_E_INVALID_ARG);
  a.params = v;
  a.nparams = op->nparams;
  if (lens != Py_None) {
    if (!PyArray_Check(lens) || PyArray_TYPE((PyArrayObject *)lens) != NPY_INT64 ||
        PyArray_NDIM((PyArrayObject *)lens) != 1 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)lens) ||
        PyArray_DIM((PyArrayObject *)lens, 0) != shape[0]) {
      PyErr_SetString(PyExc_ValueError, "_vnorm_rows: lens must be int64 with one entry per row");
      return NULL;
    }
    a.lens = PyArray_DATA((PyArrayObject *)lens);
  }
  smx_options opt = {SMX_ALGO_AUTO, temperature, 0, smx_py_threads(threads)};
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_op_rows(op, &a, &opt);
  Py_END_ALLOW_THREADS
  if (s != SMX_OK) return smx_py_raise_status(op->py ? op->py : name, s);
  Py_RETURN_NONE;
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
  smx_options o = {SMX_ALGO_AUTO, 0.0, 0, smx_py_threads(threads)};
  size_t rows = (size_t)shape[0], cols = (size_t)shape[1];
  smx_status st;
  Py_BEGIN_ALLOW_THREADS
  if (type == NPY_FLOAT64)
    st = smx_kd_loss_f64(sp, cols, tp, cols, rows, cols, temperature, standardize, (smx_reduction)reduction, lp,
                         (double *)gp, cols, &o);
  else
    st = smx_kd_loss_f32(sp, cols, tp, cols, rows, cols, temperature, standardize, (smx_reduction)reduction, lp,
                         (float *)gp, cols, &o);
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
  smx_options o = {SMX_ALGO_AUTO, 0.0, 0, smx_py_threads(threads)};
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
