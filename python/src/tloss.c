/*
 * smx._smx._tloss: every target loss of the op table (signature class TLOSS: int64 class targets and
 * nothing else, the gradient in the same call; include/smx/smx_ops.h) from NumPy, through the one generic
 * entry smx_op_rows. python/smx/_losses.py makes smx.<py> and smx.torch.<py> of each such op from the table,
 * so a new TLOSS op needs no Python code.
 *
 * The logits are read where they are when their rows are one evenly spaced run of unit-stride rows (a C
 * array, a slice of rows, any view whose leading axes merge into one): ld is the caller's row stride. Any
 * other layout (a class axis that is not unit-stride, rows not evenly spaced) is copied once to a C array.
 * Half storage runs the op's own f16 / bf16 entry, or float32 (one converted copy) where it has none.
 */
#include "bindings.h"

#include <stdio.h>
#include <string.h>

#include "arrays.h"
#include "matrix.h"
#include "ops.h"
#include "options.h"
#include "variants_loss.h"

const char smx_py_tloss_doc[] =
    "_tloss(name, logits, targets, *params, reduction='mean', ignore_index=-100, grad_scale=1.0,\n"
    "       return_grad=False, threads=0, bf16=False)\n--\n\n"
    "Internal: the target loss name (a C stem of class TLOSS in the op table) of logits [..., C] (classes\n"
    "last; float16, float32, float64; bf16=True: int16 / uint16 arrays of bfloat16 bits) at int64 targets of\n"
    "shape logits.shape[:-1], params the op's parameter values in the table's order (fewer: the rest take\n"
    "their defaults). Logits whose rows are evenly spaced and unit-stride are read in place; others are\n"
    "copied once. Returns the loss (an array for 'none', else a float) or (loss, grad). See\n"
    "python/smx/_losses.py.";

/* a as float32 (a new C array) from f16 / bf16 storage: for an op without an entry for that half type. */
static PyArrayObject *widen(PyArrayObject *a, smx_op_dtype dt) {
  PyArrayObject *c = (PyArrayObject *)PyArray_FromAny((PyObject *)a, PyArray_DescrFromType(PyArray_TYPE(a)), 0, 0,
                                                      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
  if (!c) return NULL;
  PyArrayObject *f = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), NPY_FLOAT);
  if (f) {
    size_t n = (size_t)PyArray_SIZE(a);
    if (dt == SMX_OP_F16) smx_f16_to_f32_n(PyArray_DATA(c), PyArray_DATA(f), n);
    else smx_bf16_to_f32_n(PyArray_DATA(c), PyArray_DATA(f), n);
  }
  Py_DECREF(c);
  return f;
}

/* The logits as the op's entry takes them (a new reference): the caller's array with ld its row stride, or a
 * copy (C order: ld = cols); *dt the dtype computed in. NULL with a TypeError / ValueError naming logits. */
