/*
 * Reduction states of the f64 kernels (the double counterparts of
 * reduce_state.h). With double data there is no wider type to accumulate in,
 * so every sum is a double-double (hi, lo): each addition is Knuth's two-sum,
 * whose error term is kept, so a sum of n terms is exact to about 2 eps
 * whatever n is.
 *
 *  - online: (m, d) with d = sum 2^((x_i - m) c). The merge keeps the
 *    reference of the left state unless the right one's m exceeds it by more
 *    than 1/c (lazy rescale): the running sum is then multiplied by at most
 *    1/2 at each rescale, so the rounding of the rescale factors cannot
 *    compound along a rising row (their weights fall geometrically), and the
 *    terms stay below 2 + tiny. The factor is 2^((ma - mb) c) with ma - mb
 *    formed exactly (two-difference), so its error does not grow with the gap.
 *  - extexp (Dukhan & Ablavatski): (v, e), sum 2^(x_i c) = v 2^e, e an
 *    integer: rescales are exact powers of two.
 * Merges run in a fixed order, so results do not depend on the thread count.
 */
#ifndef SMX_RUNTIME_REDUCE_STATE_F64_H
#define SMX_RUNTIME_REDUCE_STATE_F64_H

#include <math.h>

#include "math/exp2d_scalar.h"

typedef struct smx_dd { double hi, lo; } smx_dd;
typedef struct smx_online_dd { double m; smx_dd d; } smx_online_dd;
typedef struct smx_ext_dd { smx_dd v; double e; } smx_ext_dd;

/* Knuth's two-sum: s + err = a + b exactly (no condition on magnitudes). */
static inline double smx_two_sum(double a, double b, double *err) {
  double s = a + b;
  double bp = s - a;
  *err = (a - (s - bp)) + (b - bp);
  return s;
}

/* sum += t, compensated */
static inline void smx_dd_add_d(smx_dd *sum, double t) {
  double e;
  sum->hi = smx_two_sum(sum->hi, t, &e);
  sum->lo += e;
}

static inline smx_dd smx_dd_add(smx_dd a, smx_dd b) {
  double e;
  smx_dd r;
  r.hi = smx_two_sum(a.hi, b.hi, &e);
  r.lo = a.lo + b.lo + e;
  return r;
}

static inline smx_dd smx_dd_scale(smx_dd a, double f) {
  smx_dd r = { a.hi * f, a.lo * f };
  return r;
}

/* hi + lo rounded to one double */
static inline double smx_dd_value(smx_dd a) { return a.hi + a.lo; }

/* 2^((a - b) (hi + lo)) for a - b <= 1000 / c, with a - b formed exactly */
static inline double smx_exp2d_diff(double a, double b, double hi, double lo) {
  double dl;
  double dh = smx_two_sum(a, -b, &dl);
  double z = dh * hi;
  if (!(z >= -1100.0)) return z != z ? z : 0.0;
  const double magic = 0x1.8p52;
  double n = (z + magic) - magic;
  double r = fma(dh, hi, -n) + (dh * lo + dl * hi);
  return smx_scale2d(smx_exp2d_poly(r), n);
}

static inline smx_online_dd smx_online_dd_identity(void) {
  smx_online_dd s = { -INFINITY, { 0.0, 0.0 } };
  return s;
}

/* Adds the state b to a (lazy rescale, see above). NaN in either gives a NaN d. */
static inline smx_online_dd smx_online_dd_merge(smx_online_dd a, smx_online_dd b, double hi, double lo) {
  if (a.d.hi != a.d.hi || b.d.hi != b.d.hi) { a.d.hi = NAN; return a; }
  if (b.d.hi == 0.0) return a;
  if (a.d.hi == 0.0) return b;
  if ((b.m - a.m) * hi <= 1.0) {
    a.d = smx_dd_add(a.d, smx_dd_scale(b.d, smx_exp2d_diff(b.m, a.m, hi, lo)));
    return a;
  }
  b.d = smx_dd_add(smx_dd_scale(a.d, smx_exp2d_diff(a.m, b.m, hi, lo)), b.d);
  return b;
}

static inline smx_ext_dd smx_ext_dd_identity(void) {
  smx_ext_dd s = { { 0.0, 0.0 }, -INFINITY };
  return s;
}

/* 2^k for an integer k <= 0 (0 below -1100): an exact scale factor */
static inline double smx_pow2d_neg(double k) { return !(k >= -1100.0) ? 0.0 : smx_scale2d(1.0, k); }

static inline smx_ext_dd smx_ext_dd_merge(smx_ext_dd a, smx_ext_dd b) {
  if (a.v.hi != a.v.hi || b.v.hi != b.v.hi) { a.v.hi = NAN; return a; }
  if (b.v.hi == 0.0) return a;
  if (a.v.hi == 0.0) return b;
  smx_ext_dd r;
  r.e = a.e > b.e ? a.e : b.e;
  r.v = smx_dd_add(smx_dd_scale(a.v, smx_pow2d_neg(a.e - r.e)), smx_dd_scale(b.v, smx_pow2d_neg(b.e - r.e)));
  return r;
}

#endif
