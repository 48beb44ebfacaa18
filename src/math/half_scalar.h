/*
 * IEEE binary16 (f16) and bfloat16 (bf16) <-> binary32, one value at a time.
 * Exact widening; narrowing rounds to nearest, ties to even, overflow to
 * infinity, NaN stays NaN (quieted). Used by the scalar conversion kernels and
 * for the tails of the vector ones, so every ISA rounds identically.
 */
#ifndef SMX_MATH_HALF_SCALAR_H
#define SMX_MATH_HALF_SCALAR_H

#include <stdint.h>
#include <string.h>

static inline float smx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) {
    if (m == 0) {
      u = sign;
    } else { /* subnormal: shift the leading one into the implicit position */
      uint32_t k = 0;
      while (!(m & 0x400u)) { m <<= 1; k++; }
      u = sign | ((113u - k) << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t smx_f32_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  /* >= 65520 (and inf) round to inf */
  if (a >= 0x38800000u) {                                   /* normal: >= 2^-14 */
    uint32_t r = (a - (112u << 23)) + 0x0fffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (r >> 13));
  }
  uint32_t e = a >> 23;
  if (e < 102) return sign;                                 /* below 2^-25: rounds to 0 */
  uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

/* double -> f16 in one rounding (f64 -> f32 -> f16 could round twice); for
 * .npy files that store float16 data written from double values. */
static inline uint16_t smx_f64_to_f16(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000u);
  uint64_t a = b & 0x7fffffffffffffffull;
  if (a > 0x7ff0000000000000ull) return (uint16_t)(sign | 0x7e00u | ((a >> 42) & 0x3ffu));
  if (a == 0x7ff0000000000000ull) return (uint16_t)(sign | 0x7c00u);
  int e = (int)(a >> 52) - 1023;                 /* unbiased exponent */
  if (e >= 16) return (uint16_t)(sign | 0x7c00u); /* >= 65536: beyond rounding to 65504 */
  if (e < -25) return sign;                      /* < 2^-25: below half the least subnormal */
  uint64_t m = (a & 0xfffffffffffffull) | (1ull << 52);  /* e >= -25: a normal double */
  /* Keep the bits that land in the binary16 significand: 11 for a normal
   * result (e >= -14), fewer for a subnormal one (value = q * 2^-24). */
  int shift = e >= -14 ? 42 : 28 - e;            /* 42 .. 53 */
  uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  if (e < -14) return (uint16_t)(sign | q);      /* q may reach 0x400: the least normal, correctly */
  /* q is in [2^10, 2^11]; q == 2^11 carries into the exponent (65520 -> inf too) */
  return (uint16_t)(sign | (((uint64_t)(e + 15) << 10) + (q - 0x400u)));
}

static inline float smx_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t smx_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  /* NaN, quieted */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#endif
