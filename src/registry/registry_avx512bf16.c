/* The AVX-512 + AVX512_BF16 configuration: the avx512 tables, and the attention tile products in bf16
 * (vdpbf16ps). Built without ISA flags: it only names tables. */
#include "registry/registry.h"

SMX_DEFINE_REGISTRY(avx512bf16, avx512, &smx_attn_bf16_ukernels_avx512bf16);
