/*
 * The row operations exposed to Python (smx.softmax, log_softmax, logsumexp, sigmoid, and _rows, the one
 * generic entry for every row operation of the op table): parse and check the arguments, pick or check the
 * output, describe the arrays to the walker (walk.c) and run it with the GIL released. No arithmetic here.
 */
#include "ops.h"

#include "bindings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrays.h"
#include "options.h"
#include "walk.h"

_Static_assert(NPY_MAXDIMS <= SMX_PY_MAX_DIMS, "the walker holds every dimension of a NumPy array");

typedef struct call_args {
  PyObject *a, *axis, *temperature, *out, *algo, *threads, *masked_row, *keepdims;
} call_args;

static int is_lse(const smx_py_job *j) { return j->op->sig == SMX_SIG_LSE; }

/* The walker's description of the row shape (x's dims around `axis`). */
static void describe_shape(smx_py_job *j, PyArrayObject *x, int axis) {
  int k = 0;
  j->n = (size_t)PyArray_DIM(x, axis);
  for (int d = 0; d < PyArray_NDIM(x); d++)
    if (d != axis) j->shape[k++] = (size_t)PyArray_DIM(x, d);
  j->outer = k;
}

/* Array a of the job: x's shape, or for a one-value-per-row array (an LSE result, lens) x's shape without
 * the axis (reduced: dropped, unless keep, where it has length 1 and is skipped). */
static void describe(smx_py_job *j, int a, PyArrayObject *arr, int nd, int axis, int reduced, int keep) {
  int k = 0;
  j->p[a] = PyArray_BYTES(arr);
  j->axis[a] = reduced ? 0 : PyArray_STRIDE(arr, axis);
  for (int d = 0; d < nd; d++) {
    if (d == axis) continue;
    j->s[a][k++] = PyArray_STRIDE(arr, reduced && !keep && d > axis ? d - 1 : d);
  }
}

/* Runs the walker with the GIL released; an exception on failure. */
static int run_job(const char *fn, smx_py_job *job) {
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_py_run(job);
  Py_END_ALLOW_THREADS
  if (s == SMX_E_UNSUPPORTED) {
    PyErr_Format(PyExc_TypeError, "%s: dtype %s is not supported%s", fn, smx_op_dtype_name(job->dtype),
                 job->backward ? " by the backward" : "");
    return -1;
  }
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    return -1;
  }
  return 0;
}

/* Runs the walker over (x, y) with the GIL released; an exception on failure. */
static int compute(const char *fn, smx_py_job *job, PyArrayObject *x, PyArrayObject *y, int axis, int keepdims) {
  memset(job->p, 0, sizeof job->p);
  memset(job->s, 0, sizeof job->s);
  describe_shape(job, x, axis);
  describe(job, SMX_PY_X, x, PyArray_NDIM(x), axis, 0, 0);
  describe(job, SMX_PY_OUT, y, PyArray_NDIM(x), axis, is_lse(job), keepdims);
  return run_job(fn, job);
}

/* axis=None (as scipy): over all elements. The input is read as one row in
 * its memory order (a view when it is contiguous in some order, else a copy)
 * and the result is laid out in that same order. A broadcast input (a zero
 * stride) has no memory order: NumPy's "keep order" may then pick one order
 * for the ravel and another for the new array, which would scatter the
 * values, so such an input is read in C order. The result is copied into
 * out= if given. */
static NPY_ORDER row_order(PyArrayObject *x) {
  for (int d = 0; d < PyArray_NDIM(x); d++)
    if (PyArray_DIM(x, d) > 1 && PyArray_STRIDE(x, d) == 0) return NPY_CORDER;
  return NPY_KEEPORDER;
}

