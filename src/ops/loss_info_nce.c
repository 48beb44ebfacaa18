/*
 * InfoNCE / CLIP contrastive loss over a similarity matrix (definition and
 * policy in include/smx/smx_losses.h). The row term is a cross-entropy of
 * each row of sim / T (loss_row.h: one online pass, one gradient pass). The
 * column term (symmetric) needs softmax down the columns: the columns are
 * gathered a block at a time into a small row-major buffer (one cache line
 * of each row per block), where the same row machinery runs; their gradient
 * is added back into the column. Rows on the task grid, then column blocks on
 * the task grid; each output element is written by one task, and the losses
 * are summed in row order in double: the same results for every thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/loss_row.h"
#include "ops/loss_rows.h"
#include "smx/smx.h"

#define COL_BLOCK 16   /* 64 bytes of f32 (128 of f64) of each row per gathered block */

typedef struct nce_job {
  smx_lrow p;
  int f64, sym;
  const char *x;
  char *g;
  size_t ld, ldg, rows, cols, es;
  const int64_t *t;      /* NULL: the diagonal */
  int64_t ignore;
  const int64_t *owner;  /* symmetric: the row targeting each column, or -1 */
  double sr, sc;         /* gradient scales of the row and column terms (s/2 each when symmetric) */
  double *row_loss, *col_loss;
} nce_job;

static int64_t target(const nce_job *j, size_t r) { return j->t ? j->t[r] : (int64_t)r; }

static void fill(int f64, void *g, size_t n, size_t stride, double v) {
  for (size_t i = 0; i < n; i++) {
    if (f64) ((double *)g)[i * stride] = v;
    else ((float *)g)[i * stride] = (float)v;
  }
}

/* One cross-entropy term of a contiguous vector x of n with target k and scale a:
 * returns the loss; g (n, may be x) gets a (softmax(x / T) - onehot(k)) unless NULL. */
static double ce_term(const nce_job *j, const void *x, size_t n, size_t k, double a, void *g) {
  smx_lstat st;
  int ok = j->f64 ? smx_lrow_stat_f64(&j->p, x, n, &st) : smx_lrow_stat_f32(&j->p, x, n, &st);
  if (!ok) {
    if (g) fill(j->f64, g, n, 1, NAN);
    return NAN;
  }
  double xk = j->f64 ? ((const double *)x)[k] : (double)((const float *)x)[k];
  double lp = smx_lrow_logp(&j->p, &st, xk);
  if (g) {
    double gk = a * expm1(lp);   /* a (p_k - 1), from double */
    if (j->f64) {
      smx_lrow_scaled_p_f64(&j->p, &st, x, g, n, a);
      ((double *)g)[k] = gk;
    } else {
      smx_lrow_scaled_p_f32(&j->p, &st, x, g, n, a);
      ((float *)g)[k] = smx_lrow_sat(gk);
    }
  }
  return -lp;
}

static void row_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const nce_job *j = ctx;
  (void)scratch;
  for (size_t r = r0; r < r1; r++) {
    int64_t t = target(j, r);
    void *g = j->g ? j->g + r * j->ldg * j->es : NULL;
    if (t == j->ignore) {
      j->row_loss[r] = 0.0;
      if (g) memset(g, 0, j->cols * j->es);
      continue;
    }
    j->row_loss[r] = ce_term(j, j->x + r * j->ld * j->es, j->cols, (size_t)t, j->sr * j->p.inv_t, g);
  }
}

/* Column blocks [b0, b1) of COL_BLOCK columns; scratch: COL_BLOCK x rows elements. */
static void col_task(void *ctx, size_t b0, size_t b1, void *scratch) {
  const nce_job *j = ctx;
  for (size_t b = b0; b < b1; b++) {
    size_t c0 = b * COL_BLOCK, nc = j->cols - c0 < COL_BLOCK ? j->cols - c0 : COL_BLOCK;
    size_t live = 0;
    for (size_t c = c0; c < c0 + nc; c++) live += j->owner[c] >= 0;
    if (!live) continue;
    /* gather: buf[k][r] = x[r][c0 + k] */
    for (size_t r = 0; r < j->rows; r++) {
      const char *xr = j->x + (r * j->ld + c0) * j->es;
      for (size_t k = 0; k < nc; k++) {
        if (j->f64) ((double *)scratch)[k * j->rows + r] = ((const double *)(const void *)xr)[k];
        else ((float *)scratch)[k * j->rows + r] = ((const float *)(const void *)xr)[k];
      }
    }
    for (size_t k = 0; k < nc; k++) {
      int64_t o = j->owner[c0 + k];
      if (o < 0) continue;
      char *buf = (char *)scratch + k * j->rows * j->es;
      j->col_loss[o] = ce_term(j, buf, j->rows, (size_t)o, j->sc * j->p.inv_t, j->g ? buf : NULL);
      if (!j->g) continue;
      for (size_t r = 0; r < j->rows; r++) {
        char *gr = j->g + (r * j->ldg + c0 + k) * j->es;
        if (j->f64) *(double *)(void *)gr += ((const double *)(const void *)buf)[r];
        else *(float *)(void *)gr += ((const float *)(const void *)buf)[r];
      }
    }
  }
}

static void put(int f64, void *loss, size_t i, double v) {
  if (f64) ((double *)loss)[i] = v;
  else ((float *)loss)[i] = (float)v;
}

