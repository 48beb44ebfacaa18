/*
 * Self-Adjust Softmax (Zheng et al. 2025, arXiv 2502.18277, EMNLP 2025),
 * include/smx/smx_norm.h: y = x * softmax(x), and the normalised variant
 * y = (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x)
 * (the paper's two forms, as its abstract states them). softmax(x) comes
 * from the softmax engine's row drivers (vnorm_softmax.c), the product from
 * the vnorm kernels; masked entries (p = 0) give 0, never -inf * 0.
 */
#include <math.h>

#include "core/temperature.h"
#include "ops/entry_points.h"
#include "ops/vnorm_rowstats.h"
#include "ops/vnorm_run.h"
#include "ops/vnorm_softmax.h"
#include "ops/vnorm_std.h"
#include "smx/smx.h"

typedef struct sa_ctx {
  smx_vn_sm sm;
  int normalized;
  int nt;   /* non-temporal dx stores (smx_vn_stream_out) */
} sa_ctx;

/* (lo, 1/R) of the weights; (0, 1) for the basic form; s = 0 when R = 0
 * (an all-zero row: y = 0) */
typedef struct sa_w { double lo, s, r; smx_vn_stats st; } sa_w;

/* the row facts from the vnorm kernels (f32 rows; kinf only says whether
 * there is a +inf entry, all that self-adjust uses) */
static smx_vn_stats stats32(const sa_ctx *c, const float *x, size_t n) {
  smx_vnorm_stats k;
  c->sm.reg->vnorm->sa_stats(n, x, &k);
  smx_vn_stats s = { k.nan, (size_t)k.pinf, k.fmax, k.imax, k.fmin, k.imin };
  return s;
}

/* The weights of a row from its stats (the normalised form) */
static sa_w weights_of(smx_vn_stats st) {
  sa_w w;
  w.st = st;
  double lo = st.fmin < 0.0 ? st.fmin : 0.0;
  double hi = st.fmax > 0.0 ? st.fmax : 0.0;
  w.lo = lo; w.r = hi - lo; w.s = hi > lo ? 1.0 / w.r : 0.0;
  return w;
}
static sa_w weights32(const sa_ctx *c, const float *x, size_t n) {
  sa_w basic = { 0.0, 1.0, 1.0, { 0, 0, 0.0, 0, 0.0, 0 } };
  return c->normalized ? weights_of(stats32(c, x, n)) : basic;
}
static sa_w weights64(const sa_ctx *c, const double *x, size_t n) {
  sa_w basic = { 0.0, 1.0, 1.0, { 0, 0, 0.0, 0, 0.0, 0 } };
  return c->normalized ? weights_of(smx_vn_stats_f64(x, n)) : basic;
}

/* A range R or 1/R outside [2^-lim, 2^lim] (or beyond the type: R = inf,
 * where s = 1/R is 0): the weights (x - lo)/R formed by division in double,
 * from halves (R may overflow); R = 0 (y = 0) is not odd */
static int odd_range(sa_w w, double lim) { return !(w.r <= lim && w.r >= 1.0 / lim) && w.r > 0.0; }
#define SA_ODD(x, p, y, n, w)                                                                 \
  do {                                                                                        \
    double hi = w.st.fmax > 0.0 ? w.st.fmax : 0.0, hr = 0.5 * hi - 0.5 * w.lo;               \
    for (size_t i = 0; i < n; i++) {                                                          \
      double xi = (double)x[i];                                                               \
      double wi = isinf(w.r) ? (0.5 * xi - 0.5 * w.lo) / hr : (xi - w.lo) / w.r;              \
      y[i] = p[i] == 0 ? 0 : wi * (double)p[i];                                               \
    }                                                                                         \
  } while (0)

/* The normalised form on a row with +inf entries and a zero range R (no finite entry but 0s: [inf],
 * [inf, 0]): s = 1/R is taken as 0, and (inf - lo) 0 p would be NaN; the rule is +inf at the +inf entries
 * (p = 1/k there) and 0 elsewhere, as with any other range. */
