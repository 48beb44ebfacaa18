/*
 * Logit standardisation for distillation (Sun et al., CVPR 2024, "Logit
 * Standardization in Knowledge Distillation"; sunshangquan/logit-
 * standardization-KD, mdistiller/distillers/KD.py), include/smx/smx_norm.h:
 *   z = (x - mean(x)) / (std(x) + 1e-7),  std unbiased (n - 1), eps on the std;
 *   y = softmax(z / T).
 * Softmax is shift-invariant, so y = softmax(a x) with a = 1 / (T (std + 1e-7)):
 * the softmax engine's row drivers at that temperature (vnorm_softmax.c).
 * Mean and std are over the finite entries (-inf entries are masked: 0 out,
 * left out of the statistics); one finite entry has std 0.
 */
#include <math.h>

#include "core/options.h"
#include "ops/entry_points.h"
#include "ops/vnorm_run.h"
#include "ops/vnorm_softmax.h"
#include "ops/vnorm_std.h"
#include "smx/smx.h"

typedef struct std_ctx {
  smx_vn_sm sm;
  double t;
} std_ctx;

static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *scratch) {
  const std_ctx *c = ctx;
  (void)r; (void)scratch;
  smx_vn_moments mo = smx_vn_moments_f32(in[0], n);
  smx_vn_softmax_f32(&c->sm, in[0], y, n, 1.0 / (c->t * (mo.sd + SMX_VN_STD_EPS)));
}

/* f64 rows with entries beyond 2^1000 (their span, x - max, or the std may
 * overflow): softmax(a x) = softmax(a 2^ex (x 2^-ex)), the row scaled into
 * y first (exact but for subnormal results, whose loss moves a x by less
 * than 2^-50 / (T std)) */
static void softmax64(const std_ctx *c, const double *x, double *y, size_t n, smx_vn_moments mo) {
  if (mo.ex <= 1000) {
    smx_vn_softmax_f64(&c->sm, x, y, n, 1.0 / (c->t * (mo.sd + SMX_VN_STD_EPS)));
    return;
  }
  for (size_t i = 0; i < n; i++) y[i] = ldexp(x[i], -mo.ex);
  smx_vn_softmax_f64(&c->sm, y, y, n, 1.0 / (c->t * (mo.sds + ldexp(SMX_VN_STD_EPS, -mo.ex))));
}

static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *scratch) {
  const std_ctx *c = ctx;
  (void)r; (void)scratch;
  softmax64(c, in[0], y, n, smx_vn_moments_f64(in[0], n));
}

static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *yv) {
  const std_ctx *c = ctx;
  const float *x = in[0];
  (void)r;
  smx_vn_moments mo = smx_vn_moments_f32(x, n);
  smx_vn_softmax_f32(&c->sm, x, yv, n, 1.0 / (c->t * (mo.sd + SMX_VN_STD_EPS)));
  smx_vn_softmax_bwd_f32(&c->sm, yv, in[2], dx, n, 1.0 / c->t);   /* dL/dz */
  SMX_VN_ZSCORE_VJP(float, x, dx, n, mo);
}

static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *yv) {
  const std_ctx *c = ctx;
  const double *x = in[0];
  (void)r;
  smx_vn_moments mo = smx_vn_moments_f64(x, n);
  softmax64(c, x, yv, n, mo);
  smx_vn_softmax_bwd_f64(yv, in[2], dx, n, 1.0 / c->t);
  SMX_VN_ZSCORE_VJP(double, x, dx, n, mo);
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg, void *out,
                      size_t ldo, size_t rows, size_t cols, const smx_options *opt) {
  double t = opt ? smx_resolve_temperature(opt->temperature) : 1.0;   /* T of softmax(z / T); 0 means 1 */
  if (t < 0.0) return SMX_E_INVALID_ARG;
  if (rows && cols && (!x || (grad && !g))) return SMX_E_INVALID_ARG;
  std_ctx c = { .t = t };
  smx_vn_sm_init(&c.sm, rows, cols);
  if (grad) c.sm.stream = 0;
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { x, NULL, g }, .ld_in = { ldx, 0, ldg },
                   .out = out, .ld_out = ldo, .alias = grad ? 3 : 1, .scratch_rows = grad ? 1 : 0,
                   .row32 = grad ? bwd32 : fwd32, .row64 = grad ? bwd64 : fwd64, .ctx = &c };
  return smx_vn_run(&op, opt);
}

SMX_X_DY_ENTRIES(standardize_softmax, NO_PARAM, NO_PARAM)
