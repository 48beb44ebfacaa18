/*
 * Adaptive temperature (Velickovic et al. 2024, "softmax is not enough (for
 * sharp out-of-distribution)", arXiv 2410.01104), include/smx/smx_multi.h:
 *   p = softmax(x), H = -sum p_i log(p_i + 1e-9)   (the paper's code, natural log)
 *   beta = H > 0.5 ? max(poly(H), 1) : 1,
 *   poly(H) = -0.037 H^4 + 0.481 H^3 - 2.3 H^2 + 4.917 H - 1.791
 *   y = softmax(beta x)
 * (the coefficients of the paper's polynomial fit of 1/theta against the
 * entropy, highest degree first as jnp.polyval takes them). Both softmaxes
 * run on the softmax engine's row drivers (vnorm_softmax.c); the entropy is
 * one pass in double.
 *
 * The backward pass is the exact derivative of that forward, beta's
 * dependence on x included (where beta = poly(H) > 1):
 *   dx = beta y (g - <g,y>) + (dL/dbeta) poly'(H) p (h - <h,p>),
 *   dL/dbeta = sum y_i x_i (g_i - <g,y>),  h_i = -log(p_i + 1e-9) - p_i / (p_i + 1e-9).
 */
#include <math.h>

#include "ops/entry_points.h"
#include "ops/vnorm_run.h"
#include "ops/vnorm_softmax.h"
#include "smx/smx.h"

#define ENT_DELTA 1e-9

static double poly(double h) { return (((-0.037 * h + 0.481) * h - 2.3) * h + 4.917) * h - 1.791; }
static double dpoly(double h) { return ((-0.148 * h + 1.443) * h - 4.6) * h + 4.917; }

/* beta from the entropy of p; *dbeta: d beta / dH (0 where beta is clamped) */
static double beta_of(double h, double *dbeta) {
  *dbeta = 0.0;
  if (!(h > 0.5)) return 1.0;
  double b = poly(h);
  if (!(b > 1.0)) return 1.0;
  *dbeta = dpoly(h);
  return b;
}

/* H by a compensated sum (a few ulps at any length: beta amplifies its error) */
#define ENTROPY(T, p, n)                                                   \
  double h = 0.0, hc = 0.0;                                                \
  for (size_t i = 0; i < n; i++) {                                         \
    double pi = p[i];                                                      \
    if (pi != pi) { h = NAN; break; }                                      \
    if (pi == 0.0) continue;                                               \
    double v = -pi * log(pi + ENT_DELTA), t = h + v;                       \
    hc += fabs(h) >= fabs(v) ? (h - t) + v : (v - t) + h;                  \
    h = t;                                                                 \
  }                                                                        \
  h += hc;

static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *p) {
  const smx_vn_sm *sm = ctx;
  (void)r;
  smx_vn_softmax_f32(sm, in[0], p, n, 1.0);
  ENTROPY(float, p, n)
  double db;
  smx_vn_softmax_f32(sm, in[0], y, n, beta_of(h, &db));
}

static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *p) {
  const smx_vn_sm *sm = ctx;
  (void)r;
  smx_vn_softmax_f64(sm, in[0], p, n, 1.0);
  ENTROPY(double, p, n)
  double db;
  smx_vn_softmax_f64(sm, in[0], y, n, beta_of(h, &db));
}

/* the beta term of the VJP, added to dx; d = <g, y> */
#define BETA_TERM(T, x, p, yv, g, dx, n, d, db)                                         \
  do {                                                                                  \
    double dldb = 0.0, hp = 0.0;                                                        \
    for (size_t i = 0; i < n; i++)                                                      \
      if (yv[i] != 0) dldb += (double)yv[i] * (double)x[i] * ((double)g[i] - d);        \
    for (size_t i = 0; i < n; i++) {                                                    \
      double pi = p[i];                                                                 \
      hp += pi * (-log(pi + ENT_DELTA) - pi / (pi + ENT_DELTA));                        \
    }                                                                                   \
    coef = dldb * (db);                                                                 \
    hpv = hp;                                                                           \
  } while (0)

static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scr) {
  const smx_vn_sm *sm = ctx;
  const float *x = in[0], *g = in[2];
  float *p = scr, *yv = scr + n;
  (void)r;
  smx_vn_softmax_f32(sm, x, p, n, 1.0);
  ENTROPY(float, p, n)
  double db, b = beta_of(h, &db), coef = 0.0, hpv = 0.0;
  smx_vn_softmax_f32(sm, x, yv, n, b);
  if (db != 0.0) {
    double d = sm->reg->xent->rdot(n, yv, g);
    BETA_TERM(float, x, p, yv, g, dx, n, d, db);
  }
  smx_vn_softmax_bwd_f32(sm, yv, g, dx, n, b);
  if (coef != 0.0)
    for (size_t i = 0; i < n; i++) {
      double pi = p[i];
      dx[i] = (float)((double)dx[i] + coef * pi * (-log(pi + ENT_DELTA) - pi / (pi + ENT_DELTA) - hpv));
    }
}

static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scr) {
  const smx_vn_sm *sm = ctx;
  const double *x = in[0], *g = in[2];
  double *p = scr, *yv = scr + n;
  (void)r;
  smx_vn_softmax_f64(sm, x, p, n, 1.0);
  ENTROPY(double, p, n)
  double db, b = beta_of(h, &db), coef = 0.0, hpv = 0.0;
  smx_vn_softmax_f64(sm, x, yv, n, b);
  if (db != 0.0) {
    double d = 0.0;
    for (size_t i = 0; i < n; i++) d += yv[i] * g[i];
    BETA_TERM(double, x, p, yv, g, dx, n, d, db);
  }
  smx_vn_softmax_bwd_f64(yv, g, dx, n, b);
  if (coef != 0.0)
    for (size_t i = 0; i < n; i++) {
      double pi = p[i];
      dx[i] += coef * pi * (-log(pi + ENT_DELTA) - pi / (pi + ENT_DELTA) - hpv);
    }
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg, void *out,
                      size_t ldo, size_t rows, size_t cols, const smx_options *opt) {
  if (rows && cols && (!x || (grad && !g))) return SMX_E_INVALID_ARG;
  smx_vn_sm sm;
  smx_vn_sm_init(&sm, rows, cols);
  sm.stream = 0;   /* the first softmax is read back at once */
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { x, NULL, g }, .ld_in = { ldx, 0, ldg },
                   .out = out, .ld_out = ldo, .alias = grad ? 3 : 1, .scratch_rows = grad ? 2 : 1,
                   .row32 = grad ? bwd32 : fwd32, .row64 = grad ? bwd64 : fwd64, .ctx = &sm };
  return smx_vn_run(&op, opt);
}

SMX_X_DY_ENTRIES(adaptive_softmax, NO_PARAM, NO_PARAM)
