/*
 * Public softmax / log-softmax / log-sum-exp entry points: argument checks,
 * option defaults, algorithm choice and the split of work across threads.
 * Nothing here computes; the rows go to src/api/softmax_row.c.
 */
#include <math.h>
#include <stdint.h>

#include "api/algo_select.h"
#include "api/softmax_row.h"
#include "runtime/dispatch.h"
#include "runtime/thread_pool.h"
#include "smx/smx.h"

/* rows at least this long are split across threads when there are few rows */
#define SMX_SPLIT_ROW_MIN ((size_t)1 << 21)

#define SMX_KNOWN_FLAGS (SMX_FLAG_MASKED_ROW_NAN | SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES)

typedef struct resolved {
  smx_algo algo;      /* may still be AUTO: resolved per row length */
  float temperature;
  uint32_t flags;
  int threads;
} resolved;

static smx_status resolve_options(const smx_options *opt, resolved *r) {
  r->algo = SMX_ALGO_AUTO;
  r->temperature = 1.0f;
  r->flags = 0;
  r->threads = 1;
  if (!opt) return SMX_OK;
  if ((unsigned)opt->algo > (unsigned)SMX_ALGO_ONLINE) return SMX_E_INVALID_ARG;
  float t = opt->temperature;
  if (t != t || t < 0.0f || t == INFINITY) return SMX_E_INVALID_ARG;
  if (opt->flags & ~(uint32_t)SMX_KNOWN_FLAGS) return SMX_E_INVALID_ARG;
  if ((opt->flags & SMX_FLAG_STREAM_STORES) && (opt->flags & SMX_FLAG_CACHED_STORES)) return SMX_E_INVALID_ARG;
  if (opt->threads < 0) return SMX_E_INVALID_ARG;
  r->algo = opt->algo;
  r->temperature = t == 0.0f ? 1.0f : t;
  r->flags = opt->flags;
  r->threads = opt->threads > SMX_MAX_THREADS ? SMX_MAX_THREADS : (opt->threads < 1 ? 1 : opt->threads);
  return SMX_OK;
}

/* Elements spanned by a rows x cols matrix with leading dimension ld; 0 on overflow
 * of the byte size. Requires rows >= 1, cols >= 1, ld >= cols. */
static size_t span_elems(size_t rows, size_t cols, size_t ld) {
  const size_t max_elems = (size_t)PTRDIFF_MAX / sizeof(float);
  if (cols > max_elems) return 0;
  if (rows - 1 > 0 && ld > (max_elems - cols) / (rows - 1)) return 0;
  return (rows - 1) * ld + cols;
}

static int ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

typedef struct rows_job {
  smx_row_params p;
  smx_op op;
  const float *x;
  float *y;       /* softmax ops */
  float *out;     /* logsumexp   */
  size_t ldx, ldy, rows, cols, rows_per_task;
} rows_job;

static void rows_task(void *ctx, size_t t) {
  const rows_job *j = ctx;
  size_t r0 = t * j->rows_per_task;
  size_t r1 = r0 + j->rows_per_task < j->rows ? r0 + j->rows_per_task : j->rows;
  for (size_t r = r0; r < r1; r++) {
    const float *xr = j->x + r * j->ldx;
    if (j->op == SMX_OP_LOGSUMEXP) smx_row_f32(&j->p, xr, NULL, j->cols, j->out + r);
    else smx_row_f32(&j->p, xr, j->y + r * j->ldy, j->cols, NULL);
  }
}

