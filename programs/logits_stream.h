/* Reading logits and labels for smx eval (and score's kl_matching
 * templates): logits streamed in blocks of rows (bounded memory, progress
 * line on a terminal), labels whole. */
#ifndef SMX_PROGRAMS_LOGITS_STREAM_H
#define SMX_PROGRAMS_LOGITS_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* Called for each block: rows [r0, r0 + nr) of `cols` floats. Returns 0 or
 * an exit code (after printing its message). */
typedef int (*smx_block_fn)(void *ctx, const float *x, size_t nr, size_t cols, uint64_t r0);

/*
 * Streams the logits file `path` (an N x K view: the last axis is the
 * classes; at least one class) through fn. want_cols: 0 for any, else the
 * number of classes the file must have (message names both files via
 * `other`). Rows with NaN are refused (naming the file and row) unless
 * allow_nan. Returns 0 or a documented exit code, the message printed.
 */
int smx_cli_stream_logits(const char *path, int quiet, uint64_t want_cols, const char *other, int allow_nan,
                          uint64_t *rows, uint64_t *cols, smx_block_fn fn, void *ctx);

/* The same over rows [first, min(end, N)) only (a rank's block under MPI);
 * *rows is still the file's N. */
int smx_cli_stream_logits_range(const char *path, int quiet, uint64_t want_cols, const char *other, int allow_nan,
                                uint64_t first, uint64_t end, uint64_t *rows, uint64_t *cols, smx_block_fn fn,
                                void *ctx);

/* Reads a 1-d (or N x 1) .npy of class labels (any integer or float dtype
 * holding whole numbers), checks there are n of them, each in [0, K).
 * *labels is malloc'ed. Returns 0 or an exit code, the message printed. */
int smx_cli_read_labels(const char *path, uint64_t n, uint64_t K, const char *logits_path, int64_t **labels);

/* Loads a whole logits file (the validation set). */
int smx_cli_load_logits(const char *path, int quiet, uint64_t want_cols, const char *other, float **x, uint64_t *rows,
                        uint64_t *cols);


#endif
