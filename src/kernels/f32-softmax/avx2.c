/* The f32 softmax kernels on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-softmax/ukernels.h"

#define SMX_F32_TABLE smx_f32_ukernels_avx2
#include "kernels/f32-softmax/body.h"
