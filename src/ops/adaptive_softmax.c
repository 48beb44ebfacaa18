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

/* The forward row, one body for both dtypes (softmax: the dtype's engine row) */
#define ADAPTIVE_FWD(name, T, softmax)                                                   \
  static void name(const void *ctx, size_t r, const T *const *in, T *y, size_t n, T *p) { \
    const smx_vn_sm *sm = ctx;                                                           \
    (void)r;                                                                             \
    softmax(sm, in[0], p, n, 1.0);                                                       \
    ENTROPY(T, p, n)                                                                     \
    double db;                                                                           \
    softmax(sm, in[0], y, n, beta_of(h, &db));                                           \
  }
ADAPTIVE_FWD(fwd32, float, smx_vn_softmax_f32)
ADAPTIVE_FWD(fwd64, double, smx_vn_softmax_f64)

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

/* <g, y>: f32 rows by the registry's dot kernel, f64 rows by a plain loop in order */
static double gy_dot32(const smx_vn_sm *sm, size_t n, const float *y, const float *g) {
  return sm->reg->xent->rdot(n, y, g);
}
static double gy_dot64(const smx_vn_sm *sm, size_t n, const double *y, const double *g) {
  (void)sm;
  double d = 0.0;
  for (size_t i = 0; i < n; i++) d += y[i] * g[i];
  return d;
}
/* the softmax VJP at temperature b (only the f32 one runs on the registry) */
static void softmax_bwd32(const smx_vn_sm *sm, const float *y, const float *g, float *dx, size_t n, double b) {
  smx_vn_softmax_bwd_f32(sm, y, g, dx, n, b);
}
static void softmax_bwd64(const smx_vn_sm *sm, const double *y, const double *g, double *dx, size_t n, double b) {
  (void)sm;
  smx_vn_softmax_bwd_f64(y, g, dx, n, b);
}

/* The backward row, one body for both dtypes: the softmax VJP at beta, then the beta term where beta
 * moves with x. Each dx is summed in double and rounded once (a no-op cast for f64). */
#define ADAPTIVE_BWD(name, T, softmax, gy_dot, softmax_bwd)                                                 \
  static void name(const void *ctx, size_t r, const T *const *in, T *dx, size_t n, T *scr) {                \
    const smx_vn_sm *sm = ctx;                                                                              \
    const T *x = in[0], *g = in[2];                                                                         \
    T *p = scr, *yv = scr + n;                                                                              \
    (void)r;                                                                                                \
    softmax(sm, x, p, n, 1.0);                                                                              \
    ENTROPY(T, p, n)                                                                                        \
    double db, b = beta_of(h, &db), coef = 0.0, hpv = 0.0;                                                  \
    softmax(sm, x, yv, n, b);                                                                               \
    if (db != 0.0) {                                                                                        \
      double d = gy_dot(sm, n, yv, g);                                                                      \
      BETA_TERM(T, x, p, yv, g, dx, n, d, db);                                                              \
    }                                                                                                       \
    softmax_bwd(sm, yv, g, dx, n, b);                                                                       \
    if (coef != 0.0)                                                                                        \
      for (size_t i = 0; i < n; i++) {                                                                      \
        double pi = p[i];                                                                                   \
        dx[i] = (T)((double)dx[i] + coef * pi * (-log(pi + ENT_DELTA) - pi / (pi + ENT_DELTA) - hpv));      \
      }                                                                                                     \
  }
ADAPTIVE_BWD(bwd32, float, smx_vn_softmax_f32, gy_dot32, softmax_bwd32)
ADAPTIVE_BWD(bwd64, double, smx_vn_softmax_f64, gy_dot64, softmax_bwd64)

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
