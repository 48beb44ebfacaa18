/*
 * The private functions behind smx.FeatureOOD (python/smx/_features.py):
 * include/smx/smx_features.h over NumPy arrays, the fitted model held in a
 * capsule. The Python class checks its arguments and words the errors; here
 * the arrays are taken as they are when the library can read them (float32
 * or float64 rows with any row stride) and the GIL is released while
 * fitting and scoring.
 */
#include "bindings.h"

#include <stdint.h>

#include "arrays.h"
#include "options.h"
#include "smx/smx_features.h"

#define CAPSULE "smx.feature_model"

static void capsule_free(PyObject *c) {
  smx_feature_model_destroy(PyCapsule_GetPointer(c, CAPSULE));
}

static smx_feature_model *model_of(PyObject *c) {
  return PyCapsule_GetPointer(c, CAPSULE);   /* sets TypeError-like ValueError for another object */
}

static PyObject *status_error(const char *fn, smx_status s, smx_feature_method m) {
  if (s == SMX_E_NOT_BUILT) {
    const char *why = smx_feature_method_requires(m);
    PyErr_Format(PyExc_RuntimeError, "%s: %s", fn, why ? why : smx_status_string(s));
    return NULL;
  }
  if (s == SMX_E_SINGULAR) {
    PyErr_Format(PyExc_ValueError,
                 "%s: the covariance of the training features is singular (or ViM's residual is empty): pass "
                 "cov='pinv' or cov='shrink' with shrinkage=a, or a smaller vim_dim", fn);
    return NULL;
  }
  return smx_py_raise_status(fn, s);
}

/* A 2-d float32/float64 array whose rows the library can read in place
 * (unit element stride, row stride a whole number of elements), else a
 * C-contiguous copy (float64 for other dtypes). New reference. */
static PyArrayObject *rows_of(const char *fn, const char *what, PyObject *o, size_t *ld) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(o);
  if (!a) return NULL;
  if (PyArray_NDIM(a) != 2) {
    PyErr_Format(PyExc_ValueError, "%s: %s must be 2-d (rows, features), not %d-d", fn, what, PyArray_NDIM(a));
    Py_DECREF(a);
    return NULL;
  }
  int t = PyArray_TYPE(a);
  npy_intp es = PyArray_ITEMSIZE(a);
  int ok = (t == NPY_FLOAT32 || t == NPY_FLOAT64) && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) &&
           (PyArray_DIM(a, 1) <= 1 || PyArray_STRIDE(a, 1) == es) &&
           (PyArray_DIM(a, 0) <= 1 || (PyArray_STRIDE(a, 0) >= es * PyArray_DIM(a, 1) && PyArray_STRIDE(a, 0) % es == 0));
  if (!ok) {
    PyArrayObject *c = (PyArrayObject *)PyArray_FROM_OTF((PyObject *)a, t == NPY_FLOAT32 ? NPY_FLOAT32 : NPY_FLOAT64,
                                                          NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    Py_DECREF(a);
    if (!c) return NULL;
    a = c;
  }
  es = PyArray_ITEMSIZE(a);
  *ld = PyArray_DIM(a, 0) > 1 ? (size_t)(PyArray_STRIDE(a, 0) / es) : (size_t)PyArray_DIM(a, 1);
  return a;
}

