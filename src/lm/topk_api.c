/*
 * Public top-k entry points (include/smx/smx_topk.h): argument checks, the
 * work buffers, and the split of rows (or of the chunks of a few long rows)
 * across threads. The rows themselves go to src/lm/topk_row.c.
 */
#include <stdlib.h>

#include "api/f32_temperature.h"
#include "api/options.h"
#include "lm/lm_args.h"
#include "lm/topk_row.h"
#include "registry/registry.h"
#include "runtime/thread_pool.h"
#include "smx/smx_topk.h"

/* a few long rows are split across threads from this many columns */
#define SMX_TOPK_SPLIT_MIN ((size_t)1 << 20)
/* chunk results kept at once while a row is split */
#define SMX_TOPK_WINDOW 32

typedef struct rows_job {
  smx_topk_cfg cfg;
  const char *x;
  size_t ldx, cols, rows, rows_per_task, es;
  float *values;
  int64_t *indices;
  int failed;              /* a task could not allocate its heap */
} rows_job;

static void rows_task(void *ctx, size_t t) {
  rows_job *j = ctx;
  size_t r0 = t * j->rows_per_task;
  size_t r1 = r0 + j->rows_per_task < j->rows ? r0 + j->rows_per_task : j->rows;
  size_t k = j->cfg.kk;
  float *hv = malloc(k * sizeof(float));
  int64_t *hi = malloc(k * sizeof(int64_t));
  if (!hv || !hi) {
    free(hv);
    free(hi);
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  smx_topk_heap h;
  smx_topk_heap_init(&h, k, hv, hi);
  for (size_t r = r0; r < r1; r++)
    smx_topk_row(&j->cfg, j->x + r * j->ldx * j->es, j->cols, &h, j->values + r * k, j->indices + r * k);
  free(hv);
  free(hi);
}

/* One long row: each chunk of a window on its own heap, then merged in order. */
typedef struct split_job {
  const smx_topk_cfg *cfg;
  const void *x;
  size_t n, first, kc;      /* kc: heap size per chunk */
  float *hv;
  int64_t *hi;
  smx_topk_heap heaps[SMX_TOPK_WINDOW];
  smx_topk_part parts[SMX_TOPK_WINDOW];
} split_job;

static void split_task(void *ctx, size_t w) {
  split_job *j = ctx;
  size_t off = (j->first + w) * SMX_CHUNK;
  size_t len = j->n - off < SMX_CHUNK ? j->n - off : SMX_CHUNK;
  smx_topk_heap_init(&j->heaps[w], j->kc, j->hv + w * j->kc, j->hi + w * j->kc);
  j->parts[w] = smx_topk_part_identity();
  smx_topk_scan(j->cfg, j->x, off, len, &j->heaps[w], &j->parts[w]);
}

static smx_status split_row(const smx_topk_cfg *cfg, int threads, const void *x, size_t n, float *values,
                            int64_t *indices) {
  size_t k = cfg->kk;
  split_job *j = malloc(sizeof *j);
  size_t kc = k < SMX_CHUNK ? k : SMX_CHUNK;
  float *hv = malloc((k + SMX_TOPK_WINDOW * kc) * sizeof(float));
  int64_t *hi = malloc((k + SMX_TOPK_WINDOW * kc) * sizeof(int64_t));
  if (!j || !hv || !hi) {
    free(j);
    free(hv);
    free(hi);
    return SMX_E_NOMEM;
  }
  smx_topk_heap row;
  smx_topk_heap_init(&row, k, hv, hi);
  j->cfg = cfg;
  j->x = x;
  j->n = n;
  j->kc = kc;
  j->hv = hv + k;
  j->hi = hi + k;
  smx_topk_part whole = smx_topk_part_identity();
  size_t nchunks = (n + SMX_CHUNK - 1) / SMX_CHUNK;
  for (j->first = 0; j->first < nchunks; j->first += SMX_TOPK_WINDOW) {
    size_t nw = nchunks - j->first < SMX_TOPK_WINDOW ? nchunks - j->first : SMX_TOPK_WINDOW;
    smx_parallel_for(threads, nw, split_task, j);
    /* the same left-to-right fold of chunk states as smx_topk_row() */
    for (size_t w = 0; w < nw; w++) {
      smx_topk_part_merge(cfg, &whole, &j->parts[w]);
      for (size_t q = 0; q < j->heaps[w].size; q++) smx_topk_heap_push(&row, j->heaps[w].v[q], j->heaps[w].i[q]);
    }
  }
  smx_topk_finish(cfg, x, n, &row, &whole, values, indices);
  free(j);
  free(hv);
  free(hi);
  return SMX_OK;
}

static smx_status run_topk(smx_topk_op op, smx_elem elem, const void *x, size_t ldx, size_t rows, size_t cols,
                           size_t k, float *values, int64_t *indices, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  if (ldx < cols || k > cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || k == 0) return SMX_OK;
  if (!x || !values || !indices) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  size_t xs = smx_lm_span(rows, cols, ldx, es);
  size_t nout = smx_lm_mul(rows, k, (size_t)PTRDIFF_MAX / sizeof(int64_t));
  if (!xs || !nout) return SMX_E_INVALID_ARG;
  if (smx_lm_overlap(x, xs * es, values, nout * sizeof(float)) ||
      smx_lm_overlap(x, xs * es, indices, nout * sizeof(int64_t)) ||
      smx_lm_overlap(values, nout * sizeof(float), indices, nout * sizeof(int64_t)))
    return SMX_E_INVALID_ARG;

  rows_job j;
  j.cfg.k = smx_f32_kernels_for(o.temperature);
  j.cfg.tk = smx_registry_current()->topk;
  j.cfg.cv = smx_registry_current()->cvt;
  j.cfg.op = op;
  j.cfg.elem = elem;
  smx_row_params p;
  smx_row_params_init(&p, j.cfg.k, SMX_OP_SOFTMAX, SMX_ALGO_ONLINE, o.temperature, o.flags, 1);
  j.cfg.c = p.c;
  j.cfg.inv_t = p.inv_t_d;
  j.cfg.flags = o.flags;
  j.cfg.kk = k;
  j.x = x;
  j.ldx = ldx;
  j.cols = cols;
  j.rows = rows;
  j.es = es;
  j.values = values;
  j.indices = indices;
  j.failed = 0;

  int threads = o.threads;
  if (rows * cols < ((size_t)1 << 14)) threads = 1;   /* not worth waking the pool */
  if (threads > 1 && rows < 2 * (size_t)threads && cols >= SMX_TOPK_SPLIT_MIN) {
    for (size_t r = 0; r < rows; r++) {
      st = split_row(&j.cfg, threads, j.x + r * ldx * es, cols, values + r * k, indices + r * k);
      if (st != SMX_OK) return st;
    }
    return SMX_OK;
  }
  size_t ntasks = threads > 1 ? (size_t)threads * 4 : 1;
  if (ntasks > rows) ntasks = rows;
  j.rows_per_task = (rows + ntasks - 1) / ntasks;
  ntasks = (rows + j.rows_per_task - 1) / j.rows_per_task;
  if (ntasks > 1) smx_parallel_for(threads, ntasks, rows_task, &j);
  else rows_task(&j, 0);
  return j.failed ? SMX_E_NOMEM : SMX_OK;
}

/* ---- public forms: (op) x (f32, f16, bf16) x (row, rows) */
#define SMX_TOPK_FORMS(name, op, sfx, T, elem)                                                                  \
  smx_status smx_##name##_##sfx(const T *x, size_t n, size_t k, float *values, int64_t *indices,             \
                                const smx_options *opt) {                                                   \
    return run_topk(op, elem, x, n, 1, n, k, values, indices, opt);                                        \
  }                                                                                                         \
  smx_status smx_##name##_rows_##sfx(const T *x, size_t ldx, size_t rows, size_t cols, size_t k, float *values, \
                                     int64_t *indices, const smx_options *opt) {                            \
    return run_topk(op, elem, x, ldx, rows, cols, k, values, indices, opt);                                \
  }