static PyObject *run_all(const char *fn, smx_py_job *job, PyArrayObject *x, PyObject *out, int keepdims) {
  int nd = PyArray_NDIM(x), lse = is_lse(job);
  npy_intp shape[NPY_MAXDIMS];
  int rnd = lse ? (keepdims ? nd : 0) : nd;
  for (int d = 0; d < rnd; d++) shape[d] = lse ? 1 : PyArray_DIM(x, d);
  if (out && smx_py_check_out(fn, out, x, rnd, shape) < 0) return NULL;
  NPY_ORDER order = row_order(x);
  PyArrayObject *flat = (PyArrayObject *)PyArray_Ravel(x, order), *res = NULL, *yflat = NULL;
  if (!flat) return NULL;
  if (lse) {
    res = yflat = (PyArrayObject *)PyArray_SimpleNew(0, shape, PyArray_TYPE(x));
    if (!res) goto done;
    Py_INCREF(yflat);
  } else {
    /* a dense array in that order; its ravel is a view with flat's element order */
    res = (PyArrayObject *)PyArray_NewLikeArray(x, order, NULL, 0);
    if (!res) goto done;
    yflat = (PyArrayObject *)PyArray_Ravel(res, order);
    if (!yflat) goto fail;
    if (PyArray_SIZE(res) > 1 && PyArray_BASE(yflat) == NULL) {
      PyErr_Format(PyExc_RuntimeError, "%s: internal error: no flat view of the result", fn);
      goto fail;
    }
  }
  if (compute(fn, job, flat, yflat, 0, 0) < 0) goto fail;
  if (lse) {
    PyArray_Dims dims = {shape, rnd};
    PyArrayObject *r = (PyArrayObject *)PyArray_Newshape(res, &dims, NPY_CORDER);
    Py_DECREF(res);
    res = r;
    if (!res) goto done;
  }
  if (out) {
    if (PyArray_CopyInto((PyArrayObject *)out, res) < 0) goto fail;
    Py_DECREF(res);
    Py_INCREF(out);
    res = (PyArrayObject *)out;
  } else if (lse) {
    PyObject *r = PyArray_Return(res); /* a scalar, like NumPy reductions */
    res = NULL;
    Py_XDECREF(yflat);
    Py_DECREF(flat);
    return r;
  }
  goto done;
fail:
  Py_CLEAR(res);
done:
  Py_XDECREF(yflat);
  Py_DECREF(flat);
  return (PyObject *)res;
}

static PyObject *run_op(const char *fn, const char *name, const call_args *c) {
  smx_py_job job;
  memset(&job, 0, sizeof job);
  if (smx_op_find(name, &job.op) != SMX_OK) return smx_py_raise_status(fn, SMX_E_INVALID_ARG);
  int lse = is_lse(&job);
  smx_op_dtype dt;
  int axis, keepdims = 0;
  if (smx_py_parse_options(fn, c->temperature, c->algo, c->threads, c->masked_row, &job.opt) < 0) return NULL;
  if (c->keepdims && (keepdims = PyObject_IsTrue(c->keepdims)) < 0) return NULL;
  PyArrayObject *x = smx_py_input_real(fn, c->a, &dt);
  if (!x) return NULL;
  job.dtype = dt;
  int have_out = c->out && c->out != Py_None;
  int nd = PyArray_NDIM(x);
  /* A 0-d input (a scalar) is one row of one element, as in scipy.special:
   * axis None, 0 or -1; the result is a NumPy scalar unless out= is given. */
  if (nd == 0 && c->axis && c->axis != Py_None && smx_py_parse_axis(fn, c->axis, 1, &axis) < 0) {
    if (PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError,
                   "%s: axis %R is out of range for a 0-d input (a scalar is one row of one element: "
                   "axis must be None, 0 or -1)", fn, c->axis);
    }
    goto fail_x;
  }
  if (c->axis == Py_None || nd == 0) {
    PyObject *r = run_all(fn, &job, x, have_out ? c->out : NULL, keepdims);
    Py_DECREF(x);
    if (r && nd == 0 && !have_out && PyArray_Check(r)) r = PyArray_Return((PyArrayObject *)r);
    return r;
  }
  if (smx_py_parse_axis(fn, c->axis, nd, &axis) < 0) goto fail_x;

  /* the result's shape */
  npy_intp shape[NPY_MAXDIMS];
  int rnd = 0;
  for (int d = 0; d < nd; d++) {
    if (lse && d == axis) {
      if (keepdims) shape[rnd++] = 1;
    } else {
      shape[rnd++] = PyArray_DIM(x, d);
    }
  }

  PyArrayObject *y;
  if (have_out) {
    if (smx_py_check_out(fn, c->out, x, rnd, shape) < 0) goto fail_x;
    y = (PyArrayObject *)c->out;
    Py_INCREF(y);
    /* out exactly x is in-place (the library allows it); any other overlap
     * would read values already overwritten, so x is copied first. */
    int in_place = !lse && smx_py_same_elements(x, y);
    if (!in_place && smx_py_spans_overlap(x, y)) {
      PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_KEEPORDER);
      if (!copy) goto fail_y;
      Py_DECREF(x);
      x = copy;
    }
  } else if (lse) {
    y = (PyArrayObject *)PyArray_SimpleNew(rnd, shape, PyArray_TYPE(x));
    if (!y) goto fail_x;
  } else {
    /* the input's memory order, so that a Fortran or transposed input walks the same way in y */
    y = (PyArrayObject *)PyArray_NewLikeArray(x, NPY_KEEPORDER, NULL, 0);
    if (!y) goto fail_x;
  }

  int rc = compute(fn, &job, x, y, axis, keepdims);
  Py_DECREF(x);
  if (rc < 0) {
    Py_DECREF(y);
    return NULL;
  }
  /* like NumPy reductions, a full reduction without out= gives a scalar */
  if (!have_out && lse) return PyArray_Return(y);
  return (PyObject *)y;

