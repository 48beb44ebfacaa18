/* The portable configuration: every family's scalar kernels. */
#include "registry/registry.h"

const smx_registry smx_registry_scalar = {
  "scalar",
  &smx_f32_ukernels_scalar,
  &smx_f64_ukernels_scalar,
  &smx_cvt_ukernels_scalar,
  &smx_xent_ukernels_scalar,
  &smx_topk_ukernels_scalar,
  &smx_sigmoid_ukernels_scalar,
  .attn = &smx_attn_ukernels_scalar,
  .attn_bwd = &smx_attn_bwd_ukernels_scalar,
  .sparse = &smx_sparse_ukernels_scalar,
  .vnorm = &smx_vnorm_ukernels_scalar,
  .scores = &smx_scores_ukernels_scalar,
};
