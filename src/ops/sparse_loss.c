/*
 * The Fenchel-Young losses of sparsemax, entmax-1.5 and alpha-entmax
 * (include/smx/smx_sparse.h; Blondel, Martins & Niculae 2020, "Learning with
 * Fenchel-Young losses"; sparsemax's is Martins & Astudillo 2016, eq. 18):
 *   L(x; t) = Omega(p) + <p, x> - x_t,  Omega(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1)),
 * p the operation's output, with gradient p - e_t. Each row's p is formed in the
 * task's scratch (so the gradient may overwrite the logits), the loss is summed
 * over the support in double (relative to the row max), and the gradient written.
 * The row losses are reduced in row order, in double, as cross-entropy does.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/grid.h"
#include "core/ksum.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/entry_points.h"
#include "ops/sparse_row.h"
#include "smx/smx.h"

typedef struct loss_job {
  smx_sparse_kind kind;
  double alpha;
  int f64;
  const char *x;
  char *g;
  size_t ld, ldg, cols, es;
  const int64_t *targets;
  int64_t ignore;
  double s;          /* the gradient's scale */
  uint32_t flags;
  void *loss;        /* NONE: rows values */
  double *row_loss;  /* otherwise */
} loss_job;

static double omega_term(double p, double alpha) {
  return alpha == 2.0 ? p * p : alpha == 1.5 ? p * sqrt(p) : pow(p, alpha);
}

#define LOSS_ROW(T, ROWFN)                                                                                   \
  static double loss_row_##T(const loss_job *j, const T *x, T *g, int64_t t, void *scratch) {              \
    size_t n = j->cols;                                                                                     \
    T *p = (T *)(void *)((char *)scratch + smx_sparse_scratch(n));                                          \
    double m;                                                                                               \
    ROWFN(j->kind, j->alpha, x, p, n, j->flags, scratch, NULL, &m);                                         \
    double l;                                                                                               \
    if (m != m) {   /* a special row: NaN, +inf entries, or no entry above -inf */                          \
      int nan = 0, pinf = 0;                                                                                \
      for (size_t i = 0; i < n; i++) { nan |= x[i] != x[i]; pinf |= x[i] == (T)INFINITY; }                   \
      l = nan || pinf ? NAN : (j->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : INFINITY;                        \
    } else {                                                                                                \
      /* compensated: a support of 5e4 tied entries left a plain sum 2x the bound (tests/ops soak) */        \
      double a = j->alpha, om = 0.0, omc = 0.0, dot = 0.0, dotc = 0.0;                                     \
      for (size_t i = 0; i < n; i++)                                                                        \
        if (p[i] > 0) {                                                                                     \
          smx_kadd(&om, &omc, omega_term((double)p[i], a));                                                 \
          smx_kadd(&dot, &dotc, (double)p[i] * ((double)x[i] - m));                                         \
        }                                                                                                   \
      l = (1.0 - (om + omc)) / (a * (a - 1.0)) + (dot + dotc) - ((double)x[t] - m);                         \
    }                                                                                                       \
    if (g)                                                                                                  \
      for (size_t i = 0; i < n; i++) g[i] = (T)(((double)p[i] - ((int64_t)i == t ? 1.0 : 0.0)) * j->s);      \
    return l;                                                                                               \
  }
LOSS_ROW(float, smx_sparse_row_f32)
LOSS_ROW(double, smx_sparse_row_f64)

static void loss_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const loss_job *j = ctx;
  for (size_t r = r0; r < r1; r++) {
    int64_t t = j->targets[r];
    const char *x = j->x + r * j->ld * j->es;
    char *g = j->g ? j->g + r * j->ldg * j->es : NULL;
    double l;
    if (t == j->ignore) {
      l = 0.0;
      if (g) for (size_t i = 0; i < j->cols * j->es; i++) g[i] = 0;
    } else if (j->f64) {
      l = loss_row_double(j, (const double *)(const void *)x, (double *)(void *)g, t, scratch);
    } else {
      l = loss_row_float(j, (const float *)(const void *)x, (float *)(void *)g, t, scratch);
    }
    if (j->row_loss) j->row_loss[r] = l;
    else if (j->f64) ((double *)j->loss)[r] = l;
    else ((float *)j->loss)[r] = (float)l;
  }
}

