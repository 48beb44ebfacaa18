/*
 * Mixture of softmaxes (Yang et al. 2018, "Breaking the Softmax Bottleneck"),
 * include/smx/smx_multi.h: per row r, with K component logit rows
 * x_r1 .. x_rK and mixture logits w_r (pi = softmax(w_r)),
 *   y_ri = log sum_k pi_k softmax(x_rk)_i
 *        = LSE_k (w_k - LSE(w) + x_rk,i - LSE(x_rk)),
 * a log-sum-exp over the components per output entry: no probability is
 * ever formed, so y is exact where the mixture's probabilities underflow.
 * The backward pass (posteriors q_ki = exp(log pi_k + log softmax_k,i - y_i)):
 *   dx_rk,i = g_i q_ki - softmax(x_rk)_i sum_j g_j q_kj,
 *   dw_k = sum_i g_i q_ki - pi_k sum_i g_i.
 * At temperature T the components are softmax(x_rk / T) (w is not tempered),
 * their entries (x - m) / T, and dx takes the chain rule's 1 / T.
 * Arithmetic in double (f32 inputs widened); rows are independent tasks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid.h"
#include "core/ksum.h"
#include "core/operands.h"
#include "core/options.h"
#include "smx/smx.h"

typedef struct mos_job {
  int f64;
  double t;   /* the temperature the components' logits are divided by */
  const void *x, *w, *g;
  void *y, *dx, *dw;
  size_t ldx, ldw, ldy, ldg, lddx, lddw, k, cols;
} mos_job;

static double ld_at(const mos_job *j, const void *p, size_t i) {
  return j->f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void st_at(const mos_job *j, void *p, size_t i, double v) {
  if (j->f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* (x - m) / t, rounded twice at most; where x - m overflows (a row spanning more than DBL_MAX), the halves'
 * difference over t / 2, which a large t brings back into range */
static double tdiff(double x, double m, double t) {
  double a = x - m;
  if (a == -INFINITY && x != -INFINITY) return (x * 0.5 - m * 0.5) / (t * 0.5);
  return a / t;
}

/* log-sum-exp of v[0..n) / t as m / t + *ls (m the largest entry, *ls = log sum exp((v - m) / t), kept apart:
 * m + ls rounds ls away when |m| is large, and x - m is exact where x is near m); m = -inf when every entry is
 * -inf (*ls 0), NaN with a NaN */
static double lse2(const double *v, size_t n, double t, double *ls) {
  double m = -INFINITY;
  *ls = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] != v[i]) return NAN;
    if (v[i] > m) m = v[i];
  }
  if (m == -INFINITY || m == INFINITY) return m;
  double s = 0.0, e = 0.0;   /* compensated: a component row of 2^17 entries stays within a few ulps */
  for (size_t i = 0; i < n; i++) smx_kadd(&s, &e, exp(tdiff(v[i], m, t)));
  *ls = log(s + e);
  return m;
}
static double lse(const double *v, size_t n) {
  double ls, m = lse2(v, n, 1.0, &ls);
  return m + ls;
}

/* scratch: cols (a component row) + cols (y) + 4 k doubles */
static void mos_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const mos_job *j = ctx;
  size_t n = j->cols, k = j->k;
  double *row = scratch, *y = row + n, *lpi = y + n, *lsek = lpi + k, *t = lsek + k, *lsk = t + k;
  for (size_t r = r0; r < r1; r++) {
    for (size_t c = 0; c < k; c++) lpi[c] = ld_at(j, j->w, r * j->ldw + c);
    double lw = lse(lpi, k);
    for (size_t c = 0; c < k; c++) lpi[c] -= lw;   /* log pi */
    for (size_t c = 0; c < k; c++) {
      for (size_t i = 0; i < n; i++) row[i] = ld_at(j, j->x, (r * k + c) * j->ldx + i);
      lsek[c] = lse2(row, n, j->t, &lsk[c]);   /* the component's lse is lsek / T + lsk */
    }
    /* y_i = LSE_c (log pi_c + (x_ci - m_c) / T - ls_c) */
    for (size_t i = 0; i < n; i++) {
      for (size_t c = 0; c < k; c++) {
        double v = tdiff(ld_at(j, j->x, (r * k + c) * j->ldx + i), lsek[c], j->t) - lsk[c];
        t[c] = lpi[c] + (v != v && lsek[c] == -INFINITY ? -INFINITY : v);   /* a fully masked component adds 0 */
      }
      y[i] = lse(t, k);
    }
    if (!j->g) {
      for (size_t i = 0; i < n; i++) st_at(j, j->y, r * j->ldy + i, y[i]);
      continue;
    }
    /* an entry with y_i = -inf (-inf in every component) stays -inf whatever w is: its g_i moves nothing */
    double gsum = 0.0;
    for (size_t i = 0; i < n; i++)
      if (y[i] != -INFINITY) gsum += ld_at(j, j->g, r * j->ldg + i);
    for (size_t c = 0; c < k; c++) {
      /* A_c = sum_i g_i q_ci; dx_ci = (g_i q_ci - s_ci A_c) / T (a component of all -inf: s = q = 0, not
       * -inf - -inf) */
      double a = 0.0;
      for (size_t i = 0; i < n; i++) {
        double ls = lsek[c] == -INFINITY ? -INFINITY : tdiff(ld_at(j, j->x, (r * k + c) * j->ldx + i), lsek[c], j->t) - lsk[c];
        double q = y[i] == -INFINITY ? 0.0 : exp(lpi[c] + ls - y[i]);
        a += ld_at(j, j->g, r * j->ldg + i) * q;
      }
      for (size_t i = 0; i < n; i++) {
        double ls = lsek[c] == -INFINITY ? -INFINITY : tdiff(ld_at(j, j->x, (r * k + c) * j->ldx + i), lsek[c], j->t) - lsk[c];
        double q = y[i] == -INFINITY ? 0.0 : exp(lpi[c] + ls - y[i]);
        st_at(j, j->dx, (r * k + c) * j->lddx + i, (ld_at(j, j->g, r * j->ldg + i) * q - exp(ls) * a) / j->t);
      }
      if (j->dw) st_at(j, j->dw, r * j->lddw + c, a - exp(lpi[c]) * gsum);
    }
  }
}

