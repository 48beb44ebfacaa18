/* The attention backward micro-kernels on avx512 (this file alone is built with the AVX512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-attention-bwd/ukernels.h"

/* register block: 6 broadcast elements of A x 4 vectors of accumulators */
#define SMX_ATTN_BWD_MR 6
#define SMX_ATTN_BWD_NV 4
#define SMX_ATTN_BWD_TABLE smx_attn_bwd_ukernels_avx512
#include "kernels/f32-attention-bwd/body.h"
