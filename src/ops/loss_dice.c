/*
 * Soft Dice loss over softmax probabilities (definition and policy in
 * include/smx/smx_losses.h). The class sums run over rows, so the loss
 * needs every row before any gradient: pass A (fixed row blocks on the task
 * grid) forms each row's softmax statistics (loss_row.h), writes the row's
 * probabilities into a per-task scratch row and adds them into the block's
 * per-class partial sums; the partials are folded in block order (the block
 * count depends only on rows, so results are the same for every thread
 * count). The loss terms 1 - Dice_c = N_c / (S_c + U_c + s) take their own
 * sums of nonnegative terms, N_c = sum_r P_rc (1 - G_rc) + G_rc (1 - P_rc)
 * (class targets: 1 - P_rt as the row's other probabilities), not 1 - Dice_c:
 * that subtraction left each term eps absolutely, and a SUM over 141 classes
 * of small terms was 100 ulps off (loss soak). Pass B (rows on the grid) rewrites each gradient row as the
 * softmax VJP of the per-class weights with the registry's backward kernel.
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

#define MAX_BLOCKS 32

typedef struct dice_job {
  smx_lrow p;
  int f64;
  const char *x, *gt;    /* logits; soft targets (or NULL) */
  char *g;
  size_t ld, ldt, ldg, rows, cols, es, block;
  const int64_t *t;      /* class targets (or NULL) */
  int64_t ignore;
  smx_lstat *st;         /* per row; st[r].d = 0 marks an ignored row, NaN a special one */
  double *part;          /* MAX_BLOCKS x 4 x cols: S, I, U, N partials */
  void *a;               /* cols weights A_c in the computing type */
  double *bw;            /* cols weights B_c */
  double scale;
} dice_job;

static double tget(const dice_job *j, size_t r, size_t c) {
  const char *row = j->gt + r * j->ldt * j->es;
  return j->f64 ? ((const double *)(const void *)row)[c] : (double)((const float *)(const void *)row)[c];
}

static int ignored(const dice_job *j, size_t r) { return j->t && j->t[r] == j->ignore; }

/* softmax of row r into buf (NaN when the row is special); 0 for an ignored row */
static int probs(const dice_job *j, size_t r, void *buf) {
  if (ignored(j, r)) return 0;
  const char *x = j->x + r * j->ld * j->es;
  smx_lstat *s = &j->st[r];
  int ok = j->f64 ? smx_lrow_stat_f64(&j->p, (const double *)(const void *)x, j->cols, s)
                   : smx_lrow_stat_f32(&j->p, (const float *)(const void *)x, j->cols, s);
  if (!ok) {
    s->d = NAN;
    for (size_t c = 0; c < j->cols; c++) {
      if (j->f64) ((double *)buf)[c] = NAN;
      else ((float *)buf)[c] = NAN;
    }
  } else if (j->f64) {
    smx_lrow_scaled_p_f64(&j->p, s, (const double *)(const void *)x, buf, j->cols, 1.0);
  } else {
    smx_lrow_scaled_p_f32(&j->p, s, (const float *)(const void *)x, buf, j->cols, 1.0);
  }
  return 1;
}

static void sums_task(void *ctx, size_t b0, size_t b1, void *scratch) {
  const dice_job *j = ctx;
  size_t n = j->cols;
  for (size_t b = b0; b < b1; b++) {
    double *S = j->part + b * 4 * n, *I = S + n, *U = I + n, *N = U + n;
    memset(S, 0, 4 * n * sizeof(double));
    size_t r1 = (b + 1) * j->block < j->rows ? (b + 1) * j->block : j->rows;
    for (size_t r = b * j->block; r < r1; r++) {
      if (!probs(j, r, scratch)) {
        j->st[r].d = 0.0;
        continue;
      }
      if (j->f64) {
        const double *pr = scratch;
        for (size_t c = 0; c < n; c++) S[c] += pr[c];
      } else {
        const float *pr = scratch;
        for (size_t c = 0; c < n; c++) S[c] += pr[c];
      }
      if (j->t) {
        size_t t = (size_t)j->t[r];
        double rest = 0.0;   /* 1 - P_rt, as the sum of the others: no cancellation as P_rt -> 1 */
        for (size_t c = 0; c < n; c++) {
          double pv = j->f64 ? ((const double *)scratch)[c] : (double)((const float *)scratch)[c];
          if (c == t) continue;
          N[c] += pv;
          rest += pv;
        }
        I[t] += j->f64 ? ((const double *)scratch)[t] : (double)((const float *)scratch)[t];
        U[t] += 1.0;
        N[t] += rest;
      } else {
        for (size_t c = 0; c < n; c++) {
          double gv = tget(j, r, c), pv = j->f64 ? ((const double *)scratch)[c] : (double)((const float *)scratch)[c];
          I[c] += pv * gv;
          U[c] += gv;
          N[c] += pv * (1.0 - gv) + gv * (1.0 - pv);
        }
      }
    }
  }
}

