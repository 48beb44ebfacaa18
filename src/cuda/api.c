/*
 * The host side of smx_cuda.h: options (the CPU library's own reading,
 * core/options.h), every argument check before anything is enqueued, the
 * workspace rule, and CUDA errors turned into SMX_E_DEVICE with the message
 * kept per thread. The kernels are enqueued by softmax.cu and xent.cu.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/options.h"
#include "cuda/host.h"
#include "cuda/job.h"
#include "smx/smx_cuda.h"

static _Thread_local char last_error[320];

const char *smx_cuda_last_error(void) { return last_error; }

smx_status smx_cu_device_error(int err, const char *what) {
  cudaError_t e = (cudaError_t)err;
  snprintf(last_error, sizeof last_error, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return SMX_E_DEVICE;
}

smx_status smx_cuda_device_count(int *count) {
  if (!count) return SMX_E_INVALID_ARG;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();   /* not an error here: no GPU */
    n = 0;
  } else if (e != cudaSuccess) {
    *count = 0;
    return smx_cu_device_error(e, "cudaGetDeviceCount");
  }
  *count = n;
  return SMX_OK;
}

/* ---------------------------------------------------------------- sizes */
int smx_cu_mul_ok(size_t a, size_t b, size_t *r) {
  if (a && b > SIZE_MAX / a) return 0;
  *r = a * b;
  return 1;
}
int smx_cu_add_ok(size_t a, size_t b, size_t *r) {
  if (b > SIZE_MAX - a) return 0;
  *r = a + b;
  return 1;
}

static size_t seg_of(smx_cuda_op op) {
  return op == SMX_CUDA_SOFTMAX_BACKWARD || op == SMX_CUDA_LOG_SOFTMAX_BACKWARD ? SMX_CU_BWD_SEG : SMX_CU_FWD_SEG;
}

smx_status smx_cuda_workspace_size(smx_cuda_op op, size_t rows, size_t cols, size_t *bytes) {
  if (!bytes || (unsigned)op > (unsigned)SMX_CUDA_CROSS_ENTROPY || cols > SMX_CUDA_MAX_COLS) return SMX_E_INVALID_ARG;
  size_t seg = seg_of(op), nseg = cols ? (cols + seg - 1) / seg : 0, n = 0, states;
  if (nseg > 1) {   /* one state per segment, then one per row */
    if (!smx_cu_mul_ok(rows, nseg + 1, &states) || !smx_cu_mul_ok(states, sizeof(smx_cu_state), &n)) return SMX_E_INVALID_ARG;
  }
  if (op == SMX_CUDA_CROSS_ENTROPY) {
    size_t losses;
    if (!smx_cu_mul_ok(rows, sizeof(double), &losses) || !smx_cu_add_ok(n, losses, &n) || !smx_cu_add_ok(n, SMX_CU_XENT_HEADER, &n))
      return SMX_E_INVALID_ARG;
  }
  *bytes = n;
  return SMX_OK;
}

/* ------------------------------------------------------------ operands */

/* [lo, hi) bytes of a matrix, or 0 when the sizes overflow */
static int span(const smx_cu_operand *o, uintptr_t *lo, uintptr_t *hi) {
  size_t n, last;
  if (!smx_cu_mul_ok(o->rows - 1, o->ld, &n) || !smx_cu_add_ok(n, o->cols, &n) || !smx_cu_mul_ok(n, o->es, &last)) return 0;
  if (last > (size_t)PTRDIFF_MAX || (uintptr_t)o->p > UINTPTR_MAX - last) return 0;
  *lo = (uintptr_t)o->p;
  *hi = *lo + last;
  return 1;
}

/* a pointer the current device can use: device (or managed) memory of that device */
smx_status smx_cu_check_device_pointer(const void *p, int device) {
  struct cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (e == cudaErrorInvalidValue) return SMX_E_INVALID_ARG;
    return smx_cu_device_error(e, "cudaPointerGetAttributes");
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) return SMX_E_INVALID_ARG;
  if (a.type == cudaMemoryTypeDevice && a.device != device) return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* NULL, alignment, overflow, device memory, and overlap between outputs and anything else */
