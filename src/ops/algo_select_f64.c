/*
 * SMX_ALGO_AUTO for f64 rows: log-softmax and log-sum-exp need one exponential
 * per element in every algorithm, so once the data leaves the caches the
 * two-pass algorithm's saved read of x wins (with AVX-512); softmax's two-pass
 * and online forms compute two exponentials per element and never won by a
 * clear margin. The crossovers, relative to the caches, are in src/tune/tune.c
 * (measurements in docs/crossovers.md).
 */
#include "ops/algo_select.h"

#include "tune/tune.h"

smx_algo smx_algo_auto_f64(smx_op op, size_t rows, size_t cols, const char *isa) {
  return smx_tune_pick_f64(smx_tune_table_for(isa), op, rows, cols);
}
