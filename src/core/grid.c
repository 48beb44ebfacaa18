/* The task grid of grid.h over the pool of thread_pool.h. */
#include <stdlib.h>

#include "core/grid.h"
#include "core/thread_pool.h"

smx_plan smx_plan_rows(int threads, size_t rows, size_t cols, size_t split_cols) {
  smx_plan p = { 1, 1 };
  if (threads <= 1 || rows * cols < SMX_GRID_SMALL) return p;
  if (split_cols && cols >= split_cols && rows < 2 * (size_t)threads) p.chunk_threads = threads;
  else if (rows >= 2) p.row_threads = threads;
  return p;
}

typedef struct rows_grid {
  smx_rows_fn fn;
  void *ctx;
  size_t rows, per, scratch_bytes;
  int failed;
} rows_grid;

static void rows_task(void *ctx, size_t t) {
  rows_grid *g = ctx;
  size_t r0 = t * g->per, r1 = r0 + g->per < g->rows ? r0 + g->per : g->rows;
  void *scratch = NULL;
  if (g->scratch_bytes && !(scratch = malloc(g->scratch_bytes))) {
    __atomic_store_n(&g->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  g->fn(g->ctx, r0, r1, scratch);
  free(scratch);
}

smx_status smx_grid_rows(int threads, size_t rows, size_t scratch_bytes, smx_rows_fn fn, void *ctx) {
  if (rows == 0) return SMX_OK;
  rows_grid g = { fn, ctx, rows, rows, scratch_bytes, 0 };
  size_t ntasks = 1;
  if (threads > 1) {
    /* a few tasks per thread, for balance when rows differ in cost */
    ntasks = (size_t)threads * 4 < rows ? (size_t)threads * 4 : rows;
    g.per = (rows + ntasks - 1) / ntasks;
    ntasks = (rows + g.per - 1) / g.per;
  }
  if (ntasks > 1) smx_parallel_for(threads, ntasks, rows_task, &g);
  else rows_task(&g, 0);
  return g.failed ? SMX_E_NOMEM : SMX_OK;
}

typedef struct chunk_grid {
  smx_chunk_fn fn;
  void *ctx;
  size_t n, first;
} chunk_grid;

static void chunk_task(void *ctx, size_t w) {
  const chunk_grid *g = ctx;
  size_t off = (g->first + w) * SMX_CHUNK;
  g->fn(g->ctx, w, off, g->n - off < SMX_CHUNK ? g->n - off : SMX_CHUNK);
}

void smx_grid_chunks(int threads, size_t n, smx_chunk_fn fn, smx_fold_fn fold, void *ctx) {
  chunk_grid g = { fn, ctx, n, 0 };
  size_t nchunks = (n + SMX_CHUNK - 1) / SMX_CHUNK;
  for (; g.first < nchunks; g.first += SMX_WINDOW) {
    size_t nw = nchunks - g.first < SMX_WINDOW ? nchunks - g.first : SMX_WINDOW;
    if (threads > 1 && nw > 1) smx_parallel_for(threads, nw, chunk_task, &g);
    else for (size_t w = 0; w < nw; w++) chunk_task(&g, w);
    if (fold)
      for (size_t w = 0; w < nw; w++) fold(ctx, w);
  }
}