smx_status smx_cu_check_operands(const smx_cu_operand *ops, int n, int device) {
  uintptr_t lo[8], hi[8];
  for (int i = 0; i < n; i++) {
    if (!ops[i].p) return SMX_E_INVALID_ARG;
    if ((uintptr_t)ops[i].p % ops[i].es) return SMX_E_INVALID_ARG;
    if (ops[i].ld < ops[i].cols) return SMX_E_INVALID_ARG;
    if (!span(&ops[i], &lo[i], &hi[i])) return SMX_E_INVALID_ARG;
  }
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < i; k++) {
      if (!ops[i].out && !ops[k].out) continue;            /* inputs may overlap each other */
      if (lo[i] >= hi[k] || lo[k] >= hi[i]) continue;
      const smx_cu_operand *o = ops[i].out ? &ops[i] : &ops[k], *other = o == &ops[i] ? &ops[k] : &ops[i];
      if (o->inplace_ok && !other->out && o->p == other->p && o->ld == other->ld && o->es == other->es) continue;
      return SMX_E_INVALID_ARG;
    }
  }
  for (int i = 0; i < n; i++) {
    smx_status st = smx_cu_check_device_pointer(ops[i].p, device);
    if (st != SMX_OK) return st;
  }
  return SMX_OK;
}

/* the current device, and the stream's being it */
smx_status smx_cu_check_stream(void *stream, int *device) {
  cudaError_t e = cudaGetDevice(device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return smx_cu_device_error(e, "cudaGetDevice");
  }
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
  if (stream) {
    int sd = -1;
    e = cudaStreamGetDevice((cudaStream_t)stream, &sd);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return e == cudaErrorInvalidResourceHandle || e == cudaErrorInvalidValue ? SMX_E_INVALID_ARG
                                                                               : smx_cu_device_error(e, "cudaStreamGetDevice");
    }
    if (sd != *device) return SMX_E_INVALID_ARG;
  }
#endif
  return SMX_OK;
}

/* the temperature's constants: SMX_E_UNSUPPORTED when log2(e)/T does not fit the float kernels */
smx_status smx_cu_set_temperature(smx_cu_job *j, double t) {
  double c = 1.4426950408889634 / t;
  if (!(c >= 0x1p-100 && c <= 0x1p100)) return SMX_E_UNSUPPORTED;
  j->c = c;
  j->c_hi = (float)c;
  j->c_lo = (float)(c - (double)j->c_hi);
  j->inv_t = 1.0 / t;
  return SMX_OK;
}

size_t smx_cu_elem_size(int dtype) { return dtype == SMX_CU_F32 ? 4 : 2; }

/* workspace: enough, aligned, the device's (when one is needed) */
static smx_status check_workspace(const smx_cuda_exec *ex, smx_cuda_op op, size_t rows, size_t cols, int device,
                                  void **ws) {
  size_t need;
  smx_status st = smx_cuda_workspace_size(op, rows, cols, &need);
  if (st != SMX_OK) return st;
  *ws = NULL;
  if (need == 0) return SMX_OK;
  if (!ex || !ex->workspace || ex->workspace_bytes < need) return SMX_E_WORKSPACE_TOO_SMALL;
  if ((uintptr_t)ex->workspace % 16) return SMX_E_INVALID_ARG;
  st = smx_cu_check_device_pointer(ex->workspace, device);
  if (st != SMX_OK) return st;
  *ws = ex->workspace;
  return SMX_OK;
}

smx_status smx_cu_launched(int err, const char *what) { return err ? smx_cu_device_error(err, what) : SMX_OK; }

