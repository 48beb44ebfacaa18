/* The logit-score kernels on neon (this file alone is built with the ISA's flags). */
#include "simd/neon.h"
#include "kernels/f32-scores/ukernels.h"

#define SMX_SCORES_TABLE smx_scores_ukernels_neon
#include "kernels/f32-scores/body.h"
