/*
 * The host side of smx_cuda.h's fused softmax + top-k and sampling: the
 * CPU library's argument rules (src/ops/topk.c, src/ops/sample.c), the
 * device's (host.h), the workspace, then the launchers (topk.cu, sample.cu).
 */
#include <math.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/options.h"
#include "core/temperature.h"
#include "cuda/host.h"
#include "cuda/job.h"
#include "smx/smx_cuda.h"

/* segments of a row of cols entries (the forward's segment length) */
static size_t nseg_of(size_t cols) { return cols ? (cols + SMX_CU_FWD_SEG - 1) / SMX_CU_FWD_SEG : 1; }

/* states and candidates of rows x nseg segments of k keys (topk.cuh's layout) */
static int topk_bytes(size_t rows, size_t cols, size_t k, size_t *bytes) {
  size_t segs, per, n;
  if (!smx_cu_mul_ok(rows, nseg_of(cols), &segs) || !smx_cu_mul_ok(k, sizeof(unsigned long long), &per) ||
      !smx_cu_add_ok(per, sizeof(smx_cu_state), &per) || !smx_cu_mul_ok(segs, per, &n))
    return 0;
  *bytes = n;
  return 1;
}

smx_status smx_cuda_topk_workspace_size(size_t rows, size_t cols, size_t k, size_t *bytes) {
  if (!bytes || cols > SMX_CUDA_MAX_COLS || k > cols) return SMX_E_INVALID_ARG;
  if (k > SMX_CUDA_MAX_TOPK) return SMX_E_UNSUPPORTED;
  size_t n = 0;
  if (nseg_of(cols) > 1 && !topk_bytes(rows, cols, k, &n)) return SMX_E_INVALID_ARG;
  *bytes = n;
  return SMX_OK;
}

/* the workspace given is at least need bytes, 16-byte aligned device memory (need 0: none is used) */
static smx_status take_workspace(const smx_cuda_exec *ex, size_t need, int device, void **ws) {
  *ws = NULL;
  if (need == 0) return SMX_OK;
  if (!ex || !ex->workspace || ex->workspace_bytes < need) return SMX_E_WORKSPACE_TOO_SMALL;
  if ((uintptr_t)ex->workspace % 16) return SMX_E_INVALID_ARG;
  smx_status st = smx_cu_check_device_pointer(ex->workspace, device);
  if (st != SMX_OK) return st;
  *ws = ex->workspace;
  return SMX_OK;
}

/* ------------------------------------------------------------------ top-k */
static smx_status run_topk(int dtype, int log_form, const void *x, size_t ldx, float *values, int64_t *indices,
                           size_t rows, size_t cols, size_t k, const smx_cuda_exec *ex, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (ldx < cols || k > cols || cols > SMX_CUDA_MAX_COLS) return SMX_E_INVALID_ARG;
  if (k > SMX_CUDA_MAX_TOPK) return SMX_E_UNSUPPORTED;
  smx_cu_job j;
  memset(&j, 0, sizeof j);
  st = smx_cu_set_temperature(&j, o.temperature);
  if (st != SMX_OK) return st;
  if (rows == 0 || k == 0) return SMX_OK;
  void *stream = ex ? ex->stream : NULL;
  int device;
  st = smx_cu_check_stream(stream, &device);
  if (st != SMX_OK) return st;
  size_t es = smx_cu_elem_size(dtype);
  smx_cu_operand ops[3] = { { x, rows, cols, ldx, es, 0, 0 },
                            { values, rows, k, k, sizeof(float), 1, 0 },
                            { indices, rows, k, k, sizeof(int64_t), 1, 0 } };
  st = smx_cu_check_operands(ops, 3, device);
  if (st != SMX_OK) return st;
  size_t need;
  st = smx_cuda_topk_workspace_size(rows, cols, k, &need);
  if (st != SMX_OK) return st;
  st = take_workspace(ex, need, device, &j.ws);
  if (st != SMX_OK) return st;
  j.dtype = dtype;
  j.op = log_form ? SMX_CU_OP_LOG_TOPK : SMX_CU_OP_TOPK;
  j.a = x;
  j.lda = ldx;
  j.rows = rows;
  j.cols = cols;
  j.seg = SMX_CU_FWD_SEG;
  j.nseg = nseg_of(cols);
  j.flags = o.flags & SMX_FLAG_MASKED_ROW_NAN;
  j.k = k;
  j.values = values;
  j.indices = indices;
  j.stream = stream;
  (void)cudaGetLastError();
  return smx_cu_launched(smx_cu_launch_topk(&j), "smx_cuda top-k kernels");
}

#define SMX_CUDA_DEFINE_TOPK(T, sfx, DT)                                                                        \
  smx_status smx_cuda_softmax_topk_rows_##sfx(const T *x, size_t ldx, float *values, int64_t *indices,         \
                                              size_t rows, size_t cols, size_t k, const smx_cuda_exec *ex,     \
                                              const smx_options *opt) {                                        \
    return run_topk(DT, 0, x, ldx, values, indices, rows, cols, k, ex, opt);                                    \
  }                                                                                                             \
  smx_status smx_cuda_log_softmax_topk_rows_##sfx(const T *x, size_t ldx, float *values, int64_t *indices,     \
                                                  size_t rows, size_t cols, size_t k, const smx_cuda_exec *ex, \
                                                  const smx_options *opt) {                                    \
    return run_topk(DT, 1, x, ldx, values, indices, rows, cols, k, ex, opt);                                    \
  }
