/*
 * The extension module smx._smx_cuda: libsmx_cuda (include/smx/smx_cuda.h) for smx.torch's CUDA tensors
 * (python/smx/torch/_cuda.py). Built only when CMake builds libsmx_cuda (SMX_HAVE_CUDA), so that `import smx`
 * and the CPU build never need CUDA; smx.torch imports it on the first CUDA tensor.
 *
 * Every function takes device addresses as ints (tensor.data_ptr()), the stream as an int (PyTorch's
 * torch.cuda.current_stream().cuda_stream) and a workspace as (address, bytes) that the caller allocated
 * through PyTorch; leading dimensions and sizes in elements; dtype 0 float32, 1 float16, 2 bfloat16. The
 * library checks everything on the host and only enqueues (the GIL is released meanwhile); a refusal raises
 * before anything is enqueued: ValueError for SMX_E_INVALID_ARG (and the cross-entropy's bad targets),
 * RuntimeError with CUDA's message for SMX_E_DEVICE, the library's status string otherwise. The operations:
 * softmax, log-softmax, log-sum-exp, their backward passes, the cross-entropy, fused softmax + top-k and
 * sampling (each with its workspace query).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "smx/smx.h"
#include "smx/smx_cuda.h"

enum { DT_F32, DT_F16, DT_BF16, DT_COUNT };

/* Raises the status of fn: CUDA's own message with SMX_E_DEVICE. Returns NULL. */
static PyObject *raise_status(const char *fn, smx_status s) {
  PyObject *type = s == SMX_E_INVALID_ARG || s == SMX_E_UNSUPPORTED ? PyExc_ValueError : PyExc_RuntimeError;
  if (s == SMX_E_DEVICE)
    PyErr_Format(type, "%s: %s (smx status %d): %s", fn, smx_status_string(s), (int)s, smx_cuda_last_error());
  else
    PyErr_Format(type, "%s: %s (smx status %d)", fn, smx_status_string(s), (int)s);
  return NULL;
}

static PyObject *done(const char *fn, smx_status s) {
  if (s != SMX_OK) return raise_status(fn, s);
  Py_RETURN_NONE;
}

static int check_dtype(const char *fn, int dt) {
  if (dt < 0 || dt >= DT_COUNT) {
    PyErr_Format(PyExc_ValueError, "%s: dtype code %d (0 float32, 1 float16, 2 bfloat16)", fn, dt);
    return -1;
  }
  return 0;
}

/* A size argument (Py_ssize_t, already parsed) that must not be negative. */
static int check_sizes(const char *fn, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, Py_ssize_t d) {
  if (a < 0 || b < 0 || c < 0 || d < 0) {
    PyErr_Format(PyExc_ValueError, "%s: sizes and leading dimensions must be >= 0", fn);
    return -1;
  }
  return 0;
}

static smx_cuda_exec exec_of(unsigned long long stream, unsigned long long ws, Py_ssize_t ws_bytes) {
  smx_cuda_exec e = {(void *)(uintptr_t)stream, (void *)(uintptr_t)ws, (size_t)ws_bytes};
  return e;
}

/* rows(op, dtype, x, ldx, y, ldy, rows, cols, stream, ws, ws_bytes, temperature, masked_nan): op 0 softmax,
 * 1 log_softmax, 2 logsumexp (y: rows floats, ldy unused). */
