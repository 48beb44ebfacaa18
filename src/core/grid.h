/*
 * Work planning and the task grid: how a rows x cols problem is cut into
 * tasks for the thread pool. Two shapes:
 *  - row tasks: contiguous row ranges, a few per thread, each with its own
 *    scratch buffer;
 *  - chunk tasks: one long row cut into SMX_CHUNK pieces, run SMX_WINDOW at
 *    a time, whose results are folded left to right after each window.
 * A task computes the same values whichever thread runs it, and folds happen
 * in a fixed order, so every result is the same for every thread count.
 */
#ifndef SMX_CORE_GRID_H
#define SMX_CORE_GRID_H

#include <stddef.h>

#include "smx/smx.h"

/* Long rows are cut into pieces of this many elements; states are folded in order. */
#define SMX_CHUNK ((size_t)1 << 16)
/* Chunk results held at once (so that no call allocates for them). */
#define SMX_WINDOW 64

/* Problems smaller than this many elements run on the calling thread:
 * waking the pool costs more than it saves. */
#define SMX_GRID_SMALL ((size_t)1 << 14)

typedef struct smx_plan {
  int row_threads;     /* threads over row tasks; 1 = the calling thread */
  int chunk_threads;   /* threads over the chunks of each row; 1 = none  */
} smx_plan;

/*
 * The plan for rows x cols on up to `threads` threads. Rows of at least
 * split_cols elements (0: never) are split into chunks across threads when
 * there are too few rows to keep every thread busy.
 */
smx_plan smx_plan_rows(int threads, size_t rows, size_t cols, size_t split_cols);

/* Rows [r0, r1) of a task, with its own scratch (NULL when none was asked for). */
typedef void (*smx_rows_fn)(void *ctx, size_t r0, size_t r1, void *scratch);

/*
 * Runs fn over rows [0, rows) on up to `threads` threads. Each task gets
 * scratch_bytes of its own scratch. SMX_E_NOMEM when a task's scratch could
 * not be allocated (its rows are then not computed).
 */
smx_status smx_grid_rows(int threads, size_t rows, size_t scratch_bytes, smx_rows_fn fn, void *ctx);

/* Chunk [off, off + len) of the row into result slot `slot` (< SMX_WINDOW). */
typedef void (*smx_chunk_fn)(void *ctx, size_t slot, size_t off, size_t len);
/* Folds the result in `slot` into the row's accumulator. */
typedef void (*smx_fold_fn)(void *ctx, size_t slot);

/*
 * Runs fn over the SMX_CHUNK pieces of a row of n elements, SMX_WINDOW at a
 * time on up to `threads` threads; after each window, fold (when not NULL)
 * takes the window's slots in order.
 */
void smx_grid_chunks(int threads, size_t n, smx_chunk_fn fn, smx_fold_fn fold, void *ctx);

#endif
