/*
 * smx.score, ood_metrics, calibration, fit_temperature: the f32 entry points
 * of include/smx/smx_scores.h and smx_metrics.h (float16 and float64 logits are converted to
 * float32 first; float32 logits are read in place at their row stride when their rows are
 * unit-stride and evenly spaced), one call each with the GIL released, results as float64
 * NumPy arrays or dicts.
 */
#include "bindings.h"

#include <stdint.h>
#include <stdlib.h>

#include "matrix.h"
#include "options.h"
#include "smx/smx.h"

PyObject *smx_py_no_optimum_error = NULL;

/* labels: integers, one per row of m, as int64 (the library's target type). */
static PyArrayObject *labels_for(const char *fn, PyObject *lo, const smx_py_matrix *m) {
  PyArrayObject *l = smx_py_int_input(fn, "labels", lo, NPY_INT64);
  if (!l) return NULL;
  int nd = PyArray_NDIM(m->arr), same = PyArray_NDIM(l) == nd - 1;
  for (int d = 0; same && d < nd - 1; d++) same = PyArray_DIM(l, d) == PyArray_DIM(m->arr, d);
  if (!same) {
    PyErr_Format(PyExc_ValueError, "%s: labels must have the shape of logits without its last (class) axis", fn);
    Py_DECREF(l);
    return NULL;
  }
  const int64_t *v = PyArray_DATA(l);
  for (size_t r = 0; r < m->rows; r++) {
    if (v[r] < 0 || (uint64_t)v[r] >= (uint64_t)m->cols) {
      PyErr_Format(PyExc_ValueError, "%s: label %lld (row %zu) is outside [0, %zu)", fn, (long long)v[r], r, m->cols);
      Py_DECREF(l);
      return NULL;
    }
  }
  return l;
}

