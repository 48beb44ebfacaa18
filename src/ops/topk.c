/*
 * Public top-k entry points (include/smx/smx_topk.h): the options, the
 * arguments and the plan go through the engine (src/core/); rows run as row
 * tasks, or a few long rows as chunk tasks whose heaps are merged in order.
 * The rows themselves: topk_row.c.
 */
#include <stdlib.h>

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "ops/topk_row.h"
#include "registry/registry.h"
#include "smx/smx_topk.h"

/* a few long rows are split across threads from this many columns */
#define SMX_TOPK_SPLIT_MIN ((size_t)1 << 20)

typedef struct rows_job {
  smx_topk_cfg cfg;
  const char *x;
  size_t ldx, cols, es;
  float *values;
  int64_t *indices;
} rows_job;

/* scratch: one heap of k (index, value) pairs, the 8-byte indices first */
static void rows_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const rows_job *j = ctx;
  size_t k = j->cfg.kk;
  smx_topk_heap h;
  smx_topk_heap_init(&h, k, (float *)(void *)((int64_t *)scratch + k), (int64_t *)scratch);
  for (size_t r = r0; r < r1; r++)
    smx_topk_row(&j->cfg, j->x + r * j->ldx * j->es, j->cols, &h, j->values + r * k, j->indices + r * k);
}

/* One long row: each chunk of a window on its own heap, then merged in order. */
typedef struct split_job {
  const smx_topk_cfg *cfg;
  const void *x;
  size_t kc;                 /* heap size per chunk */
  float *hv;
  int64_t *hi;
  smx_topk_heap row;
  smx_topk_part whole;
  smx_topk_heap heaps[SMX_WINDOW];
  smx_topk_part parts[SMX_WINDOW];
} split_job;

static void split_task(void *ctx, size_t w, size_t off, size_t len) {
  split_job *j = ctx;
  smx_topk_heap_init(&j->heaps[w], j->kc, j->hv + w * j->kc, j->hi + w * j->kc);
  j->parts[w] = smx_topk_part_identity();
  smx_topk_scan(j->cfg, j->x, off, len, &j->heaps[w], &j->parts[w]);
}

/* the same left-to-right fold of chunk states as smx_topk_row() */
static void split_fold(void *ctx, size_t w) {
  split_job *j = ctx;
  smx_topk_part_merge(j->cfg, &j->whole, &j->parts[w]);
  for (size_t q = 0; q < j->heaps[w].size; q++) smx_topk_heap_push(&j->row, j->heaps[w].v[q], j->heaps[w].i[q]);
}

static smx_status split_rows(const rows_job *rj, int threads, size_t rows) {
  size_t k = rj->cfg.kk, kc = k < SMX_CHUNK ? k : SMX_CHUNK;
  split_job *j = malloc(sizeof *j);
  float *hv = malloc((k + SMX_WINDOW * kc) * sizeof(float));
  int64_t *hi = malloc((k + SMX_WINDOW * kc) * sizeof(int64_t));
  smx_status st = j && hv && hi ? SMX_OK : SMX_E_NOMEM;
  for (size_t r = 0; r < rows && st == SMX_OK; r++) {
    j->cfg = &rj->cfg;
    j->x = rj->x + r * rj->ldx * rj->es;
    j->kc = kc;
    j->hv = hv + k;
    j->hi = hi + k;
    smx_topk_heap_init(&j->row, k, hv, hi);
    j->whole = smx_topk_part_identity();
    smx_grid_chunks(threads, rj->cols, split_task, split_fold, j);
    smx_topk_finish(&rj->cfg, j->x, rj->cols, &j->row, &j->whole, rj->values + r * k, rj->indices + r * k);
  }
  free(j);
  free(hv);
  free(hi);
  return st;
}

static smx_status run_topk(smx_topk_op op, smx_elem elem, const void *x, size_t ldx, size_t rows, size_t cols,
                           size_t k, float *values, int64_t *indices, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  size_t es = smx_elem_size(elem);
  int empty;
  st = smx_check_x_topk(x, ldx, es, rows, cols, k, values, sizeof(float), indices, &empty);
  if (st != SMX_OK || empty) return st;

  rows_job j = { .x = x, .ldx = ldx, .cols = cols, .es = es, .values = values, .indices = indices };
  j.cfg.k = smx_f32_kernels_for(o.temperature);
  j.cfg.tk = smx_registry_current()->topk;
  j.cfg.io = smx_elem_io_for(elem);
  j.cfg.op = op;
  smx_row_params p;
  smx_row_params_init(&p, j.cfg.k, SMX_OP_SOFTMAX, SMX_ALGO_ONLINE, o.temperature, o.flags, 1);
  j.cfg.c = p.c;
  j.cfg.inv_t = p.inv_t_d;
  j.cfg.flags = o.flags;
  j.cfg.kk = k;

  smx_plan plan = smx_plan_rows(o.threads, rows, cols, SMX_TOPK_SPLIT_MIN);
  if (plan.chunk_threads > 1) return split_rows(&j, plan.chunk_threads, rows);
  return smx_grid_rows(plan.row_threads, rows, k * (sizeof(float) + sizeof(int64_t)), rows_task, &j);
}

/* ---- public forms: (op) x (f32, f16, bf16) x (row, rows) */
#define SMX_TOPK_FORMS(name, op, sfx, T, elem)                                                                  \
  smx_status smx_##name##_##sfx(const T *x, float *values, int64_t *indices, size_t n, size_t k,             \
                                const smx_options *opt) {                                                   \
    return run_topk(op, elem, x, n, 1, n, k, values, indices, opt);                                        \
  }                                                                                                         \
  smx_status smx_##name##_rows_##sfx(const T *x, size_t ldx, float *values, int64_t *indices, size_t rows,     \
                                     size_t cols, size_t k, const smx_options *opt) {                       \
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