static smx_status run_rows(smx_op op, const float *x, size_t ldx, float *y, size_t ldy, float *out,
                           size_t rows, size_t cols, const smx_options *opt) {
  resolved o;
  smx_status st = resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (ldx < cols || (op != SMX_OP_LOGSUMEXP && ldy < cols)) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  if (op == SMX_OP_LOGSUMEXP) {
    if (!out) return SMX_E_INVALID_ARG;
    if (rows > (size_t)PTRDIFF_MAX / sizeof(float)) return SMX_E_INVALID_ARG;
    if (cols == 0) {
      for (size_t r = 0; r < rows; r++) out[r] = -INFINITY;
      return SMX_OK;
    }
  } else if (cols == 0) {
    return SMX_OK;
  }
  if (!x || (op != SMX_OP_LOGSUMEXP && !y)) return SMX_E_INVALID_ARG;
  size_t xs = span_elems(rows, cols, ldx);
  if (!xs) return SMX_E_INVALID_ARG;
  if (op == SMX_OP_LOGSUMEXP) {
    if (ranges_overlap(x, xs * sizeof(float), out, rows * sizeof(float))) return SMX_E_INVALID_ARG;
  } else {
    size_t ys = span_elems(rows, cols, ldy);
    if (!ys) return SMX_E_INVALID_ARG;
    int exact = (const float *)y == x && ldx == ldy;
    if (!exact && ranges_overlap(x, xs * sizeof(float), y, ys * sizeof(float))) return SMX_E_INVALID_ARG;
  }

  const smx_f32_ukernels *k = smx_dispatch_f32();
  smx_algo algo = o.algo == SMX_ALGO_AUTO ? smx_algo_auto(op, rows, cols, k->isa) : o.algo;
  int stream = op != SMX_OP_LOGSUMEXP && !(o.flags & SMX_FLAG_CACHED_STORES) &&
               ((o.flags & SMX_FLAG_STREAM_STORES) || smx_stream_default(rows, cols));
  rows_job j;
  j.op = op;
  j.x = x;
  j.y = y;
  j.out = out;
  j.ldx = ldx;
  j.ldy = ldy;
  j.rows = rows;
  j.cols = cols;

  int threads = o.threads;
  /* tiny problems are not worth waking the pool */
  if (rows * cols < ((size_t)1 << 14)) threads = 1;
  /* Splitting one row across threads costs a barrier per phase and moves the
   * row between private caches: measured to pay only from 2Mi columns
   * (256Ki: 0.23 ns/element on one thread, 0.43 on two; 2Mi: 0.32 vs 0.20). */
  int split_rows = threads > 1 && rows < 2 * (size_t)threads && cols >= SMX_SPLIT_ROW_MIN;
  if (threads > 1 && !split_rows && rows < 2) threads = 1;
  if (threads > 1 && !split_rows) {
    /* whole rows per task; a few tasks per thread for balance */
    smx_row_params_init(&j.p, k, op, algo, o.temperature, o.flags, 1);
    j.p.stream = stream;
    size_t ntasks = (size_t)threads * 4;
    if (ntasks > rows) ntasks = rows;
    j.rows_per_task = (rows + ntasks - 1) / ntasks;
    ntasks = (rows + j.rows_per_task - 1) / j.rows_per_task;
    smx_parallel_for(threads, ntasks, rows_task, &j);
  } else {
    /* one row at a time, long rows split into chunks across threads */
    smx_row_params_init(&j.p, k, op, algo, o.temperature, o.flags, threads);
    j.p.stream = stream;
    j.rows_per_task = rows;
    rows_task(&j, 0);
  }
  return SMX_OK;
}

smx_status smx_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_log_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                    const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, x, ldx, y, ldy, NULL, rows, cols, opt);
}

smx_status smx_logsumexp_rows_f32(const float *x, size_t ldx, float *out, size_t rows, size_t cols,
                                  const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, x, ldx, NULL, 0, out, rows, cols, opt);
}

smx_status smx_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_SOFTMAX, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_log_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt) {
  return run_rows(SMX_OP_LOG_SOFTMAX, x, n, y, n, NULL, 1, n, opt);
}

smx_status smx_logsumexp_f32(const float *x, size_t n, float *out, const smx_options *opt) {
  return run_rows(SMX_OP_LOGSUMEXP, x, n, NULL, 0, out, 1, n, opt);
}