#define SA_PINF_ZERO_RANGE(T, x, p, y, n)                                          \
  do {                                                                             \
    for (size_t i = 0; i < n; i++) y[i] = x[i] == (T)INFINITY && p[i] > 0 ? (T)INFINITY : (T)0; \
  } while (0)

/* The last step of the forward, y = w p, by the dtype's vnorm kernel (f32: the registry's ISA) */
static void sa_out32(const sa_ctx *c, size_t n, const float *x, const float *p, float *y, sa_w w) {
  c->sm.reg->vnorm->sa_out(n, x, p, y, (float)w.lo, (float)w.s);
}
static void sa_out64(const sa_ctx *c, size_t n, const double *x, const double *p, double *y, sa_w w) {
  (void)c;
  smx_vnorm_sa_out_f64(n, x, p, y, w.lo, w.s);
}

/* The forward row, one body for both dtypes: their weights, softmax and sa_out, and lim, the range beyond
 * which the weights are formed by division (odd_range). */
#define SA_FWD(name, T, weights, softmax, lim, sa_out)                                                      \
  static void name(const void *ctx, size_t r, const T *const *in, T *y, size_t n, T *scr) {               \
    const sa_ctx *c = ctx;                                                                                \
    const T *x = in[0];                                                                                   \
    T *p = y == x ? scr : y;                                                                              \
    (void)r;                                                                                              \
    sa_w w = weights(c, x, n);                                                                            \
    softmax(&c->sm, x, p, n, 1.0);                                                                        \
    if (c->normalized && w.s == 0.0 && w.st.kinf && !w.st.nan) { SA_PINF_ZERO_RANGE(T, x, p, y, n); return; } \
    if (c->normalized && odd_range(w, lim)) { SA_ODD(x, p, y, n, w); return; }                            \
    sa_out(c, n, x, p, y, w);                                                                             \
  }
SA_FWD(fwd32, float, weights32, smx_vn_softmax_f32, 0x1p100, sa_out32)
SA_FWD(fwd64, double, weights64, smx_vn_softmax_f64, 0x1p1000, sa_out64)

/* dx = p (g (w + s) - d) with d = sum p g w, w = (x - lo) s, and for the
 * normalised form the terms of lo and hi at the first min / max:
 * dx[argmin] += (d - sum p g) s where x_min < 0; dx[argmax] -= d s where x_max > 0. */
#define SA_MINMAX(c, w, dx, d, gp)                                                              \
  do {                                                                                          \
    if (c->normalized && w.s != 0.0) {                                                          \
      if (w.st.fmin < 0.0 && w.st.imin < n) dx[w.st.imin] += ((d) - (gp)) * w.s;                \
      if (w.st.fmax > 0.0 && w.st.imax < n) dx[w.st.imax] -= (d) * w.s;                         \
    }                                                                                           \
  } while (0)

/* Rows with +inf entries (y = x / k there): NaN at the +inf entries (no
 * finite slope) and, for the normalised form, at its min / max terms (their
 * <p, g w> is infinite); 0 elsewhere */
#define SA_KINF(T, c, w, x, dx, n)                                                                  \
  do {                                                                                              \
    for (size_t i = 0; i < n; i++) dx[i] = x[i] == (T)INFINITY ? (T)NAN : (T)0;                     \
    if (c->normalized && w.s != 0.0) {                                                              \
      if (w.st.fmin < 0.0 && w.st.imin < n) dx[w.st.imin] = (T)NAN;                                 \
      if (w.st.fmax > 0.0 && w.st.imax < n) dx[w.st.imax] = (T)NAN;                                 \
    }                                                                                               \
  } while (0)

/* 1 for a row with a +inf entry and no NaN (SA_KINF's rows) */
#define SA_PINF_ROW(x, n, out)                                       \
  do {                                                               \
    int nan_ = 0, inf_ = 0;                                          \
    for (size_t i = 0; i < n; i++) {                                 \
      nan_ |= x[i] != x[i];                                          \
      inf_ |= x[i] == INFINITY;                                      \
    }                                                                \
    out = inf_ && !nan_;                                             \
  } while (0)