SMX_CUDA_DEFINE_TOPK(float, f32, SMX_CU_F32)
SMX_CUDA_DEFINE_TOPK(uint16_t, f16, SMX_CU_F16)
SMX_CUDA_DEFINE_TOPK(uint16_t, bf16, SMX_CU_BF16)

/* --------------------------------------------------------------- sampling */
/* The sampler's parameters as the CPU's run_sample() checks them; *top_k: the top-k path's k (0: the row path). */
static smx_status sample_params(const smx_sample_params *sp, const smx_options *opt, size_t cols, size_t *top_k) {
  if (opt && opt->temperature != 0.0 && opt->temperature != 1.0) return SMX_E_INVALID_ARG;
  if (!sp) return SMX_E_INVALID_ARG;
  if (smx_resolve_temperature(sp->temperature) < 0.0) return SMX_E_INVALID_ARG;   /* 0 is allowed: greedy */
  if (!(sp->top_p >= 0.0 && sp->top_p <= 1.0) || !(sp->min_p >= 0.0 && sp->min_p <= 1.0)) return SMX_E_INVALID_ARG;
  if (sp->method != SMX_SAMPLE_MULTINOMIAL && sp->method != SMX_SAMPLE_GUMBEL_MAX) return SMX_E_INVALID_ARG;
  if (cols > SMX_CUDA_MAX_COLS) return SMX_E_INVALID_ARG;
  int greedy = sp->greedy || sp->temperature == 0.0;
  *top_k = !greedy && sp->top_k > 0 && sp->top_k < cols ? sp->top_k : 0;
  if (*top_k > SMX_CUDA_MAX_TOPK) return SMX_E_UNSUPPORTED;
  return SMX_OK;
}

smx_status smx_cuda_sample_workspace_size(size_t rows, size_t cols, const smx_sample_params *params, size_t *bytes) {
  size_t top_k;
  if (!bytes) return SMX_E_INVALID_ARG;
  smx_status st = sample_params(params, NULL, cols, &top_k);
  if (st != SMX_OK) return st;
  size_t n = 0;
  if (top_k && !topk_bytes(rows, cols, top_k, &n)) return SMX_E_INVALID_ARG;
  *bytes = n;
  return SMX_OK;
}

static smx_status run_sample(int dtype, const void *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,
                             const smx_sample_params *sp, uint64_t seed, uint64_t step, const smx_cuda_exec *ex,
                             const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  size_t top_k;
  st = sample_params(sp, opt, cols, &top_k);
  if (st != SMX_OK) return st;
  if (ldx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (cols == 0 || cols > UINT32_MAX) return SMX_E_INVALID_ARG;
  int greedy = sp->greedy || sp->temperature == 0.0;
  smx_cu_job j;
  memset(&j, 0, sizeof j);
  st = smx_cu_set_temperature(&j, greedy ? 1.0 : sp->temperature);
  if (st != SMX_OK) return st;
  void *stream = ex ? ex->stream : NULL;
  int device;
  st = smx_cu_check_stream(stream, &device);
  if (st != SMX_OK) return st;
  smx_cu_operand ops[2] = { { x, rows, cols, ldx, smx_cu_elem_size(dtype), 0, 0 },
                            { tokens, 1, rows, rows, sizeof(int64_t), 1, 0 } };
  st = smx_cu_check_operands(ops, 2, device);
  if (st != SMX_OK) return st;
  size_t need;
  st = smx_cuda_sample_workspace_size(rows, cols, sp, &need);
  if (st != SMX_OK) return st;
  st = take_workspace(ex, need, device, &j.ws);
  if (st != SMX_OK) return st;
  j.dtype = dtype;
  j.op = SMX_CU_OP_SAMPLE;
  j.a = x;
  j.lda = ldx;
  j.rows = rows;
  j.cols = cols;
  j.seg = SMX_CU_FWD_SEG;
  j.nseg = nseg_of(cols);
  j.k = top_k;
  j.tokens = tokens;
  j.greedy = greedy;
  j.gumbel = sp->method == SMX_SAMPLE_GUMBEL_MAX;
  j.top_p = sp->top_p == 0.0 ? 1.0 : sp->top_p;
  j.min_p = sp->min_p;
  j.seed = seed;
  j.step = step;
  j.row0 = sp->row_offset;
  j.stream = stream;
  (void)cudaGetLastError();
  return smx_cu_launched(smx_cu_launch_sample(&j), "smx_cuda sampling kernels");
}

#define SMX_CUDA_DEFINE_SAMPLE(T, sfx, DT)                                                                      \
  smx_status smx_cuda_sample_rows_##sfx(const T *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,     \
                                        const smx_sample_params *params, uint64_t seed, uint64_t step,         \
                                        const smx_cuda_exec *ex, const smx_options *opt) {                     \
    return run_sample(DT, x, ldx, tokens, rows, cols, params, seed, step, ex, opt);                             \
  }
SMX_CUDA_DEFINE_SAMPLE(float, f32, SMX_CU_F32)
SMX_CUDA_DEFINE_SAMPLE(uint16_t, f16, SMX_CU_F16)
SMX_CUDA_DEFINE_SAMPLE(uint16_t, bf16, SMX_CU_BF16)
