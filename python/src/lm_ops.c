/*
 * smx.cross_entropy, softmax_topk, topk, sample, gumbel_softmax,
 * gumbel_softmax_backward: argument checks,
 * conversion to a C-contiguous matrix with the class axis last (matrix.h),
 * one library call with the GIL released, results as new NumPy arrays.
 */
#include "bindings.h"

#include <stdint.h>

#include "matrix.h"
#include "options.h"
#include "smx/smx.h"
#include "variants_loss.h"
#include "lm_ops.h"

/* A new C array shaped like m->arr with its last axis replaced by `last` (-1: dropped). */
static PyArrayObject *new_like(const smx_py_matrix *m, npy_intp last, int type) {
  npy_intp shape[NPY_MAXDIMS];
  int nd = PyArray_NDIM(m->arr);
  for (int d = 0; d < nd - 1; d++) shape[d] = PyArray_DIM(m->arr, d);
  if (last >= 0) shape[nd - 1] = last;
  return (PyArrayObject *)PyArray_SimpleNew(last >= 0 ? nd : nd - 1, shape, type);
}

static int npy_type(smx_op_dtype dt) { return dt == SMX_OP_F16 ? NPY_HALF : dt == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT; }

/* The result in the caller's dtype (float64 callers get float64 back; steals r). */
static PyObject *to_given(const smx_py_matrix *m, PyArrayObject *r) {
  if (!r || m->given != SMX_OP_F64 || m->dtype == SMX_OP_F64) return (PyObject *)r;
  PyObject *c = PyArray_Cast(r, NPY_DOUBLE);
  Py_DECREF(r);
  return c;
}

/* Copies res into a caller's out= (checked against the caller's dtype and the
 * result's shape) and returns out; steals res. */
static PyObject *into_out(const char *fn, PyObject *out, PyObject *input, PyObject *res) {
  if (!res || !out || out == Py_None) return res;
  PyArrayObject *r = (PyArrayObject *)res, *in = (PyArrayObject *)input;
  if (smx_py_check_out(fn, out, in, PyArray_NDIM(r), PyArray_DIMS(r)) < 0 || PyArray_CopyInto((PyArrayObject *)out, r) < 0) {
    Py_DECREF(res);
    return NULL;
  }
  Py_DECREF(res);
  Py_INCREF(out);
  return out;
}

/* ------------------------------------------------------- cross-entropy */

