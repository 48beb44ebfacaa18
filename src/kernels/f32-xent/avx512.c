/* The f32 gradient kernels on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-xent/ukernels.h"

#define SMX_XENT_TABLE smx_xent_ukernels_avx512
#include "kernels/f32-xent/body.h"
