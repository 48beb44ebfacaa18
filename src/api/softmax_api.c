/*
 * Public softmax / log-softmax / log-sum-exp entry points: argument checks,
 * option defaults, algorithm choice and the split of work across threads.
 * Nothing here computes; the rows go to src/api/softmax_row.c.
 */
#include <math.h>
#include <stdint.h>

#include "api/algo_select.h"
#include "api/f32_temperature.h"
#include "api/f64_row.h"
#include "api/half_row.h"
#include "api/options.h"
#include "api/softmax_row.h"
#include "registry/registry.h"
#include "runtime/thread_pool.h"
#include "smx/smx.h"

/* rows at least this long are split across threads when there are few rows */
#define SMX_SPLIT_ROW_MIN ((size_t)1 << 21)

/* Elements spanned by a rows x cols matrix with leading dimension ld; 0 on overflow
 * of the byte size (counted for the widest element, double). Requires rows >= 1,
 * cols >= 1, ld >= cols. */
static size_t span_elems(size_t rows, size_t cols, size_t ld) {
  const size_t max_elems = (size_t)PTRDIFF_MAX / sizeof(double);
  if (cols > max_elems) return 0;
  if (rows - 1 > 0 && ld > (max_elems - cols) / (rows - 1)) return 0;
  return (rows - 1) * ld + cols;
}

static int ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

typedef struct rows_job {
  smx_row_params p;
  smx_row_params_f64 pd;   /* f64 rows */
  smx_op op;
  smx_elem elem;
  const void *x;
  void *y;        /* softmax ops */
  void *out;      /* logsumexp: float, or double for f64 rows */
  size_t ldx, ldy, rows, cols, rows_per_task;
} rows_job;

static void rows_task(void *ctx, size_t t) {
  const rows_job *j = ctx;
  size_t r0 = t * j->rows_per_task;
  size_t r1 = r0 + j->rows_per_task < j->rows ? r0 + j->rows_per_task : j->rows;
  size_t es = smx_elem_size(j->elem);
  for (size_t r = r0; r < r1; r++) {
    const char *xr = (const char *)j->x + r * j->ldx * es;
    char *yr = j->op == SMX_OP_LOGSUMEXP ? NULL : (char *)j->y + r * j->ldy * es;
    if (j->elem == SMX_ELEM_F64) {
      double *lsed = j->op == SMX_OP_LOGSUMEXP ? (double *)j->out + r : NULL;
      smx_row_f64(&j->pd, (const double *)xr, (double *)yr, j->cols, lsed);
      continue;
    }
    float *lse = j->op == SMX_OP_LOGSUMEXP ? (float *)j->out + r : NULL;
    if (j->elem == SMX_ELEM_F32) smx_row_f32(&j->p, (const float *)xr, (float *)yr, j->cols, lse);
    else smx_row_half(&j->p, j->elem, (const uint16_t *)xr, (uint16_t *)yr, j->cols, lse);
  }
}

