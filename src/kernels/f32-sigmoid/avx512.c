/* The f32 sigmoid kernel on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-sigmoid/ukernels.h"

#define SMX_SIGMOID_TABLE smx_sigmoid_ukernels_avx512
#include "kernels/f32-sigmoid/body.h"
