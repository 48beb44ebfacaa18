/* The f64 softmax kernels on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f64-softmax/ukernels.h"

#define SMX_F64_TABLE smx_f64_ukernels_neon
#include "kernels/f64-softmax/body.h"