static smx_status run_rows(smx_op op, smx_elem elem, const void *x, size_t ldx, void *y, size_t ldy, void *out,
                           size_t rows, size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (ldx < cols || (op != SMX_OP_LOGSUMEXP && ldy < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (op == SMX_OP_LOGSUMEXP) {
    if (!out) return SMX_E_INVALID_ARG;
    if (rows > (size_t)PTRDIFF_MAX / sizeof(double)) return SMX_E_INVALID_ARG;
    if (cols == 0) {
      for (size_t r = 0; r < rows; r++) {
        if (elem == SMX_ELEM_F64) ((double *)out)[r] = -INFINITY;
        else ((float *)out)[r] = -INFINITY;
      }
      return SMX_OK;
    }
  } else if (cols == 0) {
    return SMX_OK;
  }
  if (!x || (op != SMX_OP_LOGSUMEXP && !y)) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  size_t xs = span_elems(rows, cols, ldx);
  if (!xs) return SMX_E_INVALID_ARG;
  if (op == SMX_OP_LOGSUMEXP) {
    size_t out_es = elem == SMX_ELEM_F64 ? sizeof(double) : sizeof(float);
    if (ranges_overlap(x, xs * es, out, rows * out_es)) return SMX_E_INVALID_ARG;
  } else {
    size_t ys = span_elems(rows, cols, ldy);
    if (!ys) return SMX_E_INVALID_ARG;
    int exact = (const void *)y == x && ldx == ldy;
    if (!exact && ranges_overlap(x, xs * es, y, ys * es)) return SMX_E_INVALID_ARG;
  }

  const smx_f32_ukernels *k = smx_f32_kernels_for(o.temperature);
  smx_algo algo = o.algo == SMX_ALGO_AUTO ? smx_algo_auto(op, rows, cols, k->isa) : o.algo;
  const smx_f64_ukernels *kd = smx_registry_current()->f64;
  if (elem == SMX_ELEM_F64) {
    /* extreme temperatures: scalar kernels in division mode, three-pass only */
    if (smx_f64_temperature_extreme(o.temperature)) {
      kd = &smx_f64_ukernels_scalar;
      algo = SMX_ALGO_THREE_PASS;
    } else if (o.algo == SMX_ALGO_AUTO) {
      algo = smx_algo_auto_f64(op, rows, cols, kd->isa);
    }
  }
  int stream = op != SMX_OP_LOGSUMEXP && !(o.flags & SMX_FLAG_CACHED_STORES) &&
               ((o.flags & SMX_FLAG_STREAM_STORES) || smx_stream_default(rows, cols));
  rows_job j;
  j.op = op;
  j.elem = elem;
  j.x = x;
  j.y = y;
  j.out = out;
  j.ldx = ldx;
  j.ldy = ldy;
  j.rows = rows;
  j.cols = cols;

  int threads = o.threads;
  /* tiny problems are not worth waking the pool */
  if (rows * cols < ((size_t)1 << 14)) threads = 1;
  /* Splitting one row across threads costs a barrier per phase and moves the
   * row between private caches: measured to pay only from 2Mi columns
   * (256Ki: 0.23 ns/element on one thread, 0.43 on two; 2Mi: 0.32 vs 0.20).
   * Half-precision rows are never split (they stream through a small buffer). */
  int split_rows = threads > 1 && rows < 2 * (size_t)threads && cols >= SMX_SPLIT_ROW_MIN &&
                    (elem == SMX_ELEM_F32 || elem == SMX_ELEM_F64);
  if (threads > 1 && !split_rows && rows < 2) threads = 1;
  if (threads > 1 && !split_rows) {
    /* whole rows per task; a few tasks per thread for balance */
    smx_row_params_init(&j.p, k, op, algo, o.temperature, o.flags, 1);
    j.p.stream = stream;
    smx_row_params_f64_init(&j.pd, kd, op, algo, o.temperature, o.flags, 1);
    j.pd.stream = stream;
    size_t ntasks = (size_t)threads * 4;
    if (ntasks > rows) ntasks = rows;
    j.rows_per_task = (rows + ntasks - 1) / ntasks;
    ntasks = (rows + j.rows_per_task - 1) / j.rows_per_task;
    smx_parallel_for(threads, ntasks, rows_task, &j);
  } else {
    /* one row at a time, long rows split into chunks across threads */
    smx_row_params_init(&j.p, k, op, algo, o.temperature, o.flags, threads);
    j.p.stream = stream;
    smx_row_params_f64_init(&j.pd, kd, op, algo, o.temperature, o.flags, threads);
    j.pd.stream = stream;
    j.rows_per_task = rows;
    rows_task(&j, 0);
  }
  return SMX_OK;
}

smx_status smx_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F32, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_log_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                    const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F32, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_logsumexp_rows_f32(const float *x, size_t ldx, float *out, size_t rows, size_t cols,
                                  const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F32, x, ldx, NULL, 0, out, rows, cols, opt);
}

smx_status smx_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F32, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_log_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F32, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_logsumexp_f32(const float *x, size_t n, float *out, const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F32, x, n, NULL, 0, out, 1, n, opt);
}

/* ---- half precision: f16 and bf16 storage, f32 arithmetic (src/api/half_row.c) */

smx_status smx_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F16, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_log_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                    size_t cols, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F16, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_logsumexp_rows_f16(const uint16_t *x, size_t ldx, float *out, size_t rows, size_t cols,
                                  const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F16, x, ldx, NULL, 0, out, rows, cols, opt);
}

smx_status smx_softmax_f16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F16, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_log_softmax_f16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F16, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_logsumexp_f16(const uint16_t *x, size_t n, float *out, const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F16, x, n, NULL, 0, out, 1, n, opt);
}

smx_status smx_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows, size_t cols,
                                 const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_BF16, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_log_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                     size_t cols, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_BF16, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_logsumexp_rows_bf16(const uint16_t *x, size_t ldx, float *out, size_t rows, size_t cols,
                                   const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_BF16, x, ldx, NULL, 0, out, rows, cols, opt);
}

smx_status smx_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_BF16, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_log_softmax_bf16(const uint16_t *x, uint16_t *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_BF16, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_logsumexp_bf16(const uint16_t *x, size_t n, float *out, const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_BF16, x, n, NULL, 0, out, 1, n, opt);
}

/* ---- f64: double storage and arithmetic (src/api/f64_row.c) */

smx_status smx_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F64, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_log_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                    const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F64, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_logsumexp_rows_f64(const double *x, size_t ldx, double *out, size_t rows, size_t cols,
                                  const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F64, x, ldx, NULL, 0, out, rows, cols, opt);
}

smx_status smx_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, SMX_ELEM_F64, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_log_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, SMX_ELEM_F64, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_logsumexp_f64(const double *x, size_t n, double *out, const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, SMX_ELEM_F64, x, n, NULL, 0, out, 1, n, opt);
}
