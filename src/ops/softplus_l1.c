/*
 * Softplus with l1 normalisation, include/smx/smx_norm.h: the
 * positivity-map-plus-l1 decomposition of softmax with softplus for exp
 * (the LSSA family of Gao, Spratling et al. 2025, arXiv 2501.13428, without
 * its length-dependent scale and re-weighting, which are not implemented):
 *   y_i = softplus(x_i) / sum_j softplus(x_j),
 *   softplus(x) = max(x, 0) + log1p(e^-|x|)   (stable; -inf gives 0).
 * Two passes (softplus stored and summed, then scaled); no max pass is
 * needed, since softplus(x) <= max(x, 0) + log 2 cannot overflow for finite x.
 */
#include <math.h>

#include "core/ksum.h"
#include "core/temperature.h"
#include "ops/entry_points.h"
#include "ops/inf_share_row.h"
#include "ops/vnorm_run.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct sp_ctx {
  const smx_registry *reg;
  smx_expc c;
  int nt;   /* non-temporal dx stores (smx_vn_stream_out) */
} sp_ctx;

/*
 * Rows far below 0. softplus(x) ~ e^x there: subnormal in the storage type below log of its smallest
 * normal (float -87.3, double -708.4), then 0 (float about -104 as stored, double -745), so the terms lose
 * their bits and 1 / S overflows or S is 0, though y is well defined ([-90, -91] gives [0.731, 0.269]).
 * Such a row (S < 1, so that a subnormal term could give a normal output, and an entry below that
 * limit) is computed in double from the scaled terms
 *   u_i = softplus(x_i) e^-h = e^(x_i - h) (log1p(t_i) / t_i),  t_i = e^x_i,  h = min(max_j x_j, 0),
 * which are at most 1, the largest at least log 2; y_i = u_i / sum u, and the backward pass's
 * sigmoid(x_i) / S = (sigmoid(x_i) e^-h) / sum u. x_i - h is formed as an exact two-term sum: its
 * rounding would otherwise cost |x_i - h| ulps of e^(x_i - h). Two passes (the terms are formed again
 * rather than stored: y or dx may be x), at libm's speed; such rows are rare.
 */
static double exp_diff(double a, double b) {   /* e^(a - b), a - b as hi + lo exactly (Knuth's TwoSum) */
  double hi = a - b, bb = hi - a, lo = (a - (hi - bb)) + (-b - bb);
  double e = exp(hi);
  return e + e * lo;
}
static double sp_scaled(double x, double h) {
  if (x == -INFINITY) return 0.0;
  if (h == 0.0) return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
  double t = exp(x);
  return exp_diff(x, h) * (t > 0.0 ? log1p(t) / t : 1.0);
}
static double sig_scaled(double x, double h) {   /* sigmoid(x) e^-h */
  if (h == 0.0) {
    double e = exp(-fabs(x));
    return (x > 0.0 ? 1.0 : e) / (1.0 + e);
  }
  return x == -INFINITY ? 0.0 : exp_diff(x, h) / (1.0 + exp(x));
}
/* h for a row that needs the scaled form (s: the plain sum, lim: the storage's smallest normal's log), else 1 */
#define SP_SHIFT(T, x, n, s, lim, h)                                             \
  do {                                                                          \
    T lo_ = (T)INFINITY, hi_ = -(T)INFINITY;                                    \
    h = 1.0;                                                                    \
    if (!((s) < 1.0)) break;                                                    \
    for (size_t i_ = 0; i_ < (n); i_++) {                                       \
      lo_ = (x)[i_] < lo_ ? (x)[i_] : lo_;                                      \
      hi_ = (x)[i_] > hi_ ? (x)[i_] : hi_;                                      \
    }                                                                           \
    if (lo_ < (T)(lim) && hi_ > -(T)INFINITY) h = hi_ < 0 ? (double)hi_ : 0.0;  \
  } while (0)
/* sum u (Neumaier's compensation: the f64 rows' bound) and, with g, sum g u */
#define SP_SUMS(x, g, n, h, su, sg)                                            \
  do {                                                                          \
    double c1_ = 0.0, c2_ = 0.0;                                                \
    su = 0.0;                                                                   \
    sg = 0.0;                                                                   \
    for (size_t i_ = 0; i_ < (n); i_++) {                                       \
      double u_ = sp_scaled((double)(x)[i_], h);                                \
      smx_kadd(&su, &c1_, u_);                                                  \
      if (g) smx_kadd(&sg, &c2_, (double)(g)[i_] * u_);                         \
    }                                                                           \
    su += c1_;                                                                  \
    sg += c2_;                                                                  \
  } while (0)

static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *scr) {
  const sp_ctx *c = ctx;
  (void)r; (void)scr;
  /* in place, the summing pass overwrites x: a row that may need the scaled form (an entry below the
   * limit) is summed first without the store */
  float *yk = y;
  if (y == in[0]) {
    float lo = INFINITY;
    for (size_t i = 0; i < n; i++) lo = in[0][i] < lo ? in[0][i] : lo;
    if (lo < -87.3f) yk = NULL;
  }
  double s = c->reg->vnorm->softplus(n, in[0], yk, NULL, NULL, &c->c), h, su, sg;
  SP_SHIFT(float, in[0], n, s, -87.3f, h);
  if (h > 0.0 && !yk) s = c->reg->vnorm->softplus(n, in[0], y, NULL, NULL, &c->c);
  if (h <= 0.0) {   /* far below 0 (the terms in y have lost their bits) */
    const float *x = in[0], *none = NULL;
    SP_SUMS(x, none, n, h, su, sg);
    (void)sg;
    for (size_t i = 0; i < n; i++) y[i] = (float)(sp_scaled((double)x[i], h) / su);
    return;
  }
  /* the vector kernels' float partial sums overflow for entries near FLT_MAX:
   * y (stored, exact) is summed in double then (x may be y: in place) */
  if (!isfinite(s)) {
    s = 0.0;
    for (size_t i = 0; i < n; i++) s += y[i];
  }
  if (!isfinite(s)) { SMX_INF_SHARE_ROW(float, in[0], y, n, 0); return; }
  /* s = 0: every entry -inf (0 / 0): 0. A sum beyond 2^100 makes 1/s lose
   * bits in float: two scalings then. */
  if (s > 0x1p100) {
    c->reg->f32->vscale(n, y, y, 0x1p-100f, 0);
    s *= 0x1p-100;
  }
  c->reg->f32->vscale(n, y, y, s > 0.0 ? (float)(1.0 / s) : 0.0f, 0);
}