static PyObject *py_rows(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.rows";
  int op, dt, masked;
  unsigned long long x, y, stream, ws;
  Py_ssize_t ldx, ldy, rows, cols, wsb;
  double t;
  if (!PyArg_ParseTuple(args, "iiKnKnnnKKndp:rows", &op, &dt, &x, &ldx, &y, &ldy, &rows, &cols, &stream, &ws, &wsb,
                        &t, &masked))
    return NULL;
  if (check_dtype(fn, dt) < 0 || check_sizes(fn, ldx, ldy, rows, cols) < 0 || check_sizes(fn, wsb, 0, 0, 0) < 0)
    return NULL;
  if (op < 0 || op > 2) {
    PyErr_Format(PyExc_ValueError, "%s: op %d (0 softmax, 1 log_softmax, 2 logsumexp)", fn, op);
    return NULL;
  }
  smx_options o = {SMX_ALGO_AUTO, t, masked ? SMX_FLAG_MASKED_ROW_NAN : 0u, 0, NULL};
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  const void *xp = (const void *)(uintptr_t)x;
  void *yp = (void *)(uintptr_t)y;
  size_t lx = (size_t)ldx, ly = (size_t)ldy, r = (size_t)rows, c = (size_t)cols;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  if (op == 2) {
    float *out = yp;
    s = dt == DT_F32   ? smx_cuda_logsumexp_rows_f32(xp, lx, out, r, c, &e, &o)
        : dt == DT_F16 ? smx_cuda_logsumexp_rows_f16(xp, lx, out, r, c, &e, &o)
                       : smx_cuda_logsumexp_rows_bf16(xp, lx, out, r, c, &e, &o);
  } else if (op == 1) {
    s = dt == DT_F32   ? smx_cuda_log_softmax_rows_f32(xp, lx, yp, ly, r, c, &e, &o)
        : dt == DT_F16 ? smx_cuda_log_softmax_rows_f16(xp, lx, yp, ly, r, c, &e, &o)
                       : smx_cuda_log_softmax_rows_bf16(xp, lx, yp, ly, r, c, &e, &o);
  } else {
    s = dt == DT_F32   ? smx_cuda_softmax_rows_f32(xp, lx, yp, ly, r, c, &e, &o)
        : dt == DT_F16 ? smx_cuda_softmax_rows_f16(xp, lx, yp, ly, r, c, &e, &o)
                       : smx_cuda_softmax_rows_bf16(xp, lx, yp, ly, r, c, &e, &o);
  }
  Py_END_ALLOW_THREADS
  return done(fn, s);
}

/* backward(op, dtype, y, ldy, dy, lddy, dx, lddx, rows, cols, stream, ws, ws_bytes, temperature): op 0 the
 * softmax backward, 1 the log-softmax backward. */
static PyObject *py_backward(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.backward";
  int op, dt;
  unsigned long long y, dy, dx, stream, ws;
  Py_ssize_t ldy, lddy, lddx, rows, cols, wsb;
  double t;
  if (!PyArg_ParseTuple(args, "iiKnKnKnnnKKnd:backward", &op, &dt, &y, &ldy, &dy, &lddy, &dx, &lddx, &rows, &cols,
                        &stream, &ws, &wsb, &t))
    return NULL;
  if (check_dtype(fn, dt) < 0 || check_sizes(fn, ldy, lddy, lddx, rows) < 0 || check_sizes(fn, cols, wsb, 0, 0) < 0)
    return NULL;
  if (op < 0 || op > 1) {
    PyErr_Format(PyExc_ValueError, "%s: op %d (0 softmax, 1 log_softmax)", fn, op);
    return NULL;
  }
  smx_options o = {SMX_ALGO_AUTO, t, 0u, 0, NULL};
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  const void *yp = (const void *)(uintptr_t)y, *dyp = (const void *)(uintptr_t)dy;
  void *dxp = (void *)(uintptr_t)dx;
  size_t a = (size_t)ldy, b = (size_t)lddy, c = (size_t)lddx, r = (size_t)rows, n = (size_t)cols;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  if (op == 0)
    s = dt == DT_F32   ? smx_cuda_softmax_backward_rows_f32(yp, a, dyp, b, dxp, c, r, n, &e, &o)
        : dt == DT_F16 ? smx_cuda_softmax_backward_rows_f16(yp, a, dyp, b, dxp, c, r, n, &e, &o)
                       : smx_cuda_softmax_backward_rows_bf16(yp, a, dyp, b, dxp, c, r, n, &e, &o);
  else
    s = dt == DT_F32   ? smx_cuda_log_softmax_backward_rows_f32(yp, a, dyp, b, dxp, c, r, n, &e, &o)
        : dt == DT_F16 ? smx_cuda_log_softmax_backward_rows_f16(yp, a, dyp, b, dxp, c, r, n, &e, &o)
                       : smx_cuda_log_softmax_backward_rows_bf16(yp, a, dyp, b, dxp, c, r, n, &e, &o);
  Py_END_ALLOW_THREADS
  return done(fn, s);
}

