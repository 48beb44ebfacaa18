/*
 * AVX2 + FMA gradient kernels (this file alone is built with -mavx2 -mfma).
 * Same arithmetic as avx512.c on 8 lanes; 2^n is built in the exponent field,
 * (n + 127) << 23 with n clamped to [-127, 127] (biased exponent 0 is +0).
 * Tails use vmaskmovps: nothing outside [0, n) is touched.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/f32-xent/ukernels.h"
#include "math/exp2_poly.h"

#define SMX_INLINE static inline __attribute__((always_inline))

static const int32_t mask_table[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };

/* lanes [0, rem) set, rem in 0..8 */
SMX_INLINE __m256i tail_mask(size_t rem) { return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - rem)); }

/* Adds the 8 floats of v to two double accumulators (exact widening): sums
 * that can cancel (<dy, y>, sum dy, sum x) lose nothing to float partial sums. */
SMX_INLINE void acc_double(__m256 v, __m256d *d0, __m256d *d1) {
  *d0 = _mm256_add_pd(*d0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  *d1 = _mm256_add_pd(*d1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

SMX_INLINE double hsum_pd(__m256d d) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* 2^(a (hi + lo)), a clamped to [amin, amax] (NaN kept), with amin c >= -127 and amax c <= 127. */
SMX_INLINE __m256 exp2c(__m256 a, __m256 hi, __m256 lo, __m256 amin, __m256 amax) {
  a = _mm256_min_ps(amax, _mm256_max_ps(amin, a));   /* second operands returned for NaN: NaN is kept */
  __m256 n = _mm256_round_ps(_mm256_mul_ps(a, hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(a, lo, _mm256_fmsub_ps(a, hi, n));
  __m256 p = _mm256_set1_ps(SMX_EXP2_C6);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(b, 23)));
}

/* The same lanes and order as the sum inside expaffine_impl, so a loss is the
 * same bits with or without a gradient. */
static double rsum_avx2(size_t n, const float *x) {
  __m256d d0 = _mm256_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc_double(_mm256_loadu_ps(x + i), &d0, &d1);
    acc_double(_mm256_loadu_ps(x + i + 8), &d0, &d1);
  }
  for (; i < n; i += 8) acc_double(_mm256_maskload_ps(x + i, tail_mask(n - i >= 8 ? 8 : n - i)), &d0, &d1);
  return hsum_pd(_mm256_add_pd(d0, d1));
}

/* Products of two floats are exact in double, and so is nothing lost before the sum. */
static double rdot_avx2(size_t n, const float *a, const float *b) {
  __m256d d0 = _mm256_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i < n; i += 8) {
    __m256i k = tail_mask(n - i >= 8 ? 8 : n - i);
    __m256 va = _mm256_maskload_ps(a + i, k), vb = _mm256_maskload_ps(b + i, k);
    d0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(va)), _mm256_cvtps_pd(_mm256_castps256_ps128(vb)), d0);
    d1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(va, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(vb, 1)), d1);
  }
  return hsum_pd(_mm256_add_pd(d0, d1));
}

static void vsoftmax_bwd_avx2(size_t n, const float *y, const float *dy, float *dx, float dot, float s) {
  const __m256 vd = _mm256_set1_ps(dot), vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 t = _mm256_mul_ps(_mm256_loadu_ps(y + i), _mm256_sub_ps(_mm256_loadu_ps(dy + i), vd));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(t, vs));
  }
  if (i < n) {
    __m256i k = tail_mask(n - i);
    __m256 t = _mm256_mul_ps(_mm256_maskload_ps(y + i, k), _mm256_sub_ps(_mm256_maskload_ps(dy + i, k), vd));
    _mm256_maskstore_ps(dx + i, k, _mm256_mul_ps(t, vs));
  }
}

static void vlogsoftmax_bwd_avx2(size_t n, const float *y, const float *dy, float *dx, float sum, float s) {
  const float hi = (float)SMX_LOG2E_D;
  const __m256 vhi = _mm256_set1_ps(hi), vlo = _mm256_set1_ps((float)(SMX_LOG2E_D - (double)hi));
  const __m256 amin = _mm256_set1_ps(-88.0f), amax = _mm256_set1_ps(88.0f);
  const __m256 nsum = _mm256_set1_ps(-sum), vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 e = exp2c(_mm256_loadu_ps(y + i), vhi, vlo, amin, amax);
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_fmadd_ps(e, nsum, _mm256_loadu_ps(dy + i)), vs));
  }
  if (i < n) {
    __m256i k = tail_mask(n - i);
    __m256 e = exp2c(_mm256_maskload_ps(y + i, k), vhi, vlo, amin, amax);
    _mm256_maskstore_ps(dx + i, k, _mm256_mul_ps(_mm256_fmadd_ps(e, nsum, _mm256_maskload_ps(dy + i, k)), vs));
  }
}

SMX_INLINE double expaffine_impl(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                 int want_sum) {
  const __m256 vm = _mm256_set1_ps(m), hi = _mm256_set1_ps(c->hi), lo = _mm256_set1_ps(c->lo);
  const __m256 amin = _mm256_set1_ps(c->amin), amax = _mm256_setzero_ps();
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  __m256d d0 = _mm256_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
    if (want_sum) { acc_double(x0, &d0, &d1); acc_double(x1, &d0, &d1); }
    __m256 e0 = exp2c(_mm256_sub_ps(x0, vm), hi, lo, amin, amax);
    __m256 e1 = exp2c(_mm256_sub_ps(x1, vm), hi, lo, amin, amax);
    _mm256_storeu_ps(g + i, _mm256_fmadd_ps(e0, va, vb));
    _mm256_storeu_ps(g + i + 8, _mm256_fmadd_ps(e1, va, vb));
  }
  for (; i < n; i += 8) {
    __m256i k = tail_mask(n - i >= 8 ? 8 : n - i);
    __m256 x0 = _mm256_maskload_ps(x + i, k);
    if (want_sum) acc_double(x0, &d0, &d1);
    _mm256_maskstore_ps(g + i, k, _mm256_fmadd_ps(exp2c(_mm256_sub_ps(x0, vm), hi, lo, amin, amax), va, vb));
  }
  return want_sum ? hsum_pd(_mm256_add_pd(d0, d1)) : 0.0;
}

static double vexpaffine_avx2(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                              int want_sum) {
  return want_sum ? expaffine_impl(n, x, g, m, c, a, b, 1) : expaffine_impl(n, x, g, m, c, a, b, 0);
}

const smx_xent_ukernels smx_xent_ukernels_avx2 = {
  "avx2", rsum_avx2, rdot_avx2, vsoftmax_bwd_avx2, vlogsoftmax_bwd_avx2, vexpaffine_avx2,
};
