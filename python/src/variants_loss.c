/*
 * The losses of include/smx/smx_losses.h from NumPy whose C signature is their own (focal, InfoNCE,
 * Dice): argument checks, the logits as a C-contiguous float32 / float64 matrix with the classes last
 * (matrix.h), int64 targets, one library call with the GIL released. Also the keywords and target
 * checks every target loss shares (variants_loss.h), used by cross_entropy and the op table's target
 * losses (tloss.c) too.
 */
#include "variants_loss.h"

#include "bindings.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "matrix.h"
#include "options.h"
#include "smx/smx.h"

static int parse_reduction(const char *fn, PyObject *red, smx_reduction *r) {
  if (!red) return 0;
  if (!PyUnicode_Check(red)) {
    PyErr_Format(PyExc_TypeError, "%s: reduction must be a str ('mean', 'sum', 'none')", fn);
    return -1;
  }
  const char *s = PyUnicode_AsUTF8(red);
  if (!s) return -1;
  if (!strcmp(s, "mean")) *r = SMX_REDUCTION_MEAN;
  else if (!strcmp(s, "sum")) *r = SMX_REDUCTION_SUM;
  else if (!strcmp(s, "none")) *r = SMX_REDUCTION_NONE;
  else {
    PyErr_Format(PyExc_ValueError, "%s: reduction must be 'mean', 'sum' or 'none', got %R", fn, red);
    return -1;
  }
  return 0;
}

int smx_py_loss_parse(const char *fn, PyObject *red, PyObject *ign, PyObject *rg, PyObject *gs, PyObject *thr,
                      smx_py_loss_args *a) {
  smx_loss_ext d = SMX_LOSS_EXT_INIT;
  memset(&a->o, 0, sizeof a->o);
  a->e = d;
  a->o.loss = &a->e;
  a->want_grad = 0;
  if (parse_reduction(fn, red, &a->e.reduction) < 0) return -1;
  long long ii = -100;
  if (ign && smx_py_int_arg(fn, "ignore_index", ign, INT64_MIN, INT64_MAX, &ii) < 0) return -1;
  a->e.ignore_index = ii;
  if (smx_py_parse_threads(fn, thr, &a->o.threads) < 0) return -1;
  double scale = 1.0;
  if (gs && smx_py_real_arg(fn, "grad_scale", gs, &scale) < 0) return -1;
  if (isinf(scale) || scale == 0.0) {
    PyErr_Format(PyExc_ValueError, "%s: grad_scale must be finite and nonzero, got %R", fn, gs);
    return -1;
  }
  a->e.grad_scale = scale;
  if (rg && (a->want_grad = PyObject_IsTrue(rg)) < 0) return -1;
  return 0;
}

PyArrayObject *smx_py_loss_targets(const char *fn, PyObject *to, PyArrayObject *logits, int64_t ignore_index) {
  PyArrayObject *t = smx_py_int_input(fn, "targets", to, NPY_INT64);
  if (!t) return NULL;
  int nd = PyArray_NDIM(logits), same = PyArray_NDIM(t) == nd - 1;
  size_t cols = (size_t)PyArray_DIM(logits, nd - 1), rows = (size_t)PyArray_SIZE(t);
  for (int d = 0; same && d < nd - 1; d++) same = PyArray_DIM(t, d) == PyArray_DIM(logits, d);
  if (!same) {
    PyObject *got = PyObject_GetAttrString((PyObject *)t, "shape");
    PyObject *want = PyObject_GetAttrString((PyObject *)logits, "shape");
    if (got && want)
      PyErr_Format(PyExc_ValueError, "%s: targets has shape %R; it must be the shape of logits %R without its last "
                   "(class) axis", fn, got, want);
    Py_XDECREF(got);
    Py_XDECREF(want);
    goto fail;
  }
  /* the library refuses a bad target too; here the message names it */
  const int64_t *tp = PyArray_DATA(t);
  for (size_t r = 0; r < rows; r++) {
    if (tp[r] != ignore_index && (tp[r] < 0 || (uint64_t)tp[r] >= cols)) {
      PyErr_Format(PyExc_ValueError, "%s: target %lld (row %zu) is outside [0, %zu) and is not ignore_index (%lld)",
                   fn, (long long)tp[r], r, cols, (long long)ignore_index);
      goto fail;
    }
  }
  if (cols == 0 && rows > 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto fail;
  }
  return t;
fail:
  Py_DECREF(t);
  return NULL;
}

