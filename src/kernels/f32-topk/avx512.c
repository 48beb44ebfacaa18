/* The top-k filter on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-topk/ukernels.h"

#define SMX_TOPK_TABLE smx_topk_ukernels_avx512
#include "kernels/f32-topk/body.h"
