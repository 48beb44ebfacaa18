/* Argument helpers shared by the gradient entry points (backward, cross-entropy). */
#ifndef SMX_LM_GRAD_ARGS_H
#define SMX_LM_GRAD_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/thread_pool.h"

/* Elements spanned by rows x cols with leading dimension ld (rows, cols >= 1,
 * ld >= cols); 0 when the byte size (for 4-byte elements) would overflow. */
static inline size_t smx_grad_span(size_t rows, size_t cols, size_t ld) {
  const size_t max_elems = (size_t)PTRDIFF_MAX / sizeof(float);
  if (cols > max_elems) return 0;
  if (rows > 1 && ld > (max_elems - cols) / (rows - 1)) return 0;
  return (rows - 1) * ld + cols;
}

static inline int smx_grad_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a_bytes && b_bytes && a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

/* A temperature as smx_options takes it: 0 means 1; negative, NaN or inf is refused (-1 returned). */
static inline double smx_grad_temperature(double t) {
  if (t != t || t < 0.0 || t > 1.7976931348623157e308) return -1.0;
  return t == 0.0 ? 1.0 : t;
}

static inline int smx_grad_threads(int t) { return t > SMX_MAX_THREADS ? SMX_MAX_THREADS : (t < 1 ? 1 : t); }

/* Splits rows into at most 4 tasks per thread; returns the task count and sets *per. */
static inline size_t smx_grad_tasks(int threads, size_t rows, size_t *per) {
  size_t ntasks = (size_t)threads * 4;
  if (ntasks > rows) ntasks = rows;
  if (ntasks < 1) ntasks = 1;
  *per = (rows + ntasks - 1) / ntasks;
  return (rows + *per - 1) / *per;
}

#endif
