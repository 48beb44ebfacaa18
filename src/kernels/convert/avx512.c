/* AVX-512 conversions (built with -mavx512f/bw/vl); tails go through src/math/half_scalar.h. */
#include <immintrin.h>

#include "kernels/convert/ukernels.h"
#include "math/half_scalar.h"

static void f16_to_f32_avx512(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
  for (; i < n; i++) y[i] = smx_f16_to_f32(x[i]);
}

static void f32_to_f16_avx512(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) y[i] = smx_f32_to_f16(x[i]);
}

static void bf16_to_f32_avx512(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
    _mm512_storeu_ps(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
  }
  for (; i < n; i++) y[i] = smx_bf16_to_f32(x[i]);
}

static void f32_to_bf16_avx512(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    __m512i u = _mm512_castps_si512(v);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
    r = _mm512_srli_epi32(r, 16);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), quiet);
    _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(r));
  }
  for (; i < n; i++) y[i] = smx_f32_to_bf16(x[i]);
}

const smx_cvt_ukernels smx_cvt_ukernels_avx512 = {
  f16_to_f32_avx512, f32_to_f16_avx512, bf16_to_f32_avx512, f32_to_bf16_avx512,
};