SMX_TOPK_FORMS(softmax_topk, SMX_TOPK_SOFTMAX, f32, float, SMX_ELEM_F32)
SMX_TOPK_FORMS(log_softmax_topk, SMX_TOPK_LOG_SOFTMAX, f32, float, SMX_ELEM_F32)
SMX_TOPK_FORMS(topk, SMX_TOPK_RAW, f32, float, SMX_ELEM_F32)
SMX_TOPK_FORMS(softmax_topk, SMX_TOPK_SOFTMAX, f16, uint16_t, SMX_ELEM_F16)
SMX_TOPK_FORMS(log_softmax_topk, SMX_TOPK_LOG_SOFTMAX, f16, uint16_t, SMX_ELEM_F16)
SMX_TOPK_FORMS(topk, SMX_TOPK_RAW, f16, uint16_t, SMX_ELEM_F16)
SMX_TOPK_FORMS(softmax_topk, SMX_TOPK_SOFTMAX, bf16, uint16_t, SMX_ELEM_BF16)
SMX_TOPK_FORMS(log_softmax_topk, SMX_TOPK_LOG_SOFTMAX, bf16, uint16_t, SMX_ELEM_BF16)
SMX_TOPK_FORMS(topk, SMX_TOPK_RAW, bf16, uint16_t, SMX_ELEM_BF16)
