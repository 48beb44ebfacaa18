/* Portable top-k filter: the reference the vector kernels must match. */
#include "kernels/f32-topk/ukernels.h"

static size_t filter_gt_scalar(size_t n, const float *x, float thr, uint32_t *pos, int *has_nan) {
  size_t c = 0;
  int nan = 0;
  for (size_t i = 0; i < n; i++) {
    float v = x[i];
    nan |= v != v;
    if (v > thr) pos[c++] = (uint32_t)i;
  }
  if (nan) *has_nan = 1;
  return c;
}

const smx_topk_ukernels smx_topk_ukernels_scalar = { "scalar", filter_gt_scalar };