PyObject *smx_py_feature_fit(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.FeatureOOD";
  static char *kw[] = {"features", "labels", "weight", "bias", "classes", "k", "vim_dim", "react_percentile", "cov",
                       "shrinkage", "knn_index", "ivf_lists", "ivf_probe", "methods", "threads", NULL};
  PyObject *fo, *lo, *wo, *bo, *to = NULL;
  Py_ssize_t classes, k, vim_dim, lists, probe;
  double pct, shrink;
  int cov, knn, methods;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOnnndidinni|O", kw, &fo, &lo, &wo, &bo, &classes, &k, &vim_dim,
                                   &pct, &cov, &shrink, &knn, &lists, &probe, &methods, &to))
    return NULL;
  int threads;
  if (smx_py_parse_threads(fn, to, &threads)) return NULL;
  size_t ld;
  PyArrayObject *x = rows_of(fn, "train_features", fo, &ld), *l = NULL, *w = NULL, *b = NULL;
  if (!x) return NULL;
  if (lo != Py_None && !(l = (PyArrayObject *)PyArray_FROM_OTF(lo, NPY_INT64, NPY_ARRAY_IN_ARRAY))) goto fail;
  if (wo != Py_None && !(w = (PyArrayObject *)PyArray_FROM_OTF(wo, NPY_FLOAT64, NPY_ARRAY_IN_ARRAY))) goto fail;
  if (bo != Py_None && !(b = (PyArrayObject *)PyArray_FROM_OTF(bo, NPY_FLOAT64, NPY_ARRAY_IN_ARRAY))) goto fail;
  smx_feature_config c;
  memset(&c, 0, sizeof c);
  c.features = (size_t)PyArray_DIM(x, 1);
  c.classes = l ? (size_t)classes : 0;
  c.methods = (unsigned)methods;
  c.k = (size_t)k;
  c.vim_dim = (size_t)vim_dim;
  c.react_percentile = pct;
  c.cov_policy = (smx_cov_policy)cov;
  c.shrinkage = shrink;
  c.knn_index = (smx_knn_index)knn;
  c.ivf_lists = (size_t)lists;
  c.ivf_probe = (size_t)probe;
  if (w) {
    c.weight = PyArray_DATA(w);
    c.ldw = c.features;
    c.head_rows = (size_t)PyArray_DIM(w, 0);
    c.bias = b ? PyArray_DATA(b) : NULL;
  }
  smx_feature_model *m = NULL;
  smx_status s = smx_feature_model_create(&c, &m);
  size_t n = (size_t)PyArray_DIM(x, 0);
  const int64_t *lab = l ? PyArray_DATA(l) : NULL;
  int f64 = PyArray_TYPE(x) == NPY_FLOAT64;
  smx_options o;
  memset(&o, 0, sizeof o);
  o.threads = threads;
  if (!s) {
    Py_BEGIN_ALLOW_THREADS
    s = f64 ? smx_feature_model_fit_batch_f64(m, PyArray_DATA(x), ld, lab, n)
            : smx_feature_model_fit_batch_f32(m, PyArray_DATA(x), ld, lab, n);
    if (!s) s = smx_feature_model_finish(m, &o);
    Py_END_ALLOW_THREADS
  }
  Py_DECREF(x);
  Py_XDECREF(l);
  Py_XDECREF(w);
  Py_XDECREF(b);
  if (s) {
    smx_feature_model_destroy(m);
    smx_feature_method first = SMX_FEAT_MAHALANOBIS;
    for (int i = 5; i >= 1; i--)
      if (((unsigned)methods & SMX_FEAT_BIT(i)) && smx_feature_method_requires((smx_feature_method)i)) first = i;
    if (!methods && s == SMX_E_NOT_BUILT) first = SMX_FEAT_KNN;
    return status_error(fn, s, first);
  }
  PyObject *cap = PyCapsule_New(m, CAPSULE, capsule_free);
  if (!cap) smx_feature_model_destroy(m);
  return cap;
fail:
  Py_XDECREF(x);
  Py_XDECREF(l);
  Py_XDECREF(w);
  Py_XDECREF(b);
  return NULL;
}

PyObject *smx_py_feature_score(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  static const char *fn = "smx.FeatureOOD.score";
  static char *kw[] = {"model", "features", "method", "logits", "threads", NULL};
  PyObject *mo, *fo, *lo = Py_None, *to = NULL;
  const char *name;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOs|OO", kw, &mo, &fo, &name, &lo, &to)) return NULL;
  smx_feature_model *m = model_of(mo);
  if (!m) return NULL;
  smx_feature_method me;
  if (smx_feature_method_from_name(name, &me)) {
    PyErr_Format(PyExc_ValueError, "%s: unknown method '%s' (mahalanobis, knn, vim, residual, react)", fn, name);
    return NULL;
  }
  int threads;
  if (smx_py_parse_threads(fn, to, &threads)) return NULL;
  size_t ld, ldl = 0;
  PyArrayObject *x = rows_of(fn, "features", fo, &ld), *l = NULL;
  if (!x) return NULL;
  if (lo != Py_None) {
    PyArrayObject *t = (PyArrayObject *)PyArray_FROM_OTF(lo, PyArray_TYPE(x), NPY_ARRAY_IN_ARRAY);
    if (!t) { Py_DECREF(x); return NULL; }
    l = t;
    if (PyArray_NDIM(l) != 2 || PyArray_DIM(l, 0) != PyArray_DIM(x, 0)) {
      PyErr_Format(PyExc_ValueError, "%s: logits must be 2-d with one row per feature row", fn);
      Py_DECREF(x);
      Py_DECREF(l);
      return NULL;
    }
    ldl = (size_t)PyArray_DIM(l, 1);
  }
  npy_intp n = PyArray_DIM(x, 0);
  PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_FLOAT64);
  if (!out) { Py_DECREF(x); Py_XDECREF(l); return NULL; }
  smx_options o;
  memset(&o, 0, sizeof o);
  o.threads = threads;
  smx_status s;
  int f64 = PyArray_TYPE(x) == NPY_FLOAT64;
  Py_BEGIN_ALLOW_THREADS
  s = f64 ? smx_feature_score_f64(m, me, PyArray_DATA(x), ld, l ? PyArray_DATA(l) : NULL, ldl, (size_t)n,
                                  PyArray_DATA(out), &o)
          : smx_feature_score_f32(m, me, PyArray_DATA(x), ld, l ? PyArray_DATA(l) : NULL, ldl, (size_t)n,
                                  PyArray_DATA(out), &o);
  Py_END_ALLOW_THREADS
  Py_DECREF(x);
  Py_XDECREF(l);
  if (s) {
    Py_DECREF(out);
    return status_error(fn, s, me);
  }
  return (PyObject *)out;
}

