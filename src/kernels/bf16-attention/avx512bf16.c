/* The bf16 attention tile products on AVX-512 + AVX512_BF16 (this file alone is built with -mavx512bf16). */
#include "simd/avx512bf16.h"
#include "kernels/bf16-attention/ukernels.h"

/* register block: 6 broadcast pairs x 4 vectors of accumulators (24 of the 32 registers) */
#define SMX_ATTN16_MR 6
#define SMX_ATTN16_NV 4
#define SMX_ATTN16_TABLE smx_attn_bf16_ukernels_avx512bf16
#include "kernels/bf16-attention/body.h"
