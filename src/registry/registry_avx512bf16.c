/* The AVX-512 + AVX512_BF16 configuration: the avx512 tables, and the attention tile products in bf16
 * (vdpbf16ps). Built without ISA flags: it only names tables. */
#include "registry/registry.h"

const smx_registry smx_registry_avx512bf16 = {
  "avx512bf16",
  &smx_f32_ukernels_avx512,
  &smx_f64_ukernels_avx512,
  &smx_cvt_ukernels_avx512,
  &smx_xent_ukernels_avx512,
  &smx_topk_ukernels_avx512,
  &smx_sigmoid_ukernels_avx512,
  .attn = &smx_attn_ukernels_avx512,
  .attn_bf16 = &smx_attn_bf16_ukernels_avx512bf16,
  .attn_bwd = &smx_attn_bwd_ukernels_avx512,
  .sparse = &smx_sparse_ukernels_avx512,
  .vnorm = &smx_vnorm_ukernels_avx512,
  .scores = &smx_scores_ukernels_avx512,
};