/* ----------------------------------------------------- forward and backward */
static smx_status run_rows(int dtype, smx_cuda_op op, const void *a, size_t lda, const void *b, size_t ldb, void *out,
                           size_t ldo, size_t rows, size_t cols, const smx_cuda_exec *ex, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  smx_cu_job j;
  memset(&j, 0, sizeof j);
  st = smx_cu_set_temperature(&j, o.temperature);
  if (st != SMX_OK) return st;
  if (cols > SMX_CUDA_MAX_COLS) return SMX_E_INVALID_ARG;
  int bwd = op == SMX_CUDA_SOFTMAX_BACKWARD || op == SMX_CUDA_LOG_SOFTMAX_BACKWARD;
  int lse = op == SMX_CUDA_LOGSUMEXP;
  if (lda < cols || (bwd && ldb < cols) || (!lse && ldo < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0 || (cols == 0 && !lse)) return SMX_OK;
  size_t es = smx_cu_elem_size(dtype);
  void *stream = ex ? ex->stream : NULL;
  int device;
  st = smx_cu_check_stream(stream, &device);
  if (st != SMX_OK) return st;
  smx_cu_operand ops[3];
  int n = 0;
  if (bwd) {
    ops[n++] = (smx_cu_operand){ a, rows, cols, lda, es, 0, 0 };
    ops[n++] = (smx_cu_operand){ b, rows, cols, ldb, es, 0, 0 };
    ops[n++] = (smx_cu_operand){ out, rows, cols, ldo, es, 1, 1 };
  } else if (lse) {
    if (cols > 0) ops[n++] = (smx_cu_operand){ a, rows, cols, lda, es, 0, 0 };
    ops[n++] = (smx_cu_operand){ out, 1, rows, rows, sizeof(float), 1, 0 };
  } else {
    ops[n++] = (smx_cu_operand){ a, rows, cols, lda, es, 0, 0 };
    ops[n++] = (smx_cu_operand){ out, rows, cols, ldo, es, 1, 1 };
  }
  /* in place for the backward: dx may be y or dy exactly (smx_cu_check_operands lets an output equal smx_cu_operand k) */
  st = smx_cu_check_operands(ops, n, device);
  if (st != SMX_OK) return st;
  st = check_workspace(ex, op, rows, cols, device, &j.ws);
  if (st != SMX_OK) return st;
  j.dtype = dtype;
  j.op = op;
  j.a = a;
  j.lda = lda;
  j.b = b;
  j.ldb = ldb;
  j.out = lse ? NULL : out;
  j.ldo = ldo;
  j.vec = lse ? (float *)out : NULL;
  j.rows = rows;
  j.cols = cols;
  j.seg = seg_of(op);
  j.nseg = cols ? (cols + j.seg - 1) / j.seg : 1;
  j.flags = o.flags & SMX_FLAG_MASKED_ROW_NAN;
  j.stream = stream;
  (void)cudaGetLastError();   /* so that what the launch reports is the launch's */
  return smx_cu_launched(bwd ? smx_cu_launch_backward(&j) : smx_cu_launch_forward(&j), "smx_cuda row kernels");
}

#define SMX_CUDA_DEFINE_ROWS(T, sfx, DT)                                                                          \
  smx_status smx_cuda_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,      \
                                         const smx_cuda_exec *ex, const smx_options *opt) {                       \
    return run_rows(DT, SMX_CUDA_SOFTMAX, x, ldx, NULL, 0, y, ldy, rows, cols, ex, opt);                          \
  }                                                                                                               \
  smx_status smx_cuda_log_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,  \
                                             const smx_cuda_exec *ex, const smx_options *opt) {                   \
    return run_rows(DT, SMX_CUDA_LOG_SOFTMAX, x, ldx, NULL, 0, y, ldy, rows, cols, ex, opt);                      \
  }                                                                                                               \
  smx_status smx_cuda_logsumexp_rows_##sfx(const T *x, size_t ldx, float *out, size_t rows, size_t cols,          \
                                           const smx_cuda_exec *ex, const smx_options *opt) {                     \
    return run_rows(DT, SMX_CUDA_LOGSUMEXP, x, ldx, NULL, 0, out, rows, rows, cols, ex, opt);                     \
  }                                                                                                               \
  smx_status smx_cuda_softmax_backward_rows_##sfx(const T *y, size_t ldy, const T *dy, size_t lddy, T *dx,        \
                                                  size_t lddx, size_t rows, size_t cols, const smx_cuda_exec *ex, \
                                                  const smx_options *opt) {                                       \
    return run_rows(DT, SMX_CUDA_SOFTMAX_BACKWARD, y, ldy, dy, lddy, dx, lddx, rows, cols, ex, opt);              \
  }                                                                                                               \
  smx_status smx_cuda_log_softmax_backward_rows_##sfx(const T *y, size_t ldy, const T *dy, size_t lddy, T *dx,    \
                                                      size_t lddx, size_t rows, size_t cols,                      \
                                                      const smx_cuda_exec *ex, const smx_options *opt) {          \
    return run_rows(DT, SMX_CUDA_LOG_SOFTMAX_BACKWARD, y, ldy, dy, lddy, dx, lddx, rows, cols, ex, opt);          \
  }
SMX_CUDA_DEFINE_ROWS(float, f32, SMX_CU_F32)
SMX_CUDA_DEFINE_ROWS(uint16_t, f16, SMX_CU_F16)
SMX_CUDA_DEFINE_ROWS(uint16_t, bf16, SMX_CU_BF16)

