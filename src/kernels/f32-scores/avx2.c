/* The logit-score kernels on avx2 (this file alone is built with the ISA's flags). */
#include "simd/avx2.h"
#include "kernels/f32-scores/ukernels.h"

#define SMX_SCORES_TABLE smx_scores_ukernels_avx2
#include "kernels/f32-scores/body.h"
