/*
 * AVX2 + FMA f64 softmax kernels (this file alone is built with -mavx2 -mfma).
 * The vector layer below (4 doubles, maskload/maskstore tails, 2^n built in
 * the exponent field in two steps so that subnormal results are rounded
 * once) is all that differs from avx512.c; the kernels themselves are
 * written once in kernels_impl.h.
 */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/f64-softmax/ukernels.h"

#define SMX_INLINE static inline __attribute__((always_inline))

typedef __m256d V;
typedef __m256d M;
#define W 4

SMX_INLINE __m256i tail_mask(size_t k) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)k), _mm256_setr_epi64x(0, 1, 2, 3));
}
SMX_INLINE V v_set1(double a) { return _mm256_set1_pd(a); }
SMX_INLINE V v_ld(const double *p) { return _mm256_loadu_pd(p); }
/* the first k < W elements, the others `fill` (masked lanes are never read) */
SMX_INLINE V v_ld_part(const double *p, size_t k, double fill) {
  __m256i m = tail_mask(k);
  return _mm256_blendv_pd(_mm256_set1_pd(fill), _mm256_maskload_pd(p, m), _mm256_castsi256_pd(m));
}
SMX_INLINE void v_st(double *p, V v) { _mm256_storeu_pd(p, v); }
SMX_INLINE void v_st_nt(double *p, V v) { _mm256_stream_pd(p, v); }
SMX_INLINE void v_st_part(double *p, size_t k, V v) { _mm256_maskstore_pd(p, tail_mask(k), v); }
SMX_INLINE V v_add(V a, V b) { return _mm256_add_pd(a, b); }
SMX_INLINE V v_sub(V a, V b) { return _mm256_sub_pd(a, b); }
SMX_INLINE V v_mul(V a, V b) { return _mm256_mul_pd(a, b); }
SMX_INLINE V v_fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
SMX_INLINE V v_fmsub(V a, V b, V c) { return _mm256_fmsub_pd(a, b, c); }
/* max / min return b when either is NaN */
SMX_INLINE V v_max(V a, V b) { return _mm256_max_pd(a, b); }
SMX_INLINE V v_min(V a, V b) { return _mm256_min_pd(a, b); }
SMX_INLINE V v_fnmadd(V a, V b, V c) { return _mm256_fnmadd_pd(a, b, c); }   /* c - a b */
SMX_INLINE V v_round(V a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE V v_ceil(V a) { return _mm256_round_pd(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
SMX_INLINE M v_gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
SMX_INLINE M v_eq(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
SMX_INLINE M m_andnot(M a, M b) { return _mm256_andnot_pd(a, b); }   /* !a && b */
SMX_INLINE M m_and(M a, M b) { return _mm256_and_pd(a, b); }
SMX_INLINE int m_any(M a) { return _mm256_movemask_pd(a) != 0; }
SMX_INLINE V v_sel(M m, V t, V f) { return _mm256_blendv_pd(f, t, m); }

/* 2^k for integers k in [-1022, 1023]: k + 1023 sits in the low bits of
 * k + (2^52 + 2^51 + 1023), and the shift drops the rest. */
SMX_INLINE V pow2i(V k) {
  __m256d b = _mm256_add_pd(k, _mm256_set1_pd(0x1.8p52 + 1023.0));
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(b), 52));
}
/* p 2^n for an integer n (clamped to [-1100, 1000]), rounded once: the
 * first factor (down to 2^-1000) keeps p normal, so it is exact; the second
 * (2^-100 .. 1) rounds. */
SMX_INLINE V v_scale2(V p, V n) {
  n = _mm256_min_pd(_mm256_max_pd(n, _mm256_set1_pd(-1100.0)), _mm256_set1_pd(1000.0));
  V n1 = _mm256_max_pd(n, _mm256_set1_pd(-1000.0));
  V n2 = _mm256_sub_pd(n, n1);
  return _mm256_mul_pd(_mm256_mul_pd(p, pow2i(n1)), pow2i(n2));
}
SMX_INLINE double v_reduce_max(V a) {
  __m128d m = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  m = _mm_max_pd(m, _mm_unpackhi_pd(m, m));
  return _mm_cvtsd_f64(m);
}
SMX_INLINE void v_sfence(void) { _mm_sfence(); }

#define SMX_F64_TABLE smx_f64_ukernels_avx2
#define SMX_F64_ISA_NAME "avx2"
#include "kernels/f64-softmax/kernels_impl.h"
