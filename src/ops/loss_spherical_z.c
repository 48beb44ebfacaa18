/*
 * The spherical Z-loss of de Brebisson and Vincent 2016 (arXiv 1604.08859,
 * section 3: the Z-normalised target score through a scaled softplus;
 * definition and policy in include/smx/smx_losses.h). A row needs only
 * the first two moments and x_t: for f32 rows one pass for sum x and sum x^2
 * (the registry's double-lane sum and dot kernels), for f64 rows two (the
 * mean, then the centred squares), and one affine pass for the gradient,
 * grad_k = c0 + c1 (x_k - mu).
 */
#include <math.h>

#include "core/ksum.h"
#include "core/options.h"
#include "ops/loss_row.h"
#include "ops/loss_rows.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct zl_ctx {
  const smx_xent_ukernels *g32;
  double a, b;
  int f64;
} zl_ctx;

/* f64 rows: the mean from a compensated sum, then the corrected two-pass variance, sum (x - mu)^2 less
 * (sum (x - mu))^2 / n (mu's own rounding), compensated, with each square's rounding (fma). One pass of
 * x and x^2, even compensated, leaves var = E[x^2] - mu^2 an error of eps E[x^2]: mean(x^2) / var times
 * the common bound (tests/soak/losses saw gradients 1e-11 off at mean(x^2) / var = 1e4, 2^-20 allowed). */
static void moments_f64(const double *x, size_t n, double sc, double *mu_out, double *mu_lo, double *var_out) {
  double a = 0.0, ca = 0.0;
  for (size_t i = 0; i < n; i++) smx_kadd(&a, &ca, x[i] * sc);
  /* mu in two doubles (the sum's and the division's roundings in the low part): x_k - mu then keeps its
   * digits on rows far from 0 (mean 1e4, spread 0.1: one double mu costs z 1e-11 relatively) */
  double dn = (double)n, sh = a + ca, sl = ca - (sh - a), mu = sh / dn;
  double lo = (fma(-mu, dn, sh) + sl) / dn;
  if (!(lo == lo && lo - lo == 0.0)) lo = 0.0;   /* a non-finite row: mu alone says it */
  double s = 0.0, cs = 0.0, d1 = 0.0, cd = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = (x[i] * sc - mu) - lo, w = d * d;
    smx_kadd(&s, &cs, w);
    if (w < INFINITY) cs += fma(d, d, -w);
    smx_kadd(&d1, &cd, d);
  }
  double e = d1 + cd;
  *mu_out = mu;
  *mu_lo = lo;
  *var_out = (s + cs - e * e / dn) / dn;
}

/* f64 rows are scaled by the power of two 2^-e of their largest magnitude first (exact; z is scale-free):
 * neither sum x^2 of a row with 1e300 in it nor that of subnormal rows leaves the range (op driver's
 * "spike 1e300" family gave NaN for a finite row) */
static double row_scale_f64(const double *x, size_t n) {
  double amax = 0.0;
  for (size_t i = 0; i < n; i++) amax = fabs(x[i]) > amax ? fabs(x[i]) : amax;
  if (!(amax > 0.0 && amax < INFINITY)) return 1.0;
  int e = ilogb(amax);
  return ldexp(1.0, e < -1000 ? 1000 : -e);   /* 2^1000 at most: a subnormal row's 2^-e would overflow */
}

/* v, beyond the double range +-DBL_MAX */
static double sat_f64(double v) {
  return v > 1.7976931348623157e308 ? 1.7976931348623157e308 : v < -1.7976931348623157e308 ? -1.7976931348623157e308 : v;
}

static double softplus(double u) { return u > 0.0 ? u + log1p(exp(-u)) : log1p(exp(u)); }
static double sigmoid(double u) { return u >= 0.0 ? 1.0 / (1.0 + exp(-u)) : exp(u) / (1.0 + exp(u)); }

