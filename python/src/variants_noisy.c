/*
 * Noisy Softmax from NumPy (include/smx/smx_noisy.h): the logits as a
 * C-contiguous float32 / float64 matrix with the classes last (matrix.h),
 * int64 targets and the norms of the rows in the logits' type, one library
 * call with the GIL released.
 */
#include "bindings.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "matrix.h"
#include "options.h"
#include "smx/smx.h"


static int parse_choice(const char *fn, const char *what, PyObject *o, const char *const *names, int n, int *v) {
  if (!o) return 0;
  const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
  if (!s && PyErr_Occurred()) return -1;
  for (int k = 0; s && k < n; k++) {
    if (!strcmp(s, names[k])) {
      *v = k;
      return 0;
    }
  }
  PyErr_Format(PyExc_ValueError, "%s: %s must be one of '%s', '%s', '%s', got %R", fn, what, names[0], names[1],
               names[2], o);
  return -1;
}

/* arrays of one value per row (the targets' shape): same = the shape of logits without its last axis */
static int row_shaped(const PyArrayObject *a, const PyArrayObject *x) {
  int nd = PyArray_NDIM(x);
  if (PyArray_NDIM(a) != nd - 1) return 0;
  for (int d = 0; d < nd - 1; d++) if (PyArray_DIM(a, d) != PyArray_DIM(x, d)) return 0;
  return 1;
}

