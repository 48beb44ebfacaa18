/*
 * SMX_ALGO_AUTO: which algorithm is fastest for a row length, measured with
 * bench/smx_bench on the development machine (docs/crossovers.md has the
 * tables). In cache, the three-pass algorithm computes each exponential once
 * and its extra passes hit L1/L2; once a row spills out of L2 the two-pass
 * algorithms read memory twice instead of three times.
 */
#include <string.h>

#include "api/algo_select.h"

/* Outputs above this many bytes bypass the caches (the last-level cache of one
 * CCX on the development machine is 32 MiB, and x and y share it). */
#define SMX_STREAM_MIN_BYTES ((size_t)16 << 20)

int smx_stream_default(size_t rows, size_t cols) {
  return rows * cols >= SMX_STREAM_MIN_BYTES / sizeof(float);
}

smx_algo smx_algo_auto(smx_op op, size_t rows, size_t cols, const char *isa) {
  (void)rows;
  /* Scalar and AVX2 kernels are bound by arithmetic even out of cache (the
   * AVX2 two-pass rebuilds 2^n in integer lanes twice per vector): there the
   * three-pass algorithm, one exponential per element, is fastest at every
   * length. With AVX-512 the two-pass algorithm wins once rows leave L2/L3. */
  if (strcmp(isa, "avx512") != 0) return SMX_ALGO_THREE_PASS;
  size_t limit = op == SMX_OP_LOGSUMEXP ? ((size_t)1 << 18) : ((size_t)1 << 20);
  return cols <= limit ? SMX_ALGO_THREE_PASS : SMX_ALGO_TWO_PASS;
}
