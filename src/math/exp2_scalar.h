/*
 * Scalar 2^z in double, for the scalar kernels and for state merges.
 *
 * z = n + r with n the nearest integer (magic-number rounding, exact for
 * |z| < 2^51) and r in [-0.5, 0.5]; 2^r = e^(r ln2) by its degree-8 Taylor
 * polynomial (truncation error < 2e-10 relative, 0.002 float ulp), 2^n built
 * in the exponent field. Rounded to float, the result is within 0.51 ulp,
 * subnormal results included. z < -160 (or -inf) gives +0; NaN gives NaN.
 * Callers keep z <= 1000.
 */
#ifndef SMX_MATH_EXP2_SCALAR_H
#define SMX_MATH_EXP2_SCALAR_H

#include <stdint.h>
#include <string.h>

static inline double smx_exp2_d(double z) {
  if (!(z >= -160.0)) return z != z ? z : 0.0;
  const double magic = 0x1.8p52;
  double n = (z + magic) - magic;
  double r = z - n;
  double p = 0x1.62c0223a5c824p-20;
  p = p * r + 0x1.ffcbfc588b0c7p-17;
  p = p * r + 0x1.430912f86c787p-13;
  p = p * r + 0x1.5d87fe78a6731p-10;
  p = p * r + 0x1.3b2ab6fba4e77p-7;
  p = p * r + 0x1.c6b08d704a0c0p-5;
  p = p * r + 0x1.ebfbdff82c58fp-3;
  p = p * r + 0x1.62e42fefa39efp-1;
  p = p * r + 1.0;
  uint64_t bits = (uint64_t)((int64_t)n + 1023) << 52;
  double s;
  memcpy(&s, &bits, sizeof s);
  return p * s;
}

#endif