/* One library call: f64 says which form; x, loss and grad are of that type. */
typedef smx_status (*loss_call)(const void *ctx, int f64, const void *x, size_t ld, size_t rows, size_t cols,
                                const int64_t *t, const smx_options *o, void *loss, void *grad);

static PyObject *run_loss(const char *fn, PyObject *xo, PyObject *to, const smx_py_loss_args *a, loss_call call,
                          const void *ctx, int (*check)(const char *fn, const void *ctx, size_t cols)) {
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_F32_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *loss = NULL, *grad = NULL, *t = smx_py_loss_targets(fn, to, m.arr, a->e.ignore_index);
  if (!t) goto done;
  int nd = PyArray_NDIM(m.arr), f64 = m.dtype == SMX_OP_F64, type = f64 ? NPY_DOUBLE : NPY_FLOAT;
  const int64_t *tp = PyArray_DATA(t);
  if (check && check(fn, ctx, m.cols) < 0) goto done;
  loss = a->e.reduction == SMX_REDUCTION_NONE ? (PyArrayObject *)PyArray_SimpleNew(nd - 1, PyArray_DIMS(m.arr), type)
                                              : (PyArrayObject *)PyArray_SimpleNew(0, NULL, type);
  if (!loss) goto done;
  if (a->want_grad && !(grad = (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(m.arr), type))) goto done;
  smx_status s;
  {
    const void *xp = PyArray_DATA(m.arr);
    void *lp = PyArray_DATA(loss), *gp = grad ? PyArray_DATA(grad) : NULL;
    Py_BEGIN_ALLOW_THREADS
    s = call(ctx, f64, xp, m.ld, m.rows, m.cols, tp, &a->o, lp, gp);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  res = smx_py_loss_result(a->e.reduction == SMX_REDUCTION_NONE, loss, a->want_grad ? grad : NULL, NULL);
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(t);
  Py_DECREF(m.arr);
  return res;
}

/* ------------------------------------------------------------ focal loss */

typedef struct focal_py {
  double gamma;
  PyArrayObject *alpha;   /* C values of the logits' computing type, or NULL */
  PyObject *alpha_in;
} focal_py;

static smx_status focal_call(const void *ctx, int f64, const void *x, size_t ld, size_t rows, size_t cols,
                             const int64_t *t, const smx_options *o, void *loss, void *grad) {
  const focal_py *c = ctx;
  const void *al = c->alpha ? PyArray_DATA(c->alpha) : NULL;
  size_t ldg = cols ? cols : 1;   /* the gradient is a new C array */
  return f64 ? smx_focal_loss_f64(x, ld, t, al, loss, grad, ldg, rows, cols, c->gamma, o)
             : smx_focal_loss_f32(x, ld, t, al, loss, grad, ldg, rows, cols, c->gamma, o);
}

static int focal_check(const char *fn, const void *ctx, size_t cols) {
  focal_py *c = (focal_py *)ctx;
  if (!c->alpha_in) return 0;
  /* alpha in the computing type is made here, once the logits' type is known */
  return cols == 0 ? 0 : (PyArray_SIZE(c->alpha) == (npy_intp)cols ? 0
                          : (PyErr_Format(PyExc_ValueError, "%s: alpha must have C = %zu values", fn, cols), -1));
}

PyObject *smx_py_focal_loss(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.focal_loss";
  static char *kw[] = {"logits", "targets", "gamma", "alpha", "reduction", "ignore_index", "return_grad",
                       "grad_scale", "threads", NULL};
  PyObject *xo, *to, *go = NULL, *ao = NULL, *red = NULL, *ign = NULL, *rg = NULL, *gs = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOO:focal_loss", kw, &xo, &to, &go, &ao, &red, &ign, &rg,
                                   &gs, &thr))
    return NULL;
  smx_py_loss_args a;
  if (smx_py_loss_parse(fn, red, ign, rg, gs, thr, &a) < 0) return NULL;
  focal_py c = { 2.0, NULL, NULL };
  if (go && smx_py_real_arg(fn, "gamma", go, &c.gamma) < 0) return NULL;
  if (!(c.gamma >= 0.0)) {
    PyErr_Format(PyExc_ValueError, "%s: gamma must be >= 0 and finite, got %R", fn, go);
    return NULL;
  }
  if (ao && ao != Py_None) {
    /* the logits' computing type decides alpha's: float64 logits stay float64 */
    smx_op_dtype dt;
    PyArrayObject *xin = smx_py_input(fn, xo, &dt);
    if (!xin) return NULL;
    Py_DECREF(xin);
    c.alpha = (PyArrayObject *)PyArray_FromAny(ao, PyArray_DescrFromType(dt == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT),
                                               1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST,
                                               NULL);
    if (!c.alpha) return NULL;
    c.alpha_in = ao;
  }
  PyObject *r = run_loss(fn, xo, to, &a, focal_call, &c, focal_check);
  Py_XDECREF(c.alpha);
  return r;
}