/* cross_entropy(dtype, logits, ld, targets, loss, grad, ldg, lse, rows, cols, stream, ws, ws_bytes, reduction,
 * ignore_index, label_smoothing, z_loss, grad_scale, temperature, masked_nan): grad and lse may be 0 (none);
 * reduction 0 mean, 1 sum, 2 none (smx_reduction). */
static PyObject *py_cross_entropy(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.cross_entropy";
  int dt, red, masked;
  unsigned long long x, tg, loss, grad, lse, stream, ws;
  Py_ssize_t ld, ldg, rows, cols, wsb;
  long long ignore;
  double ls, zl, gs, t;
  if (!PyArg_ParseTuple(args, "iKnKKKnKnnKKniLddddp:cross_entropy", &dt, &x, &ld, &tg, &loss, &grad, &ldg, &lse,
                        &rows, &cols, &stream, &ws, &wsb, &red, &ignore, &ls, &zl, &gs, &t, &masked))
    return NULL;
  if (check_dtype(fn, dt) < 0 || check_sizes(fn, ld, ldg, rows, cols) < 0 || check_sizes(fn, wsb, 0, 0, 0) < 0)
    return NULL;
  if (red != SMX_REDUCTION_NONE && red != SMX_REDUCTION_SUM && red != SMX_REDUCTION_MEAN) {
    PyErr_Format(PyExc_ValueError, "%s: reduction code %d", fn, red);
    return NULL;
  }
  smx_loss_ext le = {(smx_reduction)red, (int64_t)ignore, gs, ls, zl};
  smx_options o = {SMX_ALGO_AUTO, t, masked ? SMX_FLAG_MASKED_ROW_NAN : 0u, 0, &le};
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  const void *xp = (const void *)(uintptr_t)x;
  const int64_t *tp = (const int64_t *)(uintptr_t)tg;
  float *lp = (float *)(uintptr_t)loss, *sp = (float *)(uintptr_t)lse;
  void *gp = (void *)(uintptr_t)grad;
  size_t a = (size_t)ld, b = (size_t)ldg, r = (size_t)rows, n = (size_t)cols;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = dt == DT_F32   ? smx_cuda_cross_entropy_f32(xp, a, tp, lp, gp, b, sp, r, n, &e, &o)
      : dt == DT_F16 ? smx_cuda_cross_entropy_f16(xp, a, tp, lp, gp, b, sp, r, n, &e, &o)
                     : smx_cuda_cross_entropy_bf16(xp, a, tp, lp, gp, b, sp, r, n, &e, &o);
  Py_END_ALLOW_THREADS
  return done(fn, s);
}

/* cross_entropy_status(stream, ws, ws_bytes): waits for the stream; ValueError if the last cross-entropy on
 * that workspace refused its targets (it wrote nothing). */
static PyObject *py_cross_entropy_status(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.cross_entropy_status";
  unsigned long long stream, ws;
  Py_ssize_t wsb;
  if (!PyArg_ParseTuple(args, "KKn:cross_entropy_status", &stream, &ws, &wsb)) return NULL;
  if (check_sizes(fn, wsb, 0, 0, 0) < 0) return NULL;
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = smx_cuda_cross_entropy_status(&e);
  Py_END_ALLOW_THREADS
  if (s == SMX_E_INVALID_ARG) {
    PyErr_Format(PyExc_ValueError, "%s: a target is outside [0, classes) and not ignore_index (nothing was "
                 "written)", fn);
    return NULL;
  }
  return done(fn, s);
}

