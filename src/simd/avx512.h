/*
 * The vector layer on AVX-512 (F, DQ, VL, BW): 16 floats (vf_t) or
 * 8 doubles (vd_t), opmask tails. Include only from files built with the
 * AVX-512 flags. The names and conventions are those of avx2.h; what
 * differs is stated here:
 *   - vf_scale2 / vd_scale2 are vscalef: any integer n, one rounding,
 *     subnormal results included (SMX_VF_SCALE2_SATURATES is 1);
 *   - the horizontal reductions keep the compiler's tree order of
 *     _mm512_reduce_*, which the kernels' outputs were measured with.
 */
#ifndef SMX_SIMD_AVX512_H
#define SMX_SIMD_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define SMX_INLINE static inline __attribute__((always_inline))

#define SMX_SIMD_ISA "avx512"

/* ---- shared ------------------------------------------------------------ */

SMX_INLINE void smx_sfence(void) { _mm_sfence(); }
SMX_INLINE void smx_prefetch(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_T0); }
SMX_INLINE void smx_prefetchw(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_ET0); }
SMX_INLINE void smx_prefetch_l2(uintptr_t a) { _mm_prefetch((const char *)a, _MM_HINT_T1); }

/* ---- f64: 8 lanes ------------------------------------------------------ */

typedef __m512d vd_t;
typedef __mmask8 md_t;
typedef __mmask8 kd_t;
#define VD_W 8