fail_y:
  Py_DECREF(y);
fail_x:
  Py_DECREF(x);
  return NULL;
}

static int parse(const char *fmt, PyObject *args, PyObject *kwargs, call_args *c, int with_keepdims) {
  static char *kw[] = {"a", "axis", "temperature", "out", "algo", "threads", "masked_row", NULL};
  static char *kw_reduce[] = {"a", "axis", "temperature", "out", "algo", "threads", "masked_row", "keepdims", NULL};
  memset(c, 0, sizeof *c);
  if (with_keepdims)
    return PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw_reduce, &c->a, &c->axis, &c->temperature, &c->out,
                                       &c->algo, &c->threads, &c->masked_row, &c->keepdims);
  return PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw, &c->a, &c->axis, &c->temperature, &c->out, &c->algo,
                                     &c->threads, &c->masked_row);
}

/* smx.softmax, log_softmax, logsumexp: one entry each, the op's C stem as its name. */
#define SMX_PY_NORM_ENTRY(name, nopt, keep)                                                                  \
  PyObject *smx_py_##name(PyObject *self, PyObject *args, PyObject *kwargs) {                                \
    (void)self;                                                                                              \
    call_args c;                                                                                             \
    if (!parse("O|" nopt ":" #name, args, kwargs, &c, keep)) return NULL;                                   \
    return run_op("smx." #name, #name, &c);                                                                 \
  }
SMX_PY_NORM_ENTRY(softmax, "OOOOOO", 0)
SMX_PY_NORM_ENTRY(log_softmax, "OOOOOO", 0)
SMX_PY_NORM_ENTRY(logsumexp, "OOOOOOO", 1)
#undef SMX_PY_NORM_ENTRY

/* Elementwise: the last axis is walked whatever the shape (the result does not depend on it). */
PyObject *smx_py_sigmoid(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"a", "temperature", "out", "threads", NULL};
  (void)self;
  call_args c;
  memset(&c, 0, sizeof c);
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:sigmoid", kw, &c.a, &c.temperature, &c.out, &c.threads))
    return NULL;
  return run_op("smx.sigmoid", "sigmoid", &c);
}

/* ------------------------------------------------------------------ the generic row entry (_rows) */

const char smx_py_rows_doc[] =
    "_rows(name, backward, x, y, dy, out, axis, params, lens, temperature, threads, masked_nan, bf16)\n--\n\n"
    "Internal: one row operation of the op table (smx_op_find(name); include/smx/smx_ops.h), forward or\n"
    "backward, over arrays of any strides and one dtype (bf16: int16 / uint16 arrays of bfloat16 bits),\n"
    "through the walker. x, y, dy: inputs of one shape or None; out: that shape (an LSE op: without the\n"
    "axis), or None (allocated); params: the op's parameter values or None; lens: int64, the shape without\n"
    "the axis, or None. Returns out. See python/smx/_rows.py.";

int smx_py_op_params(const char *fn, const smx_op_info *op, PyObject *params, double *v, size_t *nv) {
  *nv = 0;
  if (params == Py_None) return 0;
  PyObject *seq = PySequence_Fast(params, "params must be a sequence");
  if (!seq) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if ((size_t)n > op->nvalues || n > SMX_PY_MAX_PARAMS) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_TypeError, "%s: %zd parameter values given, the operation takes %zu", fn, n, op->nvalues);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < op->nparams && k < (size_t)n; i++) {
    const smx_op_param *p = &op->params[i];
    for (size_t e = 0; e < (p->type == SMX_PARAM_DOUBLE4 ? 4u : 1u) && k < (size_t)n; e++, k++) {
      double x = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)k));
      if (x == -1.0 && PyErr_Occurred()) {
        Py_DECREF(seq);
        return -1;
      }
      int whole = p->type != SMX_PARAM_DOUBLE && p->type != SMX_PARAM_DOUBLE4;
      if (!(x >= p->min && x <= p->max) || (whole && x != floor(x))) {
        char range[64]; /* PyErr_Format has no %g */
        snprintf(range, sizeof range, "[%.6g, %.6g]", p->min, p->max);
        PyErr_Format(PyExc_ValueError, "%s: %s must be %s in %s (%s), got %R", fn, p->name,
                     whole ? "a whole number" : "a number", range, p->doc, PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)k));
        Py_DECREF(seq);
        return -1;
      }
      v[k] = x;
    }
  }
  Py_DECREF(seq);
  *nv = (size_t)n;
  return 0;
}