/* f32 rows of the normalised form with a range R below 1/FLT_MAX (subnormal
 * spans): s = 1/R is beyond float but not double, so the weights, the sums
 * and each dx (its min / max terms included) are formed in double and
 * rounded once (to +-inf where the gradient is beyond float's range). */
static void bwd32_tiny(const sa_ctx *c, sa_w w, const float *x, const float *g, float *dx, size_t n, const float *p) {
  double d = 0.0, dc = 0.0, gp = 0.0, gc = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0.0f) continue;
    double pg = (double)p[i] * (double)g[i];
    smx_kadd(&d, &dc, pg * (((double)x[i] - w.lo) * w.s));
    smx_kadd(&gp, &gc, pg);
  }
  d += dc;
  gp += gc;
  for (size_t i = 0; i < n; i++) {
    double v = p[i] == 0.0f ? 0.0 : (double)p[i] * ((double)g[i] * (((double)x[i] - w.lo) * w.s + w.s) - d);
    if (c->normalized && w.st.fmin < 0.0 && i == w.st.imin) v += (d - gp) * w.s;
    if (c->normalized && w.st.fmax > 0.0 && i == w.st.imax) v -= d * w.s;
    dx[i] = (float)v;
  }
}

static void bwd32_engine(const sa_ctx *c, sa_w w, const float *x, const float *g, float *dx, size_t n, float *p) {
  int kinf;
  SA_PINF_ROW(x, n, kinf);
  if (kinf) { SA_KINF(float, c, w, x, dx, n); return; }
  smx_vn_softmax_f32(&c->sm, x, p, n, 1.0);
  if (c->normalized && w.s > 3e38 && !w.st.nan) { bwd32_tiny(c, w, x, g, dx, n, p); return; }
  const smx_vnorm_ukernels *k = w.r > 3e38 || w.s > 3e38 ? &smx_vnorm_ukernels_scalar : c->sm.reg->vnorm;
  double gp, d = k->sa_dot(n, x, p, g, (float)w.lo, (float)w.s, &gp);
  k->sa_bwd(n, x, p, g, dx, (float)w.lo, (float)w.s, (float)d);
  SA_MINMAX(c, w, dx, (float)d, (float)gp);
}

/* The backward from x in three passes where the row is ordinary (finite max,
 * no NaN, no +inf, weights in float range): the max, then e = exp(x - m)
 * stored with its three sums, then dx from e / S, one exponential per entry.
 * Other rows take the softmax engine's special-value policy (bwd32_engine). */
static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *p) {
  const sa_ctx *c = ctx;
  const float *x = in[0], *g = in[2];
  (void)r;
  sa_w w = weights32(c, x, n);
  const smx_registry *reg = c->sm.reg;
  float m = c->normalized ? (w.st.nan || w.st.kinf ? NAN : (float)w.st.fmax) : reg->f32->rmax(n, x);
  if (!isfinite(m) || w.r > 3e38 || w.s > 3e38) { bwd32_engine(c, w, x, g, dx, n, p); return; }
  smx_expc ec;
  smx_f32_expc(&ec, 1.0);
  double egw, eg, s = reg->vnorm->sa_bexp(n, x, g, p, m, &ec, (float)w.lo, (float)w.s, &egw, &eg);
  if (!(s >= 1.0 && s < 3e38)) { bwd32_engine(c, w, x, g, dx, n, p); return; }   /* NaN */
  double d = egw / s, gp = eg / s;
  reg->vnorm->sa_bwde(n, x, p, g, dx, (float)w.lo, (float)w.s, (float)d, (float)(1.0 / s), c->nt);
  SA_MINMAX(c, w, dx, (float)d, (float)gp);
}

/* f64 rows spanning more than DBL_MAX (R = inf, the normalised form): the
 * weights from halves as in SA_ODD, s = 1/R = 0.5 / (R/2) (subnormal, but not
 * 0), the sums compensated as smx_vnorm_sa_dot_f64's */
