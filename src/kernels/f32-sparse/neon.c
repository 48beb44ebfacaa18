/* The sparse-simplex kernels on neon (this file alone: Advanced SIMD is part of the base ISA: no flags). */
#include "simd/neon.h"
#include "kernels/f32-sparse/ukernels.h"

#define SMX_SPARSE_TABLE smx_sparse_ukernels_neon
#include "kernels/f32-sparse/body.h"
