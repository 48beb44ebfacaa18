/*
 * Gumbel-softmax (include/smx/smx_topk.h): soft, hard straight-through, and
 * the backward of the soft sample. The noise is the same Philox stream as
 * Gumbel-max sampling; the softmax is smx.h's (its policy and bound).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "math/philox.h"
#include "ops/softmax_row_f32.h"
#include "smx/smx_topk.h"

/* double to float without undefined behaviour beyond the float range */
static float to_float(double v) { return v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v; }

typedef struct gumbel_job {
  smx_row_params p;
  smx_elem elem;             /* storage of x, hard and soft                              */
  const void *x;
  void *hard, *soft;         /* hard may be NULL (soft form); soft may be NULL (hard form) */
  size_t ldx, ldh, lds, cols;
  uint64_t seed, step;
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

/* scratch: three rows of floats (x, z and the hard sample, for half storage) */
static void gumbel_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const gumbel_job *j = ctx;
  int f32 = j->elem == SMX_ELEM_F32;
  size_t es = smx_elem_size(j->elem);
  smx_elem_io io = smx_elem_io_for(j->elem);
  float *xb = scratch, *zb = xb + j->cols, *hb = zb + j->cols;
  for (size_t r = r0; r < r1; r++) {
    const char *xr = (const char *)j->x + r * j->ldx * es;
    const float *x = (const float *)(const void *)xr;
    if (!f32) {
      io.load(j->cols, xr, xb);
      x = xb;
    }
    /* f32: z is the soft output itself when there is one */
    float *z = f32 && j->soft ? (float *)j->soft + r * j->lds : zb;
    add_noise(j, x, z, r);
    if (j->hard) {
      void *hr = (char *)j->hard + r * j->ldh * es;
      one_hot(j, z, f32 ? hr : hb);
      if (!f32) io.store(j->cols, hb, hr);
    }
    if (j->soft) {
      smx_row_f32(&j->p, z, z, j->cols, NULL);
      if (!f32) io.store(j->cols, z, (char *)j->soft + r * j->lds * es);
    }
  }
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
  /* the soft output may be the input exactly (in place); nothing else may overlap */
  smx_arg args[3] = { SMX_ARG_IN(x, rows, cols, ldx, es), SMX_ARG_OUT(soft, rows, cols, lds, es, 1),
                      SMX_ARG_OUT(hard, rows, cols, ldh, es, 0) };
  if ((st = smx_check_args(args, 3)) != SMX_OK) return st;

  gumbel_job j = { .elem = elem, .x = x, .hard = hard, .soft = soft, .ldx = ldx, .ldh = ldh, .lds = lds,
                   .cols = cols, .seed = seed, .step = step };
  smx_row_params_init(&j.p, smx_f32_kernels_for(tau), SMX_OP_SOFTMAX, SMX_ALGO_THREE_PASS, tau, o.flags, 1);
  int f32 = elem == SMX_ELEM_F32;
  size_t scratch = f32 && soft ? 0 : 3 * cols * sizeof(float);
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, scratch, gumbel_task, &j);
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

/* The VJP of the soft sample, per row in double; f16 / bf16 rows are widened into f32 buffers of one row first
 * and dx is rounded once to the storage type. */
static smx_status run_bwd(smx_elem elem, const void *y, size_t ldy, const void *dy, size_t lddy, void *dx, size_t lddx,
                          size_t rows, size_t cols, double tau, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (!(tau > 0.0 && tau < INFINITY)) return SMX_E_INVALID_ARG;
  if (ldy < cols || lddy < cols || lddx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) return SMX_OK;
  if (!y || !dy || !dx) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  /* dx may be dy exactly (in place); it may not overlap y */
  smx_arg args[3] = { SMX_ARG_IN(y, rows, cols, ldy, es), SMX_ARG_IN(dy, rows, cols, lddy, es),
                      SMX_ARG_OUT(dx, rows, cols, lddx, es, 2) };
  if ((st = smx_check_args(args, 3)) != SMX_OK) return st;
  int half = elem != SMX_ELEM_F32;
  smx_elem_io io = smx_elem_io_for(elem);
  float *buf = NULL;
  if (half) {
    size_t bytes = smx_mul(3 * sizeof(float), cols, (size_t)-1 / 2);
    if (!bytes || !(buf = malloc(bytes))) return SMX_E_NOMEM;
  }
  double inv_tau = 1.0 / tau;
  for (size_t r = 0; r < rows; r++) {
    const float *yr = (const float *)y + r * ldy, *gr = (const float *)dy + r * lddy;
    float *xr = (float *)dx + r * lddx;
    if (half) {
      io.load(cols, (const uint16_t *)y + r * ldy, buf);
      io.load(cols, (const uint16_t *)dy + r * lddy, buf + cols);
      yr = buf, gr = buf + cols, xr = buf + 2 * cols;
    }
    double dot = 0.0;
    for (size_t i = 0; i < cols; i++) dot += (double)gr[i] * (double)yr[i];
    for (size_t i = 0; i < cols; i++) {
      double v = (double)yr[i] * ((double)gr[i] - dot);
      /* a subnormal tau makes 1/tau infinite: divide instead, so that 0 stays 0 */
      xr[i] = to_float(inv_tau < INFINITY ? v * inv_tau : v / tau);
    }
    if (half) io.store(cols, xr, (uint16_t *)dx + r * lddx);
  }
  free(buf);
  return SMX_OK;
}

smx_status smx_gumbel_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy, float *dx,
                                                size_t lddx, size_t rows, size_t cols, double tau,
                                                const smx_options *opt) {
  return run_bwd(SMX_ELEM_F32, y, ldy, dy, lddy, dx, lddx, rows, cols, tau, opt);
}
smx_status smx_gumbel_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                uint16_t *dx, size_t lddx, size_t rows, size_t cols, double tau,
                                                const smx_options *opt) {
  return run_bwd(SMX_ELEM_F16, y, ldy, dy, lddy, dx, lddx, rows, cols, tau, opt);
}
smx_status smx_gumbel_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                 uint16_t *dx, size_t lddx, size_t rows, size_t cols, double tau,
                                                 const smx_options *opt) {
  return run_bwd(SMX_ELEM_BF16, y, ldy, dy, lddy, dx, lddx, rows, cols, tau, opt);
}