/* --------------------------------------------------------- cross-entropy */
static smx_status run_xent(int dtype, const void *logits, size_t ld, const int64_t *targets, float *loss, void *grad,
                           size_t ldg, float *lse, size_t rows, size_t cols, const smx_cuda_exec *ex,
                           const smx_options *opt) {
  smx_loss_resolved o;
  smx_status st = smx_resolve_loss_options(
      opt, SMX_LOSS_USES_TEMPERATURE | SMX_LOSS_USES_SMOOTHING | SMX_LOSS_USES_MASKED_FLAG, &o);
  if (st != SMX_OK) return st;
  smx_cu_job j;
  memset(&j, 0, sizeof j);
  st = smx_cu_set_temperature(&j, o.base.temperature);
  if (st != SMX_OK) return st;
  if (cols > SMX_CUDA_MAX_COLS || (grad && ldg < cols) || ld < cols) return SMX_E_INVALID_ARG;
  void *stream = ex ? ex->stream : NULL;
  int device;
  if (rows == 0) {   /* the empty reductions, as the CPU's: SUM 0, MEAN NaN, NONE nothing */
    if (o.reduction == SMX_REDUCTION_NONE) return SMX_OK;
    if (!loss) return SMX_E_INVALID_ARG;
    st = smx_cu_check_stream(stream, &device);
    if (st != SMX_OK) return st;
    smx_cu_operand l = { loss, 1, 1, 1, sizeof(float), 1, 0 };
    st = smx_cu_check_operands(&l, 1, device);
    if (st != SMX_OK) return st;
    (void)cudaGetLastError();
    return smx_cu_launched(smx_cu_launch_fill(loss, o.reduction == SMX_REDUCTION_SUM ? 0.0f : NAN, stream),
                    "smx_cuda cross-entropy");
  }
  if (cols == 0) return SMX_E_INVALID_ARG;
  st = smx_cu_check_stream(stream, &device);
  if (st != SMX_OK) return st;
  size_t es = smx_cu_elem_size(dtype), nloss = o.reduction == SMX_REDUCTION_NONE ? rows : 1;
  smx_cu_operand ops[5];
  int n = 0;
  ops[n++] = (smx_cu_operand){ logits, rows, cols, ld, es, 0, 0 };
  ops[n++] = (smx_cu_operand){ targets, 1, rows, rows, sizeof(int64_t), 0, 0 };
  ops[n++] = (smx_cu_operand){ loss, 1, nloss, nloss, sizeof(float), 1, 0 };
  if (grad) ops[n++] = (smx_cu_operand){ grad, rows, cols, ldg, es, 1, 1 };
  if (lse) ops[n++] = (smx_cu_operand){ lse, 1, rows, rows, sizeof(float), 1, 0 };
  st = smx_cu_check_operands(ops, n, device);
  if (st != SMX_OK) return st;
  st = check_workspace(ex, SMX_CUDA_CROSS_ENTROPY, rows, cols, device, &j.ws);
  if (st != SMX_OK) return st;
  j.dtype = dtype;
  j.op = SMX_CUDA_CROSS_ENTROPY;
  j.a = logits;
  j.lda = ld;
  j.out = grad;
  j.ldo = ldg;
  j.vec = lse;
  j.loss = loss;
  j.targets = targets;
  j.rows = rows;
  j.cols = cols;
  j.seg = SMX_CU_FWD_SEG;
  j.nseg = (cols + j.seg - 1) / j.seg;
  j.flags = o.base.flags & SMX_FLAG_MASKED_ROW_NAN;
  j.reduction = (int)o.reduction;
  j.ignore = o.ignore_index;
  j.eps = o.label_smoothing;
  j.z = o.z_loss;
  j.grad_scale = o.grad_scale;
  j.stream = stream;
  (void)cudaGetLastError();
  return smx_cu_launched(smx_cu_launch_xent(&j), "smx_cuda cross-entropy");
}

#define SMX_CUDA_DEFINE_XENT(T, sfx, DT)                                                                         \
  smx_status smx_cuda_cross_entropy_##sfx(const T *logits, size_t ld, const int64_t *targets, float *loss,       \
                                          T *grad, size_t ldg, float *lse, size_t rows, size_t cols,             \
                                          const smx_cuda_exec *ex, const smx_options *opt) {                     \
    return run_xent(DT, logits, ld, targets, loss, grad, ldg, lse, rows, cols, ex, opt);                         \
  }
SMX_CUDA_DEFINE_XENT(float, f32, SMX_CU_F32)
SMX_CUDA_DEFINE_XENT(uint16_t, f16, SMX_CU_F16)
SMX_CUDA_DEFINE_XENT(uint16_t, bf16, SMX_CU_BF16)

smx_status smx_cuda_cross_entropy_status(const smx_cuda_exec *ex) {
  if (!ex || !ex->workspace || ex->workspace_bytes < SMX_CU_XENT_HEADER) return SMX_E_INVALID_ARG;
  smx_cu_xent_header h;
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)ex->stream);
  if (e == cudaSuccess) e = cudaMemcpy(&h, ex->workspace, sizeof h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return smx_cu_device_error(e, "smx_cuda_cross_entropy_status");
  }
  return h.bad ? SMX_E_INVALID_ARG : SMX_OK;
}
