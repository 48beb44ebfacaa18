/* The AVX2 + FMA + F16C configuration. Built without ISA flags: it only names tables. */
#include "registry/registry.h"

const smx_registry smx_registry_avx2 = {
  "avx2",
  &smx_f32_ukernels_avx2,
  &smx_f64_ukernels_avx2,
  &smx_cvt_ukernels_avx2,
  &smx_xent_ukernels_avx2,
  &smx_topk_ukernels_avx2,
  &smx_sigmoid_ukernels_avx2,
  .attn = &smx_attn_ukernels_avx2,
  .attn_bwd = &smx_attn_bwd_ukernels_avx2,
  .sparse = &smx_sparse_ukernels_avx2,
  .vnorm = &smx_vnorm_ukernels_avx2,
  .scores = &smx_scores_ukernels_avx2,
};
