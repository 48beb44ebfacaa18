/*
 * SMX_ALGO_AUTO for f64 rows, from bench/smx_bench_f64 (CPU time, one thread,
 * on the busy 2-core development machine, so only differences above ~10% were
 * taken; ns per element, three-pass / two-pass / online):
 *   AVX-512 softmax      64Ki 0.93/1.30/1.25   4Mi 1.49/1.41/1.50   4096x32000 1.47/1.68/1.78
 *   AVX-512 log-softmax  64Ki 1.08/1.06/1.11   4Mi 2.03/1.78/1.79   4096x32000 1.96/1.74/1.73
 *   AVX-512 logsumexp    64Ki 0.66/0.73/0.72   4Mi 1.06/0.85/0.91   4096x32000 1.25/0.88/0.99
 *   AVX2 (every op)      three-pass fastest or tied at 1Ki and 4Mi
 * Three-pass computes one exponential per element and, in cache, its extra
 * read is cheap. Log-softmax and log-sum-exp need only one exponential per
 * element in every algorithm, so once the data leaves the caches the two-pass
 * algorithm's saved read of x wins (with AVX-512; AVX2 stays bound by the
 * arithmetic). Softmax's two-pass and online forms compute two exponentials
 * per element and never won by a clear margin.
 */
#include <string.h>

#include "ops/algo_select.h"

smx_algo smx_algo_auto_f64(smx_op op, size_t rows, size_t cols, const char *isa) {
  if (op == SMX_OP_SOFTMAX || strcmp(isa, "avx512") != 0) return SMX_ALGO_THREE_PASS;
  /* a row of 2 MiB or more, or a batch of long rows far larger than the caches */
  if (cols >= ((size_t)1 << 18)) return SMX_ALGO_TWO_PASS;
  if (cols >= ((size_t)1 << 14) && rows * cols >= ((size_t)1 << 22)) return SMX_ALGO_TWO_PASS;
  return SMX_ALGO_THREE_PASS;
}
