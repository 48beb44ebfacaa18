/* AVX2 + F16C conversions (built with -mavx2 -mf16c); tails go through src/math/half_scalar.h. */
#include <immintrin.h>

#include "kernels/convert/ukernels.h"
#include "math/half_scalar.h"

static void f16_to_f32_avx2(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
  for (; i < n; i++) y[i] = smx_f16_to_f32(x[i]);
}

static void f32_to_f16_avx2(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) y[i] = smx_f32_to_f16(x[i]);
}

static void bf16_to_f32_avx2(size_t n, const uint16_t *x, float *y) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
    _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; i++) y[i] = smx_bf16_to_f32(x[i]);
}

static void f32_to_bf16_avx2(size_t n, const float *x, uint16_t *y) {
  size_t i = 0;
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256i u = _mm256_castps_si256(v);
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
    r = _mm256_srli_epi32(r, 16);
    __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
    r = _mm256_blendv_epi8(r, q, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    /* 32 -> 16 bits: values fit, so unsigned saturation is exact; fix the lane order */
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128((__m128i *)(y + i), _mm256_castsi256_si128(p));
  }
  for (; i < n; i++) y[i] = smx_f32_to_bf16(x[i]);
}

const smx_cvt_ukernels smx_cvt_ukernels_avx2 = {
  f16_to_f32_avx2, f32_to_f16_avx2, bf16_to_f32_avx2, f32_to_bf16_avx2,
};
