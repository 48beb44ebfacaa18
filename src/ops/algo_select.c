/*
 * SMX_ALGO_AUTO: which algorithm is fastest for a row length. In cache, the
 * three-pass algorithm computes each exponential once and its extra passes hit
 * L1/L2; once a row spills out of the caches the two-pass algorithms read
 * memory twice instead of three times. Where that happens depends on the
 * machine's caches: src/tune/ holds the crossovers (docs/crossovers.md).
 */
#include "ops/algo_select.h"

#include "tune/tune.h"

/* Non-temporal stores measured slower than ordinary ones on the development
 * machine (AMD EPYC, AVX-512) for every case of bench/smx_bench: 64Mi rows
 * 0.44 vs 0.42 ns/element, 4096x32000 0.44 vs 0.37. So they are opt-in
 * (SMX_FLAG_STREAM_STORES) and never the default. */
int smx_stream_default(size_t rows, size_t cols) {
  (void)rows;
  (void)cols;
  return 0;
}

smx_algo smx_algo_auto(smx_op op, size_t rows, size_t cols, const char *isa) {
  return smx_tune_pick_f32(smx_tune_table_for(isa), op, rows, cols);
}