PyObject *smx_py_score(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.score";
  static char *kw[] = {"logits", "kind", "temperature", "gen_gamma", "gen_m", "templates", "double", "threads", NULL};
  PyObject *xo, *ko = NULL, *temp = NULL, *gg = NULL, *gm = NULL, *tpl = NULL, *dbl = NULL, *thr = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOOOOO:score", kw, &xo, &ko, &temp, &gg, &gm, &tpl, &dbl,
                                   &thr))
    return NULL;
  int threads;
  if (smx_py_parse_threads(fn, thr, &threads) < 0) return NULL;
  smx_score_kind kind = SMX_SCORE_MSP;
  if (ko) {
    if (!PyUnicode_Check(ko)) {
      PyErr_Format(PyExc_TypeError, "%s: kind must be a str such as 'msp' or 'energy', not %.100s", fn,
                   Py_TYPE(ko)->tp_name);
      return NULL;
    }
    const char *s = PyUnicode_AsUTF8(ko);
    if (!s) return NULL;
    if (smx_score_from_name(s, &kind) != SMX_OK) {
      PyErr_Format(PyExc_ValueError,
                   "%s: unknown score kind %R (msp, max_logit, energy, neg_entropy, margin_prob, margin_logit, gen, "
                   "odin, kl_matching, nonuniformity)",
                   fn, ko);
      return NULL;
    }
  }
  smx_score_params p = {0};
  if (temp && temp != Py_None) {
    if (smx_py_real_arg(fn, "temperature", temp, &p.temperature) < 0) return NULL;
    if (!(p.temperature > 0.0) || isinf(p.temperature)) {
      PyErr_Format(PyExc_ValueError, "%s: temperature must be positive and finite, got %R", fn, temp);
      return NULL;
    }
  }
  if (gg && gg != Py_None) {
    if (smx_py_real_arg(fn, "gen_gamma", gg, &p.gen_gamma) < 0) return NULL;
    if (!(p.gen_gamma > 0.0 && p.gen_gamma <= 1.0)) {
      PyErr_Format(PyExc_ValueError, "%s: gen_gamma must be in (0, 1], got %R", fn, gg);
      return NULL;
    }
  }
  long long m_ = 0;
  if (gm && gm != Py_None && smx_py_int_arg(fn, "gen_m", gm, 1, INT64_MAX, &m_) < 0) return NULL;
  p.gen_m = (size_t)m_;
  int d = 0;
  if (dbl && (d = PyObject_IsTrue(dbl)) < 0) return NULL;
  p.flags = d ? SMX_SCORE_FLAG_DOUBLE : 0;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, 1 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyArrayObject *out = NULL, *t = NULL;
  if (kind == SMX_SCORE_KL_MATCHING) {
    if (!tpl || tpl == Py_None) {
      PyErr_Format(PyExc_ValueError, "%s: kind 'kl_matching' needs templates= (a K x K float64 array, see "
                   "smx.kl_templates)", fn);
      goto done;
    }
    t = (PyArrayObject *)PyArray_FromAny(tpl, PyArray_DescrFromType(NPY_DOUBLE), 2, 2,
                                         NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    if (!t) goto done;
    if ((size_t)PyArray_DIM(t, 0) != m.cols || (size_t)PyArray_DIM(t, 1) != m.cols) {
      PyErr_Format(PyExc_ValueError, "%s: templates must be %zu x %zu (classes x classes)", fn, m.cols, m.cols);
      goto done;
    }
    p.templates = PyArray_DATA(t);
  } else if (tpl && tpl != Py_None) {
    PyErr_Format(PyExc_ValueError, "%s: templates= is only for kind 'kl_matching'", fn);
    goto done;
  }
  if (m.cols == 0 && m.rows > 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto done;
  }
  npy_intp shape[NPY_MAXDIMS];
  int nd = PyArray_NDIM(m.arr);
  for (int i = 0; i < nd - 1; i++) shape[i] = PyArray_DIM(m.arr, i);
  if (!(out = (PyArrayObject *)PyArray_SimpleNew(nd - 1, shape, NPY_DOUBLE))) goto done;
  smx_status s = SMX_OK;
  if (m.rows > 0) {
    const float *xp = PyArray_DATA(m.arr);
    double *op = PyArray_DATA(out);
    smx_options o = {.threads = threads};
    Py_BEGIN_ALLOW_THREADS
    s = smx_scores_rows_f32(xp, m.ld, op, m.rows, m.cols, kind, &p, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    Py_CLEAR(out);
  }
done:
  Py_XDECREF(t);
  Py_DECREF(m.arr);
  return out ? PyArray_Return(out) : NULL;
}

/* A 1-D array of float scores: float64 stays float64, float16/32 become float32. */
static PyArrayObject *scores_in(const char *fn, const char *what, PyObject *o, int type) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(o, PyArray_DescrFromType(type), 1, 1,
                                                      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
  if (!a) {
    if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "%s: %s must be a 1-D array of float scores", fn, what);
    }
  }
  return a;
}

static int float_type(const char *fn, const char *what, PyObject *o, int *type) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(o);
  if (!a) return -1;
  int t = PyArray_TYPE(a);
  Py_DECREF(a);
  if (t != NPY_HALF && t != NPY_FLOAT && t != NPY_DOUBLE) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be float16, float32 or float64 scores", fn, what);
    return -1;
  }
  *type = t == NPY_DOUBLE ? NPY_DOUBLE : NPY_FLOAT;
  return 0;
}

static int put(PyObject *d, const char *k, PyObject *v) {
  if (!v) return -1;
  int r = PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
  return r;
}

