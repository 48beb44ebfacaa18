/*
 * Public softmax / log-softmax / log-sum-exp entry points: the empty cases,
 * the algorithm choice and the plan. The engine (src/core/) checks the
 * arguments and runs the rows, which go to softmax_row_{f32,f64,half}.c.
 */
#include <math.h>
#include <stdint.h>

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "ops/algo_select.h"
#include "ops/softmax_row_f32.h"
#include "ops/softmax_row_f64.h"
#include "ops/softmax_row_half.h"
#include "registry/registry.h"
#include "smx/smx.h"

/* Rows at least this long are split across threads when there are few rows:
 * splitting one row costs a barrier per phase and moves the row between
 * private caches, measured to pay only from 2Mi columns (256Ki: 0.23
 * ns/element on one thread, 0.43 on two; 2Mi: 0.32 vs 0.20). Half-precision
 * rows are never split (they stream through a small buffer). */
#define SMX_SPLIT_ROW_MIN ((size_t)1 << 21)

typedef struct rows_job {
  smx_row_params p;
  smx_row_params_f64 pd;   /* f64 rows */
  smx_op op;
  smx_elem elem;
  const void *x;
  void *y;        /* softmax ops */
  void *out;      /* logsumexp: float, or double for f64 rows */
  size_t ldx, ldy, cols;
} rows_job;

static void rows_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const rows_job *j = ctx;
  size_t es = smx_elem_size(j->elem);
  (void)scratch;
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
  int lse_op = op == SMX_OP_LOGSUMEXP;
  if (ldx < cols || (!lse_op && ldy < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (lse_op && !out) return SMX_E_INVALID_ARG;
  if (lse_op && cols == 0) {
    if (rows > (size_t)PTRDIFF_MAX / sizeof(double)) return SMX_E_INVALID_ARG;
    for (size_t r = 0; r < rows; r++) {
      if (elem == SMX_ELEM_F64) ((double *)out)[r] = -INFINITY;
      else ((float *)out)[r] = -INFINITY;
    }
    return SMX_OK;
  }
  if (cols == 0) return SMX_OK;
  if (!x || (!lse_op && !y)) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem), out_es = elem == SMX_ELEM_F64 ? sizeof(double) : sizeof(float);
  smx_arg args[2] = { SMX_ARG_IN(x, rows, cols, ldx, es), SMX_ARG_OUT(y, rows, cols, ldy, es, 1) };
  if (lse_op) {
    smx_arg lse_arg = SMX_ARG_OUT(out, 1, rows, rows, out_es, 0);
    args[1] = lse_arg;
  }
  if ((st = smx_check_args(args, 2)) != SMX_OK) return st;

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
  int stream = !lse_op && !(o.flags & SMX_FLAG_CACHED_STORES) &&
               ((o.flags & SMX_FLAG_STREAM_STORES) || smx_stream_default(rows, cols));
  int half = elem == SMX_ELEM_F16 || elem == SMX_ELEM_BF16;
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, half ? 0 : SMX_SPLIT_ROW_MIN);
  rows_job j = { .op = op, .elem = elem, .x = x, .y = y, .out = out, .ldx = ldx, .ldy = ldy, .cols = cols };
  smx_row_params_init(&j.p, k, op, algo, o.temperature, o.flags, plan.chunk_threads);
  j.p.stream = stream;
  smx_row_params_f64_init(&j.pd, kd, op, algo, o.temperature, o.flags, plan.chunk_threads);
  j.pd.stream = stream;
  return smx_grid_rows(plan.row_threads, rows, 0, rows_task, &j);
}

/* ---- public forms: (softmax, log-softmax, log-sum-exp) x (rows, one row) for each
 * storage type; f16 and bf16 rows are computed in f32 (softmax_row_half.c), f64 rows
 * in double (softmax_row_f64.c); log-sum-exp comes out as LT (float, or double for f64) */
#define SMX_SOFTMAX_FORMS(sfx, T, LT, elem)                                                                    \
  smx_status smx_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,       \
                                    const smx_options *opt) {                                                 \
    return run_rows(SMX_OP_SOFTMAX, elem, x, ldx, y, ldy, NULL, rows, cols, opt);                             \
  }                                                                                                            \
  smx_status smx_log_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,   \
                                        const smx_options *opt) {                                             \
    return run_rows(SMX_OP_LOG_SOFTMAX, elem, x, ldx, y, ldy, NULL, rows, cols, opt);                         \
  }                                                                                                            \
  smx_status smx_logsumexp_rows_##sfx(const T *x, size_t ldx, LT *out, size_t rows, size_t cols,              \
                                      const smx_options *opt) {                                               \
    return run_rows(SMX_OP_LOGSUMEXP, elem, x, ldx, NULL, 0, out, rows, cols, opt);                           \
  }                                                                                                            \
  smx_status smx_softmax_##sfx(const T *x, T *y, size_t n, const smx_options *opt) {                          \
    return run_rows(SMX_OP_SOFTMAX, elem, x, n, y, n, NULL, 1, n, opt);                                       \
  }                                                                                                            \
  smx_status smx_log_softmax_##sfx(const T *x, T *y, size_t n, const smx_options *opt) {                      \
    return run_rows(SMX_OP_LOG_SOFTMAX, elem, x, n, y, n, NULL, 1, n, opt);                                   \
  }                                                                                                            \
  smx_status smx_logsumexp_##sfx(const T *x, LT *out, size_t n, const smx_options *opt) {                     \
    return run_rows(SMX_OP_LOGSUMEXP, elem, x, n, NULL, 0, out, 1, n, opt);                                   \
  }

SMX_SOFTMAX_FORMS(f32, float, float, SMX_ELEM_F32)
SMX_SOFTMAX_FORMS(f16, uint16_t, float, SMX_ELEM_F16)
SMX_SOFTMAX_FORMS(bf16, uint16_t, float, SMX_ELEM_BF16)
SMX_SOFTMAX_FORMS(f64, double, double, SMX_ELEM_F64)
