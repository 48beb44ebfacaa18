/*
 * Gumbel-softmax (include/smx/smx_topk.h): soft, hard straight-through, and
 * the backward of the soft sample. The noise is the same Philox stream as
 * Gumbel-max sampling; the softmax is smx.h's (its policy and bound).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "api/f32_temperature.h"
#include "api/half_row.h"
#include "api/options.h"
#include "api/softmax_row.h"
#include "lm/lm_args.h"
#include "lm/philox.h"
#include "registry/registry.h"
#include "runtime/thread_pool.h"
#include "smx/smx_topk.h"

/* double to float without undefined behaviour beyond the float range */
static float to_float(double v) { return v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v; }

typedef struct gumbel_job {
  smx_row_params p;
  smx_elem elem;             /* storage of x, hard and soft                              */
  const void *x;
  void *hard, *soft;         /* hard may be NULL (soft form); soft may be NULL (hard form) */
  size_t ldx, ldh, lds, rows, cols, rows_per_task;
  uint64_t seed, step;
  int failed;
} gumbel_job;

/* z = x + g, rounded once to float (-inf stays -inf, NaN stays NaN). */
static void add_noise(const gumbel_job *j, const float *x, float *z, size_t r) {
  for (size_t i = 0; i < j->cols; i++) z[i] = to_float((double)x[i] + smx_philox_gumbel(j->seed, r, j->step, (uint32_t)i));
}

static void one_hot(const gumbel_job *j, const float *z, float *h) {
  size_t n = j->cols, best = 0;
  int nan = 0, live = 0;
  for (size_t i = 0; i < n; i++) {
    if (z[i] != z[i]) nan = 1;
    else if (z[i] > -INFINITY && (!live || z[i] > z[best])) { best = i; live = 1; }
  }
  float fill = nan || (!live && (j->p.flags & SMX_FLAG_MASKED_ROW_NAN)) ? NAN : 0.0f;
  for (size_t i = 0; i < n; i++) h[i] = fill;
  if (!nan && live) h[best] = 1.0f;
}

static void to_storage(const gumbel_job *j, const float *f, void *out) {
  const smx_cvt_ukernels *cv = smx_registry_current()->cvt;
  if (j->elem == SMX_ELEM_F16) cv->f32_to_f16(j->cols, f, out);
  else cv->f32_to_bf16(j->cols, f, out);
}

