/* The half-precision conversions on AArch64 NEON (Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/convert/ukernels.h"

#define SMX_CVT_TABLE smx_cvt_ukernels_neon
#include "kernels/convert/body.h"
