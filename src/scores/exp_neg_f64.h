/*
 * exp(x) in double for x <= 0 (the shifted logits (z - max) / T of the score
 * and calibration code), branch-free so that loops over a row vectorize.
 * Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, then the degree-13
 * Taylor polynomial of exp(r) (truncation < 5e-18 relative) and 2^n built in
 * the exponent field: within 2 ulp of exp(x) (tests compare with expl).
 * x < -708 gives 0 (exp would be below 2^-1021: such a probability counts as
 * 0 next to the row maximum's 1); x = -inf gives 0; x must not be NaN or > 0.
 */
#ifndef SMX_SCORES_EXP_NEG_F64_H
#define SMX_SCORES_EXP_NEG_F64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline double smx_exp_neg_f64(double x) {
  const double log2e = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double shifter = 0x1.8p52;
  double xc = x < -708.0 ? -708.0 : x;
  double kf = xc * log2e + shifter;   /* round to nearest integer, in the low bits */
  double n = kf - shifter;
  double r = (xc - n * ln2_hi) - n * ln2_lo;
  double p = 1.0 / 6227020800.0;      /* 1/13! */
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* 2^n from the bits of kf, whose low 12 bits hold n + 0 (the shifter's low
   * bits are 0): (bits + 1023) << 52 keeps exactly n + 1023 in the exponent.
   * Integer lane ops only, so the loop vectorizes even on plain SSE2. */
  uint64_t bits;
  memcpy(&bits, &kf, sizeof bits);
  bits = (bits + 1023u) << 52;
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  double v = p * scale;
  return x < -708.0 ? 0.0 : v;   /* selects, not branches: if-converted and vectorized
                                   (the scores sources build with -fno-trapping-math) */
}

/* sum of e[0..n) in four interleaved partial sums: a fixed order (the same
 * result on every machine) without one long chain of dependent additions */
static inline double smx_sum4_f64(const double *e, size_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 += e[j];
    s1 += e[j + 1];
    s2 += e[j + 2];
    s3 += e[j + 3];
  }
  for (; j < n; j++) s0 += e[j];
  return (s0 + s1) + (s2 + s3);
}

#endif
