/*
 * AVX-512 top-k filter (this file alone is built with -mavx512f/...): 64
 * floats per iteration, one ordered compare each; a block with no hit costs
 * four loads and compares. Hits are written with a compress store of their
 * positions. NaN is caught with an unordered compare kept in a mask.
 */
#include <immintrin.h>

#include "kernels/f32-topk/ukernels.h"

static size_t filter_gt_avx512(size_t n, const float *x, float thr, uint32_t *pos, int *has_nan) {
  const __m512 t = _mm512_set1_ps(thr);
  const __m512i step = _mm512_set1_epi32(16);
  __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __mmask16 nan = 0;
  size_t c = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    __m512 d = _mm512_loadu_ps(x + i + 32), e = _mm512_loadu_ps(x + i + 48);
    __mmask16 ma = _mm512_cmp_ps_mask(a, t, _CMP_GT_OQ), mb = _mm512_cmp_ps_mask(b, t, _CMP_GT_OQ);
    __mmask16 md = _mm512_cmp_ps_mask(d, t, _CMP_GT_OQ), me = _mm512_cmp_ps_mask(e, t, _CMP_GT_OQ);
    nan |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(d, e, _CMP_UNORD_Q);
    if ((ma | mb | md | me) == 0) {
      idx = _mm512_add_epi32(idx, _mm512_set1_epi32(64));
      continue;
    }
    _mm512_mask_compressstoreu_epi32(pos + c, ma, idx);
    c += (size_t)__builtin_popcount(ma);
    idx = _mm512_add_epi32(idx, step);
    _mm512_mask_compressstoreu_epi32(pos + c, mb, idx);
    c += (size_t)__builtin_popcount(mb);
    idx = _mm512_add_epi32(idx, step);
    _mm512_mask_compressstoreu_epi32(pos + c, md, idx);
    c += (size_t)__builtin_popcount(md);
    idx = _mm512_add_epi32(idx, step);
    _mm512_mask_compressstoreu_epi32(pos + c, me, idx);
    c += (size_t)__builtin_popcount(me);
    idx = _mm512_add_epi32(idx, step);
  }
  for (; i < n; i += 16) {
    size_t rem = n - i < 16 ? n - i : 16;
    __mmask16 live = (__mmask16)((1u << rem) - 1u);
    __m512 a = _mm512_maskz_loadu_ps(live, x + i);
    __mmask16 ma = _mm512_mask_cmp_ps_mask(live, a, t, _CMP_GT_OQ);
    nan |= _mm512_mask_cmp_ps_mask(live, a, a, _CMP_UNORD_Q);
    _mm512_mask_compressstoreu_epi32(pos + c, ma, idx);
    c += (size_t)__builtin_popcount(ma);
    idx = _mm512_add_epi32(idx, step);
  }
  if (nan) *has_nan = 1;
  return c;
}

const smx_topk_ukernels smx_topk_ukernels_avx512 = { "avx512", filter_gt_avx512 };