PyObject *smx_py_feature_save(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *mo, *po;
  if (!PyArg_ParseTuple(args, "OO&", &mo, PyUnicode_FSConverter, &po)) return NULL;
  smx_feature_model *m = model_of(mo);
  if (!m) { Py_DECREF(po); return NULL; }
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_feature_model_save(m, PyBytes_AS_STRING(po));
  Py_END_ALLOW_THREADS
  if (s == SMX_E_IO) PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, po);
  else if (s) smx_py_raise_status("smx.FeatureOOD.save", s);
  Py_DECREF(po);
  if (s) return NULL;
  Py_RETURN_NONE;
}

PyObject *smx_py_feature_load(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *po;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &po)) return NULL;
  smx_feature_model *m = NULL;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_feature_model_load(PyBytes_AS_STRING(po), 0, &m);
  Py_END_ALLOW_THREADS
  if (s == SMX_E_IO) PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, po);
  else if (s == SMX_E_PARSE)
    PyErr_Format(PyExc_ValueError, "smx.FeatureOOD.load: %S is not a feature model of this version (or it is "
                 "truncated or corrupted)", po);
  else if (s) status_error("smx.FeatureOOD.load", s, SMX_FEAT_KNN);
  Py_DECREF(po);
  if (s) return NULL;
  PyObject *cap = PyCapsule_New(m, CAPSULE, capsule_free);
  if (!cap) smx_feature_model_destroy(m);
  return cap;
}

PyObject *smx_py_feature_info(PyObject *self, PyObject *mo) {
  (void)self;
  smx_feature_model *m = model_of(mo);
  if (!m) return NULL;
  smx_feature_info i;
  if (smx_feature_model_info(m, &i)) return smx_py_raise_status("smx.FeatureOOD", SMX_E_INVALID_ARG);
  PyObject *methods = PyList_New(0);
  if (!methods) return NULL;
  for (int me = 1; me <= 5; me++)
    if (i.methods & SMX_FEAT_BIT(me)) {
      PyObject *s = PyUnicode_FromString(smx_feature_method_name((smx_feature_method)me));
      if (!s || PyList_Append(methods, s)) { Py_XDECREF(s); Py_DECREF(methods); return NULL; }
      Py_DECREF(s);
    }
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:N,s:d,s:d,s:d,s:n}", "features", (Py_ssize_t)i.features, "classes",
                       (Py_ssize_t)i.classes, "rows", (Py_ssize_t)i.rows, "k", (Py_ssize_t)i.k, "vim_dim",
                       (Py_ssize_t)i.vim_dim, "methods", methods, "react_percentile", i.react_percentile,
                       "react_threshold", i.react_threshold, "vim_alpha", i.vim_alpha, "cov_rank",
                       (Py_ssize_t)i.cov_rank);
}

PyObject *smx_py_feature_requires(PyObject *self, PyObject *no) {
  (void)self;
  const char *name = PyUnicode_AsUTF8(no);
  if (!name) return NULL;
  smx_feature_method me;
  if (smx_feature_method_from_name(name, &me)) {
    PyErr_Format(PyExc_ValueError, "unknown feature method %R", no);
    return NULL;
  }
  const char *why = smx_feature_method_requires(me);
  if (!why) Py_RETURN_NONE;
  return PyUnicode_FromString(why);
}
