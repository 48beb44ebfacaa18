/*
 * Temperature scaling (Guo et al. 2017): T minimising the validation NLL,
 * found as b = 1/T where the NLL is convex (smx_metrics.h has the conditions
 * for a finite optimum). Newton steps on N'(b) = 0 with the exact second
 * derivative (the mean variance of the logits under p_b), each kept inside a
 * bracket [lo, hi] with N'(lo) < 0 < N'(hi) that every evaluation narrows;
 * a step that would leave it is replaced by bisection. Unlike LBFGS with a
 * fixed learning rate (gpleiss, OpenOOD) or a bounded bracket (hendrycks'
 * [0.2, 5]), this converges for any T* and never returns a bound.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "scores/exp_neg_f64.h"
#include "core/operands.h"
#include "scores/score_options.h"
#include "smx/smx_metrics.h"

typedef struct val_set {
  const float *x;
  size_t ldx, rows, K;
  const int64_t *y;
  double *e;
} val_set;

/* N(b), N'(b), N''(b) */
static void eval_nll(const val_set *v, double b, double *nll, double *g, double *h) {
  double sn = 0.0, sg = 0.0, sh = 0.0;
  for (size_t r = 0; r < v->rows; r++) {
    const float *z = v->x + r * v->ldx;
    double m = -INFINITY;
    for (size_t j = 0; j < v->K; j++) m = (double)z[j] > m ? (double)z[j] : m;
    double S = 0.0, mu = 0.0;
    for (size_t j = 0; j < v->K; j++) {
      double e = z[j] == -INFINITY ? 0.0 : smx_exp_neg_f64(b * ((double)z[j] - m));
      v->e[j] = e;
      S += e;
      if (e > 0.0) mu += e * ((double)z[j] - m);
    }
    mu /= S;   /* E_p[z] - m */
    double var = 0.0;
    for (size_t j = 0; j < v->K; j++)
      if (v->e[j] > 0.0) {
        double d = ((double)z[j] - m) - mu;
        var += v->e[j] * d * d;
      }
    double dy = (double)z[v->y[r]] - m;   /* <= 0 */
    sn += log(S) - b * dy;
    sg += mu - dy;
    sh += var / S;
  }
  double n = (double)v->rows;
  *nll = sn / n;
  *g = sg / n;
  *h = sh / n;
}

smx_status smx_temperature_fit_f32(const float *x, size_t ldx, const int64_t *labels, double *T, smx_ts_info *info,
                                   size_t rows, size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status os = smx_scores_resolve_options(opt, 0, &o);
  if (os != SMX_OK) return os;
  if (!x || !labels || !T || rows == 0 || cols == 0 || ldx < cols) return SMX_E_INVALID_ARG;
  if (info && smx_overlap(T, sizeof *T, info, sizeof *info)) return SMX_E_INVALID_ARG;
  if (!smx_span(rows, cols, ldx) || cols > (size_t)PTRDIFF_MAX / sizeof(double) ||
      rows > (size_t)PTRDIFF_MAX / sizeof(int64_t))
    return SMX_E_INVALID_ARG;
  /* validity, and the two limits of N'(b) */
  double g0 = 0.0, ginf = 0.0;
  for (size_t r = 0; r < rows; r++) {
    if (labels[r] < 0 || (uint64_t)labels[r] >= (uint64_t)cols) return SMX_E_INVALID_ARG;
    const float *z = x + r * ldx;
    double m = -INFINITY, sum = 0.0;
    size_t fin = 0;
    for (size_t j = 0; j < cols; j++) {
      if (z[j] != z[j] || z[j] == INFINITY) return SMX_E_INVALID_ARG;
      if (z[j] == -INFINITY) continue;
      m = (double)z[j] > m ? (double)z[j] : m;
      sum += z[j];
      fin++;
    }
    double zy = z[labels[r]];
    if (zy == -INFINITY) return SMX_E_INVALID_ARG;   /* the true class is masked: infinite NLL */
    g0 += sum / (double)fin - zy;                     /* N'(0+): p_0 uniform over unmasked classes */
    ginf += m - zy;                                   /* N'(inf): p_inf on the maximum           */
  }
  val_set v = { x, ldx, rows, cols, labels, malloc(cols * sizeof(double)) };
  if (!v.e) return SMX_E_NOMEM;
  smx_ts_info inf = { SMX_TS_OPTIMUM, 0, NAN, NAN, NAN };
  double g, h, nll;
  eval_nll(&v, 1.0, &inf.nll_at_1, &g, &h);
  smx_status st = SMX_OK;
  if (ginf <= 0.0) {
    inf.outcome = SMX_TS_TO_ZERO;
    st = SMX_E_NO_OPTIMUM;
  } else if (g0 >= 0.0) {
    inf.outcome = SMX_TS_TO_INFINITY;
    st = SMX_E_NO_OPTIMUM;
  } else {
    double lo = 0.0, hi = INFINITY, b = 1.0;
    nll = inf.nll_at_1;
    int it = 0;
    for (; it < 400; it++) {
      if (g < 0.0) lo = b; else if (g > 0.0) hi = b; else break;
      double nb = h > 0.0 ? b - g / h : NAN;
      if (!(nb > lo && nb < hi)) nb = hi == INFINITY ? 2.0 * b : 0.5 * (lo + hi);
      double step = fabs(nb - b);
      b = nb;
      eval_nll(&v, b, &nll, &g, &h);
      if (step <= 4.0 * DBL_EPSILON * b || hi - lo <= 4.0 * DBL_EPSILON * lo) { it++; break; }
    }
    inf.iterations = it;
    inf.nll_at_t = nll;
    inf.grad = g;
    *T = 1.0 / b;
  }
  if (st != SMX_OK) inf.grad = g;
  free(v.e);
  if (info) *info = inf;
  return st;
}