PyObject *smx_py_ood_metrics(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.ood_metrics";
  static char *kw[] = {"id_scores", "ood_scores", "tpr", NULL};
  PyObject *io, *oo, *tpro = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:ood_metrics", kw, &io, &oo, &tpro)) return NULL;
  double tpr = 0.95;
  if (tpro && smx_py_real_arg(fn, "tpr", tpro, &tpr) < 0) return NULL;
  if (!(tpr > 0.0 && tpr <= 1.0)) {
    PyErr_Format(PyExc_ValueError, "%s: tpr must be in (0, 1], got %R", fn, tpro);
    return NULL;
  }
  int ti, to;
  if (float_type(fn, "id_scores", io, &ti) < 0 || float_type(fn, "ood_scores", oo, &to) < 0) return NULL;
  int type = ti == NPY_DOUBLE || to == NPY_DOUBLE ? NPY_DOUBLE : NPY_FLOAT; /* both in one precision */
  PyArrayObject *a = scores_in(fn, "id_scores", io, type), *b = a ? scores_in(fn, "ood_scores", oo, type) : NULL;
  PyObject *d = NULL;
  if (!b) goto done;
  size_t na = (size_t)PyArray_DIM(a, 0), nb = (size_t)PyArray_DIM(b, 0);
  if (na == 0 || nb == 0) {
    PyErr_Format(PyExc_ValueError, "%s: id_scores and ood_scores must both be non-empty", fn);
    goto done;
  }
  smx_ood_metrics r;
  smx_status s;
  {
    const void *ap = PyArray_DATA(a), *bp = PyArray_DATA(b);
    Py_BEGIN_ALLOW_THREADS
    s = type == NPY_DOUBLE ? smx_ood_metrics_f64(ap, bp, &r, na, nb, tpr, NULL)
                           : smx_ood_metrics_f32(ap, bp, &r, na, nb, tpr, NULL);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    if (s == SMX_E_INVALID_ARG)
      PyErr_Format(PyExc_ValueError, "%s: the scores must not contain NaN (%s)", fn, smx_status_string(s));
    else
      smx_py_raise_status(fn, s);
    goto done;
  }
  if (!(d = PyDict_New())) goto done;
  if (put(d, "auroc", PyFloat_FromDouble(r.auroc)) || put(d, "ap_in", PyFloat_FromDouble(r.ap_in)) ||
      put(d, "ap_out", PyFloat_FromDouble(r.ap_out)) ||
      put(d, "aupr_in_trapz", PyFloat_FromDouble(r.aupr_in_trapz)) ||
      put(d, "aupr_out_trapz", PyFloat_FromDouble(r.aupr_out_trapz)) ||
      put(d, "fpr_idpos_exact", PyFloat_FromDouble(r.fpr_idpos_exact)) || put(d, "fpr_oodpos_exact", PyFloat_FromDouble(r.fpr_oodpos_exact)) ||
      put(d, "fpr_oodpos_openood", PyFloat_FromDouble(r.fpr_oodpos_openood)) ||
      put(d, "fpr_idpos_nearest", PyFloat_FromDouble(r.fpr_idpos_nearest)) ||
      put(d, "fpr_oodpos_nearest", PyFloat_FromDouble(r.fpr_oodpos_nearest)) ||
      put(d, "thr_idpos_exact", PyFloat_FromDouble(r.thr_idpos_exact)) || put(d, "thr_oodpos_exact", PyFloat_FromDouble(r.thr_oodpos_exact)) ||
      put(d, "tpr", PyFloat_FromDouble(r.tpr)) || put(d, "n_id", PyLong_FromUnsignedLongLong(r.n_id)) ||
      put(d, "n_ood", PyLong_FromUnsignedLongLong(r.n_ood)) ||
      put(d, "n_tied_values", PyLong_FromUnsignedLongLong(r.n_tied_values)))
    Py_CLEAR(d);
done:
  Py_XDECREF(a);
  Py_XDECREF(b);
  return d;
}

