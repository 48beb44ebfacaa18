/*
 * smx._smx._vnorm_rows: one call of a row variant's rows entry point on
 * C-contiguous 2-D float32 / float64 arrays (python/smx/_norm.py makes them:
 * the axis moved last, dtypes resolved), with the GIL released. No
 * arithmetic here: argument checks and the dispatch by name.
 */
#include "variants_norm.h"

#include <string.h>

#include "arrays.h"
#include "options.h"
#include "smx/smx.h"

const char smx_py_vnorm_rows_doc[] =
    "_vnorm_rows(name, backward, x, y, dy, out, p, k, lens, temperature, threads)\n--\n\n"
    "Internal: the rows form of the variant `name` (see smx.softpick and friends).";

typedef struct vn_args {
  const char *name;
  int backward, f64;
  const void *x, *y, *dy;
  void *out;
  size_t rows, cols;
  double p;
  size_t k;
  const int64_t *lens;
  smx_options opt;
} vn_args;

#define FWD_ARGS(T) (const T *)a->x, a->cols, (T *)a->out, a->cols, a->rows, a->cols
#define BWD_ARGS(T)                                                                                        \
  (const T *)a->x, a->cols, (const T *)a->y, a->cols, (const T *)a->dy, a->cols, (T *)a->out, a->cols, a->rows, \
      a->cols
#define DISPATCH(T, sfx)                                                                                    \
  do {                                                                                                     \
    if (!a->backward) {                                                                                    \
      if (!strcmp(n, "softpick")) return smx_softpick_rows_##sfx(FWD_ARGS(T), a->p, &a->opt);              \
      if (!strcmp(n, "ssmax")) return smx_ssmax_rows_##sfx(FWD_ARGS(T), a->p, a->lens, &a->opt);           \
      if (!strcmp(n, "sa_softmax")) return smx_sa_softmax_rows_##sfx(FWD_ARGS(T), (int)a->k, &a->opt);     \
      if (!strcmp(n, "adaptive_softmax")) return smx_adaptive_softmax_rows_##sfx(FWD_ARGS(T), &a->opt);    \
      if (!strcmp(n, "topk_softmax")) return smx_topk_softmax_rows_##sfx(FWD_ARGS(T), a->k, &a->opt);      \
      if (!strcmp(n, "sigmoid")) return smx_sigmoid_bias_rows_##sfx(FWD_ARGS(T), a->p, &a->opt);           \
      if (!strcmp(n, "softplus_l1")) return smx_softplus_l1_rows_##sfx(FWD_ARGS(T), &a->opt);              \
      if (!strcmp(n, "standardize_softmax"))                                                               \
        return smx_standardize_softmax_rows_##sfx(FWD_ARGS(T), a->p, &a->opt);                             \
    } else {                                                                                               \
      if (!strcmp(n, "softpick")) return smx_softpick_backward_rows_##sfx(BWD_ARGS(T), a->p, &a->opt);     \
      if (!strcmp(n, "ssmax")) return smx_ssmax_backward_rows_##sfx(BWD_ARGS(T), a->p, a->lens, &a->opt);  \
      if (!strcmp(n, "sa_softmax"))                                                                        \
        return smx_sa_softmax_backward_rows_##sfx(BWD_ARGS(T), (int)a->k, &a->opt);                        \
      if (!strcmp(n, "adaptive_softmax")) return smx_adaptive_softmax_backward_rows_##sfx(BWD_ARGS(T), &a->opt); \
      if (!strcmp(n, "topk_softmax")) return smx_topk_softmax_backward_rows_##sfx(BWD_ARGS(T), a->k, &a->opt); \
      if (!strcmp(n, "sigmoid")) return smx_sigmoid_backward_rows_##sfx(BWD_ARGS(T), &a->opt);             \
      if (!strcmp(n, "softplus_l1")) return smx_softplus_l1_backward_rows_##sfx(BWD_ARGS(T), &a->opt);     \
      if (!strcmp(n, "standardize_softmax"))                                                               \
        return smx_standardize_softmax_backward_rows_##sfx(BWD_ARGS(T), a->p, &a->opt);                    \
    }                                                                                                      \
  } while (0)

static smx_status call(const vn_args *a) {
  const char *n = a->name;
  if (a->f64) DISPATCH(double, f64);
  else DISPATCH(float, f32);
  return SMX_E_INVALID_ARG;
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
  vn_args a;
  memset(&a, 0, sizeof a);
  const void *o;
  if (take(out, type, "out", shape, &o) < 0 || take(x, type, "x", shape, &a.x) < 0 || take(y, type, "y", shape, &a.y) < 0 ||
      take(dy, type, "dy", shape, &a.dy) < 0)
    return NULL;
  a.out = (void *)o;
  a.name = name;
  a.backward = backward;
  a.f64 = type == NPY_FLOAT64;
  a.rows = (size_t)shape[0];
  a.cols = (size_t)shape[1];
  a.p = p;
  a.k = k < 0 ? 0 : (size_t)k;
  if (lens != Py_None) {
    if (!PyArray_Check(lens) || PyArray_TYPE((PyArrayObject *)lens) != NPY_INT64 ||
        PyArray_NDIM((PyArrayObject *)lens) != 1 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)lens) ||
        PyArray_DIM((PyArrayObject *)lens, 0) != shape[0]) {
      PyErr_SetString(PyExc_ValueError, "_vnorm_rows: lens must be int64 with one entry per row");
      return NULL;
    }
    a.lens = PyArray_DATA((PyArrayObject *)lens);
  }
  a.opt.temperature = temperature;
  a.opt.threads = threads;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = call(&a);
  Py_END_ALLOW_THREADS
  if (s != SMX_OK) return smx_py_raise_status(name, s);
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
  smx_options o = {SMX_ALGO_AUTO, 0.0, 0, threads};
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
  smx_options o = {SMX_ALGO_AUTO, 0.0, 0, threads};
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
