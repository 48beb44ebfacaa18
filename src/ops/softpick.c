/*
 * Softpick (Zuhri et al. 2025, arXiv 2504.20966), include/smx/smx_norm.h:
 * y_i = ReLU(e^(x_i - m) - e^(-m)) / (sum_{x_j > -inf} |e^(x_j - m) - e^(-m)| + eps),
 * m the max over the finite entries: the stable form of the reference code
 * (zaydzuhri/softpick-attention, naive_softpick_attn.py), eps applied after
 * the e^(-m) rescaling. Three passes: the max (softmax's kernel), the
 * exponentials and the denominator, the rectified output (vnorm kernels).
 */
#include <math.h>

#include "core/temperature.h"
#include "ops/entry_points.h"
#include "ops/inf_share_row.h"
#include "ops/vnorm_rowstats.h"
#include "ops/vnorm_run.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct softpick_ctx {
  const smx_registry *reg;
  smx_expc c;
  double eps;
} softpick_ctx;

static void fill_nan32(float *y, size_t n) { for (size_t i = 0; i < n; i++) y[i] = NAN; }
static void fill_nan64(double *y, size_t n) { for (size_t i = 0; i < n; i++) y[i] = NAN; }

/* One read for the state (softpick_stats), one for the output; rows the
 * blocked state cannot carry (NaN, +inf, no finite entry, a max below -88
 * where e^-m overflows float) take the three-pass path below. */
static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *scratch) {
  const softpick_ctx *c = ctx;
  const float *x = in[0];
  (void)r; (void)scratch;
  smx_softpick_state st;
  c->reg->vnorm->softpick_stats(n, x, NULL, &c->c, &st);
  if (isfinite(st.m) && isfinite(st.d) && st.m > -80.0f) {
    double den = st.d + c->eps;
    c->reg->vnorm->softpick_outx(n, x, y, st.m, &c->c, (float)exp(-(double)st.m), den > 0.0 ? (float)(1.0 / den) : 0.0f);
    return;
  }
  float m = c->reg->f32->rmax(n, x);
  if (!isfinite(m)) { SMX_INF_SHARE_ROW(float, x, y, n, 0); return; }
  float em = (float)exp(-(double)m);   /* may be +inf for m < -88.7: every output is then 0 */
  double den = c->reg->vnorm->softpick_exp(n, x, y, m, &c->c, em) + c->eps;
  if (den != den) { fill_nan32(y, n); return; }
  c->reg->vnorm->softpick_out(n, y, y, em, den > 0.0 ? (float)(1.0 / den) : 0.0f);
}

static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *scratch) {
  const softpick_ctx *c = ctx;
  const double *x = in[0];
  (void)r; (void)scratch;
  smx_vn_stats s = smx_vn_stats_f64(x, n);
  if (s.nan || s.kinf || s.imax == n) { SMX_INF_SHARE_ROW(double, x, y, n, 0); return; }
  double m = s.fmax, em = exp(-m);
  double den = smx_vnorm_softpick_exp_f64(n, x, y, m, em) + c->eps;
  smx_vnorm_softpick_out_f64(n, y, y, em, den > 0.0 ? 1.0 / den : 0.0);
}

/* dx_j = (E_j / D)([x_j > 0] g_j - sign(x_j) <g, y>) - [j = first argmax] (eps / D) <g, y>,
 * E_j = e^(x_j - m), D the stable denominator: the exact derivative of the
 * forward, eps e^m term included (it depends on the max). */
static size_t first_of(const float *x, size_t n, float m) {
  size_t i = 0;
  while (i < n && x[i] != m) i++;
  return i;
}

static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scratch) {
  const softpick_ctx *c = ctx;
  const float *x = in[0], *g = in[2];
  (void)r; (void)scratch;
  smx_softpick_state st;
  c->reg->vnorm->softpick_stats(n, x, g, &c->c, &st);
  if (isfinite(st.m) && isfinite(st.d) && isfinite(st.gy) && st.m > -80.0f) {
    double den = st.d + c->eps, s = den > 0.0 ? 1.0 / den : 0.0, d = st.gy * s;
    size_t len = n - st.blk < SMX_SOFTPICK_BLOCK ? n - st.blk : SMX_SOFTPICK_BLOCK;
    size_t im = st.blk + first_of(x + st.blk, len, st.m);
    c->reg->vnorm->softpick_bwd(n, x, g, dx, st.m, &c->c, (float)s, (float)d);
    dx[im] = (float)((double)dx[im] - c->eps * s * d);
    return;
  }
  float m = c->reg->f32->rmax(n, x);
  if (!isfinite(m)) { SMX_INF_SHARE_ROW(float, x, dx, n, 1); return; }
  float em = (float)exp(-(double)m);
  double gy, den = c->reg->vnorm->softpick_dot(n, x, g, m, &c->c, em, &gy) + c->eps;
  if (den != den) { fill_nan32(dx, n); return; }
  double s = den > 0.0 ? 1.0 / den : 0.0, d = gy * s;
  size_t im = first_of(x, n, m);
  c->reg->vnorm->softpick_bwd(n, x, g, dx, m, &c->c, (float)s, (float)d);
  dx[im] = (float)((double)dx[im] - c->eps * s * d);
}

static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scratch) {
  const softpick_ctx *c = ctx;
  const double *x = in[0], *g = in[2];
  (void)r; (void)scratch;
  smx_vn_stats st = smx_vn_stats_f64(x, n);
  if (st.nan) { fill_nan64(dx, n); return; }
  if (st.kinf || st.imax == n) { SMX_INF_SHARE_ROW(double, x, dx, n, 1); return; }
  double m = st.fmax, em = exp(-m), gy;
  double den = smx_vnorm_softpick_dot_f64(n, x, g, m, em, &gy) + c->eps;
  double s = den > 0.0 ? 1.0 / den : 0.0, d = gy * s;
  smx_vnorm_softpick_bwd_f64(n, x, g, dx, m, s, d);
  dx[st.imax] -= c->eps * s * d;
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg, void *y, size_t ldy,
                      size_t rows, size_t cols, double eps, const smx_options *opt) {
  if (!(eps >= 0.0) || !isfinite(eps)) return SMX_E_INVALID_ARG;
  softpick_ctx c;
  c.reg = smx_registry_current();
  c.eps = eps;
  smx_f32_expc(&c.c, 1.0);
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { x, NULL, g }, .ld_in = { ldx, 0, ldg },
                   .out = y, .ld_out = ldy, .alias = grad ? 3 : 1, .row32 = grad ? bwd32 : fwd32,
                   .row64 = grad ? bwd64 : fwd64, .ctx = &c };
  if (!x || (grad && !g)) return rows && cols ? SMX_E_INVALID_ARG : smx_vn_run(&op, opt);
  return smx_vn_run(&op, opt);
}

/* softpick's own parameter, declared and passed on (ops/entry_points.h) */
#define EPS_DECL() , double eps
#define EPS_ARG() , eps
SMX_X_DY_ENTRIES(softpick, EPS_DECL, EPS_ARG)