static smx_status run_loss(smx_sparse_kind kind, double alpha, int f64, const void *logits, size_t ld,
                           const int64_t *targets, void *loss, void *grad, size_t ldg, size_t rows, size_t cols,
                           const smx_options *opt) {
  smx_loss_resolved ro;
  const smx_loss_resolved *o = &ro;
  smx_status st = smx_resolve_loss_options(opt, SMX_LOSS_USES_MASKED_FLAG, &ro);
  if (st != SMX_OK) return st;
  if (!(alpha > 1.0 && alpha < INFINITY)) return SMX_E_INVALID_ARG;
  if (ld < cols || (grad && ldg < cols)) return SMX_E_INVALID_ARG;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  size_t nloss = o->reduction == SMX_REDUCTION_NONE ? rows : 1;
  if (rows == 0) {
    if (o->reduction != SMX_REDUCTION_NONE && loss) {
      double v = o->reduction == SMX_REDUCTION_SUM ? 0.0 : NAN;
      if (f64) *(double *)loss = v;
      else *(float *)loss = (float)v;
    }
    return SMX_OK;
  }
  if (cols == 0 || !logits || !targets || !loss) return SMX_E_INVALID_ARG;
  smx_arg args[4] = { SMX_ARG_IN(logits, rows, cols, ld, es), SMX_ARG_IN(targets, 1, rows, rows, sizeof(int64_t)),
                      SMX_ARG_OUT(grad, rows, cols, ldg, es, 1), SMX_ARG_OUT(loss, 1, nloss, nloss, es, 0) };
  st = smx_check_args(args, 4);
  if (st != SMX_OK) return st;
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) {
    int64_t t = targets[r];
    if (t == o->ignore_index) continue;
    if (t < 0 || (uint64_t)t >= (uint64_t)cols) return SMX_E_INVALID_ARG;
    count++;
  }
  size_t per = smx_sparse_scratch(1) + es;
  if (cols > SIZE_MAX / 2 / per) return SMX_E_NOMEM;
  loss_job j = { .kind = kind, .alpha = alpha, .f64 = f64, .x = logits, .g = grad, .ld = ld, .ldg = ldg,
                 .cols = cols, .es = es, .targets = targets, .ignore = o->ignore_index, .flags = o->base.flags & SMX_FLAG_MASKED_ROW_NAN,
                 .loss = loss, .row_loss = NULL };
  double up = o->grad_scale;
  j.s = o->reduction == SMX_REDUCTION_MEAN ? (count ? up / (double)count : 0.0) : up;
  if (o->reduction != SMX_REDUCTION_NONE) {
    j.row_loss = malloc(rows * sizeof(double));
    if (!j.row_loss) return SMX_E_NOMEM;
  }
  smx_plan plan = smx_plan_rows(o->base.threads, rows, cols, 0);
  st = smx_grid_rows(plan.row_threads, rows, cols * per, loss_task, &j);
  if (j.row_loss) {
    if (st == SMX_OK) {
      double sum = 0.0;
      for (size_t r = 0; r < rows; r++) sum += j.row_loss[r];
      double v = o->reduction == SMX_REDUCTION_MEAN ? (count ? sum / (double)count : NAN) : sum;
      if (f64) *(double *)loss = v;
      else *(float *)loss = (float)v;
    }
    free(j.row_loss);
  }
  return st;
}

/* The public entry points, one (operation, dtype) per line; OWN is the operation's own parameter
 * (ops/entry_points.h) and ALPHA its value. */
#define SPARSE_LOSS(NAME, SFX, T, F64, KIND, ALPHA, OWN)                                                  \
  smx_status smx_##NAME##_loss_##SFX(const T *logits, size_t ld, const int64_t *targets, T *loss, T *grad, \
                                     size_t ldg, size_t rows, size_t cols OWN(), const smx_options *opt) { \
    return run_loss(KIND, ALPHA, F64, logits, ld, targets, loss, grad, ldg, rows, cols, opt);            \
  }

/* both dtypes of one operation */
#define SPARSE_LOSS_ENTRIES(NAME, KIND, ALPHA, OWN)         \
  SPARSE_LOSS(NAME, f32, float, 0, KIND, ALPHA, OWN)        \
  SPARSE_LOSS(NAME, f64, double, 1, KIND, ALPHA, OWN)

SPARSE_LOSS_ENTRIES(sparsemax, SMX_SPARSE_SPARSEMAX, 2.0, NO_PARAM)
SPARSE_LOSS_ENTRIES(entmax15, SMX_SPARSE_ENTMAX15, 1.5, NO_PARAM)
SPARSE_LOSS_ENTRIES(entmax, SMX_SPARSE_ENTMAX_BISECT, alpha, ALPHA_PARAM)