static smx_status run(int f64, const void *x, size_t ldx, const void *w, size_t ldw, const void *g, size_t ldg,
                      void *y, size_t ldy, void *dx, size_t lddx, void *dw, size_t lddw, size_t rows, size_t k,
                      size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (ldx < cols || ldw < k || (g && (ldg < cols || lddx < cols || (dw && lddw < k))) || (!g && ldy < cols))
    return SMX_E_INVALID_ARG;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  if (rows == 0) return SMX_OK;
  if (cols == 0) {
    /* no entries: nothing depends on w, so its gradient is 0; a given dw is written as such, never left stale */
    if (g && dw)
      for (size_t r = 0; r < rows; r++) memset((char *)dw + r * lddw * es, 0, k * es);
    return SMX_OK;
  }
  if (k == 0 || !x || !w || (g ? !dx : !y)) return SMX_E_INVALID_ARG;
  size_t xr = smx_mul(rows, k, (size_t)-1 / 16);
  if (!xr) return SMX_E_INVALID_ARG;
  smx_arg args[6] = { SMX_ARG_IN(x, xr, cols, ldx, es), SMX_ARG_IN(w, rows, k, ldw, es),
                      SMX_ARG_IN(g, rows, cols, ldg, es), SMX_ARG_OUT(g ? NULL : y, rows, cols, ldy, es, 0),
                      SMX_ARG_OUT(dx, xr, cols, lddx, es, 0), SMX_ARG_OUT(dw, rows, k, lddw, es, 0) };
  if ((st = smx_check_args(args, 6)) != SMX_OK) return st;
  size_t scratch = smx_mul(sizeof(double), 2 * cols + 4 * k, (size_t)-1 / 4);
  if (!scratch) return SMX_E_NOMEM;
  mos_job j = { f64, o.temperature, x, w, g, y, dx, dw, ldx, ldw, ldy, ldg, lddx, lddw, k, cols };
  smx_plan plan = smx_plan_rows(o.threads, rows, cols * k, 0);
  return smx_grid_rows(plan.row_threads, rows, scratch, mos_rows, &j);
}

smx_status smx_mixture_log_softmax_rows_f32(const float *x, size_t ldx, const float *w, size_t ldw, float *y,
                                            size_t ldy, size_t rows, size_t k, size_t cols, const smx_options *opt) {
  return run(0, x, ldx, w, ldw, NULL, 0, y, ldy, NULL, 0, NULL, 0, rows, k, cols, opt);
}
smx_status smx_mixture_log_softmax_rows_f64(const double *x, size_t ldx, const double *w, size_t ldw, double *y,
                                            size_t ldy, size_t rows, size_t k, size_t cols, const smx_options *opt) {
  return run(1, x, ldx, w, ldw, NULL, 0, y, ldy, NULL, 0, NULL, 0, rows, k, cols, opt);
}
smx_status smx_mixture_log_softmax_backward_rows_f32(const float *x, size_t ldx, const float *w, size_t ldw,
                                                     const float *dy, size_t lddy, float *dx, size_t lddx, float *dw,
                                                     size_t lddw, size_t rows, size_t k, size_t cols,
                                                     const smx_options *opt) {
  return run(0, x, ldx, w, ldw, dy, lddy, NULL, 0, dx, lddx, dw, lddw, rows, k, cols, opt);
}
smx_status smx_mixture_log_softmax_backward_rows_f64(const double *x, size_t ldx, const double *w, size_t ldw,
                                                     const double *dy, size_t lddy, double *dx, size_t lddx,
                                                     double *dw, size_t lddw, size_t rows, size_t k, size_t cols,
                                                     const smx_options *opt) {
  return run(1, x, ldx, w, ldw, dy, lddy, NULL, 0, dx, lddx, dw, lddw, rows, k, cols, opt);
}
