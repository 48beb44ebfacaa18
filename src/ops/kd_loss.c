/*
 * The distillation loss of logit standardisation (Sun et al., CVPR 2024;
 * sunshangquan/logit-standardization-KD, mdistiller/distillers/KD.py),
 * include/smx/smx_losses.h: per row
 *   L_r = T^2 KL(softmax(Z(t)/T) || softmax(Z(s)/T)),
 * Z the z-score of vnorm_std.h (or the identity without standardisation),
 * and its gradient in the student logits, T (p_s - p_t) through Z's VJP.
 * KD.py reduces with kl_div(...).sum(1).mean(): SMX_REDUCTION_MEAN here.
 * Rows are independent (one task per block of rows); the row losses are
 * kept and reduced in row order, so results do not depend on the threads.
 * The arithmetic is in double (f32 inputs widened).
 */
#include <math.h>
#include <stdlib.h>

#include "core/grid.h"
#include "core/ksum.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/vnorm_std.h"
#include "smx/smx.h"

typedef struct kd_job {
  int f64, standardize;
  const void *s, *t;
  size_t lds, ldt, ldg, cols;
  double temp, gscale;
  double *row_loss;
  void *grad;
} kd_job;

/* a (the logit scale) and log-sum-exp of a x over the row, x in double */
static void row_scale(const double *x, size_t n, double temp, int standardize, double *a, double *m, double *logd) {
  if (standardize) {
    smx_vn_moments mo = smx_vn_moments_f64(x, n);
    *a = 1.0 / (temp * (mo.sd + SMX_VN_STD_EPS));
  } else {
    *a = 1.0 / temp;
  }
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) if (x[i] > mx) mx = x[i];
  double d = 0.0, dc = 0.0;   /* compensated: the bound may not grow with the row */
  for (size_t i = 0; i < n; i++) smx_kadd(&d, &dc, exp(*a * (x[i] - mx)));
  *m = mx;
  *logd = log(d + dc);
}

static void kd_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const kd_job *j = ctx;
  size_t n = j->cols;
  double *s = scratch, *t = s + n, *g = t + n;
  for (size_t r = r0; r < r1; r++) {
    for (size_t i = 0; i < n; i++) {
      s[i] = j->f64 ? ((const double *)j->s)[r * j->lds + i] : ((const float *)j->s)[r * j->lds + i];
      t[i] = j->f64 ? ((const double *)j->t)[r * j->ldt + i] : ((const float *)j->t)[r * j->ldt + i];
    }
    double as, ms, ls, at, mt, lt;
    row_scale(s, n, j->temp, j->standardize, &as, &ms, &ls);
    row_scale(t, n, j->temp, j->standardize, &at, &mt, &lt);
    double kl = 0.0, klc = 0.0, t2 = j->temp * j->temp;
    for (size_t i = 0; i < n; i++) {
      double lpt = at * (t[i] - mt) - lt, lps = as * (s[i] - ms) - ls, pt = exp(lpt);
      if (t[i] != t[i] || s[i] != s[i]) kl = NAN;
      if (pt > 0.0) smx_kadd(&kl, &klc, pt * (lpt - lps));
      g[i] = j->temp * (exp(lps) - pt);   /* dL/dz with z the logits before 1/T */
    }
    j->row_loss[r] = t2 * (isfinite(kl) ? kl + klc : kl);   /* +inf or NaN: the compensation is NaN */
    if (!j->grad) continue;
    if (j->standardize) {
      smx_vn_moments mo = smx_vn_moments_f64(s, n);
      SMX_VN_ZSCORE_VJP(double, s, g, n, mo);
    }
    for (size_t i = 0; i < n; i++) {
      double v = g[i] * j->gscale;
      if (j->f64) ((double *)j->grad)[r * j->ldg + i] = v;
      else ((float *)j->grad)[r * j->ldg + i] = (float)v;
    }
  }
}

static smx_status run(int f64, const void *s, size_t lds, const void *t, size_t ldt, void *loss, void *grad, size_t ldg,
                      size_t rows, size_t cols, int standardize, const smx_options *opt) {
  smx_loss_resolved o;
  smx_status st = smx_resolve_loss_options(opt, SMX_LOSS_USES_TEMPERATURE, &o);
  if (st != SMX_OK) return st;
  double temperature = o.base.temperature;
  smx_reduction red = o.reduction;
  if (lds < cols || ldt < cols || (grad && ldg < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0) {
    if (red != SMX_REDUCTION_NONE && loss) {
      if (f64) *(double *)loss = red == SMX_REDUCTION_MEAN ? NAN : 0.0;
      else *(float *)loss = red == SMX_REDUCTION_MEAN ? NAN : 0.0f;
    }
    return SMX_OK;
  }
  if (cols == 0 || !s || !t || !loss) return SMX_E_INVALID_ARG;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  size_t nl = red == SMX_REDUCTION_NONE ? rows : 1;
  smx_arg args[4] = { SMX_ARG_IN(s, rows, cols, lds, es), SMX_ARG_IN(t, rows, cols, ldt, es),
                      SMX_ARG_OUT(grad, rows, cols, ldg, es, 1), SMX_ARG_OUT(loss, 1, nl, nl, es, 0) };
  if ((st = smx_check_args(args, 4)) != SMX_OK) return st;
  double *rl = malloc(rows * sizeof(double));
  size_t scratch = smx_mul(3 * sizeof(double), cols, (size_t)-1 / 2);
  if (!rl || !scratch) { free(rl); return SMX_E_NOMEM; }
  kd_job j = { f64, standardize != 0, s, t, lds, ldt, ldg, cols, temperature,
               (red == SMX_REDUCTION_MEAN ? 1.0 / (double)rows : 1.0) * o.grad_scale, rl, grad };
  smx_plan plan = smx_plan_rows(o.base.threads, rows, cols, 0);
  st = smx_grid_rows(plan.row_threads, rows, scratch, kd_rows, &j);
  if (st == SMX_OK) {
    double sum = 0.0, sc = 0.0;
    for (size_t r = 0; r < rows; r++) {
      if (red == SMX_REDUCTION_NONE) {
        if (f64) ((double *)loss)[r] = rl[r];
        else ((float *)loss)[r] = (float)rl[r];
      }
      smx_kadd(&sum, &sc, rl[r]);
    }
    if (isfinite(sum)) sum += sc;
    if (red != SMX_REDUCTION_NONE) {
      double v = red == SMX_REDUCTION_MEAN ? sum / (double)rows : sum;
      if (f64) *(double *)loss = v;
      else *(float *)loss = (float)v;
    }
  }
  free(rl);
  return st;
}

smx_status smx_kd_loss_f32(const float *student, size_t lds, const float *teacher, size_t ldt, float *loss,
                           float *grad, size_t ldg, size_t rows, size_t cols, int standardize, const smx_options *opt) {
  return run(0, student, lds, teacher, ldt, loss, grad, ldg, rows, cols, standardize, opt);
}

smx_status smx_kd_loss_f64(const double *student, size_t lds, const double *teacher, size_t ldt, double *loss,
                           double *grad, size_t ldg, size_t rows, size_t cols, int standardize,
                           const smx_options *opt) {
  return run(1, student, lds, teacher, ldt, loss, grad, ldg, rows, cols, standardize, opt);
}