/* Gradient rows: dx = s p (w - <p, w>), w_c = A_c + B_c G_rc. scratch: one row (soft targets' w). */
static void grad_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const dice_job *j = ctx;
  size_t n = j->cols;
  for (size_t r = r0; r < r1; r++) {
    char *g = j->g + r * j->ldg * j->es;
    const smx_lstat *s = &j->st[r];
    if (s->d == 0.0) {
      memset(g, 0, n * j->es);
      continue;
    }
    if (s->d != s->d) {
      for (size_t c = 0; c < n; c++) {
        if (j->f64) ((double *)(void *)g)[c] = NAN;
        else ((float *)(void *)g)[c] = NAN;
      }
      continue;
    }
    const char *x = j->x + r * j->ld * j->es;
    const void *w = j->a;
    if (!j->t) {   /* soft targets: w into scratch */
      for (size_t c = 0; c < n; c++) {
        double v = (j->f64 ? ((const double *)j->a)[c] : (double)((const float *)j->a)[c]) + j->bw[c] * tget(j, r, c);
        if (j->f64) ((double *)scratch)[c] = v;
        else ((float *)scratch)[c] = smx_lrow_sat(v);
      }
      w = scratch;
    }
    size_t t = j->t ? (size_t)j->t[r] : 0;
    if (j->f64) {
      double *gd = (double *)(void *)g;
      const double *wd = w;
      smx_lrow_scaled_p_f64(&j->p, s, (const double *)(const void *)x, gd, n, 1.0);
      double dot = 0.0;
      for (size_t c = 0; c < n; c++) dot += gd[c] * wd[c];
      if (j->t) dot += j->bw[t] * gd[t];
      double pt = j->t ? gd[t] : 0.0;
      for (size_t c = 0; c < n; c++) gd[c] = j->scale * gd[c] * (wd[c] - dot);
      if (j->t) gd[t] += j->scale * j->bw[t] * pt;
    } else {
      float *gf = (float *)(void *)g;
      const float *wf = w;
      smx_lrow_scaled_p_f32(&j->p, s, (const float *)(const void *)x, gf, n, 1.0);
      double dot = j->p.g32->rdot(n, gf, wf);
      double pt = j->t ? gf[t] : 0.0;
      if (j->t) dot += j->bw[t] * pt;
      j->p.g32->vsoftmax_bwd(n, gf, wf, gf, (float)dot, (float)j->scale);
      if (j->t) gf[t] = smx_lrow_sat((double)gf[t] + j->scale * j->bw[t] * pt);
    }
  }
}

static void put(int f64, void *loss, size_t i, double v) {
  if (f64) ((double *)loss)[i] = v;
  else ((float *)loss)[i] = (float)v;
}

