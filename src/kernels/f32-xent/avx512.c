/*
 * AVX-512F gradient kernels (this file alone is built with -mavx512f/dq/vl/bw).
 * exp as in the softmax kernels: 2^(a c) = 2^r * 2^n with the degree-6
 * polynomial of math/exp2_poly.h and vscalefps for 2^n (hardware under- and
 * overflow). Sums are formed in double lanes (exact widening). Tails use
 * masked loads and stores: nothing outside [0, n) is touched.
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/f32-xent/ukernels.h"
#include "math/exp2_poly.h"

#define SMX_INLINE static inline __attribute__((always_inline))

SMX_INLINE __mmask16 tail_mask(size_t rem) { return (__mmask16)((1u << rem) - 1u); }

/* Adds the 16 floats of v to two double accumulators (exact widening): sums
 * that can cancel (<dy, y>, sum dy, sum x) lose nothing to float partial sums. */
SMX_INLINE void acc_double(__m512 v, __m512d *d0, __m512d *d1) {
  *d0 = _mm512_add_pd(*d0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  *d1 = _mm512_add_pd(*d1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

/* 2^(a (hi + lo)), a clamped below at amin (NaN kept); overflow gives +inf. */
SMX_INLINE __m512 exp2c(__m512 a, __m512 hi, __m512 lo, __m512 amin) {
  a = _mm512_max_ps(amin, a);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(a, hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(a, lo, _mm512_fmsub_ps(a, hi, n));
  __m512 p = _mm512_set1_ps(SMX_EXP2_C6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

/* The same lanes and order as the sum inside expaffine_impl, so a loss is the
 * same bits with or without a gradient. */
static double rsum_avx512(size_t n, const float *x) {
  __m512d d0 = _mm512_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc_double(_mm512_loadu_ps(x + i), &d0, &d1);
    acc_double(_mm512_loadu_ps(x + i + 16), &d0, &d1);
  }
  for (; i < n; i += 16) acc_double(_mm512_maskz_loadu_ps(n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i), x + i), &d0, &d1);
  return _mm512_reduce_add_pd(_mm512_add_pd(d0, d1));
}

/* Products of two floats are exact in double, and so is nothing lost before the sum. */
static double rdot_avx512(size_t n, const float *a, const float *b) {
  __m512d d0 = _mm512_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 va = _mm512_maskz_loadu_ps(k, a + i), vb = _mm512_maskz_loadu_ps(k, b + i);
    d0 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(va)), _mm512_cvtps_pd(_mm512_castps512_ps256(vb)), d0);
    d1 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(va), 1))),
                         _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vb), 1))), d1);
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(d0, d1));
}

static void vsoftmax_bwd_avx512(size_t n, const float *y, const float *dy, float *dx, float dot, float s) {
  const __m512 vd = _mm512_set1_ps(dot), vs = _mm512_set1_ps(s);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 t = _mm512_mul_ps(_mm512_loadu_ps(y + i), _mm512_sub_ps(_mm512_loadu_ps(dy + i), vd));
    _mm512_storeu_ps(dx + i, _mm512_mul_ps(t, vs));
  }
  if (i < n) {
    __mmask16 k = tail_mask(n - i);
    __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), _mm512_sub_ps(_mm512_maskz_loadu_ps(k, dy + i), vd));
    _mm512_mask_storeu_ps(dx + i, k, _mm512_mul_ps(t, vs));
  }
}

static void vlogsoftmax_bwd_avx512(size_t n, const float *y, const float *dy, float *dx, float sum, float s) {
  const float hi = (float)SMX_LOG2E_D;
  const __m512 vhi = _mm512_set1_ps(hi), vlo = _mm512_set1_ps((float)(SMX_LOG2E_D - (double)hi));
  const __m512 amin = _mm512_set1_ps(-150.0f);   /* 2^-216: +0 after scalef */
  const __m512 nsum = _mm512_set1_ps(-sum), vs = _mm512_set1_ps(s);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 e = exp2c(_mm512_loadu_ps(y + i), vhi, vlo, amin);
    _mm512_storeu_ps(dx + i, _mm512_mul_ps(_mm512_fmadd_ps(e, nsum, _mm512_loadu_ps(dy + i)), vs));
  }
  if (i < n) {
    __mmask16 k = tail_mask(n - i);
    __m512 e = exp2c(_mm512_maskz_loadu_ps(k, y + i), vhi, vlo, amin);
    _mm512_mask_storeu_ps(dx + i, k, _mm512_mul_ps(_mm512_fmadd_ps(e, nsum, _mm512_maskz_loadu_ps(k, dy + i)), vs));
  }
}

SMX_INLINE double expaffine_impl(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                 int want_sum) {
  const __m512 vm = _mm512_set1_ps(m), hi = _mm512_set1_ps(c->hi), lo = _mm512_set1_ps(c->lo);
  const __m512 amin = _mm512_set1_ps(c->amin_s), va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
  __m512d d0 = _mm512_setzero_pd(), d1 = d0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 x0 = _mm512_loadu_ps(x + i), x1 = _mm512_loadu_ps(x + i + 16);
    if (want_sum) { acc_double(x0, &d0, &d1); acc_double(x1, &d0, &d1); }
    __m512 e0 = exp2c(_mm512_sub_ps(x0, vm), hi, lo, amin), e1 = exp2c(_mm512_sub_ps(x1, vm), hi, lo, amin);
    _mm512_storeu_ps(g + i, _mm512_fmadd_ps(e0, va, vb));
    _mm512_storeu_ps(g + i + 16, _mm512_fmadd_ps(e1, va, vb));
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 x0 = _mm512_maskz_loadu_ps(k, x + i);
    if (want_sum) acc_double(x0, &d0, &d1);
    _mm512_mask_storeu_ps(g + i, k, _mm512_fmadd_ps(exp2c(_mm512_sub_ps(x0, vm), hi, lo, amin), va, vb));
  }
  return want_sum ? _mm512_reduce_add_pd(_mm512_add_pd(d0, d1)) : 0.0;
}

static double vexpaffine_avx512(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                int want_sum) {
  return want_sum ? expaffine_impl(n, x, g, m, c, a, b, 1) : expaffine_impl(n, x, g, m, c, a, b, 0);
}

const smx_xent_ukernels smx_xent_ukernels_avx512 = {
  "avx512", rsum_avx512, rdot_avx512, vsoftmax_bwd_avx512, vlogsoftmax_bwd_avx512, vexpaffine_avx512,
};