/* topk(dtype, log, x, ldx, values, indices, rows, cols, k, stream, ws, ws_bytes, temperature, masked_nan): fused
 * softmax (log-softmax) + top-k; values float32, indices int64, rows x k each. */
static PyObject *py_topk(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.topk";
  int dt, log, masked;
  unsigned long long x, v, ix, stream, ws;
  Py_ssize_t ldx, rows, cols, k, wsb;
  double t;
  if (!PyArg_ParseTuple(args, "ipKnKKnnnKKndp:topk", &dt, &log, &x, &ldx, &v, &ix, &rows, &cols, &k, &stream, &ws,
                        &wsb, &t, &masked))
    return NULL;
  if (check_dtype(fn, dt) < 0 || check_sizes(fn, ldx, rows, cols, k) < 0 || check_sizes(fn, wsb, 0, 0, 0) < 0)
    return NULL;
  smx_options o = {SMX_ALGO_AUTO, t, masked ? SMX_FLAG_MASKED_ROW_NAN : 0u, 0, NULL};
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  const void *xp = (const void *)(uintptr_t)x;
  float *vp = (float *)(uintptr_t)v;
  int64_t *ip = (int64_t *)(uintptr_t)ix;
  size_t a = (size_t)ldx, r = (size_t)rows, c = (size_t)cols, kk = (size_t)k;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  if (log)
    s = dt == DT_F32   ? smx_cuda_log_softmax_topk_rows_f32(xp, a, vp, ip, r, c, kk, &e, &o)
        : dt == DT_F16 ? smx_cuda_log_softmax_topk_rows_f16(xp, a, vp, ip, r, c, kk, &e, &o)
                       : smx_cuda_log_softmax_topk_rows_bf16(xp, a, vp, ip, r, c, kk, &e, &o);
  else
    s = dt == DT_F32   ? smx_cuda_softmax_topk_rows_f32(xp, a, vp, ip, r, c, kk, &e, &o)
        : dt == DT_F16 ? smx_cuda_softmax_topk_rows_f16(xp, a, vp, ip, r, c, kk, &e, &o)
                       : smx_cuda_softmax_topk_rows_bf16(xp, a, vp, ip, r, c, kk, &e, &o);
  Py_END_ALLOW_THREADS
  return done(fn, s);
}

/* topk_workspace_size(rows, cols, k) -> bytes. */
static PyObject *py_topk_workspace_size(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.topk_workspace_size";
  Py_ssize_t rows, cols, k;
  if (!PyArg_ParseTuple(args, "nnn:topk_workspace_size", &rows, &cols, &k)) return NULL;
  if (check_sizes(fn, rows, cols, k, 0) < 0) return NULL;
  size_t bytes = 0;
  smx_status s = smx_cuda_topk_workspace_size((size_t)rows, (size_t)cols, (size_t)k, &bytes);
  if (s != SMX_OK) return raise_status(fn, s);
  return PyLong_FromSize_t(bytes);
}

/* The sampling parameters (temperature, top_k, top_p, min_p, method, row_offset), checked by smx.torch. */
static int sample_params(const char *fn, double t, Py_ssize_t top_k, double top_p, double min_p, int method,
                         unsigned long long row_offset, smx_sample_params *p) {
  if (top_k < 0 || (method != SMX_SAMPLE_MULTINOMIAL && method != SMX_SAMPLE_GUMBEL_MAX)) {
    PyErr_Format(PyExc_ValueError, "%s: top_k %zd or method %d", fn, top_k, method);
    return -1;
  }
  smx_sample_params q = {t, (size_t)top_k, top_p, min_p, 0, (smx_sample_method)method, (uint64_t)row_offset};
  *p = q;
  return 0;
}

