/* The half-precision conversions on avx2 (this file alone is built with -mavx2 -mf16c). */
#include "simd/avx2.h"
#include "kernels/convert/ukernels.h"

#define SMX_CVT_TABLE smx_cvt_ukernels_avx2
#include "kernels/convert/body.h"