static smx_status run_dice(smx_elem elem, const void *logits, size_t ld, const int64_t *targets, const void *soft,
                           size_t ldt, void *loss, void *grad, size_t ldg, size_t rows, size_t cols, double smooth,
                           const smx_options *opt) {
  smx_loss_resolved ro;
  const smx_loss_resolved *o = &ro;
  smx_status st = smx_resolve_loss_options(opt, 0, &ro);
  if (st != SMX_OK) return st;
  if (!(smooth >= 0.0 && smooth <= 1.7976931348623157e308)) return SMX_E_INVALID_ARG;
  if ((targets != NULL) == (soft != NULL) && rows > 0) return SMX_E_INVALID_ARG;   /* exactly one kind */
  if (ld < cols || (grad && ldg < cols) || (soft && ldt < cols)) return SMX_E_INVALID_ARG;
  int f64 = elem == SMX_ELEM_F64;
  size_t es = smx_elem_size(elem), nloss = o->reduction == SMX_REDUCTION_NONE ? cols : 1;
  if (cols == 0 || !loss) return SMX_E_INVALID_ARG;
  if (rows == 0) {   /* every sum 0: Dice (0 + s) / (0 + s), taken as 1 (also at s = 0) */
    for (size_t c = 0; c < nloss; c++) put(f64, loss, c, 0.0);
    return SMX_OK;
  }
  if (!logits) return SMX_E_INVALID_ARG;
  smx_arg args[5] = { SMX_ARG_IN(logits, rows, cols, ld, es), SMX_ARG_IN(targets, 1, rows, rows, 8),
                      SMX_ARG_IN(soft, rows, cols, ldt, es), SMX_ARG_OUT(grad, rows, cols, ldg, es, 0),
                      SMX_ARG_OUT(loss, 1, nloss, nloss, es, 0) };
  if ((st = smx_check_args(args, 5)) != SMX_OK) return st;
  for (size_t r = 0; targets && r < rows; r++)
    if (targets[r] != o->ignore_index && (targets[r] < 0 || (uint64_t)targets[r] >= (uint64_t)cols))
      return SMX_E_INVALID_ARG;
  dice_job j;
  memset(&j, 0, sizeof j);
  size_t nb = rows < MAX_BLOCKS ? rows : MAX_BLOCKS;
  j.block = (rows + nb - 1) / nb;
  nb = (rows + j.block - 1) / j.block;
  j.st = malloc(rows * sizeof(smx_lstat));
  j.part = malloc(nb * 4 * cols * sizeof(double));
  j.a = malloc(cols * es);
  j.bw = malloc(cols * sizeof(double));
  if (!j.st || !j.part || !j.a || !j.bw) {
    st = SMX_E_NOMEM;
    goto out;
  }
  smx_lrow_init(&j.p, 1.0);
  j.f64 = f64;
  j.x = logits;
  j.gt = soft;
  j.g = grad;
  j.ld = ld;
  j.ldt = ldt;
  j.ldg = ldg;
  j.rows = rows;
  j.cols = cols;
  j.es = es;
  j.t = targets;
  j.ignore = o->ignore_index;
  int threads = o->base.threads;
  smx_plan bp = smx_plan_rows(threads, nb, cols * j.block, 0);
  if ((st = smx_grid_rows(bp.row_threads, nb, cols * es, sums_task, &j)) != SMX_OK) goto out;
  /* fold the partials in block order; per-class Dice, the loss and the weights */
  double kappa = o->reduction == SMX_REDUCTION_MEAN ? 1.0 / (double)cols : 1.0;
  double up = o->grad_scale, total = 0.0;
  for (size_t c = 0; c < cols; c++) {
    double S = 0.0, I = 0.0, U = 0.0, N = 0.0;
    for (size_t b = 0; b < nb; b++) {
      S += j.part[b * 4 * cols + c];
      I += j.part[b * 4 * cols + cols + c];
      U += j.part[b * 4 * cols + 2 * cols + c];
      N += j.part[b * 4 * cols + 3 * cols + c];
    }
    double den = S + U + smooth, dice = (2.0 * I + smooth) / den;
    if (den == 0.0) dice = 1.0;   /* no mass and no smoothing: an empty class counts as perfect */
    double l = den == 0.0 ? 0.0 : N / den;   /* 1 - Dice_c, to eps relatively */
    if (o->reduction == SMX_REDUCTION_NONE) put(f64, loss, c, l);
    else total += l;
    /* w_c = dL/dP_c = -kappa (2 G_c - Dice_c) / Den_c = A_c + B_c G_c */
    double a = den == 0.0 ? 0.0 : kappa * dice / den, b = den == 0.0 ? 0.0 : -2.0 * kappa / den;
    if (f64) ((double *)j.a)[c] = a;
    else ((float *)j.a)[c] = smx_lrow_sat(a);
    j.bw[c] = b;
  }
  if (o->reduction != SMX_REDUCTION_NONE) put(f64, loss, 0, o->reduction == SMX_REDUCTION_MEAN ? total * kappa : total);
  if (grad) {
    j.scale = up;
    smx_plan gp = smx_plan_rows(threads, rows, cols, 0);
    st = smx_grid_rows(gp.row_threads, rows, targets ? 0 : cols * es, grad_task, &j);
  }
out:
  free(j.st);
  free(j.part);
  free(j.a);
  free(j.bw);
  return st;
}

smx_status smx_dice_loss_f32(const float *logits, size_t ld, const int64_t *targets, const float *target_probs,
                             size_t ldt, float *loss, float *grad, size_t ldg, size_t rows, size_t cols, double smooth,
                             const smx_options *opt) {
  return run_dice(SMX_ELEM_F32, logits, ld, targets, target_probs, ldt, loss, grad, ldg, rows, cols, smooth, opt);
}

smx_status smx_dice_loss_f64(const double *logits, size_t ld, const int64_t *targets, const double *target_probs,
                             size_t ldt, double *loss, double *grad, size_t ldg, size_t rows, size_t cols,
                             double smooth, const smx_options *opt) {
  return run_dice(SMX_ELEM_F64, logits, ld, targets, target_probs, ldt, loss, grad, ldg, rows, cols, smooth, opt);
}