static smx_status run_nce(smx_elem elem, const void *sim, size_t ld, const int64_t *targets, void *loss, void *grad,
                          size_t ldg, size_t rows, size_t cols, int symmetric, const smx_options *opt) {
  smx_loss_resolved ro;
  const smx_loss_resolved *o = &ro;
  smx_status st = smx_resolve_loss_options(opt, SMX_LOSS_USES_TEMPERATURE, &ro);
  if (st != SMX_OK) return st;
  double temperature = o->base.temperature;
  if (symmetric != 0 && symmetric != 1) return SMX_E_INVALID_ARG;
  if (ld < cols || (grad && ldg < cols)) return SMX_E_INVALID_ARG;
  int f64 = elem == SMX_ELEM_F64;
  size_t es = smx_elem_size(elem), nloss = o->reduction == SMX_REDUCTION_NONE ? rows : 1;
  if (rows == 0) {
    if (o->reduction != SMX_REDUCTION_NONE && loss) put(f64, loss, 0, o->reduction == SMX_REDUCTION_SUM ? 0.0 : NAN);
    return SMX_OK;
  }
  if (cols == 0 || !sim || !loss || (!targets && rows > cols)) return SMX_E_INVALID_ARG;
  /* symmetric: the column pass reads sim after the row pass wrote grad, so no in place */
  smx_arg args[4] = { SMX_ARG_IN(sim, rows, cols, ld, es), SMX_ARG_IN(targets, 1, rows, rows, 8),
                      SMX_ARG_OUT(grad, rows, cols, ldg, es, symmetric ? 0 : 1),
                      SMX_ARG_OUT(loss, 1, nloss, nloss, es, 0) };
  if ((st = smx_check_args(args, 4)) != SMX_OK) return st;
  nce_job j;
  memset(&j, 0, sizeof j);
  j.t = targets;
  j.ignore = targets ? o->ignore_index : INT64_MIN;
  int64_t *owner = NULL;
  if (symmetric && !(owner = malloc(cols * sizeof(int64_t)))) return SMX_E_NOMEM;
  for (size_t c = 0; owner && c < cols; c++) owner[c] = -1;
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) {
    int64_t t = target(&j, r);
    if (t == j.ignore) continue;
    /* a column targeted twice has no single positive: refused */
    if (t < 0 || (uint64_t)t >= (uint64_t)cols || (owner && owner[t] >= 0)) {
      free(owner);
      return SMX_E_INVALID_ARG;
    }
    if (owner) owner[t] = (int64_t)r;
    count++;
  }
  j.row_loss = malloc(rows * sizeof(double));
  j.col_loss = symmetric ? calloc(rows, sizeof(double)) : NULL;
  if (!j.row_loss || (symmetric && !j.col_loss)) {
    free(owner);
    free(j.row_loss);
    free(j.col_loss);
    return SMX_E_NOMEM;
  }
  smx_lrow_init(&j.p, temperature);
  j.f64 = f64;
  j.sym = symmetric;
  j.x = sim;
  j.g = grad;
  j.ld = ld;
  j.ldg = ldg;
  j.rows = rows;
  j.cols = cols;
  j.es = es;
  j.owner = owner;
  double up = o->grad_scale;
  double s = o->reduction == SMX_REDUCTION_MEAN ? (count ? up / (double)count : 0.0) : up;
  j.sr = j.sc = symmetric ? 0.5 * s : s;
  int threads = o->base.threads;
  smx_plan plan = smx_plan_rows(threads, rows, cols, 0);
  smx_grid_rows(plan.row_threads, rows, 0, row_task, &j);
  if (symmetric) {
    size_t blocks = (cols + COL_BLOCK - 1) / COL_BLOCK;
    smx_plan cp = smx_plan_rows(threads, blocks, rows * COL_BLOCK, 0);
    st = smx_grid_rows(cp.row_threads, blocks, COL_BLOCK * rows * es, col_task, &j);
  }
  if (st == SMX_OK) {
    double sum = 0.0;
    for (size_t r = 0; r < rows; r++) {
      double l = j.row_loss[r];
      if (symmetric) l = 0.5 * (l + j.col_loss[r]);
      if (o->reduction == SMX_REDUCTION_NONE) put(f64, loss, r, l);
      else sum += l;
    }
    if (o->reduction != SMX_REDUCTION_NONE)
      put(f64, loss, 0, o->reduction == SMX_REDUCTION_SUM ? sum : count ? sum / (double)count : NAN);
  }
  free(owner);
  free(j.row_loss);
  free(j.col_loss);
  return st;
}

smx_status smx_info_nce_f32(const float *sim, size_t ld, const int64_t *targets, float *loss, float *grad, size_t ldg,
                            size_t rows, size_t cols, int symmetric, const smx_options *opt) {
  return run_nce(SMX_ELEM_F32, sim, ld, targets, loss, grad, ldg, rows, cols, symmetric, opt);
}

smx_status smx_info_nce_f64(const double *sim, size_t ld, const int64_t *targets, double *loss, double *grad,
                            size_t ldg, size_t rows, size_t cols, int symmetric, const smx_options *opt) {
  return run_nce(SMX_ELEM_F64, sim, ld, targets, loss, grad, ldg, rows, cols, symmetric, opt);
}
