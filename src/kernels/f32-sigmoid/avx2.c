/* The f32 sigmoid kernel on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-sigmoid/ukernels.h"

#define SMX_SIGMOID_TABLE smx_sigmoid_ukernels_avx2
#include "kernels/f32-sigmoid/body.h"
