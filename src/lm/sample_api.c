/*
 * Public sampling entry points (include/smx/smx_topk.h): argument checks and
 * rows across threads. Each row is drawn by one thread from its own random
 * stream (seed, row, step), so the thread count never changes a token.
 */
#include <math.h>

#include "api/f32_temperature.h"
#include "api/half_row.h"
#include "api/options.h"
#include "api/softmax_row.h"
#include "lm/lm_args.h"
#include "lm/sample_row.h"
#include "registry/registry.h"
#include "runtime/thread_pool.h"
#include "smx/smx_topk.h"

typedef struct sample_job {
  smx_sample_cfg cfg;
  smx_elem elem;
  const char *x;
  size_t ldx, cols, rows, rows_per_task, es;
  int64_t *tokens;
  uint64_t row0;
  int failed;
} sample_job;

static void sample_task(void *ctx, size_t t) {
  sample_job *j = ctx;
  size_t r0 = t * j->rows_per_task;
  size_t r1 = r0 + j->rows_per_task < j->rows ? r0 + j->rows_per_task : j->rows;
  smx_sample_scratch s;
  if (!smx_sample_scratch_alloc(&s, j->cols, j->elem != SMX_ELEM_F32)) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  const smx_cvt_ukernels *cv = smx_registry_current()->cvt;
  for (size_t r = r0; r < r1; r++) {
    const void *xr = j->x + r * j->ldx * j->es;
    const float *row = xr;
    if (j->elem == SMX_ELEM_F16) cv->f16_to_f32(j->cols, xr, s.row);
    if (j->elem == SMX_ELEM_BF16) cv->bf16_to_f32(j->cols, xr, s.row);
    if (j->elem != SMX_ELEM_F32) row = s.row;
    j->tokens[r] = smx_sample_row(&j->cfg, row, j->cols, j->row0 + (uint64_t)r, &s);
  }
  smx_sample_scratch_free(&s);
}

static smx_status run_sample(smx_elem elem, const void *x, size_t ldx, size_t rows, size_t cols,
                             const smx_sample_params *sp, uint64_t seed, uint64_t step, int64_t *tokens,
                             const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (opt && opt->temperature != 0.0 && opt->temperature != 1.0) return SMX_E_INVALID_ARG;
  if (!sp) return SMX_E_INVALID_ARG;
  double t = sp->temperature;
  if (t != t || t < 0.0 || t == INFINITY) return SMX_E_INVALID_ARG;
  if (!(sp->top_p >= 0.0 && sp->top_p <= 1.0) || !(sp->min_p >= 0.0 && sp->min_p <= 1.0)) return SMX_E_INVALID_ARG;
  if (sp->method != SMX_SAMPLE_MULTINOMIAL && sp->method != SMX_SAMPLE_GUMBEL_MAX) return SMX_E_INVALID_ARG;
  if (ldx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (cols == 0 || !x || !tokens) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  size_t xs = smx_lm_span(rows, cols, ldx, es);
  if (!xs || cols > UINT32_MAX || rows > (size_t)PTRDIFF_MAX / sizeof(int64_t)) return SMX_E_INVALID_ARG;
  if (smx_lm_overlap(x, xs * es, tokens, rows * sizeof(int64_t))) return SMX_E_INVALID_ARG;

  sample_job j;
  int greedy = sp->greedy || t == 0.0;
  double tt = greedy ? 1.0 : t;
  j.cfg.k = smx_f32_kernels_for(tt);
  j.cfg.tk = smx_registry_current()->topk;
  smx_row_params p;
  smx_row_params_init(&p, j.cfg.k, SMX_OP_SOFTMAX, SMX_ALGO_THREE_PASS, tt, 0, 1);
  j.cfg.c = p.c;
  j.cfg.greedy = greedy;
  j.cfg.gumbel = sp->method == SMX_SAMPLE_GUMBEL_MAX;
  j.cfg.top_k = sp->top_k;
  j.cfg.top_p = sp->top_p == 0.0 ? 1.0 : sp->top_p;
  j.cfg.min_p = sp->min_p;
  j.cfg.seed = seed;
  j.cfg.step = step;
  j.elem = elem;
  j.x = x;
  j.ldx = ldx;
  j.cols = cols;
  j.rows = rows;
  j.es = es;
  j.tokens = tokens;
  j.row0 = sp->row_offset;
  j.failed = 0;
  int threads = o.threads;
  size_t ntasks = threads > 1 ? (size_t)threads * 4 : 1;
  if (ntasks > rows) ntasks = rows;
  j.rows_per_task = (rows + ntasks - 1) / ntasks;
  ntasks = (rows + j.rows_per_task - 1) / j.rows_per_task;
  if (ntasks > 1) smx_parallel_for(threads, ntasks, sample_task, &j);
  else sample_task(&j, 0);
  return j.failed ? SMX_E_NOMEM : SMX_OK;
}

smx_status smx_sample_rows_f32(const float *x, size_t ldx, size_t rows, size_t cols, const smx_sample_params *params,
                               uint64_t seed, uint64_t step, int64_t *tokens, const smx_options *opt) {
  return run_sample(SMX_ELEM_F32, x, ldx, rows, cols, params, seed, step, tokens, opt);
}

smx_status smx_sample_rows_f16(const uint16_t *x, size_t ldx, size_t rows, size_t cols,
                               const smx_sample_params *params, uint64_t seed, uint64_t step, int64_t *tokens,
                               const smx_options *opt) {
  return run_sample(SMX_ELEM_F16, x, ldx, rows, cols, params, seed, step, tokens, opt);
}

smx_status smx_sample_rows_bf16(const uint16_t *x, size_t ldx, size_t rows, size_t cols,
                                const smx_sample_params *params, uint64_t seed, uint64_t step, int64_t *tokens,
                                const smx_options *opt) {
  return run_sample(SMX_ELEM_BF16, x, ldx, rows, cols, params, seed, step, tokens, opt);
}
