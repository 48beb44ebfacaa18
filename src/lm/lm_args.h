/*
 * Argument helpers shared by the language-model entry points (top-k,
 * sampling, Gumbel-softmax, softmax backward, cross-entropy): the same
 * option and size rules as smx.h's
 * functions (src/api/softmax_api.c), so every entry point refuses the same
 * things.
 */
#ifndef SMX_LM_LM_ARGS_H
#define SMX_LM_LM_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

typedef struct smx_lm_opts {
  double temperature;   /* 0 resolved to 1 */
  uint32_t flags;
  int threads;          /* >= 1, clamped to SMX_MAX_THREADS */
} smx_lm_opts;

/* SMX_E_INVALID_ARG for an unknown algo or flag, a bad temperature or a negative thread count. */
smx_status smx_lm_resolve(const smx_options *opt, smx_lm_opts *r);

/* Elements spanned by rows x cols with leading dimension ld (rows, cols >= 1,
 * ld >= cols), or 0 if its byte size for elements of es bytes overflows. */
size_t smx_lm_span(size_t rows, size_t cols, size_t ld, size_t es);

/* 1 if [a, a + a_bytes) and [b, b + b_bytes) overlap. */
int smx_lm_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* A temperature as smx_options takes it: 0 means 1; negative, NaN or inf is refused (-1 returned). */
double smx_lm_temperature(double t);

/* A non-negative thread count clamped to [1, SMX_MAX_THREADS] (0 means 1). */
int smx_lm_threads(int t);

/* Splits rows into at most 4 tasks per thread; returns the task count and sets *per. */
size_t smx_lm_tasks(int threads, size_t rows, size_t *per);

/* n * m, or 0 if it exceeds limit (n, m >= 1). */
size_t smx_lm_mul(size_t n, size_t m, size_t limit);

#endif
