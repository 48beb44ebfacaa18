/* The f32 sigmoid kernel on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f32-sigmoid/ukernels.h"

#define SMX_SIGMOID_TABLE smx_sigmoid_ukernels_neon
#include "kernels/f32-sigmoid/body.h"
