/*
 * The top-k kernels follow the level that src/runtime/dispatch.c picked for
 * the softmax kernels (CPU, SMX_MAX_ISA, smx_set_max_isa), so one cap governs
 * every kernel family and this family needs no table of its own there.
 */
#include "kernels/f32-topk/ukernels.h"
#include "runtime/dispatch.h"

const smx_topk_ukernels *smx_dispatch_topk(void) {
#if defined(SMX_HAVE_X86_KERNELS)
  const smx_f32_ukernels *k = smx_dispatch_f32();
  if (k == &smx_f32_ukernels_avx512) return &smx_topk_ukernels_avx512;
  if (k == &smx_f32_ukernels_avx2) return &smx_topk_ukernels_avx2;
#endif
  return &smx_topk_ukernels_scalar;
}
