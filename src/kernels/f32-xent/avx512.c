/*
 * AVX-512F gradient kernels (this file alone is built with -mavx512f/dq/vl/bw).
 * exp as in the softmax kernels: 2^(a c) = 2^r * 2^n with the degree-6
 * polynomial of math/exp2_poly.h and vscalefps for 2^n (hardware under- and
 * overflow). Float lane sums go to double every SMX_FLUSH elements. Tails use
 * masked loads and stores: nothing outside [0, n) is touched.
 */
#include <immintrin.h>
#include <math.h>

#include "kernels/f32-xent/ukernels.h"
#include "math/exp2_poly.h"

#define SMX_INLINE static inline __attribute__((always_inline))
#define SMX_FLUSH 256

SMX_INLINE __mmask16 tail_mask(size_t rem) { return (__mmask16)((1u << rem) - 1u); }

SMX_INLINE void flush_to_double(__m512 s, __m512d *d) {
  *d = _mm512_add_pd(*d, _mm512_cvtps_pd(_mm512_castps512_ps256(s)));
  *d = _mm512_add_pd(*d, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))));
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
  __m512d d = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH, j = 0;
    const float *xb = x + i;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (; j + 32 <= nb; j += 32) {
      s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xb + j));
      s1 = _mm512_add_ps(s1, _mm512_loadu_ps(xb + j + 16));
    }
    for (; j < nb; j += 16) {
      __mmask16 k = nb - j >= 16 ? (__mmask16)0xffff : tail_mask(nb - j);
      s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(k, xb + j));
    }
    flush_to_double(_mm512_add_ps(s0, s1), &d);
  }
  return _mm512_reduce_add_pd(d);
}

static double rdot_avx512(size_t n, const float *a, const float *b) {
  __m512d d = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH, j = 0;
    const float *ab = a + i, *bb = b + i;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; j + 64 <= nb; j += 64) {
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(ab + j), _mm512_loadu_ps(bb + j), a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(ab + j + 16), _mm512_loadu_ps(bb + j + 16), a1);
      a2 = _mm512_fmadd_ps(_mm512_loadu_ps(ab + j + 32), _mm512_loadu_ps(bb + j + 32), a2);
      a3 = _mm512_fmadd_ps(_mm512_loadu_ps(ab + j + 48), _mm512_loadu_ps(bb + j + 48), a3);
    }
    for (; j + 16 <= nb; j += 16) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(ab + j), _mm512_loadu_ps(bb + j), a0);
    if (j < nb) {
      __mmask16 k = tail_mask(nb - j);
      a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, ab + j), _mm512_maskz_loadu_ps(k, bb + j), a1);
    }
    flush_to_double(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), &d);
  }
  return _mm512_reduce_add_pd(d);
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
  __m512d d = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH, j = 0;
    const float *xb = x + i;
    float *gb = g + i;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (; j + 32 <= nb; j += 32) {
      __m512 x0 = _mm512_loadu_ps(xb + j), x1 = _mm512_loadu_ps(xb + j + 16);
      if (want_sum) { s0 = _mm512_add_ps(s0, x0); s1 = _mm512_add_ps(s1, x1); }
      __m512 e0 = exp2c(_mm512_sub_ps(x0, vm), hi, lo, amin), e1 = exp2c(_mm512_sub_ps(x1, vm), hi, lo, amin);
      _mm512_storeu_ps(gb + j, _mm512_fmadd_ps(e0, va, vb));
      _mm512_storeu_ps(gb + j + 16, _mm512_fmadd_ps(e1, va, vb));
    }
    for (; j < nb; j += 16) {
      __mmask16 k = nb - j >= 16 ? (__mmask16)0xffff : tail_mask(nb - j);
      __m512 x0 = _mm512_maskz_loadu_ps(k, xb + j);
      if (want_sum) s0 = _mm512_add_ps(s0, x0);
      _mm512_mask_storeu_ps(gb + j, k, _mm512_fmadd_ps(exp2c(_mm512_sub_ps(x0, vm), hi, lo, amin), va, vb));
    }
    if (want_sum) flush_to_double(_mm512_add_ps(s0, s1), &d);
  }
  return want_sum ? _mm512_reduce_add_pd(d) : 0.0;
}

static double vexpaffine_avx512(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                int want_sum) {
  return want_sum ? expaffine_impl(n, x, g, m, c, a, b, 1) : expaffine_impl(n, x, g, m, c, a, b, 0);
}

const smx_xent_ukernels smx_xent_ukernels_avx512 = {
  "avx512", rsum_avx512, rdot_avx512, vsoftmax_bwd_avx512, vlogsoftmax_bwd_avx512, vexpaffine_avx512,
};
