/* Rows of a loss with one class target per row: see loss_rows.h. */
#include "ops/loss_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"

typedef struct rows_job {
  const smx_loss_call *c;
  size_t es;
  double s;
  double *row_loss;
} rows_job;

static void rows_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const rows_job *j = ctx;
  const smx_loss_call *c = j->c;
  (void)scratch;
  for (size_t r = r0; r < r1; r++) {
    int64_t t = c->targets[r];
    const char *x = (const char *)c->logits + r * c->ld * j->es;
    void *g = c->grad ? (char *)c->grad + r * c->ldg * j->es : NULL;
    double l = 0.0;
    if (t == c->opt->ignore_index) {
      if (g) memset(g, 0, c->cols * j->es);   /* +0 in float and double */
    } else {
      c->row(c->ctx, r, x, c->cols, (size_t)t, j->s, &l, g);
    }
    j->row_loss[r] = l;
  }
}

static void put(const smx_loss_call *c, size_t i, double v) {
  if (c->elem == SMX_ELEM_F64) ((double *)c->loss)[i] = v;
  else ((float *)c->loss)[i] = (float)v;
}

smx_status smx_loss_rows(const smx_loss_call *c) {
  const smx_loss_resolved *o = c->opt;
  smx_status st;
  if (c->ld < c->cols || (c->grad && c->ldg < c->cols)) return SMX_E_INVALID_ARG;
  size_t rows = c->rows, cols = c->cols, es = smx_elem_size(c->elem);
  size_t nloss = o->reduction == SMX_REDUCTION_NONE ? rows : 1;
  if (rows == 0) {
    if (o->reduction != SMX_REDUCTION_NONE && c->loss) put(c, 0, o->reduction == SMX_REDUCTION_SUM ? 0.0 : NAN);
    return SMX_OK;
  }
  if (cols == 0 || !c->logits || !c->targets || !c->loss) return SMX_E_INVALID_ARG;
  smx_arg args[4] = { SMX_ARG_IN(c->logits, rows, cols, c->ld, es), SMX_ARG_IN(c->targets, 1, rows, rows, 8),
                      SMX_ARG_OUT(c->grad, rows, cols, c->ldg, es, 1), SMX_ARG_OUT(c->loss, 1, nloss, nloss, es, 0) };
  if ((st = smx_check_args(args, 4)) != SMX_OK) return st;
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) {
    int64_t t = c->targets[r];
    if (t == o->ignore_index) continue;
    if (t < 0 || (uint64_t)t >= (uint64_t)cols) return SMX_E_INVALID_ARG;
    count++;
  }
  rows_job j = { c, es, 0.0, malloc(rows * sizeof(double)) };
  if (!j.row_loss) return SMX_E_NOMEM;
  double up = o->grad_scale;
  j.s = o->reduction == SMX_REDUCTION_MEAN ? (count ? up / (double)count : 0.0) : up;
  smx_plan plan = smx_plan_rows(o->base.threads, rows, cols, 0);
  smx_grid_rows(plan.row_threads, rows, 0, rows_task, &j);   /* no scratch: cannot fail */
  if (o->reduction == SMX_REDUCTION_NONE) {
    for (size_t r = 0; r < rows; r++) put(c, r, j.row_loss[r]);
  } else {
    double sum = 0.0;
    for (size_t r = 0; r < rows; r++) sum += j.row_loss[r];
    put(c, 0, o->reduction == SMX_REDUCTION_SUM ? sum : count ? sum / (double)count : NAN);
  }
  free(j.row_loss);
  return SMX_OK;
}