static void bwd64_wide(const sa_ctx *c, sa_w w, const double *x, const double *p, const double *g, double *dx,
                       size_t n) {
  double hi = w.st.fmax > 0.0 ? w.st.fmax : 0.0, hr = 0.5 * hi - 0.5 * w.lo;
  double d = 0.0, dc = 0.0, gp = 0.0, gc = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0.0) continue;
    smx_kadd(&d, &dc, p[i] * g[i] * ((0.5 * x[i] - 0.5 * w.lo) / hr));
    smx_kadd(&gp, &gc, p[i] * g[i]);
  }
  d += dc;
  gp += gc;
  w.s = 0.5 / hr;
  for (size_t i = 0; i < n; i++)
    dx[i] = p[i] == 0.0 ? 0.0 : p[i] * (g[i] * ((0.5 * x[i] - 0.5 * w.lo) / hr + w.s) - d);
  SA_MINMAX(c, w, dx, d, gp);
}

/* f64 rows of the normalised form with a range R below 1/DBL_MAX: s = 1/R is
 * inf, so the weights are (x - lo) / R and every term carrying s is divided by
 * R once, the min / max terms grouped with the entry's own: +-inf where the
 * gradient is beyond the range, never inf - inf or 0 inf. */
static void bwd64_tiny(const sa_ctx *c, sa_w w, const double *x, const double *p, const double *g, double *dx,
                       size_t n) {
  double d = 0.0, dc = 0.0, gp = 0.0, gc = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0.0) continue;
    smx_kadd(&d, &dc, p[i] * g[i] * ((x[i] - w.lo) / w.r));
    smx_kadd(&gp, &gc, p[i] * g[i]);
  }
  d += dc;
  gp += gc;
  for (size_t i = 0; i < n; i++) {
    double pg = p[i] == 0.0 ? 0.0 : p[i] * g[i], by_r = pg;   /* the terms over R */
    if (c->normalized && w.st.fmin < 0.0 && i == w.st.imin) by_r += d - gp;
    if (c->normalized && w.st.fmax > 0.0 && i == w.st.imax) by_r -= d;
    double rest = p[i] == 0.0 ? 0.0 : p[i] * (g[i] * ((x[i] - w.lo) / w.r) - d);
    dx[i] = rest + (by_r == 0.0 ? 0.0 : by_r / w.r);
  }
}

static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *p) {
  const sa_ctx *c = ctx;
  const double *x = in[0], *g = in[2];
  (void)r;
  sa_w w = weights64(c, x, n);
  int kinf;
  SA_PINF_ROW(x, n, kinf);
  if (kinf) { SA_KINF(double, c, w, x, dx, n); return; }
  smx_vn_softmax_f64(&c->sm, x, p, n, 1.0);
  if (c->normalized && isinf(w.r)) { bwd64_wide(c, w, x, p, g, dx, n); return; }
  if (c->normalized && w.r > 0.0 && w.r < 0x1p-1000 && !w.st.nan) { bwd64_tiny(c, w, x, p, g, dx, n); return; }
  double gp, d = smx_vnorm_sa_dot_f64(n, x, p, g, w.lo, w.s, &gp);
  smx_vnorm_sa_bwd_f64(n, x, p, g, dx, w.lo, w.s, d);
  SA_MINMAX(c, w, dx, d, gp);
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg, void *out,
                      size_t ldo, size_t rows, size_t cols, int normalized, const smx_options *opt) {
  if (rows && cols && (!x || (grad && !g))) return SMX_E_INVALID_ARG;
  sa_ctx c = { .normalized = normalized != 0 };
  smx_vn_sm_init(&c.sm, rows, cols);
  c.sm.stream = 0;   /* softmax(x) is read back at once */
  c.nt = grad && smx_vn_stream_out(e, rows, cols);
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { x, NULL, g }, .ld_in = { ldx, 0, ldg },
                   .out = out, .ld_out = ldo, .alias = grad ? 3 : 1, .scratch_rows = 1,
                   .row32 = grad ? bwd32 : fwd32, .row64 = grad ? bwd64 : fwd64, .ctx = &c };
  return smx_vn_run(&op, opt);
}

/* sa-softmax's own parameter, declared and passed on (ops/entry_points.h) */
#define NORMALIZED_DECL() , int normalized
#define NORMALIZED_ARG() , normalized
SMX_X_DY_ENTRIES(sa_softmax, NORMALIZED_DECL, NORMALIZED_ARG)
