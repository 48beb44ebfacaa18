/* The f32 gradient kernels on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-xent/ukernels.h"

#define SMX_XENT_TABLE smx_xent_ukernels_avx2
#include "kernels/f32-xent/body.h"
