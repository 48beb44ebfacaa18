/*
 * One f64 row of the fused cross-entropy (smx_grad.h): the f32 row's two
 * passes (xent_row.c) on the losses' f64 statistics (loss_row.h: the online
 * (max, sum) with a double-double sum, then a * softmax(x / T)_j with the
 * f64 scale-exp kernel), so the row is never copied. The smoothing term's
 * sum (of m - x_j) is compensated (core/ksum.h); the target's gradient
 * element, where p_t - (1 - eps) may cancel, is formed from log p_t. Special
 * rows (NaN, +inf, every entry -inf) follow the f32 row's rules exactly.
 */
#include <math.h>
#include <string.h>

#include "core/ksum.h"
#include "ops/xent_row.h"

/* The f32 row's special cases, in double. */
static void special_row64(const smx_xent_row64 *p, const double *x, size_t n, size_t t, int ignored, double *loss,
                          double *lse, double *g) {
  size_t kinf = 0;
  int nan = 0;
  for (size_t i = 0; i < n; i++) {
    nan |= x[i] != x[i];
    kinf += x[i] == INFINITY;
  }
  int masked_nan = (p->flags & SMX_FLAG_MASKED_ROW_NAN) != 0;
  if (lse) *lse = nan ? NAN : kinf ? INFINITY : masked_nan ? NAN : -INFINITY;
  if (ignored) {
    *loss = 0.0;
    if (g) memset(g, 0, n * sizeof *g);
    return;
  }
  int all_nan = nan || (kinf == 0 && masked_nan);
  double pk = kinf ? 1.0 / (double)kinf : 0.0, zf = p->z > 0.0 ? INFINITY : 1.0;
  if (all_nan) {
    *loss = NAN;
  } else if (kinf) {   /* the limit: p = 1/k on the k entries at +inf */
    double l = 0.0;
    if (p->eps < 1.0) l += (1.0 - p->eps) * (x[t] == INFINITY ? log((double)kinf) : INFINITY);
    if (p->eps > 0.0) l += p->eps * (kinf == n ? log((double)n) : INFINITY);
    *loss = p->z > 0.0 ? INFINITY : l;
  } else {
    *loss = INFINITY;   /* every entry -inf: p = 0, -log p_t = +inf */
  }
  if (!g) return;
  double gs = p->s / p->t, eps_n = p->eps / (double)n;
  for (size_t i = 0; i < n; i++) {
    double pi = kinf && x[i] == INFINITY ? pk : 0.0;
    g[i] = all_nan ? NAN : gs * ((pi > 0.0 ? pi * zf : 0.0) - eps_n - (i == t ? 1.0 - p->eps : 0.0));
  }
}

void smx_xent_row_f64(const smx_xent_row64 *p, const double *x, size_t n, int64_t t64, int ignored, double *loss,
                      double *lse, double *g) {
  size_t t = ignored ? 0 : (size_t)t64;
  if (ignored && !lse) {   /* nothing to compute: the row is not even read */
    *loss = 0.0;
    if (g) memset(g, 0, n * sizeof *g);
    return;
  }
  smx_lstat st;
  if (!smx_lrow_stat_f64(&p->row, x, n, &st)) {
    special_row64(p, x, n, t, ignored, loss, lse, g);
    return;
  }
  if (lse) *lse = st.lse;
  if (ignored) {
    *loss = 0.0;
    if (g) memset(g, 0, n * sizeof *g);
    return;
  }
  /* read before the gradient may overwrite them. The smoothing term's mean is of m - x_j >= 0: each
   * difference is rounded relatively, so the sum is within a few eps of itself however large the
   * logits (a mean of the x_j themselves loses eps |mean x| against the loss) */
  double xt = x[t], sd = 0.0, sc = 0.0;
  if (p->eps > 0.0) {   /* halves: m - x_j of two finite doubles may pass DBL_MAX, m/2 - x_j/2 does not */
    for (size_t j = 0; j < n; j++) smx_kadd(&sd, &sc, 0.5 * st.m - 0.5 * x[j]);
    if (isfinite(sd)) sd += sc;   /* an entry at -inf: +inf, and inf - inf in the compensation */
  }
  /* log p_t; divisions, so a huge 1/T never meets a 0; x_t - m beyond DBL_MAX (a row spanning it) is taken
   * in halves, which T >= 2 brings back into range */
  double dt = xt - st.m;
  double lpt = (isfinite(dt) || xt == -INFINITY ? dt / p->t : (0.5 * xt - 0.5 * st.m) / p->t * 2.0) - st.logd;
  if (g) {
    double gs = p->s / p->t, zf = 1.0 + 2.0 * p->z * st.lse;
    smx_lrow_scaled_p_f64(&p->row, &st, x, g, n, gs * zf);
    if (p->eps > 0.0) {
      double b = gs * p->eps / (double)n;
      for (size_t j = 0; j < n; j++) g[j] -= b;
    }
    g[t] = gs * (exp(lpt) * zf - p->eps / (double)n - (1.0 - p->eps));
  }
  /* terms with a zero coefficient are left out (no 0 * inf) */
  double l = 0.0;
  if (p->eps < 1.0) l += (1.0 - p->eps) * -lpt;
  if (p->eps > 0.0) l += p->eps * (sd / (double)n / p->t * 2.0 + st.logd);
  if (p->z > 0.0) l += p->z * st.lse * st.lse;
  *loss = l;
}
