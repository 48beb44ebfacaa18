/* The top-k filter on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-topk/ukernels.h"

#define SMX_TOPK_TABLE smx_topk_ukernels_avx2
#include "kernels/f32-topk/body.h"
