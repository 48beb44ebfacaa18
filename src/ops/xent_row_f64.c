/*
 * One f64 row of the fused cross-entropy (smx_grad.h), built on the f64
 * normalisations of smx.h so that it inherits their bounds on every row the
 * double range can hold (rows spanning more than DBL_MAX, temperatures from
 * 5e-324 to DBL_MAX): log p = smx_log_softmax_f64 of the row into a scratch
 * row (the loss and, with label smoothing, the compensated mean of log p),
 * lse = smx_logsumexp_f64 (when asked for or with a z-loss), and the gradient
 * from smx_softmax_f64 written in place of g, then scaled by s / T (a
 * division: 1/T may be beyond the range) and saturated at +-DBL_MAX, as the
 * f32 rows saturate at +-FLT_MAX. More passes than the f32 row's two: the
 * f64 form is for accuracy. Special rows (NaN, +inf, every entry -inf)
 * follow the f32 row's rules exactly (xent_row.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/ksum.h"
#include "ops/xent_row.h"

static double satinf(double v) { return v == INFINITY ? DBL_MAX : v == -INFINITY ? -DBL_MAX : v; }
/* v / T: an overflow of the division (a finite v) saturates, as the f32 rows' gradients do */
static double div_t(double v, double t) { return isfinite(v) ? satinf(v / t) : v / t; }

/* The f32 row's special cases, in double. */
static void special_row64(const smx_xent_row64 *p, const double *x, size_t n, size_t t, size_t kinf, int nan,
                          int ignored, double *loss, double *lse, double *g) {
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
  double eps_n = p->eps / (double)n;
  for (size_t i = 0; i < n; i++) {
    double pi = kinf && x[i] == INFINITY ? pk : 0.0;
    g[i] = all_nan ? NAN : div_t(p->s * ((pi > 0.0 ? pi * zf : 0.0) - eps_n - (i == t ? 1.0 - p->eps : 0.0)), p->t);
  }
}

void smx_xent_row_f64(const smx_xent_row64 *p, const double *x, size_t n, int64_t t64, int ignored, double *loss,
                      double *lse, double *g, double *logp) {
  size_t t = ignored ? 0 : (size_t)t64, kinf = 0;
  if (ignored && !lse) {   /* nothing to compute: the row is not even read */
    *loss = 0.0;
    if (g) memset(g, 0, n * sizeof *g);
    return;
  }
  int nan = 0, live = 0;
  for (size_t i = 0; i < n; i++) {
    nan |= x[i] != x[i];
    kinf += x[i] == INFINITY;
    live |= x[i] > -INFINITY;
  }
  if (nan || kinf || !live) {
    special_row64(p, x, n, t, kinf, nan, ignored, loss, lse, g);
    return;
  }
  smx_options o = { SMX_ALGO_AUTO, p->t, 0u, 1, NULL };   /* this thread: the row is one task */
  double l_se = 0.0;
  if (lse || p->z > 0.0) smx_logsumexp_f64(x, &l_se, n, &o);
  if (lse) *lse = l_se;
  if (ignored) {
    *loss = 0.0;
    if (g) memset(g, 0, n * sizeof *g);
    return;
  }
  smx_log_softmax_f64(x, logp, n, &o);   /* before the gradient may overwrite x */
  double lpt = logp[t], mean = 0.0;
  if (p->eps > 0.0) {   /* -mean log p >= 0, compensated; an entry at -inf makes it +inf */
    double s = 0.0, c = 0.0;
    for (size_t j = 0; j < n; j++) smx_kadd(&s, &c, -logp[j] / (double)n);
    mean = isfinite(s) ? s + c : s;
  }
  if (g) {
    double zf = 1.0 + 2.0 * p->z * l_se, eps_n = p->eps / (double)n;
    smx_softmax_f64(x, g, n, &o);
    /* every value is finite here: an infinity is an overflow of the division by T, saturated */
    for (size_t j = 0; j < n; j++) g[j] = satinf(p->s * (g[j] * zf - eps_n) / p->t);
    g[t] = satinf(p->s * (exp(lpt) * zf - eps_n - (1.0 - p->eps)) / p->t);
  }
  /* terms with a zero coefficient are left out (no 0 * inf) */
  double l = 0.0;
  if (p->eps < 1.0) l += (1.0 - p->eps) * -lpt;
  if (p->eps > 0.0) l += p->eps * mean;
  if (p->z > 0.0) l += p->z * l_se * l_se;
  *loss = l;
}