/* a in the job: same dtype and shape as the reference input. */
static PyArrayObject *row_input(const char *fn, const char *what, PyObject *o, int bf16, PyArrayObject *ref,
                                smx_op_dtype *dt) {
  smx_op_dtype d;
  PyArrayObject *a = smx_py_input_named(fn, what, o, bf16, &d);
  if (!a) return NULL;
  if (ref && d != *dt) {
    PyErr_Format(PyExc_TypeError, "%s: %s has dtype %s, the other inputs %s", fn, what, smx_op_dtype_name(d),
                 smx_op_dtype_name(*dt));
  } else if (ref && !PyArray_SAMESHAPE(a, ref)) {
    PyObject *got = PyObject_GetAttrString((PyObject *)a, "shape");
    PyObject *want = PyObject_GetAttrString((PyObject *)ref, "shape");
    if (got && want) PyErr_Format(PyExc_ValueError, "%s: %s has shape %R, the other inputs %R", fn, what, got, want);
    Py_XDECREF(got);
    Py_XDECREF(want);
  } else {
    *dt = d;
    return a;
  }
  Py_DECREF(a);
  return NULL;
}

PyObject *smx_py_rows(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"name", "backward", "x", "y", "dy", "out", "axis", "params", "lens", "temperature",
                       "threads", "masked_nan", "bf16", NULL};
  static const char *const names[] = {"x", "y", "dy"};
  (void)self;
  const char *name;
  int backward, axis, masked_nan, bf16;
  PyObject *in[3], *out, *params, *lens, *threads;
  double temperature;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "spOOOOiOOdOpp:_rows", kw, &name, &backward, &in[0], &in[1],
                                   &in[2], &out, &axis, &params, &lens, &temperature, &threads, &masked_nan, &bf16))
    return NULL;
  smx_py_job job;
  memset(&job, 0, sizeof job);
  char fn[96];
  if (smx_op_find(name, &job.op) != SMX_OK) return smx_py_raise_status(name, SMX_E_INVALID_ARG);
  snprintf(fn, sizeof fn, "smx.%s%s", name, backward ? "_backward" : "");
  int lse = is_lse(&job);
  double v[SMX_PY_MAX_PARAMS];
  if (smx_py_op_params(fn, job.op, params, v, &job.nparams) < 0) return NULL;
  job.params = v;
  job.backward = backward;
  job.opt.temperature = temperature;
  job.opt.flags = masked_nan ? SMX_FLAG_MASKED_ROW_NAN : 0u;
  if (smx_py_parse_threads(fn, threads, &job.opt.threads) < 0) return NULL;
  PyArrayObject *a[3] = {NULL, NULL, NULL}, *ref = NULL, *o = NULL, *ln = NULL;
  PyObject *res = NULL;
  for (int i = 0; i < 3; i++) {
    if (in[i] == Py_None) continue;
    if (!(a[i] = row_input(fn, names[i], in[i], bf16, ref, &job.dtype))) goto done;
    if (!ref) ref = a[i];
  }
  if (!ref || PyArray_NDIM(ref) < 1) {
    PyErr_Format(PyExc_ValueError, "%s: an input of at least one dimension is required", fn);
    goto done;
  }
  int nd = PyArray_NDIM(ref);
  if (axis < -nd || axis >= nd) {
    PyErr_Format(PyExc_ValueError, "%s: axis %d is out of range for an array of %d dimensions", fn, axis, nd);
    goto done;
  }
  axis = axis < 0 ? axis + nd : axis;
  npy_intp shape[NPY_MAXDIMS];
  int rnd = 0;
  for (int d = 0; d < nd; d++)
    if (!lse || d != axis) shape[rnd++] = PyArray_DIM(ref, d);
  if (out == Py_None) {
    o = lse ? (PyArrayObject *)PyArray_SimpleNew(rnd, shape, PyArray_TYPE(ref))
            : (PyArrayObject *)PyArray_NewLikeArray(ref, NPY_KEEPORDER, NULL, 0);
    if (!o) goto done;
  } else {
    if (smx_py_check_out(fn, out, ref, rnd, shape) < 0) goto done;
    o = (PyArrayObject *)out;
    Py_INCREF(o);
    /* out exactly an input is in place (the library allows it); any other overlap would read values already
     * overwritten, so that input is copied first */
    for (int i = 0; i < 3; i++) {
      if (!a[i] || (!lse && smx_py_same_elements(a[i], o)) || !smx_py_spans_overlap(a[i], o)) continue;
      PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(a[i], NPY_KEEPORDER);
      if (!c) goto done;
      Py_SETREF(a[i], c);
    }
  }
  if (lens != Py_None) {
    ln = (PyArrayObject *)PyArray_FROMANY(lens, NPY_INT64, 0, 0, NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED);
    if (!ln) goto done;
    int same = PyArray_NDIM(ln) == nd - 1;
    for (int d = 0, k = 0; same && d < nd; d++)
      if (d != axis) same = PyArray_DIM(ln, k++) == PyArray_DIM(ref, d);
    if (!same) {
      PyErr_Format(PyExc_ValueError, "%s: n must have the input's shape without the axis (one count per row)", fn);
      goto done;
    }
  }
  describe_shape(&job, ref, axis);
  for (int i = 0; i < 3; i++)
    if (a[i]) describe(&job, i, a[i], nd, axis, 0, 0);
  describe(&job, SMX_PY_OUT, o, nd, axis, lse, 0);
  if (ln) describe(&job, SMX_PY_LENS, ln, nd, axis, 1, 0);
  if (run_job(fn, &job) == 0) {
    res = (PyObject *)o;
    o = NULL;
  }
