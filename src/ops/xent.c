/*
 * Fused cross-entropy entry points: option and argument checks (every target
 * is validated before anything is written), rows on the engine's task grid
 * (src/core/), and the reduction of row losses in row order, in double, so
 * the result is the same for every thread count. The rows: xent_row.c.
 */
#include <math.h>
#include <stdlib.h>

#include "core/grid.h"
#include "core/ksum.h"
#include "core/operands.h"
#include "core/options.h"
#include "core/temperature.h"
#include "kernels/f32-xent/ukernels.h"
#include "ops/xent_row.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct xent_job {
  smx_xent_params p;
  smx_xent_row64 p64;   /* f64 rows */
  smx_elem elem;
  const void *x;
  void *g;
  size_t ld, ldg, cols;
  const int64_t *targets;
  int64_t ignore;
  double *row_loss;   /* MEAN / SUM: one double per row, summed in order afterwards */
  void *loss;         /* NONE: written directly (double for f64 logits, else float) */
  void *lse;          /* may be NULL; the loss's type                               */
} xent_job;

static void put(smx_elem e, void *a, size_t i, double v) {
  if (e == SMX_ELEM_F64) ((double *)a)[i] = v;
  else ((float *)a)[i] = (float)v;
}

static void xent_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const xent_job *j = ctx;
  size_t es = smx_elem_size(j->elem);
  for (size_t r = r0; r < r1; r++) {
    int64_t t = j->targets[r];
    double l, lse;
    float lse32 = 0.0f; /* clang cannot see that it is written whenever it is read */
    const char *x = (const char *)j->x + r * j->ld * es;
    void *g = j->g ? (char *)j->g + r * j->ldg * es : NULL;
    if (j->elem == SMX_ELEM_F64) {
      smx_xent_row_f64(&j->p64, (const double *)(const void *)x, j->cols, t, t == j->ignore, &l,
                       j->lse ? &lse : NULL, g, scratch);
    } else {
      smx_xent_row(&j->p, j->elem, x, j->cols, t, t == j->ignore, &l, j->lse ? &lse32 : NULL, g);
      lse = lse32;
    }
    if (j->row_loss) j->row_loss[r] = l;
    else put(j->elem, j->loss, r, l);
    if (j->lse) put(j->elem, j->lse, r, lse);
  }
}

