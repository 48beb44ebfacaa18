/* The half-precision conversions on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/convert/ukernels.h"

#define SMX_CVT_TABLE smx_cvt_ukernels_avx512
#include "kernels/convert/body.h"
