/* Argument helpers of lm_args.h. */
#include "lm/lm_args.h"

size_t smx_lm_span(size_t rows, size_t cols, size_t ld, size_t es) {
  const size_t max_elems = (size_t)PTRDIFF_MAX / es;
  if (cols > max_elems) return 0;
  if (rows - 1 > 0 && ld > (max_elems - cols) / (rows - 1)) return 0;
  return (rows - 1) * ld + cols;
}

int smx_lm_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

size_t smx_lm_tasks(int threads, size_t rows, size_t *per) {
  size_t ntasks = (size_t)threads * 4;
  if (ntasks > rows) ntasks = rows;
  if (ntasks < 1) ntasks = 1;
  *per = (rows + ntasks - 1) / ntasks;
  return (rows + *per - 1) / *per;
}

size_t smx_lm_mul(size_t n, size_t m, size_t limit) {
  if (n > limit / m) return 0;
  return n * m;
}