/* sample(dtype, x, ldx, tokens, rows, cols, stream, ws, ws_bytes, seed, step, temperature, top_k, top_p, min_p,
 * method, row_offset): one int64 token per row; method 0 multinomial, 1 Gumbel-max (smx_sample_method). */
static PyObject *py_sample(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.sample";
  int dt, method;
  unsigned long long x, tok, stream, ws, seed, step, ro;
  Py_ssize_t ldx, rows, cols, wsb, top_k;
  double t, top_p, min_p;
  if (!PyArg_ParseTuple(args, "iKnKnnKKnKKdnddiK:sample", &dt, &x, &ldx, &tok, &rows, &cols, &stream, &ws, &wsb,
                        &seed, &step, &t, &top_k, &top_p, &min_p, &method, &ro))
    return NULL;
  smx_sample_params p;
  if (check_dtype(fn, dt) < 0 || check_sizes(fn, ldx, rows, cols, wsb) < 0 ||
      sample_params(fn, t, top_k, top_p, min_p, method, ro, &p) < 0)
    return NULL;
  smx_cuda_exec e = exec_of(stream, ws, wsb);
  const void *xp = (const void *)(uintptr_t)x;
  int64_t *tp = (int64_t *)(uintptr_t)tok;
  size_t a = (size_t)ldx, r = (size_t)rows, c = (size_t)cols;
  smx_status s;
  Py_BEGIN_ALLOW_THREADS
  s = dt == DT_F32   ? smx_cuda_sample_rows_f32(xp, a, tp, r, c, &p, seed, step, &e, NULL)
      : dt == DT_F16 ? smx_cuda_sample_rows_f16(xp, a, tp, r, c, &p, seed, step, &e, NULL)
                     : smx_cuda_sample_rows_bf16(xp, a, tp, r, c, &p, seed, step, &e, NULL);
  Py_END_ALLOW_THREADS
  return done(fn, s);
}

/* sample_workspace_size(rows, cols, temperature, top_k, top_p, min_p, method, row_offset) -> bytes. */
static PyObject *py_sample_workspace_size(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.sample_workspace_size";
  Py_ssize_t rows, cols, top_k;
  double t, top_p, min_p;
  int method;
  unsigned long long ro;
  if (!PyArg_ParseTuple(args, "nndnddiK:sample_workspace_size", &rows, &cols, &t, &top_k, &top_p, &min_p, &method,
                        &ro))
    return NULL;
  smx_sample_params p;
  if (check_sizes(fn, rows, cols, 0, 0) < 0 || sample_params(fn, t, top_k, top_p, min_p, method, ro, &p) < 0)
    return NULL;
  size_t bytes = 0;
  smx_status s = smx_cuda_sample_workspace_size((size_t)rows, (size_t)cols, &p, &bytes);
  if (s != SMX_OK) return raise_status(fn, s);
  return PyLong_FromSize_t(bytes);
}

/* workspace_size(op, rows, cols) -> bytes (op: smx_cuda_op). */
static PyObject *py_workspace_size(PyObject *self, PyObject *args) {
  (void)self;
  static const char *fn = "smx._smx_cuda.workspace_size";
  int op;
  Py_ssize_t rows, cols;
  if (!PyArg_ParseTuple(args, "inn:workspace_size", &op, &rows, &cols)) return NULL;
  if (check_sizes(fn, rows, cols, 0, 0) < 0) return NULL;
  size_t bytes = 0;
  smx_status s = smx_cuda_workspace_size((smx_cuda_op)op, (size_t)rows, (size_t)cols, &bytes);
  if (s != SMX_OK) return raise_status(fn, s);
  return PyLong_FromSize_t(bytes);
}

