/* The f32 gradient kernels on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f32-xent/ukernels.h"

#define SMX_XENT_TABLE smx_xent_ukernels_neon
#include "kernels/f32-xent/body.h"
