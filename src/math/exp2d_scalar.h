/*
 * Scalar 2^z in double for the f64 kernels, with z = a * c formed so that its
 * error does not grow with |z|:
 *
 *   c = log2(e) / T is carried as hi + lo (about 106 bits). n = round(a hi);
 *   r = fma(a, hi, -n) + a lo: the FMA forms a*hi - n exactly and rounds once
 *   a number below 0.5, so r is within about 2^-54 of the true a c - n even
 *   when |a c| is 1000. 2^r is the degree-11 polynomial of
 *   src/math/exp2_poly.h (0.085 eps), 2^n is built in the exponent
 *   field; results below DBL_MIN are scaled in two steps so that they are
 *   rounded once. a c < -1100 (and a = -inf) gives +0; NaN stays NaN.
 *
 * fma() is the C99 function: one instruction where the CPU has FMA (glibc
 * picks it at run time), a correct software version elsewhere.
 */
#ifndef SMX_MATH_EXP2D_SCALAR_H
#define SMX_MATH_EXP2D_SCALAR_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/exp2_poly.h"

/* 2^r for |r| <= 0.5005 */
static inline double smx_exp2d_poly(double r) {
  double p = SMX_EXP2D11_C11;
  p = p * r + SMX_EXP2D11_C10;
  p = p * r + SMX_EXP2D11_C9;
  p = p * r + SMX_EXP2D11_C8;
  p = p * r + SMX_EXP2D11_C7;
  p = p * r + SMX_EXP2D11_C6;
  p = p * r + SMX_EXP2D11_C5;
  p = p * r + SMX_EXP2D11_C4;
  p = p * r + SMX_EXP2D11_C3;
  p = p * r + SMX_EXP2D11_C2;
  /* the last two steps carry the result's error: fused, as the vector kernels do */
  p = fma(p, r, SMX_EXP2D11_C1);
  return fma(p, r, 1.0);
}

/* 2^n for an integer n in [-1022, 1023] */
static inline double smx_pow2d(double n) {
  uint64_t bits = (uint64_t)((int64_t)n + 1023) << 52;
  double s;
  memcpy(&s, &bits, sizeof s);
  return s;
}

/* p * 2^n for an integer n in [-1100, 1023], rounded once */
static inline double smx_scale2d(double p, double n) {
  if (n < -1020.0) return (p * smx_pow2d(n + 600.0)) * 0x1p-600;
  return p * smx_pow2d(n);
}

/* n = round(a hi) and the fraction r with a (hi + lo) = n + r; |a hi| < 2^51 */
static inline double smx_exp2d_reduce(double a, double hi, double lo, double *n) {
  const double magic = 0x1.8p52;
  double z = a * hi;
  double k = (z + magic) - magic;
  *n = k;
  return fma(a, hi, -k) + a * lo;
}

/* 2^(a (hi + lo)) for a (hi + lo) <= 1000 */
static inline double smx_exp2d_ac(double a, double hi, double lo) {
  double z = a * hi;
  if (!(z >= -1100.0)) return z != z ? z : 0.0;
  double n;
  double r = smx_exp2d_reduce(a, hi, lo, &n);
  return smx_scale2d(smx_exp2d_poly(r), n);
}

/* e^(a/T) for a <= 0 at extreme temperatures (log2(e) = hi + lo): q = a/T as
 * a double-double (the remainder from an FMA), so the quotient adds no error
 * proportional to |q|; then 2^(q log2 e) reduced as smx_exp2d_ac does. */
static inline double smx_exp2d_div(double a, double t, double hi, double lo) {
  if (t < 0x1p-900) {
    /* a tiny T: scale a and T by 2^600 (exactly), so that the remainder below
     * stays a normal number and exact; |a| >= 2^300 makes the result 0 anyway */
    if (a <= -0x1p300) return 0.0;
    a *= 0x1p600;
    t *= 0x1p600;
  }
  double q = a / t;
  double z = q * hi;
  if (!(z >= -1100.0)) return z != z ? z : 0.0;
  double ql = fma(-q, t, a) / t;
  const double magic = 0x1.8p52;
  double n = (z + magic) - magic;
  double r = fma(q, hi, -n) + (q * lo + ql * hi);
  return smx_scale2d(smx_exp2d_poly(r), n);
}

#endif
