/* The f32 softmax kernels on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f32-softmax/ukernels.h"

#define SMX_F32_TABLE smx_f32_ukernels_neon
#include "kernels/f32-softmax/body.h"
