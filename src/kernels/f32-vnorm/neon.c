/* The vnorm kernels on neon (this file alone is built with the ISA's flags). */
#include "simd/neon.h"
#include "kernels/f32-vnorm/ukernels.h"

#define SMX_VNORM_TABLE smx_vnorm_ukernels_neon
#include "kernels/f32-vnorm/body.h"
