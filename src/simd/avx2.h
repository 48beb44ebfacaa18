/*
 * The vector layer on AVX2 + FMA: 8 floats (vf_t) or 4 doubles (vd_t).
 * Include only from files built with -mavx2 -mfma.
 *
 * Kernel bodies are written once against these names; each ISA header
 * provides the same set (see avx512.h for the other). Conventions:
 *   - max / min return the second operand when either is NaN, so a
 *     running max written max(x, acc) skips NaN entries;
 *   - a tail mask (kf_t, kd_t) selects the first k lanes; masked lanes are
 *     never read or written in memory;
 *   - *_scale2(p, n) is p 2^n for integer-valued n; without vscalef it is
 *     built in the exponent field, so its valid range is stated per op and
 *     SMX_VF_SCALE2_SATURATES tells kernels which clamp to use;
 *     vf_scale2_sat clamps n itself (n <= -127 gives +0).
 */
#ifndef SMX_SIMD_AVX2_H
#define SMX_SIMD_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define SMX_INLINE static inline __attribute__((always_inline))

#define SMX_SIMD_ISA "avx2"

/* ---- shared ------------------------------------------------------------ */

SMX_INLINE void smx_sfence(void) { _mm_sfence(); }
/* Prefetches take integers: the address may lie past the caller's buffer,
 * which a prefetch may touch (it never faults) but a C pointer may not. */
SMX_INLINE void smx_prefetch(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_T0); }
/* for lines about to be written: fetched in exclusive state */
SMX_INLINE void smx_prefetchw(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_ET0); }
/* into L2 only: for lines needed some thousands of cycles later */
SMX_INLINE void smx_prefetch_l2(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_T1); }

/* ---- f64: 4 lanes ------------------------------------------------------ */

typedef __m256d vd_t;
typedef __m256d md_t;   /* a lane compare result */
typedef __m256i kd_t;   /* a tail mask */
#define VD_W 4

