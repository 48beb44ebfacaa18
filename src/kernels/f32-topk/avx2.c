/*
 * AVX2 top-k filter (this file alone is built with -mavx2): 32 floats per
 * iteration, one ordered compare each; hits (rare once the top-k has filled)
 * are expanded from the movemask bits. Tails go through the scalar loop.
 */
#include <immintrin.h>

#include "kernels/f32-topk/ukernels.h"

static size_t emit(uint32_t *pos, size_t c, unsigned bits, size_t base) {
  while (bits) {
    pos[c++] = (uint32_t)(base + (size_t)__builtin_ctz(bits));
    bits &= bits - 1;
  }
  return c;
}

static size_t filter_gt_avx2(size_t n, const float *x, float thr, uint32_t *pos, int *has_nan) {
  const __m256 t = _mm256_set1_ps(thr);
  __m256 nan = _mm256_setzero_ps();
  size_t c = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    __m256 d = _mm256_loadu_ps(x + i + 16), e = _mm256_loadu_ps(x + i + 24);
    __m256 ga = _mm256_cmp_ps(a, t, _CMP_GT_OQ), gb = _mm256_cmp_ps(b, t, _CMP_GT_OQ);
    __m256 gd = _mm256_cmp_ps(d, t, _CMP_GT_OQ), ge = _mm256_cmp_ps(e, t, _CMP_GT_OQ);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q), _mm256_cmp_ps(d, e, _CMP_UNORD_Q)));
    __m256 any = _mm256_or_ps(_mm256_or_ps(ga, gb), _mm256_or_ps(gd, ge));
    if (_mm256_testz_ps(any, any)) continue;
    unsigned bits = (unsigned)_mm256_movemask_ps(ga) | (unsigned)_mm256_movemask_ps(gb) << 8 |
                    (unsigned)_mm256_movemask_ps(gd) << 16 | (unsigned)_mm256_movemask_ps(ge) << 24;
    c = emit(pos, c, bits, i);
  }
  int tail_nan = 0;
  for (; i < n; i++) {
    float v = x[i];
    tail_nan |= v != v;
    if (v > thr) pos[c++] = (uint32_t)i;
  }
  if (tail_nan || _mm256_movemask_ps(nan)) *has_nan = 1;
  return c;
}

const smx_topk_ukernels smx_topk_ukernels_avx2 = { "avx2", filter_gt_avx2 };
