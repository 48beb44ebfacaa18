/* The attention backward micro-kernels on avx2 (this file alone is built with the AVX2 flags). */
#include "simd/avx2.h"
#include "kernels/f32-attention-bwd/ukernels.h"

/* register block: 6 broadcast elements of A x 2 vectors of accumulators */
#define SMX_ATTN_BWD_MR 6
#define SMX_ATTN_BWD_NV 2
#define SMX_ATTN_BWD_TABLE smx_attn_bwd_ukernels_avx2
#include "kernels/f32-attention-bwd/body.h"
