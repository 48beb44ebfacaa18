/* The f32 softmax kernels on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-softmax/ukernels.h"

#define SMX_F32_TABLE smx_f32_ukernels_avx512
#include "kernels/f32-softmax/body.h"