static smx_status run_xent(smx_elem elem, const void *logits, size_t ld, const int64_t *targets, void *loss,
                           void *grad, size_t ldg, void *lse, size_t rows, size_t cols, const smx_options *opt) {
  smx_loss_resolved o;
  smx_status st = smx_resolve_loss_options(
      opt, SMX_LOSS_USES_TEMPERATURE | SMX_LOSS_USES_SMOOTHING | SMX_LOSS_USES_MASKED_FLAG, &o);
  if (st != SMX_OK) return st;
  double temp = o.base.temperature;
  if (ld < cols || (grad && ldg < cols)) return SMX_E_INVALID_ARG;
  size_t nloss = o.reduction == SMX_REDUCTION_NONE ? rows : 1;
  if (rows == 0) {
    if (o.reduction != SMX_REDUCTION_NONE && loss) put(elem, loss, 0, o.reduction == SMX_REDUCTION_SUM ? 0.0 : NAN);
    return SMX_OK;
  }
  if (cols == 0 || !logits || !targets || !loss) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem), ls = elem == SMX_ELEM_F64 ? sizeof(double) : sizeof(float);
  /* the gradient may be the logits exactly (in place); nothing else may overlap */
  smx_arg args[5] = { SMX_ARG_IN(logits, rows, cols, ld, es), SMX_ARG_IN(targets, 1, rows, rows, sizeof(int64_t)),
                      SMX_ARG_OUT(grad, rows, cols, ldg, es, 1), SMX_ARG_OUT(loss, 1, nloss, nloss, ls, 0),
                      SMX_ARG_OUT(lse, 1, rows, rows, ls, 0) };
  st = smx_check_args(args, 5);
  if (st != SMX_OK) return st;
  /* every target, before anything is written */
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) {
    int64_t t = targets[r];
    if (t == o.ignore_index) continue;
    if (t < 0 || (uint64_t)t >= (uint64_t)cols) return SMX_E_INVALID_ARG;
    count++;
  }
  xent_job j;
  j.row_loss = NULL;
  if (o.reduction != SMX_REDUCTION_NONE) {
    j.row_loss = malloc(rows * sizeof(double));
    if (!j.row_loss) return SMX_E_NOMEM;
  }
  const smx_registry *reg = smx_f32_registry_for(temp);
  const smx_f32_ukernels *k = reg->f32;
  smx_row_params rp;
  smx_row_params_init(&rp, k, SMX_OP_LOGSUMEXP, SMX_ALGO_ONLINE, temp, 0, 1);
  j.p.k = k;
  j.p.g = reg->xent;   /* the backward kernels of the same configuration */
  j.p.c = rp.c;
  j.p.inv_t = rp.inv_t_d;
  j.p.eps = o.label_smoothing;
  j.p.z = o.z_loss;
  double up = o.grad_scale;
  j.p.s = o.reduction == SMX_REDUCTION_MEAN ? (count ? up / (double)count : 0.0) : up;
  j.p.flags = o.base.flags & SMX_FLAG_MASKED_ROW_NAN;
  if (elem == SMX_ELEM_F64) {
    j.p64.t = temp;
    j.p64.eps = j.p.eps;
    j.p64.z = j.p.z;
    j.p64.s = j.p.s;
    j.p64.flags = j.p.flags;
  }
  j.elem = elem;
  j.x = logits;
  j.g = grad;
  j.ld = ld;
  j.ldg = ldg;
  j.cols = cols;
  j.targets = targets;
  j.ignore = o.ignore_index;
  j.loss = loss;
  j.lse = lse;
  smx_plan plan = smx_plan_rows(o.base.threads, rows, cols, 0);
  /* f64 rows take a scratch row of log-probabilities (the only way this fails: SMX_E_NOMEM) */
  size_t scratch = elem == SMX_ELEM_F64 ? smx_mul(cols, sizeof(double), (size_t)-1 / 2) : 0;
  if (elem == SMX_ELEM_F64 && !scratch) st = SMX_E_NOMEM;
  else st = smx_grid_rows(plan.row_threads, rows, scratch, xent_task, &j);
  if (st != SMX_OK) {
    free(j.row_loss);
    return st;
  }
  if (j.row_loss) {
    double sum = 0.0, c = 0.0;
    if (elem == SMX_ELEM_F64) {   /* compensated: the f64 bound may not grow with the rows */
      for (size_t r = 0; r < rows; r++) smx_kadd(&sum, &c, j.row_loss[r]);
      if (isfinite(sum)) sum += c;
    } else {
      for (size_t r = 0; r < rows; r++) sum += j.row_loss[r];
    }
    put(elem, loss, 0, o.reduction == SMX_REDUCTION_MEAN ? (count ? sum / (double)count : NAN) : sum);
    free(j.row_loss);
  }
  return SMX_OK;
}

smx_status smx_cross_entropy_f32(const float *logits, size_t ld, const int64_t *targets, float *loss, float *grad,
                                 size_t ldg, float *lse, size_t rows, size_t cols, const smx_options *opt) {
  return run_xent(SMX_ELEM_F32, logits, ld, targets, loss, grad, ldg, lse, rows, cols, opt);
}

smx_status smx_cross_entropy_f64(const double *logits, size_t ld, const int64_t *targets, double *loss, double *grad,
                                 size_t ldg, double *lse, size_t rows, size_t cols, const smx_options *opt) {
  return run_xent(SMX_ELEM_F64, logits, ld, targets, loss, grad, ldg, lse, rows, cols, opt);
}

smx_status smx_cross_entropy_f16(const uint16_t *logits, size_t ld, const int64_t *targets, float *loss,
                                 uint16_t *grad, size_t ldg, float *lse, size_t rows, size_t cols,
                                 const smx_options *opt) {
  return run_xent(SMX_ELEM_F16, logits, ld, targets, loss, grad, ldg, lse, rows, cols, opt);
}

smx_status smx_cross_entropy_bf16(const uint16_t *logits, size_t ld, const int64_t *targets, float *loss,
                                  uint16_t *grad, size_t ldg, float *lse, size_t rows, size_t cols,
                                  const smx_options *opt) {
  return run_xent(SMX_ELEM_BF16, logits, ld, targets, loss, grad, ldg, lse, rows, cols, opt);
}
