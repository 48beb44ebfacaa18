/* The sparse-simplex kernels on avx512 (this file alone: built with the AVX-512 flags). */
#include "simd/avx512.h"
#include "kernels/f32-sparse/ukernels.h"

#define SMX_SPARSE_TABLE smx_sparse_ukernels_avx512
#include "kernels/f32-sparse/body.h"
