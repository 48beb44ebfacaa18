/*
 * Argument helpers shared by the language-model entry points (top-k,
 * sampling, Gumbel-softmax, softmax backward, cross-entropy): size, overlap
 * and work-split rules. smx_options are read by src/api/options.h, as for
 * smx.h's functions, so every entry point refuses the same things.
 */
#ifndef SMX_LM_LM_ARGS_H
#define SMX_LM_LM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

/* Elements spanned by rows x cols with leading dimension ld (rows, cols >= 1,
 * ld >= cols), or 0 if its byte size for elements of es bytes overflows. */
size_t smx_lm_span(size_t rows, size_t cols, size_t ld, size_t es);

/* 1 if [a, a + a_bytes) and [b, b + b_bytes) overlap. */
int smx_lm_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* Splits rows into at most 4 tasks per thread; returns the task count and sets *per. */
size_t smx_lm_tasks(int threads, size_t rows, size_t *per);

/* n * m, or 0 if it exceeds limit (n, m >= 1). */
size_t smx_lm_mul(size_t n, size_t m, size_t limit);

#endif