/* ------------------------------------------------------- InfoNCE / CLIP */

PyObject *smx_py_info_nce(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.info_nce";
  static char *kw[] = {"sim", "targets", "temperature", "symmetric", "reduction", "ignore_index", "return_grad",
                       "grad_scale", "threads", NULL};
  PyObject *xo, *to = NULL, *tpo = NULL, *sy = NULL, *red = NULL, *ign = NULL, *rg = NULL, *gs = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOOOOOO:info_nce", kw, &xo, &to, &tpo, &sy, &red, &ign, &rg, &gs,
                                   &thr))
    return NULL;
  smx_py_loss_args a;
  if (smx_py_loss_parse(fn, red, ign, rg, gs, thr, &a) < 0) return NULL;
  double temp = 1.0;
  if (tpo && smx_py_real_arg(fn, "temperature", tpo, &temp) < 0) return NULL;
  if (!(temp > 0.0)) {
    PyErr_Format(PyExc_ValueError, "%s: temperature must be > 0 and finite, got %R", fn, tpo);
    return NULL;
  }
  a.o.temperature = temp;   /* InfoNCE's temperature is the options' */
  int sym = 1;
  if (sy && (sym = PyObject_IsTrue(sy)) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "sim", xo, NULL, SMX_PY_F32_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *t = NULL, *loss = NULL, *grad = NULL;
  if (PyArray_NDIM(m.arr) != 2) {
    PyErr_Format(PyExc_ValueError, "%s: sim must be a 2-D (rows x cols) matrix", fn);
    goto done;
  }
  if (to && to != Py_None) {
    if (!(t = smx_py_int_input(fn, "targets", to, NPY_INT64))) goto done;
    if (PyArray_NDIM(t) != 1 || (size_t)PyArray_DIM(t, 0) != m.rows) {
      PyErr_Format(PyExc_ValueError, "%s: targets must have one index per row of sim", fn);
      goto done;
    }
  } else if (m.rows > m.cols) {
    PyErr_Format(PyExc_ValueError, "%s: the diagonal targets need rows <= cols (give targets=)", fn);
    goto done;
  }
  if (m.rows > 0 && m.cols == 0) {
    PyErr_Format(PyExc_ValueError, "%s: sim has no columns", fn);
    goto done;
  }
  int f64 = m.dtype == SMX_OP_F64, type = f64 ? NPY_DOUBLE : NPY_FLOAT;
  npy_intp nr = (npy_intp)m.rows;
  loss = a.e.reduction == SMX_REDUCTION_NONE ? (PyArrayObject *)PyArray_SimpleNew(1, &nr, type)
                                             : (PyArrayObject *)PyArray_SimpleNew(0, NULL, type);
  if (!loss) goto done;
  if (a.want_grad && !(grad = (PyArrayObject *)PyArray_SimpleNew(2, PyArray_DIMS(m.arr), type))) goto done;
  smx_status s;
  {
    const void *xp = PyArray_DATA(m.arr);
    const int64_t *tp = t ? PyArray_DATA(t) : NULL;
    void *lp = PyArray_DATA(loss), *gp = grad ? PyArray_DATA(grad) : NULL;
    size_t ld = m.cols ? m.cols : 1;   /* the gradient's (a new C array); sim is read at m.ld */
    Py_BEGIN_ALLOW_THREADS
    s = f64 ? smx_info_nce_f64(xp, m.ld, tp, lp, gp, ld, m.rows, m.cols, sym, &a.o)
            : smx_info_nce_f32(xp, m.ld, tp, lp, gp, ld, m.rows, m.cols, sym, &a.o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    if (s == SMX_E_INVALID_ARG)
      PyErr_Format(PyExc_ValueError, "%s: a target is out of range, or (symmetric) two rows share a positive column",
                   fn);
    else smx_py_raise_status(fn, s);
    goto done;
  }
  res = smx_py_loss_result(a.e.reduction == SMX_REDUCTION_NONE, loss, a.want_grad ? grad : NULL, NULL);
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(t);
  Py_DECREF(m.arr);
  return res;
}

/* ------------------------------------------------------------ soft Dice */

PyObject *smx_py_dice_loss(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.dice_loss";
  static char *kw[] = {"logits", "targets", "smooth", "reduction", "ignore_index", "return_grad", "grad_scale",
                       "threads", NULL};
  PyObject *xo, *to, *so = NULL, *red = NULL, *ign = NULL, *rg = NULL, *gs = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOO:dice_loss", kw, &xo, &to, &so, &red, &ign, &rg, &gs,
                                   &thr))
    return NULL;
  smx_py_loss_args a;
  if (smx_py_loss_parse(fn, red, ign, rg, gs, thr, &a) < 0) return NULL;
  double smooth = 1.0;
  if (so && smx_py_real_arg(fn, "smooth", so, &smooth) < 0) return NULL;
  if (!(smooth >= 0.0)) {
    PyErr_Format(PyExc_ValueError, "%s: smooth must be >= 0 and finite, got %R", fn, so);
    return NULL;
  }
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_F32_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *t = NULL, *soft = NULL, *loss = NULL, *grad = NULL;
  int f64 = m.dtype == SMX_OP_F64, type = f64 ? NPY_DOUBLE : NPY_FLOAT, nd = PyArray_NDIM(m.arr);
  PyArrayObject *probe = (PyArrayObject *)PyArray_FROM_O(to);
  if (!probe) goto done;
  int is_soft = PyArray_ISFLOAT(probe);
  Py_DECREF(probe);
  if (is_soft) {
    soft = (PyArrayObject *)PyArray_FromAny(to, PyArray_DescrFromType(type), 0, 0,
                                            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
    if (!soft) goto done;
    if (!PyArray_SAMESHAPE(soft, m.arr)) {
      PyErr_Format(PyExc_ValueError, "%s: soft targets must have the shape of logits", fn);
      goto done;
    }
  } else {
    if (!(t = smx_py_loss_targets(fn, to, m.arr, a.e.ignore_index))) goto done;
  }
  if (m.cols == 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto done;
  }
  npy_intp nc = (npy_intp)m.cols;
  loss = a.e.reduction == SMX_REDUCTION_NONE ? (PyArrayObject *)PyArray_SimpleNew(1, &nc, type)
                                             : (PyArrayObject *)PyArray_SimpleNew(0, NULL, type);
  if (!loss) goto done;
  if (a.want_grad && !(grad = (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(m.arr), type))) goto done;
  smx_status s;
  {
    const void *xp = PyArray_DATA(m.arr), *sp = soft ? PyArray_DATA(soft) : NULL;
    const int64_t *tp = t ? PyArray_DATA(t) : NULL;
    void *lp = PyArray_DATA(loss), *gp = grad ? PyArray_DATA(grad) : NULL;
    size_t ld = m.cols;   /* the soft targets' and the gradient's (C arrays); the logits are read at m.ld */
    Py_BEGIN_ALLOW_THREADS
    s = f64 ? smx_dice_loss_f64(xp, m.ld, tp, sp, ld, lp, gp, ld, m.rows, m.cols, smooth, &a.o)
            : smx_dice_loss_f32(xp, m.ld, tp, sp, ld, lp, gp, ld, m.rows, m.cols, smooth, &a.o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  res = smx_py_loss_result(a.e.reduction == SMX_REDUCTION_NONE, loss, a.want_grad ? grad : NULL, NULL);
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(t);
  Py_XDECREF(soft);
  Py_DECREF(m.arr);
  return res;
}