PyObject *smx_py_noisy_softmax_loss(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.noisy_softmax_loss";
  static char *kw[] = {"logits", "targets", "norms", "alpha", "seed", "step", "mode", "row_offset", "reduction", "ignore_index",
                       "return_grad", "grad_scale", "threads", NULL};
  static const char *const modes[3] = { "annealed", "free", "amplitude" };
  static const char *const reds[3] = { "mean", "sum", "none" };
  PyObject *xo, *to, *no, *ao = NULL, *so = NULL, *sto = NULL, *mo = NULL, *roo = NULL, *red = NULL, *ign = NULL,
           *rg = NULL, *gs = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOOOOOOOOO:noisy_softmax_loss", kw, &xo, &to, &no, &ao, &so,
                                   &sto, &mo, &roo, &red, &ign, &rg, &gs, &thr))
    return NULL;
  smx_loss_ext e = SMX_LOSS_EXT_INIT;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0u, 0, &e };
  double alpha = 0.1, scale = 1.0;
  uint64_t seed = 0, step = 0, row_offset = 0;
  int mode = 0, r = (int)e.reduction, want = 0;
  long long ii = -100;
  if ((ao && smx_py_real_arg(fn, "alpha", ao, &alpha) < 0) || (so && smx_py_u64_arg(fn, "seed", so, &seed) < 0) ||
      (sto && smx_py_u64_arg(fn, "step", sto, &step) < 0) || parse_choice(fn, "mode", mo, modes, 3, &mode) < 0 ||
      (roo && smx_py_u64_arg(fn, "row_offset", roo, &row_offset) < 0) ||
      parse_choice(fn, "reduction", red, reds, 3, &r) < 0 ||
      (ign && smx_py_int_arg(fn, "ignore_index", ign, INT64_MIN, INT64_MAX, &ii) < 0) ||
      smx_py_parse_threads(fn, thr, &o.threads) < 0 ||
      (gs && smx_py_real_arg(fn, "grad_scale", gs, &scale) < 0) || (rg && (want = PyObject_IsTrue(rg)) < 0))
    return NULL;
  if (!(alpha >= 0.0) || isinf(alpha)) {
    PyErr_Format(PyExc_ValueError, "%s: alpha must be >= 0 and finite, got %R", fn, ao);
    return NULL;
  }
  if (isinf(scale) || scale == 0.0) {
    PyErr_Format(PyExc_ValueError, "%s: grad_scale must be finite and nonzero, got %R", fn, gs);
    return NULL;
  }
  e.reduction = (smx_reduction)r;
  e.ignore_index = ii;
  e.grad_scale = scale;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_F32_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *t = NULL, *nr = NULL, *loss = NULL, *grad = NULL, *gnr = NULL;
  int f64 = m.dtype == SMX_OP_F64, type = f64 ? NPY_DOUBLE : NPY_FLOAT, nd = PyArray_NDIM(m.arr);
  if (!(t = smx_py_int_input(fn, "targets", to, NPY_INT64))) goto done;
  if (!row_shaped(t, m.arr)) {
    PyErr_Format(PyExc_ValueError, "%s: targets must have the shape of logits without its last (class) axis", fn);
    goto done;
  }
  if (no != Py_None) {
    nr = (PyArrayObject *)PyArray_FromAny(no, PyArray_DescrFromType(type), 0, 0,
                                          NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
    if (!nr) goto done;
    if (!row_shaped(nr, m.arr)) {
      PyErr_Format(PyExc_ValueError, "%s: norms must have the shape of logits without its last (class) axis", fn);
      goto done;
    }
  } else if (mode != SMX_NOISY_FREE) {
    PyErr_Format(PyExc_ValueError, "%s: norms are needed unless mode='free'", fn);
    goto done;
  }
  const int64_t *tp = PyArray_DATA(t);
  const char *np = nr ? PyArray_DATA(nr) : NULL;
  for (size_t i = 0; i < m.rows; i++) {
    if (tp[i] == ii) continue;
    if (tp[i] < 0 || (uint64_t)tp[i] >= m.cols) {
      PyErr_Format(PyExc_ValueError, "%s: target %lld (row %zu) is outside [0, %zu) and is not ignore_index", fn,
                   (long long)tp[i], i, m.cols);
      goto done;
    }
    double v = !np ? 0.0 : f64 ? ((const double *)np)[i] : (double)((const float *)np)[i];
    if (!(v >= 0.0) || isinf(v)) {
      /* PyErr_Format has no %g: the value goes in as a float object */
      PyObject *vo = PyFloat_FromDouble(v);
      if (vo) PyErr_Format(PyExc_ValueError, "%s: norms must be finite and >= 0 (row %zu: %R)", fn, i, vo);
      Py_XDECREF(vo);
      goto done;
    }
  }
  if (m.cols == 0 && m.rows > 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto done;
  }
  loss = e.reduction == SMX_REDUCTION_NONE ? (PyArrayObject *)PyArray_SimpleNew(nd - 1, PyArray_DIMS(m.arr), type)
                                           : (PyArrayObject *)PyArray_SimpleNew(0, NULL, type);
  if (!loss) goto done;
  if (want && (!(grad = (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(m.arr), type)) ||
               !(gnr = (PyArrayObject *)PyArray_SimpleNew(nd - 1, PyArray_DIMS(m.arr), type))))
    goto done;
  smx_status s;
  {
    const void *xp = PyArray_DATA(m.arr);
    void *lp = PyArray_DATA(loss), *gp = grad ? PyArray_DATA(grad) : NULL, *grp = gnr ? PyArray_DATA(gnr) : NULL;
    size_t ld = m.cols ? m.cols : 1;   /* the gradient's (a new C array); the logits are read at m.ld */
    smx_noisy_mode md = (smx_noisy_mode)mode;
    Py_BEGIN_ALLOW_THREADS
    s = f64 ? smx_noisy_softmax_loss_f64(xp, m.ld, tp, (const double *)np, lp, gp, ld, grp, m.rows, m.cols, alpha, seed,
                                         step, row_offset, md, &o)
            : smx_noisy_softmax_loss_f32(xp, m.ld, tp, (const float *)np, lp, gp, ld, grp, m.rows, m.cols, alpha, seed,
                                         step, row_offset, md, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  res = smx_py_loss_result(e.reduction == SMX_REDUCTION_NONE, loss, want ? grad : NULL, want ? gnr : NULL);
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(gnr);
  Py_XDECREF(nr);
  Py_XDECREF(t);
  Py_DECREF(m.arr);
  return res;
}

PyObject *smx_py_noisy_softmax_noise(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.noisy_softmax_noise";
  static char *kw[] = {"rows", "seed", "step", "row0", NULL};
  PyObject *ro, *so = NULL, *sto = NULL, *r0o = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:noisy_softmax_noise", kw, &ro, &so, &sto, &r0o)) return NULL;
  long long rows = 0, row0 = 0;
  uint64_t seed = 0, step = 0;
  if (smx_py_int_arg(fn, "rows", ro, 0, PY_SSIZE_T_MAX / 8, &rows) < 0 || (so && smx_py_u64_arg(fn, "seed", so, &seed) < 0) ||
      (sto && smx_py_u64_arg(fn, "step", sto, &step) < 0) ||
      (r0o && smx_py_int_arg(fn, "row0", r0o, 0, INT64_MAX, &row0) < 0))
    return NULL;
  npy_intp n = (npy_intp)rows;
  PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_DOUBLE);
  if (!out) return NULL;
  smx_status s = smx_noisy_softmax_noise(seed, step, (size_t)row0, (size_t)rows, PyArray_DATA(out));
  if (s != SMX_OK) {
    Py_DECREF(out);
    return smx_py_raise_status(fn, s);
  }
  return (PyObject *)out;
}
