/* The vnorm kernels on avx512 (this file alone is built with the ISA's flags). */
#include "simd/avx512.h"
#include "kernels/f32-vnorm/ukernels.h"

#define SMX_VNORM_TABLE smx_vnorm_ukernels_avx512
#include "kernels/f32-vnorm/body.h"