static PyArrayObject *logits_in(const char *fn, const smx_op_info *op, PyObject *xo, int bf16, smx_op_dtype *dt,
                                size_t *ld) {
  PyArrayObject *probe = (PyArrayObject *)PyArray_FROM_O(xo);
  if (!probe) return NULL;
  int ints = !bf16 && (PyArray_ISINTEGER(probe) || PyArray_ISBOOL(probe));
  Py_DECREF(probe);
  if (ints) {
    PyErr_Format(PyExc_TypeError, "%s: logits must be float16, float32 or float64, not integers: cast first", fn);
    return NULL;
  }
  PyArrayObject *x = smx_py_input_named(fn, "logits", xo, bf16, dt);
  if (!x) return NULL;
  int nd = PyArray_NDIM(x);
  if (nd < 1) {
    PyErr_Format(PyExc_ValueError, "%s: logits must have at least 1 dimension (the classes), got a 0-d array", fn);
    goto fail;
  }
  if (!(op->dtypes & SMX_OP_BIT(*dt))) {
    if ((*dt != SMX_OP_F16 && *dt != SMX_OP_BF16) || !(op->dtypes & SMX_OP_BIT(SMX_OP_F32))) {
      PyErr_Format(PyExc_TypeError, "%s: logits of dtype %s are not supported by this loss", fn,
                   smx_op_dtype_name(*dt));
      goto fail;
    }
    Py_SETREF(x, widen(x, *dt));
    if (!x) return NULL;
    *dt = SMX_OP_F32;
  }
  size_t cols = (size_t)PyArray_DIM(x, nd - 1), rows = cols ? (size_t)PyArray_SIZE(x) / cols : 1;
  for (int d = 0; cols == 0 && d < nd - 1; d++) rows *= (size_t)PyArray_DIM(x, d);
  if ((*ld = smx_py_row_ld(x, rows, cols)) == 0) { /* not one run of evenly spaced unit-stride rows: one C copy */
    PyArrayObject *c = (PyArrayObject *)PyArray_FromAny((PyObject *)x, PyArray_DescrFromType(PyArray_TYPE(x)), 0, 0,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    Py_SETREF(x, c);
    *ld = cols ? cols : 1;
  }
  return x;
fail:
  Py_DECREF(x);
  return NULL;
}

/* The output arrays: the loss (logits' shape without the class axis for 'none', else 0-d; double for f64
 * logits, float otherwise) and, when wanted, the gradient (the logits' shape and array type, C order). */
static int outputs(const smx_py_loss_args *a, PyArrayObject *x, smx_op_dtype dt, PyArrayObject **loss,
                   PyArrayObject **grad) {
  int nd = PyArray_NDIM(x), none = a->e.reduction == SMX_REDUCTION_NONE;
  *loss = (PyArrayObject *)PyArray_SimpleNew(none ? nd - 1 : 0, PyArray_DIMS(x),
                                             dt == SMX_OP_F64 ? NPY_DOUBLE : NPY_FLOAT);
  if (!*loss) return -1;
  if (a->want_grad && !(*grad = (PyArrayObject *)PyArray_SimpleNew(nd, PyArray_DIMS(x), PyArray_TYPE(x)))) return -1;
  return 0;
}

PyObject *smx_py_tloss(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"reduction", "ignore_index", "grad_scale", "return_grad", "threads", "bf16", NULL};
  (void)self;
  Py_ssize_t na = PyTuple_GET_SIZE(args);
  if (na < 3) {
    PyErr_SetString(PyExc_TypeError, "_tloss(name, logits, targets, *params, ...): 3 arguments at least");
    return NULL;
  }
  PyObject *red = NULL, *ign = NULL, *gs = NULL, *rg = NULL, *thr = NULL, *empty = PyTuple_New(0);
  int bf16 = 0;
  int ok = empty && PyArg_ParseTupleAndKeywords(empty, kwargs, "|OOOOOp:_tloss", kw, &red, &ign, &gs, &rg, &thr,
                                                &bf16);
  Py_XDECREF(empty);
  if (!ok) return NULL;
  const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
  const smx_op_info *op;
  if (!name) return NULL;
  if (smx_op_find(name, &op) != SMX_OK || op->sig != SMX_SIG_TLOSS) {
    PyErr_Format(PyExc_ValueError, "_tloss: %s is not a target loss (class TLOSS) of the op table", name);
    return NULL;
  }
  char fn[96];
  snprintf(fn, sizeof fn, "smx.%s", op->py ? op->py : op->name);

  smx_py_loss_args a;
  if (smx_py_loss_parse(fn, red, ign, rg, gs, thr, &a) < 0) return NULL;
  double v[SMX_PY_MAX_PARAMS];
  smx_op_call c;
  memset(&c, 0, sizeof c);
  PyObject *params = PyTuple_GetSlice(args, 3, na), *res = NULL;
  int bad = !params || smx_py_op_params(fn, op, params, v, &c.nparams) < 0;
  Py_XDECREF(params);
  if (bad) return NULL;
  c.params = v;

  PyArrayObject *x = logits_in(fn, op, PyTuple_GET_ITEM(args, 1), bf16, &c.dtype, &c.ldx), *t = NULL, *loss = NULL,
                *grad = NULL;
  if (!x) return NULL;
  if (!(t = smx_py_loss_targets(fn, PyTuple_GET_ITEM(args, 2), x, a.e.ignore_index))) goto done;
  if (outputs(&a, x, c.dtype, &loss, &grad) < 0) goto done;
  c.cols = (size_t)PyArray_DIM(x, PyArray_NDIM(x) - 1);
  c.rows = (size_t)PyArray_SIZE(t);
  c.x = PyArray_DATA(x);
  c.targets = PyArray_DATA(t);
  c.out = PyArray_DATA(loss);
  c.grad = grad ? PyArray_DATA(grad) : NULL;
  c.ldg = c.cols ? c.cols : 1;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_op_rows(op, &c, &a.o);
  Py_END_ALLOW_THREADS
  if (s == SMX_OK) res = smx_py_loss_result(a.e.reduction == SMX_REDUCTION_NONE, loss, grad, NULL);
  else smx_py_raise_status(fn, s);
done:
  Py_XDECREF(loss);
  Py_XDECREF(grad);
  Py_XDECREF(t);
  Py_DECREF(x);
  return res;
}
