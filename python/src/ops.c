/*
 * The three functions exposed to Python: parse and check the arguments,
 * pick or check the output, describe the arrays to the walker (walk.c) and
 * run it with the GIL released. No arithmetic here.
 */
#include "ops.h"

#include "arrays.h"
#include "options.h"
#include "walk.h"

_Static_assert(NPY_MAXDIMS <= SMX_PY_MAX_DIMS, "the walker holds every dimension of a NumPy array");

typedef struct call_args {
  PyObject *a, *axis, *temperature, *out, *algo, *threads, *masked_row, *keepdims;
} call_args;

/* Fills the walker's description of x (and y) around `axis`. For log-sum-exp,
 * y has the reduced shape: with keepdims its axis has length 1 and is skipped. */
static void describe(smx_py_job *j, PyArrayObject *x, PyArrayObject *y, int axis, int keepdims) {
  int nd = PyArray_NDIM(x), k = 0, lse = j->op == SMX_PY_LOGSUMEXP;
  j->x = PyArray_BYTES(x);
  j->y = PyArray_BYTES(y);
  j->n = (size_t)PyArray_DIM(x, axis);
  j->x_axis = PyArray_STRIDE(x, axis);
  j->y_axis = lse ? 0 : PyArray_STRIDE(y, axis);
  for (int d = 0; d < nd; d++) {
    if (d == axis) continue;
    int yd = lse && !keepdims && d > axis ? d - 1 : d;
    j->shape[k] = (size_t)PyArray_DIM(x, d);
    j->xs[k] = PyArray_STRIDE(x, d);
    j->ys[k] = PyArray_STRIDE(y, yd);
    k++;
  }
  j->outer = k;
}

/* Runs the walker over (x, y) with the GIL released; an exception on failure. */
static int compute(const char *fn, smx_py_job *job, PyArrayObject *x, PyArrayObject *y, int axis, int keepdims) {
  describe(job, x, y, axis, keepdims);
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_py_run(job);
  Py_END_ALLOW_THREADS
  if (s != SMX_OK) {
    smx_py_raise_status(fn, s);
    return -1;
  }
  return 0;
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
  int nd = PyArray_NDIM(x), lse = job->op == SMX_PY_LOGSUMEXP;
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

static PyObject *run_op(const char *fn, smx_py_op op, const call_args *c) {
  smx_py_job job;
  smx_py_dtype dt;
  int axis, keepdims = 0;
  if (smx_py_parse_options(fn, c->temperature, c->algo, c->threads, c->masked_row, &job.opt) < 0) return NULL;
  if (c->keepdims && (keepdims = PyObject_IsTrue(c->keepdims)) < 0) return NULL;
  PyArrayObject *x = smx_py_input_real(fn, c->a, &dt);
  if (!x) return NULL;
  job.op = op;
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
    if (op == SMX_PY_LOGSUMEXP && d == axis) {
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
    int in_place = op != SMX_PY_LOGSUMEXP && smx_py_same_elements(x, y);
    if (!in_place && smx_py_spans_overlap(x, y)) {
      PyArrayObject *copy = (PyArrayObject *)PyArray_NewCopy(x, NPY_KEEPORDER);
      if (!copy) goto fail_y;
      Py_DECREF(x);
      x = copy;
    }
  } else if (op == SMX_PY_LOGSUMEXP) {
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
  if (!have_out && op == SMX_PY_LOGSUMEXP) return PyArray_Return(y);
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

PyObject *smx_py_softmax(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  call_args c;
  if (!parse("O|OOOOOO:softmax", args, kwargs, &c, 0)) return NULL;
  return run_op("smx.softmax", SMX_PY_SOFTMAX, &c);
}

PyObject *smx_py_log_softmax(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  call_args c;
  if (!parse("O|OOOOOO:log_softmax", args, kwargs, &c, 0)) return NULL;
  return run_op("smx.log_softmax", SMX_PY_LOG_SOFTMAX, &c);
}

PyObject *smx_py_logsumexp(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  call_args c;
  if (!parse("O|OOOOOOO:logsumexp", args, kwargs, &c, 1)) return NULL;
  return run_op("smx.logsumexp", SMX_PY_LOGSUMEXP, &c);
}

/* Elementwise: the last axis is walked whatever the shape (the result does not depend on it). */
PyObject *smx_py_sigmoid(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"a", "temperature", "out", "threads", NULL};
  (void)self;
  call_args c;
  memset(&c, 0, sizeof c);
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:sigmoid", kw, &c.a, &c.temperature, &c.out, &c.threads))
    return NULL;
  return run_op("smx.sigmoid", SMX_PY_SIGMOID, &c);
}