/* device_count() -> the number of CUDA devices (0 without a driver or a GPU). */
static PyObject *py_device_count(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  int n = 0;
  smx_status s = smx_cuda_device_count(&n);
  if (s != SMX_OK) return raise_status("smx._smx_cuda.device_count", s);
  return PyLong_FromLong(n);
}

static PyMethodDef methods[] = {
    {"rows", py_rows, METH_VARARGS, "rows(op, dtype, x, ldx, y, ldy, rows, cols, stream, ws, ws_bytes, temperature, "
                                    "masked_nan): softmax (0), log_softmax (1), logsumexp (2) on device rows."},
    {"backward", py_backward, METH_VARARGS, "backward(op, dtype, y, ldy, dy, lddy, dx, lddx, rows, cols, stream, "
                                            "ws, ws_bytes, temperature): softmax (0) / log_softmax (1) backward."},
    {"cross_entropy", py_cross_entropy, METH_VARARGS,
     "cross_entropy(dtype, logits, ld, targets, loss, grad, ldg, lse, rows, cols, stream, ws, ws_bytes, reduction, "
     "ignore_index, label_smoothing, z_loss, grad_scale, temperature, masked_nan)."},
    {"cross_entropy_status", py_cross_entropy_status, METH_VARARGS,
     "cross_entropy_status(stream, ws, ws_bytes): synchronises; ValueError for refused targets."},
    {"workspace_size", py_workspace_size, METH_VARARGS, "workspace_size(op, rows, cols) -> bytes."},
    {"device_count", py_device_count, METH_NOARGS, "device_count() -> CUDA devices (0: none)."},
    {"topk", py_topk, METH_VARARGS, "topk(dtype, log, x, ldx, values, indices, rows, cols, k, stream, ws, ws_bytes, "
                                    "temperature, masked_nan): fused softmax (log-softmax) + top-k."},
    {"topk_workspace_size", py_topk_workspace_size, METH_VARARGS, "topk_workspace_size(rows, cols, k) -> bytes."},
    {"sample", py_sample, METH_VARARGS, "sample(dtype, x, ldx, tokens, rows, cols, stream, ws, ws_bytes, seed, step, "
                                        "temperature, top_k, top_p, min_p, method, row_offset): one token per row."},
    {"sample_workspace_size", py_sample_workspace_size, METH_VARARGS,
     "sample_workspace_size(rows, cols, temperature, top_k, top_p, min_p, method, row_offset) -> bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_smx_cuda", "smx on CUDA tensors: libsmx_cuda's entries for smx.torch.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__smx_cuda(void) {
  if (smx_version_number() != SMX_VERSION_NUMBER) {
    PyErr_Format(PyExc_ImportError, "smx._smx_cuda: linked library %s does not match the header %d.%d.%d",
                 smx_version_string(), SMX_VERSION_MAJOR, SMX_VERSION_MINOR, SMX_VERSION_PATCH);
    return NULL;
  }
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  /* the smx_cuda_op numbers and the dtype codes, for python/smx/torch/_cuda.py */
  if (PyModule_AddIntConstant(m, "SOFTMAX", SMX_CUDA_SOFTMAX) < 0 ||
      PyModule_AddIntConstant(m, "LOG_SOFTMAX", SMX_CUDA_LOG_SOFTMAX) < 0 ||
      PyModule_AddIntConstant(m, "LOGSUMEXP", SMX_CUDA_LOGSUMEXP) < 0 ||
      PyModule_AddIntConstant(m, "SOFTMAX_BACKWARD", SMX_CUDA_SOFTMAX_BACKWARD) < 0 ||
      PyModule_AddIntConstant(m, "LOG_SOFTMAX_BACKWARD", SMX_CUDA_LOG_SOFTMAX_BACKWARD) < 0 ||
      PyModule_AddIntConstant(m, "CROSS_ENTROPY", SMX_CUDA_CROSS_ENTROPY) < 0 ||
      PyModule_AddIntConstant(m, "MAX_TOPK", SMX_CUDA_MAX_TOPK) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
