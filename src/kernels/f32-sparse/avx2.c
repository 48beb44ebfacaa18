/* The sparse-simplex kernels on avx2 (this file alone: built with -mavx2 -mfma). */
#include "simd/avx2.h"
#include "kernels/f32-sparse/ukernels.h"

#define SMX_SPARSE_TABLE smx_sparse_ukernels_avx2
#include "kernels/f32-sparse/body.h"
