/* The AArch64 Advanced SIMD (NEON, with FMA) configuration. */
#include "registry/registry.h"

const smx_registry smx_registry_neon = {
  "neon",
  &smx_f32_ukernels_neon,
  &smx_f64_ukernels_neon,
  &smx_cvt_ukernels_neon,
  &smx_xent_ukernels_neon,
  &smx_topk_ukernels_neon,
  &smx_sigmoid_ukernels_neon,
  .attn = &smx_attn_ukernels_neon,
  .attn_bwd = &smx_attn_bwd_ukernels_neon,
  .sparse = &smx_sparse_ukernels_neon,
  .vnorm = &smx_vnorm_ukernels_neon,
  .scores = &smx_scores_ukernels_neon,
};
