/*
 * Reduction states of the f64 kernels (the double counterparts of
 * reduce_state.h). With double data there is no wider type to accumulate in,
 * so every sum is a double-double (hi, lo): each addition is Knuth's two-sum,
 * whose error term is kept, so a sum of n terms is exact to about 2 eps
 * whatever n is.
 *
 *  - online: (m, d) with d = sum 2^((x_i - m) c). Merging b into a keeps
 *    a's reference while b.m <= a.m + 1/c (lazy rescale: b alone is scaled,
 *    by at most 2). Otherwise a's sum, which may hold most of the row and be
 *    rescaled again and again along a rising row, is scaled exactly: the new
 *    reference is m' = a.m + k/c with k an integer, so the factor is
 *    2^-k 2^delta with delta = k - (m' - a.m) c tiny (m' - a.m formed
 *    exactly); 2^-k is exact and the (1 + delta ln 2) part goes into the
 *    error word of the double-double. Rescales therefore cannot compound
 *    (without it, each would add an exponential's rounding, about 0.75 eps,
 *    to the whole sum). Only b, once, takes an ordinary exponential's error.
 *    Where a.m is so large that m' - a.m cannot be near k/c, or the gap is
 *    beyond 1000/c (a's part then vanishes), the reference is b.m.
 *  - extexp (Dukhan & Ablavatski): (v, e), sum 2^(x_i c) = v 2^e, e an
 *    integer: rescales are exact powers of two.
 * Merges run in a fixed order, so results do not depend on the thread count.
 */
#ifndef SMX_MATH_REDUCE_STATE_F64_H
#define SMX_MATH_REDUCE_STATE_F64_H

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

/* 2^k for an integer k <= 0 (0 below -1100): an exact scale factor */
static inline double smx_pow2d_neg(double k) { return !(k >= -1100.0) ? 0.0 : smx_scale2d(1.0, k); }

static inline smx_online_dd smx_online_dd_identity(void) {
  smx_online_dd s = { -INFINITY, { 0.0, 0.0 } };
  return s;
}

/* Scales the sum d from reference ma to mn = ma + (k + tiny)/c, k >= 1:
 * d 2^((ma - mn) c), with the 2^-k part exact and the rest in the error word.
 * Returns 0 (d unchanged) when mn - ma is not close enough to k/c. */
static inline int smx_online_dd_shift(smx_dd *d, double ma, double mn, double k, double hi, double lo) {
  double dl;
  double dh = smx_two_sum(mn, -ma, &dl);
  double delta = fma(-dh, hi, k) - (dh * lo + dl * hi);   /* k - (mn - ma) c */
  if (!(fabs(delta) <= 0x1p-30)) return 0;
  double f = smx_pow2d_neg(-k);
  double h = d->hi * f;
  d->lo = d->lo * f + h * (delta * SMX_LN2_HI);
  d->hi = h;
  return 1;
}

/* Adds the state b to a (see above). NaN in either gives a NaN d. */
static inline smx_online_dd smx_online_dd_merge(smx_online_dd a, smx_online_dd b, double hi, double lo) {
  if (a.d.hi != a.d.hi || b.d.hi != b.d.hi) { a.d.hi = NAN; return a; }
  if (b.d.hi == 0.0) return a;
  if (a.d.hi == 0.0) return b;
  double gap = (b.m - a.m) * hi;
  if (gap <= 1.0) {
    a.d = smx_dd_add(a.d, smx_dd_scale(b.d, smx_exp2d_diff(b.m, a.m, hi, lo)));
    return a;
  }
  if (gap <= 1000.0) {
    double k = ceil(gap);
    double mn = a.m + k / hi;
    smx_dd ad = a.d;
    if (smx_online_dd_shift(&ad, a.m, mn, k, hi, lo)) {
      smx_online_dd r = { mn, smx_dd_add(ad, smx_dd_scale(b.d, smx_exp2d_diff(b.m, mn, hi, lo))) };
      return r;
    }
  }
  b.d = smx_dd_add(smx_dd_scale(a.d, smx_exp2d_diff(a.m, b.m, hi, lo)), b.d);
  return b;
}

static inline smx_ext_dd smx_ext_dd_identity(void) {
  smx_ext_dd s = { { 0.0, 0.0 }, -INFINITY };
  return s;
}

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
