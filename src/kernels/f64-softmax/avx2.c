/* The f64 softmax kernels on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f64-softmax/ukernels.h"

#define SMX_F64_TABLE smx_f64_ukernels_avx2
#include "kernels/f64-softmax/body.h"
