/*
 * Top-k of f64 rows (include/smx/smx_topk.h): the same selection, order and
 * special values as the f32 rows, in double. One pass selects the k largest
 * (x, lowest index first) in a min-heap of k doubles (an entry at or below
 * the heap's worst is rejected by one compare); the values are read from
 * smx_softmax_f64 / smx_log_softmax_f64 of the row in a per-thread scratch
 * row, so they are those functions' values, with their bounds, on every row
 * the double range holds (not fused: the f64 form is for accuracy). Rows run
 * on the task grid, one row per task element: the same bits for every thread
 * count.
 */
#include <math.h>

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/topk_row.h"
#include "smx/smx_topk.h"

typedef struct topk64_job {
  double t;        /* the options' temperature, resolved */
  smx_topk_op op;
  uint32_t flags;
  const double *x;
  size_t ldx, cols, k;
  double *values;
  int64_t *indices;
} topk64_job;

/* a worse than b: smaller x, or equal x and a larger index */
static int worse(const double *v, const int64_t *i, size_t a, size_t b) {
  return v[a] < v[b] || (v[a] == v[b] && i[a] > i[b]);
}

static void sift_down(double *v, int64_t *i, size_t at, size_t n) {
  for (;;) {
    size_t l = 2 * at + 1, r = l + 1, w = at;
    if (l < n && worse(v, i, l, w)) w = l;
    if (r < n && worse(v, i, r, w)) w = r;
    if (w == at) return;
    double tv = v[at];
    int64_t ti = i[at];
    v[at] = v[w], i[at] = i[w], v[w] = tv, i[w] = ti;
    at = w;
  }
}

/* The k best of the row in v / idx, best first. */
static void select_row(const double *x, size_t n, size_t k, double *v, int64_t *idx) {
  size_t size = 0;
  for (size_t j = 0; j < n; j++) {
    if (size < k) {   /* grow: sift the new entry up */
      size_t at = size++;
      v[at] = x[j], idx[at] = (int64_t)j;
      while (at > 0 && worse(v, idx, at, (at - 1) / 2)) {
        size_t p = (at - 1) / 2;
        double tv = v[at];
        int64_t ti = idx[at];
        v[at] = v[p], idx[at] = idx[p], v[p] = tv, idx[p] = ti;
        at = p;
      }
    } else if (x[j] > v[0]) {   /* equal x: the kept entry has the lower index */
      v[0] = x[j], idx[0] = (int64_t)j;
      sift_down(v, idx, 0, k);
    }
  }
  for (size_t end = size; end > 1; end--) {   /* heap sort: the worst goes last */
    double tv = v[0];
    int64_t ti = idx[0];
    v[0] = v[end - 1], idx[0] = idx[end - 1], v[end - 1] = tv, idx[end - 1] = ti;
    sift_down(v, idx, 0, end - 1);
  }
}

static void row64(const topk64_job *j, const double *x, double *v, int64_t *idx, double *p) {
  size_t n = j->cols, k = j->k, kinf = 0;
  int nan = 0;
  for (size_t i = 0; i < n; i++) {
    nan |= x[i] != x[i];
    kinf += x[i] == INFINITY;
  }
  if (nan) {
    for (size_t q = 0; q < k; q++) v[q] = NAN, idx[q] = -1;
    return;
  }
  select_row(x, n, k, v, idx);
  if (j->op == SMX_TOPK_RAW) return;
  int lg = j->op == SMX_TOPK_LOG_SOFTMAX;
  if (kinf) {   /* the limit: 1/c on the c entries at +inf, first in the selection */
    for (size_t q = 0; q < k; q++)
      v[q] = v[q] == INFINITY ? (lg ? -log((double)kinf) : 1.0 / (double)kinf) : (lg ? -INFINITY : 0.0);
    return;
  }
  /* this thread only (the row is one task); every entry -inf: their masked-row rule */
  smx_options o = { SMX_ALGO_AUTO, j->t, j->flags & SMX_FLAG_MASKED_ROW_NAN, 1, NULL };
  if (lg) smx_log_softmax_f64(x, p, n, &o);
  else smx_softmax_f64(x, p, n, &o);
  for (size_t q = 0; q < k; q++) v[q] = p[idx[q]];
}

static void rows_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const topk64_job *j = ctx;
  for (size_t r = r0; r < r1; r++) row64(j, j->x + r * j->ldx, j->values + r * j->k, j->indices + r * j->k, scratch);
}

static smx_status run64(smx_topk_op op, const double *x, size_t ldx, double *values, int64_t *indices, size_t rows,
                        size_t cols, size_t k, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  int empty;
  st = smx_check_x_topk(x, ldx, sizeof(double), rows, cols, k, values, sizeof(double), indices, &empty);
  if (st != SMX_OK || empty) return st;
  topk64_job j = { .op = op, .flags = o.flags, .x = x, .ldx = ldx, .cols = cols, .k = k, .values = values,
                   .indices = indices };
  j.t = o.temperature;
  size_t scratch = op == SMX_TOPK_RAW ? 0 : smx_mul(cols, sizeof(double), (size_t)-1 / 2);
  if (op != SMX_TOPK_RAW && !scratch) return SMX_E_NOMEM;
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, scratch, rows_task, &j);
}

#define SMX_TOPK64_FORMS(name, op)                                                                          \
  smx_status smx_##name##_f64(const double *x, double *values, int64_t *indices, size_t n, size_t k,         \
                              const smx_options *opt) {                                                     \
    return run64(op, x, n, values, indices, 1, n, k, opt);                                                  \
  }                                                                                                         \
  smx_status smx_##name##_rows_f64(const double *x, size_t ldx, double *values, int64_t *indices, size_t rows, \
                                   size_t cols, size_t k, const smx_options *opt) {                         \
    return run64(op, x, ldx, values, indices, rows, cols, k, opt);                                          \
  }
SMX_TOPK64_FORMS(softmax_topk, SMX_TOPK_SOFTMAX)
SMX_TOPK64_FORMS(log_softmax_topk, SMX_TOPK_LOG_SOFTMAX)
SMX_TOPK64_FORMS(topk, SMX_TOPK_RAW)
