/* The f64 softmax kernels on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f64-softmax/ukernels.h"

#define SMX_F64_TABLE smx_f64_ukernels_avx512
#include "kernels/f64-softmax/body.h"
