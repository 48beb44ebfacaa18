/*
 * Neumaier's compensated sum in double: s += v with the rounding error of
 * each addition kept in c; the sum is s + c. Its error stays a few ulps of
 * sum |v| whatever the row length, where a plain loop grows with n (a 250-
 * column KD row was 100 ulps off; tests/soak/losses). The one copy for
 * every op that sums in double.
 */
#ifndef SMX_CORE_KSUM_H
#define SMX_CORE_KSUM_H

#include <math.h>

static inline void smx_kadd(double *s, double *c, double v) {
  double t = *s + v;
  *c += fabs(*s) >= fabs(v) ? (*s - t) + v : (v - t) + *s;
  *s = t;
}

#endif
