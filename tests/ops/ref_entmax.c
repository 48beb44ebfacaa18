/*
 * The bisection entmax rows (include/smx/smx_sparse.h) at alpha = 1.5 and
 * 1.7: the exact threshold of ref_sparsemax.c, and the bound of a threshold
 * known to the bisection's tolerance d (2^-30 for f32 and half rows, 2^-50
 * for f64): dy/dtau = y^(2-alpha)/(alpha-1) per entry, and the division by the
 * sum moves every entry by y times the sum of those.
 */
#include <math.h>

#include "op.h"

static double bound_bisect(const ref_ctx *c, dtype od, long double ref, long double aux, double alpha) {
  long double a = alpha - 1.0L, d = (od == DT_F64 ? 0x1p-50L : 0x1p-30L) + a * (aux + c->s) + 0x1p-50L;
  long double b = 8.0L * dt_eps(od) * ref + 2.0L * d * (powl(ref, 2.0L - alpha) + ref * c->logd) / a;
  /* the second-order term: with p = 1 / (alpha - 1) and u = ref^(1/p), (u + d)^p - u^p <= p d (2u)^(p-1) +
   * p 2^(p-1) d^p (p <= 2 here); the first part is the term above, the second is all an entry within d of the
   * threshold has (ref = 0, computed y up to d^p: the soak found 4.8e-21 at alpha 1.5, d about 2^-30) */
  b += 4.0L / a * powl(d, 1.0L / a);
  double r = (double)ref, bb = (double)b + dt_unit(od) * r;
  if (r < dt_arith_tiny(od)) bb += dt_arith_tiny(od) * 0x1p-20;
  return r < dt_tiny(od) ? bb + dt_half_sub(od) : bb;
}

#define ENTMAX_ALPHA(tag, alpha)                                                                                 \
  void ref_entmax##tag##_row(ref_ctx *c) { ref_sparse_state(c, alpha); }                                         \
  long double ref_entmax##tag##_at(const ref_ctx *c, size_t i, long double *aux) {                               \
    return ref_sparse_at(c, i, aux, alpha);                                                                      \
  }                                                                                                             \
  double bound_entmax##tag(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {             \
    (void)i;                                                                                                    \
    return bound_bisect(c, od, ref, aux, alpha);                                                                 \
  }                                                                                                             \
  void prep_entmax##tag##_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0,        \
                                   void *in1) {                                                                 \
    (void)o;                                                                                                    \
    prep_sparse_backward(x, n, dt, in0, in1, alpha);                                                            \
  }                                                                                                             \
  void ref_entmax##tag##_backward_row(ref_ctx *c) { ref_sparse_backward_row(c, alpha); }                        \
  long double ref_entmax##tag##_backward_at(const ref_ctx *c, size_t i, long double *aux) {                     \
    return ref_sparse_backward_at(c, i, aux, alpha);                                                            \
  }
ENTMAX_ALPHA(_a15, 1.5)
ENTMAX_ALPHA(_a17, 1.7)
