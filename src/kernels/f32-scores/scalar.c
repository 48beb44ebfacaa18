/*
 * Portable logit-score kernels: the table of builds without vector kernels
 * (SMX_MAX_ISA=scalar), and the only one used at extreme temperatures
 * (smx_expcd.div: a/T is formed first, as the scalar f64 softmax kernels do).
 * Exponentials are math/exp2d_scalar.h's (1.07 ulp), sums Knuth's two-sum.
 */
#include <float.h>
#include <math.h>

#include "kernels/f32-scores/ukernels.h"
#include "math/exp2d_scalar.h"

static void top2_scalar(size_t n, const float *z, smx_score_top2 *out) {
  float m1 = -INFINITY, m2 = -INFINITY;
  int nan = 0;
  for (size_t j = 0; j < n; j++) {
    float v = z[j];
    if (v != v) { nan = 1; continue; }
    if (v > m1) { m2 = m1; m1 = v; }
    else if (v > m2) m2 = v;
  }
  out->m1 = m1;
  out->m2 = m2;
  out->nan = nan;
}

static float max_nan_scalar(size_t n, const float *z, int *has_nan) {
  smx_score_top2 t;
  top2_scalar(n, z, &t);
  *has_nan = t.nan;
  return t.m1;
}

/* e^((x - m)/T) for x <= m, m finite */
static inline double exp_at(double x, double m, const smx_expcd *c) {
  double a = x - m;
  return c->div ? smx_exp2d_div(a, c->t, c->hi, c->lo) : smx_exp2d_ac(a, c->hi, c->lo);
}

/* e (double) or e32 (float), either may be NULL */
static void expsum_into(size_t n, const float *z, double m, const smx_expcd *c, double *e, float *e32, int want_w,
                        smx_score_sums *out) {
  smx_dd s = { 0.0, 0.0 }, w = { 0.0, 0.0 };
  double cnt = 0.0;
  for (size_t j = 0; j < n; j++) {
    double x = z[j], v = exp_at(x, m, c);
    if (e) e[j] = v;
    if (e32) e32[j] = (float)v;
    if (x == m) { cnt += 1.0; continue; }
    smx_dd_add_d(&s, v);
    if (want_w && v > 0.0) smx_dd_add_d(&w, v * (x - m));
  }
  out->s = s;
  out->w = w;
  out->n_eq = cnt;
}

static void expsum_scalar(size_t n, const float *z, double m, const smx_expcd *c, double *e, int want_w,
                          smx_score_sums *out) {
  expsum_into(n, z, m, c, e, NULL, want_w, out);
}

/* the portable table computes the f32 entry in double */
static void expsum32_scalar(size_t n, const float *z, float m, const smx_expc *c, const smx_expcd *cd, float *e,
                            int want_w, smx_score_sums *out) {
  (void)c;
  expsum_into(n, z, m, cd, NULL, e, want_w, out);
}

static double excess_scalar(size_t n, const double *e, double u) {
  smx_dd s = { 0.0, 0.0 };
  for (size_t j = 0; j < n; j++)
    if (e[j] > u) smx_dd_add_d(&s, e[j] - u);
  return smx_dd_value(s);
}

static double excess32_scalar(size_t n, const float *e, float u) {
  double s = 0.0;
  for (size_t j = 0; j < n; j++)
    if (e[j] > u) s += (double)e[j] - (double)u;
  return s;
}

static size_t filter_vals_scalar(size_t n, const float *z, float thr, float m, float *vals, size_t *n_eq) {
  size_t c = 0, eq = 0;
  for (size_t j = 0; j < n; j++)
    if (z[j] > thr) {
      vals[c++] = z[j];
      eq += z[j] == m;
    }
  *n_eq = eq;
  return c;
}

static size_t count_gt_scalar(size_t n, const float *v, float t) {
  size_t c = 0;
  for (size_t j = 0; j < n; j++) c += v[j] > t;
  return c;
}

static double gen_sum_scalar(size_t n, const float *z, double m, double s, double log_s, double g) {
  smx_dd acc = { 0.0, 0.0 };
  double inv_s = 1.0 / s;
  for (size_t j = 0; j < n; j++) {
    double x = z[j];
    if (!(x < m)) continue;
    double a = x - m, e = smx_exp2d_ac(a, SMX_LOG2E_HI, SMX_LOG2E_LO);
    if (e == 0.0) continue;
    smx_dd_add_d(&acc, exp(g * (a - log_s + log1p(-e * inv_s))));
  }
  return smx_dd_value(acc);
}

const smx_scores_ukernels smx_scores_ukernels_scalar = { "scalar",         top2_scalar,     max_nan_scalar,  expsum_scalar,
                                                         expsum32_scalar,  excess_scalar,   excess32_scalar,
                                                         filter_vals_scalar, count_gt_scalar, gen_sum_scalar };