PyObject *smx_py_calibration(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.calibration";
  static char *kw[] = {"logits", "labels", "bins", "temperature", NULL};
  PyObject *xo, *lo, *bo = NULL, *temp = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO:calibration", kw, &xo, &lo, &bo, &temp)) return NULL;
  long long bins = 15;
  if (bo && smx_py_int_arg(fn, "bins", bo, 1, 100000, &bins) < 0) return NULL;
  double T = 1.0;
  if (temp && smx_py_real_arg(fn, "temperature", temp, &T) < 0) return NULL;
  if (!(T > 0.0) || isinf(T)) {
    PyErr_Format(PyExc_ValueError, "%s: temperature must be positive and finite, got %R", fn, temp);
    return NULL;
  }
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, 1 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *d = NULL;
  smx_reliability_bin *rb = NULL;
  PyArrayObject *l = labels_for(fn, lo, &m);
  if (!l) goto done;
  if (m.rows == 0 || m.cols == 0) {
    PyErr_Format(PyExc_ValueError, "%s: needs at least one row and one class", fn);
    goto done;
  }
  if (!(rb = PyMem_Calloc((size_t)bins, sizeof *rb))) {
    PyErr_NoMemory();
    goto done;
  }
  smx_calibration c;
  smx_status s;
  {
    const float *xp = PyArray_DATA(m.arr);
    const int64_t *lp = PyArray_DATA(l);
    smx_options o = {.temperature = T};
    Py_BEGIN_ALLOW_THREADS
    s = smx_calibration_rows_f32(xp, m.ld, lp, &c, rb, m.rows, m.cols, (size_t)bins, &o);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    if (s == SMX_E_INVALID_ARG)
      PyErr_Format(PyExc_ValueError, "%s: refused: NaN logits or a label outside [0, K) (%s)", fn,
                   smx_status_string(s));
    else
      smx_py_raise_status(fn, s);
    goto done;
  }
  npy_intp nb = (npy_intp)bins;
  PyArrayObject *blo = (PyArrayObject *)PyArray_SimpleNew(1, &nb, NPY_DOUBLE),
                *bhi = (PyArrayObject *)PyArray_SimpleNew(1, &nb, NPY_DOUBLE),
                *bn = (PyArrayObject *)PyArray_SimpleNew(1, &nb, NPY_INT64),
                *bc = (PyArrayObject *)PyArray_SimpleNew(1, &nb, NPY_DOUBLE),
                *ba = (PyArrayObject *)PyArray_SimpleNew(1, &nb, NPY_DOUBLE);
  if (blo && bhi && bn && bc && ba) {
    for (npy_intp i = 0; i < nb; i++) {
      ((double *)PyArray_DATA(blo))[i] = rb[i].lo;
      ((double *)PyArray_DATA(bhi))[i] = rb[i].hi;
      ((int64_t *)PyArray_DATA(bn))[i] = (int64_t)rb[i].n;
      ((double *)PyArray_DATA(bc))[i] = rb[i].conf;
      ((double *)PyArray_DATA(ba))[i] = rb[i].acc;
    }
    d = PyDict_New();
  }
  if (!d || put(d, "n", PyLong_FromUnsignedLongLong(c.n)) || put(d, "acc", PyFloat_FromDouble(c.acc)) ||
      put(d, "nll", PyFloat_FromDouble(c.nll)) || put(d, "brier", PyFloat_FromDouble(c.brier)) ||
      put(d, "ece", PyFloat_FromDouble(c.ece)) || put(d, "mce", PyFloat_FromDouble(c.mce)) ||
      put(d, "adaptive_ece", PyFloat_FromDouble(c.adaptive_ece)) ||
      put(d, "classwise_ece", PyFloat_FromDouble(c.classwise_ece)) ||
      put(d, "bin_lo", (PyObject *)blo) || put(d, "bin_hi", (PyObject *)bhi) || put(d, "bin_count", (PyObject *)bn) ||
      put(d, "bin_conf", (PyObject *)bc) || put(d, "bin_acc", (PyObject *)ba)) {
    Py_CLEAR(d);
  }
  blo = bhi = bn = bc = ba = NULL; /* put() took them (or they are NULL) */
done:
  PyMem_Free(rb);
  Py_XDECREF(l);
  Py_DECREF(m.arr);
  return d;
}