PyObject *smx_py_cross_entropy(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.cross_entropy";
  static char *kw[] = {"logits", "targets", "reduction", "ignore_index", "label_smoothing", "z_loss",
                       "temperature", "return_grad", "grad_scale", "threads", "masked_row", "grad_out", NULL};
  PyObject *xo, *to, *red = NULL, *ign = NULL, *ls = NULL, *zl = NULL, *temp = NULL, *rg = NULL, *gs = NULL,
                    *thr = NULL, *mask = NULL, *gout = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOOOOO:cross_entropy", kw, &xo, &to, &red, &ign, &ls, &zl,
                                   &temp, &rg, &gs, &thr, &mask, &gout))
    return NULL;
  smx_py_loss_args a;
  if (smx_py_loss_parse(fn, red, ign, rg, gs, thr, &a) < 0) return NULL;
  /* cross-entropy also reads the options' temperature and masked-row flag */
  if (smx_py_parse_options(fn, temp, NULL, thr, mask, &a.o) < 0) return NULL;
  a.o.loss = &a.e;
  smx_loss_ext *x = &a.e;
  smx_options *o = &a.o;
  if (ls && smx_py_real_arg(fn, "label_smoothing", ls, &x->label_smoothing) < 0) return NULL;
  if (!(x->label_smoothing >= 0.0 && x->label_smoothing <= 1.0)) {
    PyErr_Format(PyExc_ValueError, "%s: label_smoothing must be in [0, 1], got %R", fn, ls);
    return NULL;
  }
  if (zl && smx_py_real_arg(fn, "z_loss", zl, &x->z_loss) < 0) return NULL;
  if (!(x->z_loss >= 0.0) || isinf(x->z_loss)) {
    PyErr_Format(PyExc_ValueError, "%s: z_loss must be >= 0 and finite, got %R", fn, zl);
    return NULL;
  }
  int want_grad = a.want_grad;
  if (gout == Py_None) gout = NULL;
  if (gout) want_grad = 1; /* grad_out= implies return_grad */

  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_KEEP_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *t = smx_py_loss_targets(fn, to, m.arr, x->ignore_index), *loss = NULL, *grad = NULL;
  if (!t) goto done;
  int nd = PyArray_NDIM(m.arr), f64 = m.dtype == SMX_OP_F64, ltype = f64 ? NPY_DOUBLE : NPY_FLOAT;
  loss = x->reduction == SMX_REDUCTION_NONE ? (PyArrayObject *)PyArray_SimpleNew(nd - 1, PyArray_DIMS(m.arr), ltype)
                                           : (PyArrayObject *)PyArray_SimpleNew(0, NULL, ltype);
  if (!loss) goto done;
  if (want_grad && !(grad = new_like(&m, (npy_intp)m.cols, npy_type(m.dtype)))) goto done;
  smx_status s;
  {
    const void *xp = PyArray_DATA(m.arr), *tp = PyArray_DATA(t);
    void *lp = PyArray_DATA(loss);
    void *gp = grad ? PyArray_DATA(grad) : NULL;
    size_t ldg = m.cols ? m.cols : 1;   /* the gradient is a new C array; the logits are read at m.ld */
    Py_BEGIN_ALLOW_THREADS
    if (m.dtype == SMX_OP_F16) s = smx_cross_entropy_f16(xp, m.ld, tp, lp, gp, ldg, NULL, m.rows, m.cols, o);
    else if (f64) s = smx_cross_entropy_f64(xp, m.ld, tp, lp, gp, ldg, NULL, m.rows, m.cols, o);
    else s = smx_cross_entropy_f32(xp, m.ld, tp, lp, gp, ldg, NULL, m.rows, m.cols, o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  PyObject *l = x->reduction == SMX_REDUCTION_NONE ? (Py_INCREF(loss), (PyObject *)loss)
                                                  : PyFloat_FromDouble(f64 ? *(double *)PyArray_DATA(loss)
                                                                           : (double)*(float *)PyArray_DATA(loss));
  if (!l) goto done;
  if (!want_grad) {
    res = l;
  } else {
    Py_INCREF(grad);
    PyObject *g = to_given(&m, grad);
    if (g && gout) { /* checked against the caller's logits (dtype and shape), then filled */
      smx_op_dtype dt;
      PyObject *xin = (PyObject *)smx_py_input(fn, xo, &dt);
      g = xin ? into_out(fn, gout, xin, g) : (Py_DECREF(g), NULL);
      Py_XDECREF(xin);
    }
    res = g ? PyTuple_Pack(2, l, g) : NULL;
    Py_XDECREF(g);
    Py_DECREF(l);
  }
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(t);
  Py_DECREF(m.arr);
  return res;
}

/* --------------------------------------------------------------- top-k */

typedef enum { TOPK_SOFTMAX, TOPK_LOG, TOPK_RAW } topk_kind;

static smx_status topk_call(topk_kind k, smx_op_dtype dt, const void *x, size_t ld, size_t rows, size_t cols,
                            size_t kk, void *v, int64_t *ix, const smx_options *o) {
  if (dt == SMX_OP_F64) {
    if (k == TOPK_SOFTMAX) return smx_softmax_topk_rows_f64(x, ld, v, ix, rows, cols, kk, o);
    if (k == TOPK_LOG) return smx_log_softmax_topk_rows_f64(x, ld, v, ix, rows, cols, kk, o);
    return smx_topk_rows_f64(x, ld, v, ix, rows, cols, kk, o);
  }
  if (dt == SMX_OP_F16) {
    if (k == TOPK_SOFTMAX) return smx_softmax_topk_rows_f16(x, ld, v, ix, rows, cols, kk, o);
    if (k == TOPK_LOG) return smx_log_softmax_topk_rows_f16(x, ld, v, ix, rows, cols, kk, o);
    return smx_topk_rows_f16(x, ld, v, ix, rows, cols, kk, o);
  }
  if (k == TOPK_SOFTMAX) return smx_softmax_topk_rows_f32(x, ld, v, ix, rows, cols, kk, o);
  if (k == TOPK_LOG) return smx_log_softmax_topk_rows_f32(x, ld, v, ix, rows, cols, kk, o);
  return smx_topk_rows_f32(x, ld, v, ix, rows, cols, kk, o);
}

static PyObject *run_topk(const char *fn, int raw, PyObject *args, PyObject *kwargs, const char *fmt) {
  static char *kw[] = {"x", "k", "axis", "log", "temperature", "threads", "masked_row", NULL};
  static char *kw_raw[] = {"x", "k", "axis", "threads", NULL};
  PyObject *xo, *ko, *axis = NULL, *logo = NULL, *temp = NULL, *thr = NULL, *mask = NULL;
  int ok = raw ? PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw_raw, &xo, &ko, &axis, &thr)
               : PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw, &xo, &ko, &axis, &logo, &temp, &thr, &mask);
  if (!ok) return NULL;
  smx_options o;
  if (smx_py_parse_options(fn, temp, NULL, thr, mask, &o) < 0) return NULL;
  int log = 0;
  if (logo && (log = PyObject_IsTrue(logo)) < 0) return NULL;
  long long k;
  if (smx_py_int_arg(fn, "k", ko, 0, INT64_MAX, &k) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "x", xo, axis, SMX_PY_KEEP_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *v = NULL, *ix = NULL;
  if ((unsigned long long)k > m.cols) {
    PyErr_Format(PyExc_ValueError, "%s: k = %lld is larger than the axis (%zu)", fn, k, m.cols);
    goto done;
  }
  int vtype = m.dtype == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT;   /* float64 values for float64 x */
  if (!(v = new_like(&m, (npy_intp)k, vtype)) || !(ix = new_like(&m, (npy_intp)k, NPY_INT64))) goto done;
  smx_status s = SMX_OK;
  if (m.rows > 0 && k > 0) {
    const void *xp = PyArray_DATA(m.arr);
    void *vp = PyArray_DATA(v);
    int64_t *ip = PyArray_DATA(ix);
    topk_kind kind = raw ? TOPK_RAW : log ? TOPK_LOG : TOPK_SOFTMAX;
    Py_BEGIN_ALLOW_THREADS
    s = topk_call(kind, m.dtype, xp, m.ld, m.rows, m.cols, (size_t)k, vp, ip, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  Py_INCREF(v);
  Py_INCREF(ix);
  PyObject *a = smx_py_matrix_restore(&m, (PyObject *)v), *b = smx_py_matrix_restore(&m, (PyObject *)ix);
  if (a && b) res = PyTuple_Pack(2, a, b);
  Py_XDECREF(a);
  Py_XDECREF(b);
done:
  Py_XDECREF(v);
  Py_XDECREF(ix);
  Py_DECREF(m.arr);
  return res;
}

PyObject *smx_py_softmax_topk(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  return run_topk("smx.softmax_topk", 0, args, kwargs, "OO|OOOOO:softmax_topk");
}

PyObject *smx_py_topk(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  return run_topk("smx.topk", 1, args, kwargs, "OO|OO:topk");
}

/* ------------------------------------------------------------ sampling */

int smx_py_sample_params(const char *fn, PyObject *temp, PyObject *tk, PyObject *tp, PyObject *mp, PyObject *gr,
                         PyObject *meth, PyObject *ro, smx_sample_params *out) {
  smx_sample_params p = {1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0};
  if (ro && smx_py_u64_arg(fn, "row_offset", ro, &p.row_offset) < 0) return -1;
  if (temp && smx_py_real_arg(fn, "temperature", temp, &p.temperature) < 0) return -1;
  if (!(p.temperature >= 0.0) || isinf(p.temperature)) {
    PyErr_Format(PyExc_ValueError, "%s: temperature must be >= 0 and finite (0: greedy), got %R", fn, temp);
    return -1;
  }
  long long k = 0;
  if (tk && smx_py_int_arg(fn, "top_k", tk, 0, INT64_MAX, &k) < 0) return -1;
  p.top_k = (size_t)k;
  if (tp && smx_py_real_arg(fn, "top_p", tp, &p.top_p) < 0) return -1;
  if (!(p.top_p >= 0.0 && p.top_p <= 1.0)) {
    PyErr_Format(PyExc_ValueError, "%s: top_p must be in [0, 1] (0 or 1: off), got %R", fn, tp);
    return -1;
  }
  if (mp && smx_py_real_arg(fn, "min_p", mp, &p.min_p) < 0) return -1;
  if (!(p.min_p >= 0.0 && p.min_p <= 1.0)) {
    PyErr_Format(PyExc_ValueError, "%s: min_p must be in [0, 1] (0: off), got %R", fn, mp);
    return -1;
  }
  if (gr && (p.greedy = PyObject_IsTrue(gr)) < 0) return -1;
  if (meth) {
    const char *s = PyUnicode_Check(meth) ? PyUnicode_AsUTF8(meth) : NULL;
    if (!PyUnicode_Check(meth)) {
      PyErr_Format(PyExc_TypeError, "%s: method must be a str ('multinomial' or 'gumbel')", fn);
      return -1;
    }
    if (!s) return -1;
    if (!strcmp(s, "multinomial")) p.method = SMX_SAMPLE_MULTINOMIAL;
    else if (!strcmp(s, "gumbel")) p.method = SMX_SAMPLE_GUMBEL_MAX;
    else {
      PyErr_Format(PyExc_ValueError, "%s: method must be 'multinomial' or 'gumbel', got %R", fn, meth);
      return -1;
    }
  }
  *out = p;
  return 0;
}

PyObject *smx_py_sample(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.sample";
  static char *kw[] = {"logits", "seed", "step", "temperature", "top_k", "top_p", "min_p", "greedy", "method",
                       "row_offset", "threads", NULL};
  PyObject *xo, *so, *stepo = NULL, *temp = NULL, *tk = NULL, *tp = NULL, *mp = NULL, *gr = NULL, *meth = NULL,
                     *ro = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOOOOO:sample", kw, &xo, &so, &stepo, &temp, &tk, &tp, &mp,
                                   &gr, &meth, &ro, &thr))
    return NULL;
  smx_sample_params p;
  uint64_t seed, step = 0;
  if (smx_py_u64_arg(fn, "seed", so, &seed) < 0 || (stepo && smx_py_u64_arg(fn, "step", stepo, &step) < 0) ||
      smx_py_sample_params(fn, temp, tk, tp, mp, gr, meth, ro, &p) < 0)
    return NULL;
  smx_options o;
  if (smx_py_parse_options(fn, NULL, NULL, thr, NULL, &o) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_KEEP_F64 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyArrayObject *tok = NULL;
  if (m.cols == 0 && m.rows > 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto done;
  }
  if (!(tok = new_like(&m, -1, NPY_INT64))) goto done;
  smx_status s = SMX_OK;
  if (m.rows > 0) {
    const void *xp = PyArray_DATA(m.arr);
    int64_t *out = PyArray_DATA(tok);
    Py_BEGIN_ALLOW_THREADS
    s = m.dtype == SMX_OP_F16   ? smx_sample_rows_f16(xp, m.ld, out, m.rows, m.cols, &p, seed, step, &o)
        : m.dtype == SMX_OP_F64 ? smx_sample_rows_f64(xp, m.ld, out, m.rows, m.cols, &p, seed, step, &o)
                                : smx_sample_rows_f32(xp, m.ld, out, m.rows, m.cols, &p, seed, step, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    Py_CLEAR(tok);
  }
done:
  Py_DECREF(m.arr);
  return tok ? PyArray_Return(tok) : NULL;
}

/* ------------------------------------------------------ Gumbel-softmax */

PyObject *smx_py_gumbel_softmax(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.gumbel_softmax";
  static char *kw[] = {"logits", "tau", "seed", "step", "hard", "threads", "masked_row", NULL};
  PyObject *xo, *tauo, *so, *stepo = NULL, *hardo = NULL, *thr = NULL, *mask = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOOO:gumbel_softmax", kw, &xo, &tauo, &so, &stepo, &hardo, &thr,
                                   &mask))
    return NULL;
  double tau;
  uint64_t seed, step = 0;
  if (smx_py_real_arg(fn, "tau", tauo, &tau) < 0) return NULL;
  if (!(tau > 0.0) || isinf(tau)) {
    PyErr_Format(PyExc_ValueError, "%s: tau must be positive and finite, got %R", fn, tauo);
    return NULL;
  }
  if (smx_py_u64_arg(fn, "seed", so, &seed) < 0 || (stepo && smx_py_u64_arg(fn, "step", stepo, &step) < 0)) return NULL;
  int hard = 0;
  if (hardo && (hard = PyObject_IsTrue(hardo)) < 0) return NULL;
  smx_options o;
  if (smx_py_parse_options(fn, NULL, NULL, thr, mask, &o) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL;
  PyArrayObject *y = new_like(&m, (npy_intp)m.cols, npy_type(m.dtype)), *ys = NULL;
  if (!y || (hard && !(ys = new_like(&m, (npy_intp)m.cols, npy_type(m.dtype))))) goto done;
  smx_status s = SMX_OK;
  if (m.rows > 0 && m.cols > 0) {
    const void *xp = PyArray_DATA(m.arr);
    void *yp = PyArray_DATA(y), *sp = ys ? PyArray_DATA(ys) : NULL;
    size_t n = m.cols, ld = m.ld;   /* the outputs are new C arrays; the logits are read at their row stride */
    Py_BEGIN_ALLOW_THREADS
    if (m.dtype == SMX_OP_F16)
      s = hard ? smx_gumbel_softmax_hard_rows_f16(xp, ld, yp, n, sp, n, m.rows, n, tau, seed, step, &o)
               : smx_gumbel_softmax_rows_f16(xp, ld, yp, n, m.rows, n, tau, seed, step, &o);
    else
      s = hard ? smx_gumbel_softmax_hard_rows_f32(xp, ld, yp, n, sp, n, m.rows, n, tau, seed, step, &o)
               : smx_gumbel_softmax_rows_f32(xp, ld, yp, n, m.rows, n, tau, seed, step, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    goto done;
  }
  Py_INCREF(y);
  PyObject *a = to_given(&m, y);
  if (!hard) {
    res = a;
  } else {
    Py_INCREF(ys);
    PyObject *b = to_given(&m, ys);
    if (a && b) res = PyTuple_Pack(2, a, b);
    Py_XDECREF(a);
    Py_XDECREF(b);
  }
done:
  Py_XDECREF(y);
  Py_XDECREF(ys);
  Py_DECREF(m.arr);
  return res;
}

PyObject *smx_py_gumbel_softmax_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.gumbel_softmax_backward";
  static char *kw[] = {"y", "dy", "tau", "threads", NULL};
  PyObject *yo, *dyo, *tauo, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O:gumbel_softmax_backward", kw, &yo, &dyo, &tauo, &thr))
    return NULL;
  double tau;
  if (smx_py_real_arg(fn, "tau", tauo, &tau) < 0) return NULL;
  if (!(tau > 0.0) || isinf(tau)) {
    PyErr_Format(PyExc_ValueError, "%s: tau must be positive and finite, got %R", fn, tauo);
    return NULL;
  }
  smx_options o;
  if (smx_py_parse_options(fn, NULL, NULL, thr, NULL, &o) < 0) return NULL;
  smx_py_matrix y, dy;
  if (smx_py_matrix_in(fn, "y", yo, NULL, 1, &y) < 0) return NULL;
  if (smx_py_matrix_in(fn, "dy", dyo, NULL, 1, &dy) < 0) {
    Py_DECREF(y.arr);
    return NULL;
  }
  PyObject *res = NULL;
  if (!PyArray_SAMESHAPE(y.arr, dy.arr)) {
    PyErr_Format(PyExc_ValueError, "%s: y and dy must have the same shape", fn);
    goto done;
  }
  PyArrayObject *dx = new_like(&y, (npy_intp)y.cols, NPY_FLOAT);
  if (!dx) goto done;
  smx_status s = SMX_OK;
  if (y.rows > 0 && y.cols > 0) {
    const float *yp = PyArray_DATA(y.arr), *dyp = PyArray_DATA(dy.arr);
    float *dxp = PyArray_DATA(dx);
    size_t n = y.cols;
    Py_BEGIN_ALLOW_THREADS
    s = smx_gumbel_softmax_backward_rows_f32(yp, n, dyp, n, dxp, n, y.rows, n, tau, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    Py_DECREF(dx);
    smx_py_raise_status(fn, s);
    goto done;
  }
  res = (PyObject *)dx;
done:
  Py_DECREF(y.arr);
  Py_DECREF(dy.arr);
  return res;
}