static void zl_row(const void *ctx, size_t r, const void *x, size_t n, size_t t, double s, double *loss, void *g) {
  (void)r;
  const zl_ctx *c = ctx;
  /* the moments of sc x (sc = 1 for f32 rows) */
  double dn = (double)n, mu, mu_lo = 0.0, var, xt, sc = 1.0;
  if (c->f64) {
    sc = row_scale_f64(x, n);
    moments_f64(x, n, sc, &mu, &mu_lo, &var);
    xt = ((const double *)x)[t] * sc;
  } else {
    /* f32: the moments in one pass of double sums (products exact): var within n 2^-53 mean(x^2), far
     * inside the f32 bound while var >= 2^-20 mean(x^2) (the header's condition) */
    double s1 = c->g32->rsum(n, x), s2 = c->g32->rdot(n, x, x);
    mu = s1 / dn;
    var = s2 / dn - mu * mu;
    xt = ((const float *)x)[t];
  }
  if (!(var > 0.0 && var < INFINITY && mu == mu)) {
    *loss = NAN;
    for (size_t j = 0; g && j < n; j++) {
      if (c->f64) ((double *)g)[j] = NAN;
      else ((float *)g)[j] = NAN;
    }
    return;
  }
  double sigma = sqrt(var), z = ((xt - mu) - mu_lo) / sigma, u = c->a * (c->b - z);
  *loss = softplus(u) / c->a;
  if (!g) return;
  /* grad_k = F ((1 + z (x_k - mu) / sigma) / D - [k == t]) sc, F = s sig / sigma (sigma of sc x): the power
   * of two sc last, so that only a value beyond the range overflows (subnormal f64 rows: 1 / sigma_x >
   * DBL_MAX), and such values saturate as the f32 ones do */
  double F = s * sigmoid(u) / sigma;
  if (c->f64) {
    double *gd = g;
    const double *xd = x;
    for (size_t k = 0; k < n; k++) gd[k] = sat_f64(F * ((1.0 + z * (((xd[k] * sc - mu) - mu_lo) / sigma)) / dn) * sc);
    gd[t] = sat_f64(F * ((1.0 + z * z) / dn - 1.0) * sc);
  } else {
    float *gf = g;
    const float *xf = x;
    for (size_t k = 0; k < n; k++) gf[k] = smx_lrow_sat(F * ((1.0 + z * (((double)xf[k] - mu) / sigma)) / dn));
    gf[t] = smx_lrow_sat(F * ((1.0 + z * z) / dn - 1.0));
  }
}

static smx_status run_zl(smx_elem elem, const void *logits, size_t ld, const int64_t *targets, void *loss, void *grad,
                         size_t ldg, size_t rows, size_t cols, double a, double b, const smx_options *opt) {
  smx_loss_resolved o;
  smx_status st = smx_resolve_loss_options(opt, 0, &o);
  if (st != SMX_OK) return st;
  if (!(a > 0.0 && a <= 1.7976931348623157e308) || !(b >= -1.7976931348623157e308 && b <= 1.7976931348623157e308))
    return SMX_E_INVALID_ARG;
  zl_ctx c = { smx_registry_current()->xent, a, b, elem == SMX_ELEM_F64 };
  smx_loss_call call = { elem, logits, ld, rows, cols, targets, &o, loss, grad, ldg, zl_row, &c };
  return smx_loss_rows(&call);
}

smx_status smx_spherical_z_loss_f32(const float *logits, size_t ld, const int64_t *targets, float *loss, float *grad,
                                    size_t ldg, size_t rows, size_t cols, double a, double b,
                                    const smx_options *opt) {
  return run_zl(SMX_ELEM_F32, logits, ld, targets, loss, grad, ldg, rows, cols, a, b, opt);
}

smx_status smx_spherical_z_loss_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                    double *grad, size_t ldg, size_t rows, size_t cols, double a, double b,
                                    const smx_options *opt) {
  return run_zl(SMX_ELEM_F64, logits, ld, targets, loss, grad, ldg, rows, cols, a, b, opt);
}