PyObject *smx_py_fit_temperature(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.fit_temperature";
  static char *kw[] = {"logits", "labels", "return_info", NULL};
  PyObject *xo, *lo, *ri = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:fit_temperature", kw, &xo, &lo, &ri)) return NULL;
  int want_info = 0;
  if (ri && (want_info = PyObject_IsTrue(ri)) < 0) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, 1 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyObject *res = NULL, *info = NULL;
  PyArrayObject *l = labels_for(fn, lo, &m);
  if (!l) goto done;
  if (m.rows == 0 || m.cols == 0) {
    PyErr_Format(PyExc_ValueError, "%s: needs at least one row and one class", fn);
    goto done;
  }
  double T = NAN;
  smx_ts_info ti;
  memset(&ti, 0, sizeof ti);
  smx_status s;
  {
    const float *xp = PyArray_DATA(m.arr);
    const int64_t *lp = PyArray_DATA(l);
    Py_BEGIN_ALLOW_THREADS
    s = smx_temperature_fit_f32(xp, m.ld, lp, &T, &ti, m.rows, m.cols, NULL);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK && s != SMX_E_NO_OPTIMUM) {
    if (s == SMX_E_INVALID_ARG)
      PyErr_Format(PyExc_ValueError, "%s: refused: NaN or +inf logits, or a label outside [0, K) (%s)", fn,
                   smx_status_string(s));
    else
      smx_py_raise_status(fn, s);
    goto done;
  }
  const char *outcome = ti.outcome == SMX_TS_TO_ZERO ? "to_zero" : ti.outcome == SMX_TS_TO_INFINITY ? "to_infinity"
                                                                                                    : "optimum";
  if (!(info = PyDict_New()) || put(info, "outcome", PyUnicode_FromString(outcome)) ||
      put(info, "iterations", PyLong_FromLong(ti.iterations)) || put(info, "nll_at_1", PyFloat_FromDouble(ti.nll_at_1)) ||
      put(info, "nll_at_t", PyFloat_FromDouble(ti.nll_at_t)) || put(info, "grad", PyFloat_FromDouble(ti.grad)))
    goto done;
  if (s == SMX_E_NO_OPTIMUM) {
    const char *why = ti.outcome == SMX_TS_TO_ZERO
                          ? "every sample has its true class at the row maximum: the NLL keeps falling as T -> 0"
                          : "the true-class logit is not above the row mean on average: the NLL keeps falling as "
                            "T -> inf";
    PyObject *e = PyObject_CallFunction(smx_py_no_optimum_error, "s", why);
    if (e) {
      PyObject_SetAttrString(e, "outcome", PyDict_GetItemString(info, "outcome"));
      PyObject_SetAttrString(e, "info", info);
      PyErr_SetObject(smx_py_no_optimum_error, e);
      Py_DECREF(e);
    }
    goto done;
  }
  res = want_info ? Py_BuildValue("(dO)", T, info) : PyFloat_FromDouble(T);
done:
  Py_XDECREF(info);
  Py_XDECREF(l);
  Py_DECREF(m.arr);
  return res;
}

PyObject *smx_py_kl_templates(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.kl_templates";
  static char *kw[] = {"logits", NULL};
  PyObject *xo;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:kl_templates", kw, &xo)) return NULL;
  smx_py_matrix m;
  if (smx_py_matrix_in(fn, "logits", xo, NULL, 1 | SMX_PY_IN_PLACE, &m) < 0) return NULL;
  PyArrayObject *t = NULL;
  if (m.cols == 0) {
    PyErr_Format(PyExc_ValueError, "%s: logits have no classes (last axis of length 0)", fn);
    goto done;
  }
  npy_intp shape[2] = {(npy_intp)m.cols, (npy_intp)m.cols};
  if (!(t = (PyArrayObject *)PyArray_SimpleNew(2, shape, NPY_DOUBLE))) goto done;
  smx_status s;
  {
    const float *xp = PyArray_DATA(m.arr);
    double *tp = PyArray_DATA(t);
    Py_BEGIN_ALLOW_THREADS
    s = smx_kl_templates_fit_f32(xp, m.ld, tp, NULL, m.rows, m.cols, NULL);
    Py_END_ALLOW_THREADS
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    Py_CLEAR(t);
  }
done:
  Py_DECREF(m.arr);
  return (PyObject *)t;
}
