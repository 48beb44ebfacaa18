/*
 * SMX_ALGO_AUTO: which algorithm is fastest for a row length, measured with
 * bench/smx_bench on the development machine (docs/crossovers.md has the
 * tables). In cache, the three-pass algorithm computes each exponential once
 * and its extra passes hit L1/L2; once a row spills out of L2 the two-pass
 * algorithms read memory twice instead of three times.
 */
#include <string.h>

#include "ops/algo_select.h"

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
  (void)rows;
  /* Scalar and AVX2 kernels are bound by arithmetic even out of cache (the
   * AVX2 two-pass rebuilds 2^n in integer lanes twice per vector): there the
   * three-pass algorithm, one exponential per element, is fastest at every
   * length. With AVX-512 the two-pass algorithm wins once rows leave L2/L3. */
  if (strcmp(isa, "avx512") != 0) return SMX_ALGO_THREE_PASS;
  size_t limit = op == SMX_OP_LOGSUMEXP ? ((size_t)1 << 18) : ((size_t)1 << 20);
  if (cols > limit) return SMX_ALGO_TWO_PASS;
  /* a batch far larger than the caches: long rows are read twice from L2
   * (two-pass) rather than reading back y (three-pass) */
  if (cols >= ((size_t)1 << 14) && rows * cols >= ((size_t)1 << 22)) return SMX_ALGO_TWO_PASS;
  return SMX_ALGO_THREE_PASS;
}
