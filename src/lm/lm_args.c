/* Argument helpers of lm_args.h. */
#include <math.h>

#include "lm/lm_args.h"
#include "runtime/thread_pool.h"

#define SMX_LM_KNOWN_FLAGS (SMX_FLAG_MASKED_ROW_NAN | SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES)

smx_status smx_lm_resolve(const smx_options *opt, smx_lm_opts *r) {
  r->temperature = 1.0;
  r->flags = 0;
  r->threads = 1;
  if (!opt) return SMX_OK;
  if ((unsigned)opt->algo > (unsigned)SMX_ALGO_ONLINE) return SMX_E_INVALID_ARG;
  double t = smx_lm_temperature(opt->temperature);
  if (t < 0.0) return SMX_E_INVALID_ARG;
  if (opt->flags & ~(uint32_t)SMX_LM_KNOWN_FLAGS) return SMX_E_INVALID_ARG;
  if ((opt->flags & SMX_FLAG_STREAM_STORES) && (opt->flags & SMX_FLAG_CACHED_STORES)) return SMX_E_INVALID_ARG;
  if (opt->threads < 0) return SMX_E_INVALID_ARG;
  r->temperature = t;
  r->flags = opt->flags;
  r->threads = smx_lm_threads(opt->threads);
  return SMX_OK;
}

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

double smx_lm_temperature(double t) {
  if (t != t || t < 0.0 || t == INFINITY) return -1.0;
  return t == 0.0 ? 1.0 : t;
}

int smx_lm_threads(int t) { return t > SMX_MAX_THREADS ? SMX_MAX_THREADS : (t < 1 ? 1 : t); }

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