static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *scr) {
  (void)ctx; (void)r; (void)scr;
  double *yk = y;   /* in place: as fwd32 */
  if (y == in[0]) {
    double lo = INFINITY;
    for (size_t i = 0; i < n; i++) lo = in[0][i] < lo ? in[0][i] : lo;
    if (lo < -708.39) yk = NULL;
  }
  double s = smx_vnorm_softplus_f64(n, in[0], yk, NULL, NULL), h, su, sg;
  SP_SHIFT(double, in[0], n, s, -708.39, h);
  if (h > 0.0 && !yk) s = smx_vnorm_softplus_f64(n, in[0], y, NULL, NULL);
  if (h <= 0.0) {
    const double *x = in[0], *none = NULL;
    SP_SUMS(x, none, n, h, su, sg);
    (void)sg;
    for (size_t i = 0; i < n; i++) y[i] = sp_scaled(x[i], h) / su;
    return;
  }
  if (!isfinite(s)) {   /* a sum beyond DBL_MAX of finite terms: scaled */
    int fin = 1;
    for (size_t i = 0; i < n; i++) fin &= isfinite(in[0][i]) || in[0][i] == -INFINITY;
    if (fin) {
      double sc = 0.0;   /* compensated, as the first sum */
      s = 0.0;
      for (size_t i = 0; i < n; i++) {
        double v = y[i] = ldexp(y[i], -64), t = s + v;
        sc += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
      }
      s += sc;
    }
  }
  if (!isfinite(s)) { SMX_INF_SHARE_ROW(double, in[0], y, n, 0); return; }
  double inv = s > 0.0 ? 1.0 / s : 0.0;
  for (size_t i = 0; i < n; i++) y[i] *= inv;
}

/* dx_j = sigma(x_j) (g_j - <g, y>) / S, S = sum softplus */
/* sigmoid(x) is stored to scratch in the summing pass (one exp per entry) */
static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scr) {
  const sp_ctx *c = ctx;
  (void)r;
  double gs, s = c->reg->vnorm->softplus_sig(n, in[0], in[2], scr, &gs, &c->c), h, su, sg;
  SP_SHIFT(float, in[0], n, s, -87.3f, h);
  if (h <= 0.0) {   /* far below 0: dx_i = (sigmoid(x_i) e^-h) (g_i - d) / sum u, d = sum g u / sum u */
    const float *x = in[0], *g = in[2];
    SP_SUMS(x, g, n, h, su, sg);
    double d = sg / su;
    for (size_t i = 0; i < n; i++) dx[i] = (float)(sig_scaled((double)x[i], h) * ((double)g[i] - d) / su);
    return;
  }
  if (!isfinite(s) || !isfinite(gs)) s = smx_vnorm_ukernels_scalar.softplus(n, in[0], NULL, in[2], &gs, &c->c);
  if (!isfinite(s) || !(s > 0.0)) { SMX_INF_SHARE_ROW(float, in[0], dx, n, 1); return; }
  c->reg->vnorm->sig_scale(n, scr, in[2], dx, (float)(1.0 / s), (float)(gs / s), c->nt);
}

static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scr) {
  (void)ctx; (void)r; (void)scr;
  double gs, s = smx_vnorm_softplus_f64(n, in[0], NULL, in[2], &gs), h, su, sg;
  SP_SHIFT(double, in[0], n, s, -708.39, h);
  if (h <= 0.0) {
    const double *x = in[0], *g = in[2];
    SP_SUMS(x, g, n, h, su, sg);
    double d = sg / su;
    for (size_t i = 0; i < n; i++) dx[i] = sig_scaled(x[i], h) * (g[i] - d) / su;
    return;
  }
  if (!isfinite(s) || !(s > 0.0)) { SMX_INF_SHARE_ROW(double, in[0], dx, n, 1); return; }
  smx_vnorm_softplus_bwd_f64(n, in[0], in[2], dx, 1.0 / s, gs / s);
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg, void *out,
                      size_t ldo, size_t rows, size_t cols, const smx_options *opt) {
  if (rows && cols && (!x || (grad && !g))) return SMX_E_INVALID_ARG;
  sp_ctx c;
  c.reg = smx_registry_current();
  smx_f32_expc(&c.c, 1.0);
  c.nt = grad && smx_vn_stream_out(e, rows, cols);
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { x, NULL, g }, .ld_in = { ldx, 0, ldg },
                   .out = out, .ld_out = ldo, .alias = grad ? 3 : 1, .scratch_rows = grad ? 1 : 0, .row32 = grad ? bwd32 : fwd32,
                   .row64 = grad ? bwd64 : fwd64, .ctx = &c };
  return smx_vn_run(&op, opt);
}

SMX_X_DY_ENTRIES(softplus_l1, NO_PARAM, NO_PARAM)
