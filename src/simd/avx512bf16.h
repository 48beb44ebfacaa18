/*
 * The vector layer on AVX-512 with AVX512_BF16: avx512.h, plus pairs of
 * bf16 in 32-bit lanes (vbp_t: 16 pairs) and the pair dot product
 * vdpbf16ps, acc[i] += a[2i] b[2i] + a[2i+1] b[2i+1] with f32 accumulation.
 * Include only from files built with -mavx512bf16 on top of the AVX-512
 * flags. As the instruction does (and unlike avx512.h's conversions), the
 * bf16 arithmetic here treats subnormal inputs and results as 0 and rounds
 * to nearest even; NaN stays NaN.
 */
#ifndef SMX_SIMD_AVX512BF16_H
#define SMX_SIMD_AVX512BF16_H

#include <string.h>

#include "simd/avx512.h"

#undef SMX_SIMD_ISA
#define SMX_SIMD_ISA "avx512bf16"

typedef __m512i vbp_t;

SMX_INLINE vbp_t vbp_ld(const uint32_t *p) { return _mm512_loadu_si512((const void *)p); }
SMX_INLINE void vbp_st(uint32_t *p, vbp_t v) { _mm512_storeu_si512((void *)p, v); }
SMX_INLINE vbp_t vbp_zero(void) { return _mm512_setzero_si512(); }
/* the pair at p in every lane (p need not be 4-byte aligned) */
SMX_INLINE vbp_t vbp_bcast(const uint16_t *p) {
  uint32_t x;
  memcpy(&x, p, sizeof x);
  return _mm512_set1_epi32((int)x);
}
/* the pair (p[0], 0) in every lane: the odd last element of a row, without reading past it */
SMX_INLINE vbp_t vbp_bcast_lo(const uint16_t *p) { return _mm512_set1_epi32((int)(uint32_t)p[0]); }
SMX_INLINE vbp_t vbp_bcast32(uint32_t x) { return _mm512_set1_epi32((int)x); }
/* 32 bf16 in storage as 16 pairs (element 2i low, 2i + 1 high in lane i) */
SMX_INLINE vbp_t vbp_ldh(const uint16_t *p) { return _mm512_loadu_si512((const void *)p); }
/* the first n < 32 of them, the others 0 (nothing past them is read) */
SMX_INLINE vbp_t vbp_ldh_n(const uint16_t *p, size_t n) {
  return _mm512_maskz_loadu_epi16((__mmask32)((1u << n) - 1u), (const void *)p);
}
/* pairs (a[i], b[i]) of two rows of 32 bf16 each: columns 0-15 in *lo, 16-31 in *hi (each in order) */
SMX_INLINE void vbp_pairs_h(vbp_t a, vbp_t b, vbp_t *lo, vbp_t *hi) {
  const __m512i il = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37,
                                      5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i ih = _mm512_set_epi16(63, 31, 62, 30, 61, 29, 60, 28, 59, 27, 58, 26, 57, 25, 56, 24, 55, 23, 54, 22,
                                      53, 21, 52, 20, 51, 19, 50, 18, 49, 17, 48, 16);
  *lo = _mm512_permutex2var_epi16(a, il, b);
  *hi = _mm512_permutex2var_epi16(a, ih, b);
}
/* acc + a.b over each lane's pair */
SMX_INLINE vf_t vf_dp_bf16(vf_t acc, vbp_t a, vbp_t b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
/* pairs (a[i], b[i]) of two vectors of floats rounded to bf16 */
SMX_INLINE vbp_t vbp_pair(vf_t a, vf_t b) {
  /* cvtne2ps gives b's 16 in the upper half, a's in the lower; the permute interleaves them */
  const __m512i ix = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                      5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(ix, (__m512i)_mm512_cvtne2ps_pbh(b, a));
}
/* 16 bf16 in storage */
typedef __m256i vbh_t;
SMX_INLINE vbh_t vbh_zero(void) { return _mm256_setzero_si256(); }
/* the first lanes of k (kf_tail), the others 0 */
SMX_INLINE vbh_t vbh_ldz_k(const uint16_t *p, kf_t k) { return _mm256_maskz_loadu_epi16(k, p); }
SMX_INLINE void vbh_st_k(uint16_t *p, kf_t k, vbh_t v) { _mm256_mask_storeu_epi16(p, k, v); }
/* pairs (a[i], b[i]) of 16 + 16 bf16 already in storage (a and b 256 bits each) */
SMX_INLINE vbp_t vbp_pair_bf16(vbh_t a, vbh_t b) {
  const __m512i ix = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37,
                                      5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(a), ix, _mm512_castsi256_si512(b));
}
/* 16 floats rounded to bf16 */
SMX_INLINE vbh_t vf_to_bf16(vf_t v) { return (vbh_t)_mm512_cvtneps_pbh(v); }

/* the first n <= 16 floats at p rounded to bf16 (nearest even, NaN kept), the others 0: n / 2 pairs */
SMX_INLINE vbh_t vbh_from_f32_n(const float *p, size_t n) {
  return (vbh_t)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p));
}

#endif
