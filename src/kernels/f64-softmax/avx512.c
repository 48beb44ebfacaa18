/*
 * AVX-512F f64 softmax kernels (this file alone is built with -mavx512f/dq/vl/bw).
 * The vector layer below (8 doubles, opmask tails, vscalefpd for 2^n with a
 * single rounding into the subnormal range) is all that differs from
 * avx2.c; the kernels themselves are written once in kernels_impl.h.
 */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/f64-softmax/ukernels.h"

#define SMX_INLINE static inline __attribute__((always_inline))

typedef __m512d V;
typedef __mmask8 M;
#define W 8

SMX_INLINE M tail_mask(size_t k) { return (M)((1u << k) - 1u); }
SMX_INLINE V v_set1(double a) { return _mm512_set1_pd(a); }
SMX_INLINE V v_ld(const double *p) { return _mm512_loadu_pd(p); }
/* the first k < W elements, the others `fill` (nothing past p + k is read) */
SMX_INLINE V v_ld_part(const double *p, size_t k, double fill) {
  return _mm512_mask_loadu_pd(_mm512_set1_pd(fill), tail_mask(k), p);
}
SMX_INLINE void v_st(double *p, V v) { _mm512_storeu_pd(p, v); }
SMX_INLINE void v_st_nt(double *p, V v) { _mm512_stream_pd(p, v); }
SMX_INLINE void v_st_part(double *p, size_t k, V v) { _mm512_mask_storeu_pd(p, tail_mask(k), v); }
SMX_INLINE V v_add(V a, V b) { return _mm512_add_pd(a, b); }
SMX_INLINE V v_sub(V a, V b) { return _mm512_sub_pd(a, b); }
SMX_INLINE V v_mul(V a, V b) { return _mm512_mul_pd(a, b); }
SMX_INLINE V v_fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
SMX_INLINE V v_fmsub(V a, V b, V c) { return _mm512_fmsub_pd(a, b, c); }
/* max / min return b when either is NaN */
SMX_INLINE V v_max(V a, V b) { return _mm512_max_pd(a, b); }
SMX_INLINE V v_min(V a, V b) { return _mm512_min_pd(a, b); }
SMX_INLINE V v_fnmadd(V a, V b, V c) { return _mm512_fnmadd_pd(a, b, c); }   /* c - a b */
SMX_INLINE V v_round(V a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
SMX_INLINE V v_ceil(V a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
SMX_INLINE M v_gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
SMX_INLINE M v_eq(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
SMX_INLINE M m_andnot(M a, M b) { return (M)(~a & b); }   /* !a && b */
SMX_INLINE M m_and(M a, M b) { return (M)(a & b); }
SMX_INLINE int m_any(M a) { return a != 0; }
SMX_INLINE V v_sel(M m, V t, V f) { return _mm512_mask_blend_pd(m, f, t); }
/* p 2^n, n an integer (any size: vscalefpd saturates), rounded once */
SMX_INLINE V v_scale2(V p, V n) { return _mm512_scalef_pd(p, n); }
SMX_INLINE double v_reduce_max(V a) { return _mm512_reduce_max_pd(a); }
SMX_INLINE void v_sfence(void) { _mm_sfence(); }

#define SMX_F64_TABLE smx_f64_ukernels_avx512
#define SMX_F64_ISA_NAME "avx512"
#include "kernels/f64-softmax/kernels_impl.h"
