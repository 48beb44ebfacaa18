/*
 * Focal loss on softmax (Lin et al. 2017, eq. 5; definition and policy in
 * include/smx/smx_losses.h). The gradient is K (p - onehot), so a row is
 * the fused cross-entropy's two passes (loss_row.h) with another scale, and
 * the target's element rewritten from double.
 */
#include <math.h>

#include "core/options.h"
#include "ops/loss_row.h"
#include "ops/loss_rows.h"
#include "smx/smx.h"

typedef struct focal_ctx {
  smx_lrow p;
  double gamma;
  const void *alpha;   /* float (f32 calls) or double (f64), or NULL */
  int f64;
} focal_ctx;

/* loss and K of a row from log p_t (K: the gradient is s K (p - onehot)) */
static void focal_terms(double gamma, double alpha, double lp, double *loss, double *k) {
  /* log p_t <= 0; a rounding above 0 (x_t the max and log d rounded just below 0) made q = -expm1(lp)
   * negative and q^gamma NaN for a non-integer gamma, on a row whose loss is about 1e-25 (tests/soak/losses) */
  if (lp > 0.0) lp = 0.0;
  double pt = exp(lp), q = -expm1(lp);
  double qg = gamma == 0.0 ? 1.0 : pow(q, gamma);
  /* gamma p_t q^(gamma-1) log p_t = gamma p_t q^gamma (log p_t / q), log p_t / q -> -1 as q -> 0 */
  double t1 = (gamma == 0.0 || pt == 0.0) ? 0.0 : gamma * pt * qg * (q > 0.0 ? lp / q : -1.0);
  *loss = alpha == 0.0 ? 0.0 : -alpha * qg * lp;
  *k = alpha * (qg - t1);
}

static void focal_row(const void *ctx, size_t r, const void *x, size_t n, size_t t, double s, double *loss,
                      void *g) {
  (void)r;
  const focal_ctx *c = ctx;
  smx_lstat st;
  int ok = c->f64 ? smx_lrow_stat_f64(&c->p, x, n, &st) : smx_lrow_stat_f32(&c->p, x, n, &st);
  if (!ok) {
    *loss = NAN;
    for (size_t j = 0; g && j < n; j++) {
      if (c->f64) ((double *)g)[j] = NAN;
      else ((float *)g)[j] = NAN;
    }
    return;
  }
  double xt = c->f64 ? ((const double *)x)[t] : (double)((const float *)x)[t];
  double alpha = !c->alpha ? 1.0 : c->f64 ? ((const double *)c->alpha)[t] : (double)((const float *)c->alpha)[t];
  /* f64: q = 1 - p_t to eps relatively (smx_lrow_logp_target_f64); f32: m is an entry, and q's absolute
   * error (eps) stays within the bound, whose G is |K| */
  double lp = c->f64 ? smx_lrow_logp_target_f64(&c->p, &st, x, n, t) : smx_lrow_logp(&c->p, &st, xt), k;
  focal_terms(c->gamma, alpha, lp, loss, &k);
  if (!g) return;
  double gt = s * k * -expm1(lp);   /* s K (p_t - 1), from double */
  if (c->f64) {
    smx_lrow_scaled_p_f64(&c->p, &st, x, g, n, s * k);
    ((double *)g)[t] = -gt;
  } else {
    smx_lrow_scaled_p_f32(&c->p, &st, x, g, n, s * k);
    ((float *)g)[t] = smx_lrow_sat(-gt);
  }
}

static smx_status run_focal(smx_elem elem, const void *logits, size_t ld, const int64_t *targets, const void *alpha,
                            void *loss, void *grad, size_t ldg, size_t rows, size_t cols, double gamma,
                            const smx_options *opt) {
  smx_loss_resolved o;
  smx_status st = smx_resolve_loss_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (!(gamma >= 0.0 && gamma <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
  if (alpha && rows > 0) {
    for (size_t j = 0; j < cols; j++) {
      double a = elem == SMX_ELEM_F64 ? ((const double *)alpha)[j] : (double)((const float *)alpha)[j];
      if (!(a >= -1.7976931348623157e308 && a <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
    }
  }
  focal_ctx c;
  smx_lrow_init(&c.p, 1.0);
  c.gamma = gamma;
  c.alpha = alpha;
  c.f64 = elem == SMX_ELEM_F64;
  smx_loss_call call = { elem, logits, ld, rows, cols, targets, &o, loss, grad, ldg, focal_row, &c };
  return smx_loss_rows(&call);
}

smx_status smx_focal_loss_f32(const float *logits, size_t ld, const int64_t *targets, const float *alpha, float *loss,
                              float *grad, size_t ldg, size_t rows, size_t cols, double gamma,
                              const smx_options *opt) {
  return run_focal(SMX_ELEM_F32, logits, ld, targets, alpha, loss, grad, ldg, rows, cols, gamma, opt);
}

smx_status smx_focal_loss_f64(const double *logits, size_t ld, const int64_t *targets, const double *alpha,
                              double *loss, double *grad, size_t ldg, size_t rows, size_t cols, double gamma,
                              const smx_options *opt) {
  return run_focal(SMX_ELEM_F64, logits, ld, targets, alpha, loss, grad, ldg, rows, cols, gamma, opt);
}
