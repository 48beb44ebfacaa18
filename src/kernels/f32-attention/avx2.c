/* The attention micro-kernels on avx2 (this file alone is built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-attention/ukernels.h"

/* register block: 6 broadcast operands x 2 vectors of accumulators */
#define SMX_ATTN_MR 6
#define SMX_ATTN_NV 2
/* qk_rows: 4 rows x 2 keys of dot-product accumulators */
#define SMX_ATTN_DR 4
#define SMX_ATTN_DK 2
#define SMX_ATTN_TABLE smx_attn_ukernels_avx2
#include "kernels/f32-attention/body.h"