static void gumbel_task(void *ctx, size_t t) {
  gumbel_job *j = ctx;
  size_t r0 = t * j->rows_per_task;
  size_t r1 = r0 + j->rows_per_task < j->rows ? r0 + j->rows_per_task : j->rows;
  int f32 = j->elem == SMX_ELEM_F32;
  size_t es = smx_elem_size(j->elem);
  /* f32: z is the soft output itself when there is one; half: f32 rows here */
  float *xb = NULL, *zb = NULL, *hb = NULL;
  int need = (!f32 && !(xb = malloc(j->cols * sizeof(float)))) || ((!f32 || !j->soft) && !(zb = malloc(j->cols * sizeof(float)))) ||
             (!f32 && j->hard && !(hb = malloc(j->cols * sizeof(float))));
  if (need) {
    free(xb);
    free(zb);
    free(hb);
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  const smx_cvt_ukernels *cv = smx_registry_current()->cvt;
  for (size_t r = r0; r < r1; r++) {
    const char *xr = (const char *)j->x + r * j->ldx * es;
    const float *x = (const float *)(const void *)xr;
    if (!f32) {
      if (j->elem == SMX_ELEM_F16) cv->f16_to_f32(j->cols, (const uint16_t *)(const void *)xr, xb);
      else cv->bf16_to_f32(j->cols, (const uint16_t *)(const void *)xr, xb);
      x = xb;
    }
    float *z = f32 && j->soft ? (float *)j->soft + r * j->lds : zb;
    add_noise(j, x, z, r);
    if (j->hard) {
      void *hr = (char *)j->hard + r * j->ldh * es;
      one_hot(j, z, f32 ? hr : hb);
      if (!f32) to_storage(j, hb, hr);
    }
    if (j->soft) {
      smx_row_f32(&j->p, z, z, j->cols, NULL);
      if (!f32) to_storage(j, z, (char *)j->soft + r * j->lds * es);
    }
  }
  free(xb);
  free(zb);
  free(hb);
}

static smx_status run_gumbel(smx_elem elem, const void *x, size_t ldx, void *hard, size_t ldh, void *soft,
                             size_t lds, size_t rows, size_t cols, double tau, uint64_t seed, uint64_t step,
                             const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (opt && opt->temperature != 0.0 && opt->temperature != 1.0) return SMX_E_INVALID_ARG;
  if (!(tau > 0.0 && tau < INFINITY)) return SMX_E_INVALID_ARG;
  if (ldx < cols || (hard && ldh < cols) || (soft && lds < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) return SMX_OK;
  if (!x || (!hard && !soft) || cols > UINT32_MAX) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  size_t xs = smx_lm_span(rows, cols, ldx, es);
  size_t hs = hard ? smx_lm_span(rows, cols, ldh, es) : 1, ss = soft ? smx_lm_span(rows, cols, lds, es) : 1;
  if (!xs || !hs || !ss) return SMX_E_INVALID_ARG;
  /* the soft output may be the input exactly (in place); nothing else may overlap */
  if (soft && !((const void *)soft == x && lds == ldx) && smx_lm_overlap(x, xs * es, soft, ss * es))
    return SMX_E_INVALID_ARG;
  if (hard && (smx_lm_overlap(x, xs * es, hard, hs * es) || (soft && smx_lm_overlap(soft, ss * es, hard, hs * es))))
    return SMX_E_INVALID_ARG;

  gumbel_job j;
  const smx_f32_ukernels *k = smx_f32_kernels_for(tau);
  smx_row_params_init(&j.p, k, SMX_OP_SOFTMAX, SMX_ALGO_THREE_PASS, tau, o.flags, 1);
  j.elem = elem;
  j.x = x;
  j.hard = hard;
  j.soft = soft;
  j.ldx = ldx;
  j.ldh = ldh;
  j.lds = lds;
  j.rows = rows;
  j.cols = cols;
  j.seed = seed;
  j.step = step;
  j.failed = 0;
  int threads = rows * cols < ((size_t)1 << 14) ? 1 : o.threads;
  size_t ntasks = threads > 1 ? (size_t)threads * 4 : 1;
  if (ntasks > rows) ntasks = rows;
  j.rows_per_task = (rows + ntasks - 1) / ntasks;
  ntasks = (rows + j.rows_per_task - 1) / j.rows_per_task;
  if (ntasks > 1) smx_parallel_for(threads, ntasks, gumbel_task, &j);
  else gumbel_task(&j, 0);
  return j.failed ? SMX_E_NOMEM : SMX_OK;
}

smx_status smx_gumbel_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                       double tau, uint64_t seed, uint64_t step, const smx_options *opt) {
  if (!y && rows > 0 && cols > 0) return SMX_E_INVALID_ARG;
  return run_gumbel(SMX_ELEM_F32, x, ldx, NULL, 0, y, ldy, rows, cols, tau, seed, step, opt);
}

smx_status smx_gumbel_softmax_hard_rows_f32(const float *x, size_t ldx, float *y_hard, size_t ldh, float *y_soft,
                                            size_t lds, size_t rows, size_t cols, double tau, uint64_t seed,
                                            uint64_t step, const smx_options *opt) {
  if (!y_hard && rows > 0 && cols > 0) return SMX_E_INVALID_ARG;
  return run_gumbel(SMX_ELEM_F32, x, ldx, y_hard, ldh, y_soft, lds, rows, cols, tau, seed, step, opt);
}

/* ---- f16 / bf16 storage: f32 arithmetic, outputs rounded once to the storage type */
#define SMX_GUMBEL_HALF(sfx, elem)                                                                              \
  smx_status smx_gumbel_softmax_rows_##sfx(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows, \
                                           size_t cols, double tau, uint64_t seed, uint64_t step,               \
                                           const smx_options *opt) {                                            \
    if (!y && rows > 0 && cols > 0) return SMX_E_INVALID_ARG;                                                   \
    return run_gumbel(elem, x, ldx, NULL, 0, y, ldy, rows, cols, tau, seed, step, opt);                        \
  }                                                                                                             \
  smx_status smx_gumbel_softmax_hard_rows_##sfx(const uint16_t *x, size_t ldx, uint16_t *y_hard, size_t ldh,    \
                                                uint16_t *y_soft, size_t lds, size_t rows, size_t cols,         \
                                                double tau, uint64_t seed, uint64_t step,                       \
                                                const smx_options *opt) {                                       \
    if (!y_hard && rows > 0 && cols > 0) return SMX_E_INVALID_ARG;                                              \
    return run_gumbel(elem, x, ldx, y_hard, ldh, y_soft, lds, rows, cols, tau, seed, step, opt);               \
  }
SMX_GUMBEL_HALF(f16, SMX_ELEM_F16)
SMX_GUMBEL_HALF(bf16, SMX_ELEM_BF16)

smx_status smx_gumbel_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy, float *dx,
                                                size_t lddx, size_t rows, size_t cols, double tau,
                                                const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (!(tau > 0.0 && tau < INFINITY)) return SMX_E_INVALID_ARG;
  if (ldy < cols || lddy < cols || lddx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) return SMX_OK;
  if (!y || !dy || !dx) return SMX_E_INVALID_ARG;
  size_t ys = smx_lm_span(rows, cols, ldy, 4), gs = smx_lm_span(rows, cols, lddy, 4);
  size_t xs = smx_lm_span(rows, cols, lddx, 4);
  if (!ys || !gs || !xs) return SMX_E_INVALID_ARG;
  if (smx_lm_overlap(y, ys * 4, dx, xs * 4)) return SMX_E_INVALID_ARG;
  if (!((const float *)dx == dy && lddx == lddy) && smx_lm_overlap(dy, gs * 4, dx, xs * 4)) return SMX_E_INVALID_ARG;
  double inv_tau = 1.0 / tau;
  for (size_t r = 0; r < rows; r++) {
    const float *yr = y + r * ldy, *gr = dy + r * lddy;
    float *xr = dx + r * lddx;
    double dot = 0.0;
    for (size_t i = 0; i < cols; i++) dot += (double)gr[i] * (double)yr[i];
    for (size_t i = 0; i < cols; i++) {
      double v = (double)yr[i] * ((double)gr[i] - dot);
      /* a subnormal tau makes 1/tau infinite: divide instead, so that 0 stays 0 */
      xr[i] = to_float(inv_tau < INFINITY ? v * inv_tau : v / tau);
    }
  }
  return SMX_OK;
}
