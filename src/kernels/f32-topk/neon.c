/* The top-k filter on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f32-topk/ukernels.h"

#define SMX_TOPK_TABLE smx_topk_ukernels_neon
#include "kernels/f32-topk/body.h"
