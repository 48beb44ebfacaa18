/*
 * The gradient kernels follow the softmax kernels' ISA level: whatever the
 * dispatcher (src/runtime/dispatch.c, SMX_MAX_ISA, smx_set_max_isa) picked for
 * softmax, the same level is used here, so one cap governs both families.
 */
#include "kernels/f32-xent/ukernels.h"
#include "runtime/dispatch.h"

const smx_xent_ukernels *smx_xent_ukernels_for(const smx_f32_ukernels *k) {
#if defined(SMX_HAVE_X86_KERNELS)
  if (k == &smx_f32_ukernels_avx512) return &smx_xent_ukernels_avx512;
  if (k == &smx_f32_ukernels_avx2) return &smx_xent_ukernels_avx2;
#else
  (void)k;
#endif
  return &smx_xent_ukernels_scalar;
}

const smx_xent_ukernels *smx_dispatch_xent(void) { return smx_xent_ukernels_for(smx_dispatch_f32()); }
