/* The attention micro-kernels on avx512 (this file alone is built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-attention/ukernels.h"

/* register block: 6 broadcast operands x 4 vectors of accumulators */
#define SMX_ATTN_MR 6
#define SMX_ATTN_NV 4
/* qk_rows: 4 rows x 4 keys of dot-product accumulators */
#define SMX_ATTN_DR 4
#define SMX_ATTN_DK 4
#define SMX_ATTN_TABLE smx_attn_ukernels_avx512
#include "kernels/f32-attention/body.h"