SMX_INLINE kd_t kd_tail(size_t k) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)k), _mm256_setr_epi64x(0, 1, 2, 3));
}
SMX_INLINE vd_t vd_set1(double a) { return _mm256_set1_pd(a); }
SMX_INLINE vd_t vd_ld(const double *p) { return _mm256_loadu_pd(p); }
/* the first k < VD_W elements, the others `fill` */
SMX_INLINE vd_t vd_ld_part(const double *p, size_t k, double fill) {
  kd_t m = kd_tail(k);
  return _mm256_blendv_pd(_mm256_set1_pd(fill), _mm256_maskload_pd(p, m), _mm256_castsi256_pd(m));
}
SMX_INLINE void vd_st(double *p, vd_t v) { _mm256_storeu_pd(p, v); }
SMX_INLINE void vd_st_nt(double *p, vd_t v) { _mm256_stream_pd(p, v); }
SMX_INLINE void vd_st_part(double *p, size_t k, vd_t v) { _mm256_maskstore_pd(p, kd_tail(k), v); }
SMX_INLINE vd_t vd_add(vd_t a, vd_t b) { return _mm256_add_pd(a, b); }
SMX_INLINE vd_t vd_sub(vd_t a, vd_t b) { return _mm256_sub_pd(a, b); }
SMX_INLINE vd_t vd_mul(vd_t a, vd_t b) { return _mm256_mul_pd(a, b); }
SMX_INLINE vd_t vd_fmadd(vd_t a, vd_t b, vd_t c) { return _mm256_fmadd_pd(a, b, c); }    /* a b + c */
SMX_INLINE vd_t vd_fmsub(vd_t a, vd_t b, vd_t c) { return _mm256_fmsub_pd(a, b, c); }    /* a b - c */
SMX_INLINE vd_t vd_fnmadd(vd_t a, vd_t b, vd_t c) { return _mm256_fnmadd_pd(a, b, c); }  /* c - a b */
SMX_INLINE vd_t vd_max(vd_t a, vd_t b) { return _mm256_max_pd(a, b); }
SMX_INLINE vd_t vd_min(vd_t a, vd_t b) { return _mm256_min_pd(a, b); }
SMX_INLINE vd_t vd_div(vd_t a, vd_t b) { return _mm256_div_pd(a, b); }
SMX_INLINE vd_t vd_abs(vd_t a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
SMX_INLINE vd_t vd_round(vd_t a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE vd_t vd_ceil(vd_t a) { return _mm256_round_pd(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
SMX_INLINE md_t vd_gt(vd_t a, vd_t b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
SMX_INLINE md_t vd_eq(vd_t a, vd_t b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
SMX_INLINE md_t md_andnot(md_t a, md_t b) { return _mm256_andnot_pd(a, b); }   /* !a && b */
SMX_INLINE md_t md_and(md_t a, md_t b) { return _mm256_and_pd(a, b); }
SMX_INLINE int md_any(md_t a) { return _mm256_movemask_pd(a) != 0; }
SMX_INLINE vd_t vd_sel(md_t m, vd_t t, vd_t f) { return _mm256_blendv_pd(f, t, m); }

/* 2^k for integers k in [-1022, 1023]: k + 1023 sits in the low bits of
 * k + (2^52 + 2^51 + 1023), and the shift drops the rest. */
SMX_INLINE vd_t vd_pow2i(vd_t k) {
  __m256d b = _mm256_add_pd(k, _mm256_set1_pd(0x1.8p52 + 1023.0));
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(b), 52));
}
/* p 2^n for an integer n (clamped to [-1100, 1000]), rounded once: the
 * first factor (down to 2^-1000) keeps p normal, so it is exact; the second
 * (2^-100 .. 1) rounds. */
SMX_INLINE vd_t vd_scale2(vd_t p, vd_t n) {
  n = _mm256_min_pd(_mm256_max_pd(n, _mm256_set1_pd(-1100.0)), _mm256_set1_pd(1000.0));
  vd_t n1 = _mm256_max_pd(n, _mm256_set1_pd(-1000.0));
  vd_t n2 = _mm256_sub_pd(n, n1);
  return _mm256_mul_pd(_mm256_mul_pd(p, vd_pow2i(n1)), vd_pow2i(n2));
}
SMX_INLINE double vd_reduce_max(vd_t a) {
  __m128d m = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  m = _mm_max_pd(m, _mm_unpackhi_pd(m, m));
  return _mm_cvtsd_f64(m);
}
/* (l0 + l2) + (l1 + l3): halves first, the order of avx512.h's reduction */
SMX_INLINE double vd_reduce_add(vd_t a) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* ---- f32: 8 lanes ------------------------------------------------------ */

typedef __m256 vf_t;
typedef __m256 mf_t;    /* a lane compare result */
typedef __m256i kf_t;   /* a tail mask */
#define VF_W 8
/* vf_scale2 takes only n in [-127, 127] (see there) */
#define SMX_VF_SCALE2_SATURATES 0

/* lanes [0, k) set, k in 0..8 (one unaligned load from a sliding table) */
SMX_INLINE kf_t kf_tail(size_t k) {
  static const int32_t table[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
  return _mm256_loadu_si256((const __m256i *)(table + 8 - k));
}
SMX_INLINE kf_t kf_full(void) { return _mm256_set1_epi32(-1); }
SMX_INLINE vf_t vf_set1(float a) { return _mm256_set1_ps(a); }
SMX_INLINE vf_t vf_zero(void) { return _mm256_setzero_ps(); }
SMX_INLINE vf_t vf_ld(const float *p) { return _mm256_loadu_ps(p); }
SMX_INLINE void vf_st(float *p, vf_t v) { _mm256_storeu_ps(p, v); }
SMX_INLINE void vf_st_nt(float *p, vf_t v) { _mm256_stream_ps(p, v); }
/* the lanes in k from p, the others +0 */
SMX_INLINE vf_t vf_ldz_k(const float *p, kf_t k) { return _mm256_maskload_ps(p, k); }
/* the lanes in k from p, the others `fill` */
SMX_INLINE vf_t vf_ld_k(const float *p, kf_t k, vf_t fill) {
  return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, k), _mm256_castsi256_ps(k));
}
SMX_INLINE void vf_st_k(float *p, kf_t k, vf_t v) { _mm256_maskstore_ps(p, k, v); }
/* v in the lanes of k, +0 elsewhere */
SMX_INLINE vf_t vf_keep_k(vf_t v, kf_t k) { return _mm256_and_ps(v, _mm256_castsi256_ps(k)); }
SMX_INLINE vf_t vf_add(vf_t a, vf_t b) { return _mm256_add_ps(a, b); }
SMX_INLINE vf_t vf_sub(vf_t a, vf_t b) { return _mm256_sub_ps(a, b); }
SMX_INLINE vf_t vf_mul(vf_t a, vf_t b) { return _mm256_mul_ps(a, b); }
SMX_INLINE vf_t vf_fmadd(vf_t a, vf_t b, vf_t c) { return _mm256_fmadd_ps(a, b, c); }   /* a b + c */
SMX_INLINE vf_t vf_fmsub(vf_t a, vf_t b, vf_t c) { return _mm256_fmsub_ps(a, b, c); }   /* a b - c */
SMX_INLINE vf_t vf_max(vf_t a, vf_t b) { return _mm256_max_ps(a, b); }
SMX_INLINE vf_t vf_min(vf_t a, vf_t b) { return _mm256_min_ps(a, b); }
SMX_INLINE vf_t vf_div(vf_t a, vf_t b) { return _mm256_div_ps(a, b); }
SMX_INLINE vf_t vf_abs(vf_t a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
SMX_INLINE vf_t vf_round(vf_t a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE mf_t vf_eq(vf_t a, vf_t b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
SMX_INLINE mf_t vf_neq(vf_t a, vf_t b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }   /* true for NaN */
SMX_INLINE mf_t vf_gt(vf_t a, vf_t b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
SMX_INLINE mf_t vf_unord(vf_t a, vf_t b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }   /* a or b NaN */
SMX_INLINE mf_t mf_none(void) { return _mm256_setzero_ps(); }
SMX_INLINE mf_t mf_and(mf_t a, mf_t b) { return _mm256_and_ps(a, b); }
SMX_INLINE mf_t mf_or(mf_t a, mf_t b) { return _mm256_or_ps(a, b); }
SMX_INLINE vf_t vf_sel(mf_t m, vf_t t, vf_t f) { return _mm256_blendv_ps(f, t, m); }
SMX_INLINE int mf_any(mf_t a) { return !_mm256_testz_ps(a, a); }
/* bit l set for lane l */
SMX_INLINE unsigned mf_bits(mf_t a) { return (unsigned)_mm256_movemask_ps(a); }
/* The lanes of v set in m, in lane order, to dst[0..count) (dst has room
 * for VF_W floats: a layer may store a whole vector); returns the count. */
SMX_INLINE size_t vf_compress_st(float *dst, mf_t m, vf_t v) {
  float t[VF_W];
  vf_st(t, v);
  size_t c = 0;
  for (unsigned bits = mf_bits(m); bits; bits &= bits - 1) dst[c++] = t[__builtin_ctz(bits)];
  return c;
}
/* Writes base + l for every lane l set in m, in increasing order, to dst;
 * returns their number. */
SMX_INLINE size_t mf_store_lane_ids(uint32_t *dst, mf_t m, uint32_t base) {
  unsigned bits = mf_bits(m);
  size_t c = 0;
  for (; bits; bits &= bits - 1) dst[c++] = base + (uint32_t)__builtin_ctz(bits);
  return c;
}

/* 2^d for integer-valued d, built in the exponent field: d <= -127 gives
 * +0 (biased exponent 0), d in (-127, 127] the exact power; no larger d. */
SMX_INLINE vf_t vf_pow2i(vf_t d) {
  d = _mm256_max_ps(_mm256_set1_ps(-127.0f), d);
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(d), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(b, 23));
}
/* p 2^n for integer-valued n in [-127, 127] (-127 gives +0): callers clamp
 * the argument beforehand, which costs nothing extra in an exponential */
SMX_INLINE vf_t vf_scale2(vf_t p, vf_t n) {
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(b, 23)));
}
/* p 2^n for integer-valued n <= 127; n <= -127 gives +0 (no subnormals) */
SMX_INLINE vf_t vf_scale2_sat(vf_t p, vf_t n) { return _mm256_mul_ps(p, vf_pow2i(n)); }
SMX_INLINE float vf_reduce_max(vf_t v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
/* sum of the lanes, in a fixed tree order */
SMX_INLINE float vf_reduce_add(vf_t v) {
  __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  m = _mm_add_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
/* out[i] = the sum of the lanes of v_i, i < 4, by one tree of horizontal adds */
SMX_INLINE void vf_reduce_add4(vf_t a, vf_t b, vf_t c, vf_t d, float *out) {
  __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}
/* lane i = the sum of the lanes of v[i], i < VF_W, by one transpose-add tree (pairs of lanes, pairs of
 * pairs, then the 128-bit halves): the VF_W sums of VF_W vectors without a horizontal sum each */
SMX_INLINE vf_t vf_reduce_add_w(const vf_t *v) {
  vf_t a[4], b[2];
  for (int i = 0; i < 4; i++)
    a[i] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 2; i++) {
    __m256d x = _mm256_castps_pd(a[2 * i]), y = _mm256_castps_pd(a[2 * i + 1]);
    b[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
  }
  return _mm256_add_ps(_mm256_permute2f128_ps(b[0], b[1], 0x20), _mm256_permute2f128_ps(b[0], b[1], 0x31));
}
/* lanes [0, W/2) and [W/2, W) widened to double (exact) */
SMX_INLINE vd_t vf_lo_pd(vf_t v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
SMX_INLINE vd_t vf_hi_pd(vf_t v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

/* ---- half-precision storage: VF_W values, rounded as math/half_scalar.h */

/* f16 -> f32 (exact) and f32 -> f16 (nearest even; NaN stays NaN), F16C */
SMX_INLINE vf_t vf_ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
SMX_INLINE void vf_st_f16(uint16_t *p, vf_t v) {
  _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
/* bf16 -> f32: the upper half of the float's bits */
SMX_INLINE vf_t vf_ld_bf16(const uint16_t *p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
/* f32 -> bf16, nearest even by adding 0x7fff + the kept lowest bit; NaN is
 * truncated and made quiet (so that it cannot round into infinity) */
SMX_INLINE void vf_st_bf16(uint16_t *p, vf_t v) {
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  __m256i u = _mm256_castps_si256(v);
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
  r = _mm256_srli_epi32(r, 16);
  __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
  r = _mm256_blendv_epi8(r, q, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  /* 32 -> 16 bits: values fit, so unsigned saturation is exact; fix the lane order */
  __m256i w = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
  _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(w));
}

#endif