SMX_INLINE kd_t kd_tail(size_t k) { return (kd_t)((1u << k) - 1u); }
SMX_INLINE vd_t vd_set1(double a) { return _mm512_set1_pd(a); }
SMX_INLINE vd_t vd_ld(const double *p) { return _mm512_loadu_pd(p); }
SMX_INLINE vd_t vd_ld_part(const double *p, size_t k, double fill) {
  return _mm512_mask_loadu_pd(_mm512_set1_pd(fill), kd_tail(k), p);
}
SMX_INLINE void vd_st(double *p, vd_t v) { _mm512_storeu_pd(p, v); }
SMX_INLINE void vd_st_nt(double *p, vd_t v) { _mm512_stream_pd(p, v); }
SMX_INLINE void vd_st_part(double *p, size_t k, vd_t v) { _mm512_mask_storeu_pd(p, kd_tail(k), v); }
SMX_INLINE vd_t vd_add(vd_t a, vd_t b) { return _mm512_add_pd(a, b); }
SMX_INLINE vd_t vd_sub(vd_t a, vd_t b) { return _mm512_sub_pd(a, b); }
SMX_INLINE vd_t vd_mul(vd_t a, vd_t b) { return _mm512_mul_pd(a, b); }
SMX_INLINE vd_t vd_fmadd(vd_t a, vd_t b, vd_t c) { return _mm512_fmadd_pd(a, b, c); }
SMX_INLINE vd_t vd_fmsub(vd_t a, vd_t b, vd_t c) { return _mm512_fmsub_pd(a, b, c); }
SMX_INLINE vd_t vd_fnmadd(vd_t a, vd_t b, vd_t c) { return _mm512_fnmadd_pd(a, b, c); }
SMX_INLINE vd_t vd_max(vd_t a, vd_t b) { return _mm512_max_pd(a, b); }
SMX_INLINE vd_t vd_min(vd_t a, vd_t b) { return _mm512_min_pd(a, b); }
SMX_INLINE vd_t vd_div(vd_t a, vd_t b) { return _mm512_div_pd(a, b); }
SMX_INLINE vd_t vd_abs(vd_t a) { return _mm512_abs_pd(a); }
SMX_INLINE vd_t vd_round(vd_t a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE vd_t vd_ceil(vd_t a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
SMX_INLINE md_t vd_gt(vd_t a, vd_t b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
SMX_INLINE md_t vd_eq(vd_t a, vd_t b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
SMX_INLINE md_t md_andnot(md_t a, md_t b) { return (md_t)(~a & b); }
SMX_INLINE md_t md_and(md_t a, md_t b) { return (md_t)(a & b); }
SMX_INLINE int md_any(md_t a) { return a != 0; }
SMX_INLINE vd_t vd_sel(md_t m, vd_t t, vd_t f) { return _mm512_mask_blend_pd(m, f, t); }
SMX_INLINE vd_t vd_scale2(vd_t p, vd_t n) { return _mm512_scalef_pd(p, n); }
SMX_INLINE double vd_reduce_max(vd_t a) { return _mm512_reduce_max_pd(a); }
SMX_INLINE double vd_reduce_add(vd_t a) { return _mm512_reduce_add_pd(a); }

/* ---- f32: 16 lanes ----------------------------------------------------- */

typedef __m512 vf_t;
typedef __mmask16 mf_t;
typedef __mmask16 kf_t;
#define VF_W 16
#define SMX_VF_SCALE2_SATURATES 1

SMX_INLINE kf_t kf_tail(size_t k) { return (kf_t)((1u << k) - 1u); }
SMX_INLINE kf_t kf_full(void) { return (kf_t)0xffff; }
SMX_INLINE vf_t vf_set1(float a) { return _mm512_set1_ps(a); }
SMX_INLINE vf_t vf_zero(void) { return _mm512_setzero_ps(); }
SMX_INLINE vf_t vf_ld(const float *p) { return _mm512_loadu_ps(p); }
SMX_INLINE void vf_st(float *p, vf_t v) { _mm512_storeu_ps(p, v); }
SMX_INLINE void vf_st_nt(float *p, vf_t v) { _mm512_stream_ps(p, v); }
SMX_INLINE vf_t vf_ldz_k(const float *p, kf_t k) { return _mm512_maskz_loadu_ps(k, p); }
SMX_INLINE vf_t vf_ld_k(const float *p, kf_t k, vf_t fill) { return _mm512_mask_loadu_ps(fill, k, p); }
SMX_INLINE void vf_st_k(float *p, kf_t k, vf_t v) { _mm512_mask_storeu_ps(p, k, v); }
SMX_INLINE vf_t vf_keep_k(vf_t v, kf_t k) { return _mm512_maskz_mov_ps(k, v); }
SMX_INLINE vf_t vf_add(vf_t a, vf_t b) { return _mm512_add_ps(a, b); }
SMX_INLINE vf_t vf_sub(vf_t a, vf_t b) { return _mm512_sub_ps(a, b); }
SMX_INLINE vf_t vf_mul(vf_t a, vf_t b) { return _mm512_mul_ps(a, b); }
SMX_INLINE vf_t vf_fmadd(vf_t a, vf_t b, vf_t c) { return _mm512_fmadd_ps(a, b, c); }
SMX_INLINE vf_t vf_fmsub(vf_t a, vf_t b, vf_t c) { return _mm512_fmsub_ps(a, b, c); }
SMX_INLINE vf_t vf_max(vf_t a, vf_t b) { return _mm512_max_ps(a, b); }
SMX_INLINE vf_t vf_min(vf_t a, vf_t b) { return _mm512_min_ps(a, b); }
SMX_INLINE vf_t vf_div(vf_t a, vf_t b) { return _mm512_div_ps(a, b); }
SMX_INLINE vf_t vf_abs(vf_t a) { return _mm512_abs_ps(a); }
SMX_INLINE vf_t vf_round(vf_t a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE mf_t vf_eq(vf_t a, vf_t b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
SMX_INLINE mf_t vf_neq(vf_t a, vf_t b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ); }
SMX_INLINE mf_t vf_gt(vf_t a, vf_t b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
SMX_INLINE mf_t vf_unord(vf_t a, vf_t b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
SMX_INLINE mf_t mf_none(void) { return 0; }
SMX_INLINE mf_t mf_and(mf_t a, mf_t b) { return (mf_t)(a & b); }
SMX_INLINE mf_t mf_or(mf_t a, mf_t b) { return (mf_t)(a | b); }
SMX_INLINE vf_t vf_sel(mf_t m, vf_t t, vf_t f) { return _mm512_mask_blend_ps(m, f, t); }
SMX_INLINE int mf_any(mf_t a) { return a != 0; }
SMX_INLINE unsigned mf_bits(mf_t a) { return (unsigned)a; }
/* The lanes of v set in m, in lane order, to dst[0..count) (dst has room
 * for VF_W floats: the compress is in a register and the whole vector is
 * stored, since a compress straight to memory is slow on some cores). */
SMX_INLINE size_t vf_compress_st(float *dst, mf_t m, vf_t v) {
  _mm512_storeu_ps(dst, _mm512_maskz_compress_ps(m, v));
  return (size_t)__builtin_popcount(m);
}
/* one compress store of the lane numbers plus base */
SMX_INLINE size_t mf_store_lane_ids(uint32_t *dst, mf_t m, uint32_t base) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  _mm512_mask_compressstoreu_epi32(dst, m, _mm512_add_epi32(iota, _mm512_set1_epi32((int)base)));
  return (size_t)__builtin_popcount(m);
}
SMX_INLINE vf_t vf_scale2(vf_t p, vf_t n) { return _mm512_scalef_ps(p, n); }
SMX_INLINE vf_t vf_scale2_sat(vf_t p, vf_t n) { return _mm512_scalef_ps(p, n); }
SMX_INLINE float vf_reduce_max(vf_t v) { return _mm512_reduce_max_ps(v); }
SMX_INLINE float vf_reduce_add(vf_t v) { return _mm512_reduce_add_ps(v); }
/* out[i] = the sum of the lanes of v_i, i < 4, by one tree (halves, then horizontal adds) */
SMX_INLINE void vf_reduce_add4(vf_t a, vf_t b, vf_t c, vf_t d, float *out) {
  __m256 a8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  __m256 b8 = _mm256_add_ps(_mm512_castps512_ps256(b), _mm512_extractf32x8_ps(b, 1));
  __m256 c8 = _mm256_add_ps(_mm512_castps512_ps256(c), _mm512_extractf32x8_ps(c, 1));
  __m256 d8 = _mm256_add_ps(_mm512_castps512_ps256(d), _mm512_extractf32x8_ps(d, 1));
  __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a8, b8), _mm256_hadd_ps(c8, d8));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}
/* lane i = the sum of the lanes of v[i], i < 16: one transpose-add tree (pairs of lanes, of pairs, of
 * 128-bit blocks, then of 256-bit halves), 15 adds and 30 shuffles for 16 sums */
SMX_INLINE vf_t vf_reduce_add_w(const vf_t *v) {
  vf_t a[8], b[4], c[2];
  for (int i = 0; i < 8; i++)   /* per 128-bit block: v0 (l0+l2), v1 (l0+l2), v0 (l1+l3), v1 (l1+l3) */
    a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; i++) {   /* per block: the block's sums of v0..v3 */
    __m512d x = _mm512_castps_pd(a[2 * i]), y = _mm512_castps_pd(a[2 * i + 1]);
    b[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  for (int i = 0; i < 2; i++)   /* blocks (0+1, 2+3) of b0, then of b1 */
    c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xdd));
  return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88), _mm512_shuffle_f32x4(c[0], c[1], 0xdd));
}
SMX_INLINE vd_t vf_lo_pd(vf_t v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
SMX_INLINE vd_t vf_hi_pd(vf_t v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* ---- half-precision storage: VF_W values, rounded as math/half_scalar.h */

SMX_INLINE vf_t vf_ld_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
SMX_INLINE void vf_st_f16(uint16_t *p, vf_t v) {
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
SMX_INLINE vf_t vf_ld_bf16(const uint16_t *p) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
SMX_INLINE void vf_st_bf16(uint16_t *p, vf_t v) {
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  __m512i u = _mm512_castps_si512(v);
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
  r = _mm512_srli_epi32(r, 16);
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), quiet);
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}

#endif