done:
  for (int i = 0; i < 3; i++) Py_XDECREF(a[i]);
  Py_XDECREF(o);
  Py_XDECREF(ln);
  return res;
}

const char smx_py_op_info_doc[] =
    "_op_info(name)\n--\n\n"
    "Internal: the op table's row for the C stem name (include/smx/smx_ops.h) as a dict: py, sig, family,\n"
    "dtypes, bwd_dtypes (names), params (tuples: name, type, default or None, min, max, doc), bound, special,\n"
    "paper. python/smx/_rows.py makes the functions' keywords, defaults and docs from it.";

static PyObject *dtype_names(unsigned bits) {
  PyObject *l = PyList_New(0);
  for (int d = SMX_OP_F64; l && d <= SMX_OP_BF16; d++) {
    if (!(bits & SMX_OP_BIT(d))) continue;
    PyObject *s = PyUnicode_FromString(smx_op_dtype_name((smx_op_dtype)d));
    if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
    Py_XDECREF(s);
  }
  return l;
}

PyObject *smx_py_op_info(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = PyUnicode_AsUTF8(arg);
  const smx_op_info *op;
  if (!name) return NULL;
  if (smx_op_find(name, &op) != SMX_OK) {
    PyErr_Format(PyExc_KeyError, "smx: no operation %R in the op table", arg);
    return NULL;
  }
  PyObject *params = PyTuple_New((Py_ssize_t)op->nparams);
  for (size_t i = 0; params && i < op->nparams; i++) {
    const smx_op_param *p = &op->params[i];
    PyObject *def = isnan(p->def) ? Py_NewRef(Py_None) : PyFloat_FromDouble(p->def);
    PyObject *t = Py_BuildValue("(ssNdds)", p->name, smx_param_type_name(p->type), def, p->min, p->max, p->doc);
    if (!t) Py_CLEAR(params);
    else PyTuple_SET_ITEM(params, (Py_ssize_t)i, t);
  }
  if (!params) return NULL;
  return Py_BuildValue("{s:z,s:s,s:s,s:N,s:N,s:N,s:z,s:z,s:z}", "py", op->py, "sig", smx_op_sig_name(op->sig),
                       "family", smx_op_family_name(op->family), "dtypes", dtype_names(op->dtypes), "bwd_dtypes",
                       dtype_names(op->bwd_dtypes), "params", params, "bound", op->bound, "special", op->special,
                       "paper", op->paper);
}

const char smx_py_op_names_doc[] =
    "_op_names()\n--\n\n"
    "Internal: the C stems of every operation of the op table, in its order (python/smx/_losses.py exports\n"
    "each target loss it finds there).";

PyObject *smx_py_op_names(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  size_t n = 0;
  smx_op_count(&n);
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    const smx_op_info *op = NULL;
    PyObject *s = smx_op_at(i, &op) == SMX_OK ? PyUnicode_FromString(op->name) : NULL;
    if (!s) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
  }
  return t;
}
