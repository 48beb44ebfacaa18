/*
 * Public sampling entry points (include/smx/smx_topk.h): the sampling
 * parameters here, the options, arguments and rows through the engine
 * (src/core/). Each row is drawn by one task from its own random stream
 * (seed, row, step), so the thread count never changes a token.
 */
#include <math.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "ops/sample_row.h"
#include "ops/softmax_row_f32.h"
#include "registry/registry.h"
#include "smx/smx_topk.h"

typedef struct sample_job {
  smx_sample_cfg cfg;
  double t64;          /* f64 rows: the temperature folded into the row (the sampler then runs at T = 1) */
  smx_elem elem;
  const char *x;
  size_t ldx, cols, es;
  int64_t *tokens;
  uint64_t row0;
} sample_job;

/* An f64 row for the f32 sampler: (x - m) / T in double, m the largest finite entry, rounded to float once
 * (no overflow, whatever the row's scale: every value is <= 0); +-inf and NaN stay themselves. */
static void load_f64(const double *x, size_t n, double t, float *row) {
  double m = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (x[i] > m && x[i] < INFINITY) m = x[i];
  for (size_t i = 0; i < n; i++) {
    if (!(x[i] > -INFINITY && x[i] < INFINITY)) {
      row[i] = (float)x[i];
      continue;
    }
    double d = x[i] - m;   /* beyond -DBL_MAX on a row spanning it: in halves */
    double v = d > -INFINITY ? d / t : (0.5 * x[i] - 0.5 * m) / t * 2.0;
    row[i] = v < -3.4028234663852886e38 ? -INFINITY : (float)v;
  }
}

/* Greedy on an f64 row, exactly: the first entry equal to the max; -1 for a NaN or no entry above -inf. */
static int64_t greedy_f64(const double *x, size_t n) {
  int64_t best = -1;
  double bv = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (x[i] != x[i]) return -1;
    if (x[i] > bv) bv = x[i], best = (int64_t)i;
  }
  return best;
}

static void sample_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const sample_job *j = ctx;
  smx_sample_scratch s;
  smx_sample_scratch_init(&s, scratch, j->cols);
  smx_elem_io io = smx_elem_io_for(j->elem);
  for (size_t r = r0; r < r1; r++) {
    const void *xr = j->x + r * j->ldx * j->es;
    const float *row = xr;
    if (j->elem == SMX_ELEM_F64) {
      if (j->cfg.greedy) {
        j->tokens[r] = greedy_f64(xr, j->cols);
        continue;
      }
      load_f64(xr, j->cols, j->t64, s.row);
      row = s.row;
    } else if (j->elem != SMX_ELEM_F32) {
      io.load(j->cols, xr, s.row);
      row = s.row;
    }
    j->tokens[r] = smx_sample_row(&j->cfg, row, j->cols, j->row0 + (uint64_t)r, &s);
  }
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
  if (smx_resolve_temperature(t) < 0.0) return SMX_E_INVALID_ARG;   /* 0 is allowed: greedy */
  if (!(sp->top_p >= 0.0 && sp->top_p <= 1.0) || !(sp->min_p >= 0.0 && sp->min_p <= 1.0)) return SMX_E_INVALID_ARG;
  if (sp->method != SMX_SAMPLE_MULTINOMIAL && sp->method != SMX_SAMPLE_GUMBEL_MAX) return SMX_E_INVALID_ARG;
  if (ldx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (cols == 0 || !x || !tokens || cols > UINT32_MAX) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  smx_arg args[2] = { SMX_ARG_IN(x, rows, cols, ldx, es), SMX_ARG_OUT(tokens, 1, rows, rows, sizeof(int64_t), 0) };
  if ((st = smx_check_args(args, 2)) != SMX_OK) return st;
  size_t scratch = smx_sample_scratch_bytes(cols);
  if (!scratch) return SMX_E_INVALID_ARG;

  int greedy = sp->greedy || t == 0.0;
  double tt = greedy ? 1.0 : t, t64 = tt;
  if (elem == SMX_ELEM_F64) tt = 1.0;   /* folded into the rows (load_f64) */
  sample_job j = { .t64 = t64, .elem = elem, .x = x, .ldx = ldx, .cols = cols, .es = es, .tokens = tokens,
                   .row0 = sp->row_offset };
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
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, scratch, sample_task, &j);
}

/* The public entry points, one dtype per line. */
#define SAMPLE_ROWS(SFX, T, ELEM)                                                                         \
  smx_status smx_sample_rows_##SFX(const T *x, size_t ldx, int64_t *tokens, size_t rows, size_t cols,    \
                                   const smx_sample_params *params, uint64_t seed, uint64_t step,         \
                                   const smx_options *opt) {                                            \
    return run_sample(ELEM, x, ldx, rows, cols, params, seed, step, tokens, opt);                       \
  }

SAMPLE_ROWS(f32, float, SMX_ELEM_F32)
SAMPLE_ROWS(f64, double, SMX_ELEM_F64)
SAMPLE_ROWS(f16, uint16_t, SMX_ELEM_F16)
SAMPLE_ROWS(bf16, uint16_t, SMX_ELEM_BF16)
