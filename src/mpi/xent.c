/*
 * Sharded cross-entropy, forward and backward (smx_mpi.h): per row, the
 * slice's (max, sum) pair from the engine's fused top-1, the target logit
 * from the one rank that owns it (0 elsewhere), and with label smoothing the
 * sum of the slice's logits: one MPI_Allreduce of these 3 (or 4) doubles a
 * row. The loss then follows on every rank, and the gradient of each slice
 * from the engine's local softmax rescaled to the whole row.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_common.h"
#include "mpi/mpi_util.h"
#include "smx/smx_mpi.h"

typedef struct xent_ctx {
  const float *x;
  size_t ld, rows, cols, ldg;
  const int64_t *t;
  smx_loss_ext o;     /* opt->loss, or SMX_LOSS_EXT_INIT */
  double temperature; /* opt->temperature as given (0 means 1) */
  uint32_t flags;
  int threads;
  float *loss, *grad, *lse;
  double inv_t, e, z;
} xent_ctx;

static smx_status check_local(const xent_ctx *a) {
  const smx_loss_ext *o = &a->o;
  if ((unsigned)o->reduction > (unsigned)SMX_REDUCTION_NONE) return SMX_E_INVALID_ARG;
  if (!(o->label_smoothing >= 0.0 && o->label_smoothing <= 1.0)) return SMX_E_INVALID_ARG;
  if (!(o->z_loss >= 0.0 && o->z_loss <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (!(o->grad_scale >= -DBL_MAX && o->grad_scale <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (a->flags & ~(uint32_t)SMX_FLAG_MASKED_ROW_NAN) return SMX_E_INVALID_ARG;
  if (a->threads < 0) return SMX_E_INVALID_ARG;
  double t = a->temperature == 0.0 ? 1.0 : a->temperature;
  if (!(t > 0.0 && t <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (a->ld < a->cols || (a->grad && a->ldg < a->cols)) return SMX_E_INVALID_ARG;
  if (!a->loss) return a->rows == 0 ? SMX_OK : SMX_E_INVALID_ARG;
  if (a->rows == 0) return SMX_OK;
  if (!a->t || (a->cols && !a->x)) return SMX_E_INVALID_ARG;
  size_t nl = o->reduction == SMX_REDUCTION_NONE ? a->rows : 1, r = a->rows, c = a->cols;
  const void *g = a->grad && c ? a->grad : NULL;
  int same = g && a->grad == a->x && a->ldg == a->ld;
  if ((!same && smx_mpi_overlap(a->x, r, c, a->ld, g, r, c, a->ldg)) ||
      smx_mpi_overlap(a->x, r, c, a->ld, a->loss, 1, nl, nl) || smx_mpi_overlap(a->x, r, c, a->ld, a->lse, 1, r, r) ||
      smx_mpi_overlap(g, r, c, a->ldg, a->loss, 1, nl, nl) || smx_mpi_overlap(g, r, c, a->ldg, a->lse, 1, r, r) ||
      smx_mpi_overlap(a->loss, 1, nl, nl, a->lse, 1, r, r) ||
      smx_mpi_overlap_es(a->t, 1, r * 8, r * 8, a->loss, 1, nl * 4, nl * 4, 1) ||
      smx_mpi_overlap_es(a->t, 1, r * 8, r * 8, a->lse, 1, r * 4, r * 4, 1) ||
      smx_mpi_overlap_es(a->t, 1, r * 8, r * 8, g, r, c * 4, a->ldg * 4, 1))
    return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* What every rank must agree on. Not whether grad is given: each rank's gradient is its own slice's, computed
 * after the last collective, and an empty slice may pass NULL while the others pass theirs. */
static uint64_t hash_call(const xent_ctx *a) {
  const smx_loss_ext *o = &a->o;
  uint64_t v[6] = { (uint64_t)o->reduction, (uint64_t)o->ignore_index, smx_mpi_bits(o->label_smoothing),
                    smx_mpi_bits(o->z_loss), smx_mpi_bits(o->grad_scale), a->flags };
  uint64_t h = 0x243f6a8885a308d3ull;
  for (int i = 0; i < 6; i++) h = (h ^ v[i]) * 0x100000001b3ull;
  /* the targets must be the same everywhere: a rank reads only its own */
  for (size_t r = 0; a->t && r < a->rows; r++) h = (h ^ (uint64_t)a->t[r]) * 0x100000001b3ull;
  return h;
}

/* loss of one row (not ignored) from the whole row's (M, S, target, sum of x) */
static double row_loss(const xent_ctx *a, const double *d, double V, int64_t t, double *lse_out) {
  double M = d[0], S = d[1], xt = d[2] * a->inv_t, mean = a->e > 0.0 ? d[3] * a->inv_t / V : 0.0;
  int masked = (a->flags & SMX_FLAG_MASKED_ROW_NAN) != 0;
  (void)t;
  if (M != M) return *lse_out = NAN;
  if (M == -INFINITY) {
    *lse_out = masked ? NAN : -INFINITY;
    return masked ? NAN : INFINITY;
  }
  if (M == INFINITY) {
    *lse_out = INFINITY;
    return xt == INFINITY && a->e == 0.0 && a->z == 0.0 ? log(S) : INFINITY;
  }
  double ls = log(S), lse = M + ls;
  *lse_out = lse;
  double l = (1.0 - a->e) * ((M - xt) + ls);
  if (a->e > 0.0) l += a->e * ((M - mean) + ls);
  if (a->z > 0.0) l += a->z * lse * lse;
  return l;
}

static float sat(double v) {
  if (v > FLT_MAX && v < INFINITY) return FLT_MAX;
  if (v < -FLT_MAX && v > -INFINITY) return -FLT_MAX;
  return (float)v;
}

/* the slice's gradient; g holds the engine's local softmax of the slice */
static void grad_row(const xent_ctx *a, float *g, const double *d, smx_mpi_pair loc, double lse, double scale,
                     double V, int64_t t, uint64_t col0, int ignored) {
  size_t n = a->cols;
  double M = d[0], S = d[1], st = scale * a->inv_t, ev = a->e / V, one = 1.0 - a->e;
  int64_t tl = t - (int64_t)col0;   /* the target's place in the slice, if it is here */
  if (ignored) {
    for (size_t j = 0; j < n; j++) g[j] = 0.0f;
    return;
  }
  if (M != M || (M == -INFINITY && (a->flags & SMX_FLAG_MASKED_ROW_NAN))) {
    for (size_t j = 0; j < n; j++) g[j] = NAN;
    return;
  }
  double f = 0.0, zf = 1.0 + 2.0 * a->z * lse;
  int inf_row = M == INFINITY;
  if (M > -INFINITY && !inf_row && loc.m > -INFINITY) f = loc.s * exp(loc.m - M) / S;
  for (size_t j = 0; j < n; j++) {
    double p;
    if (inf_row) p = loc.m == INFINITY && g[j] > 0.0f ? 1.0 / S : 0.0;
    else p = M == -INFINITY ? 0.0 : (double)g[j] * f;
    double q = p > 0.0 ? p * (inf_row && a->z > 0.0 ? INFINITY : zf) : 0.0;
    g[j] = sat(st * (q - ev - ((int64_t)j == tl ? one : 0.0)));
  }
}

smx_status smx_mpi_cross_entropy_f32(MPI_Comm comm, const float *logits, size_t ld, const int64_t *targets,
                                     float *loss, float *grad, size_t ldg, float *lse, size_t rows,
                                     size_t local_cols, const smx_options *opt) {
  static const smx_loss_ext defaults = SMX_LOSS_EXT_INIT;
  xent_ctx a = { logits, ld, rows, local_cols, ldg, targets, opt && opt->loss ? *opt->loss : defaults,
                 opt ? opt->temperature : 0.0, opt ? opt->flags : 0u, opt ? opt->threads : 0,
                 loss, grad, lse, 1.0, 0.0, 0.0 };
  smx_status st = check_local(&a);
  if (st == SMX_OK && opt && (unsigned)opt->algo > (unsigned)SMX_ALGO_ONLINE) st = SMX_E_INVALID_ARG;
  double t = a.temperature == 0.0 ? 1.0 : a.temperature;
  a.inv_t = st == SMX_OK ? 1.0 / (t < 0x1p-600 ? 0x1p-600 : t) : 1.0;
  a.e = st == SMX_OK ? a.o.label_smoothing : 0.0;
  a.z = st == SMX_OK ? a.o.z_loss : 0.0;
  smx_mpi_call c;
  smx_status bs = smx_mpi_begin(&c, comm, SMX_MPI_FN_XENT, rows, local_cols, smx_mpi_bits(a.temperature),
                                hash_call(&a), a.o.label_smoothing > 0.0);
  if (bs != SMX_OK) return bs;
  if (st == SMX_OK && c.mismatch) st = SMX_E_INVALID_ARG;
  size_t n = c.rows, w = c.ref[2] ? 4 : 3;
  if (n >= INT32_MAX - 2) return SMX_E_INVALID_ARG;
  double *rec = malloc((n + 2) * w * sizeof *rec);
  smx_mpi_pair *loc = malloc((n + 1) * sizeof *loc);
  if (!rec || !loc) {
    free(rec);
    free(loc);
    return SMX_E_NOMEM;
  }
  for (size_t r = 0; r < n; r++) loc[r] = (smx_mpi_pair){ -INFINITY, 0.0 };
  smx_options lo;
  memset(&lo, 0, sizeof lo);
  lo.temperature = t;
  lo.threads = a.threads;
  if (st == SMX_OK && local_cols > 0) st = smx_mpi_local_pairs(logits, ld, n, local_cols, a.inv_t, &lo, loc);
  memset(rec, 0, (n + 2) * w * sizeof *rec);
  for (size_t r = 0; r < n && st == SMX_OK; r++) {
    double *d = rec + r * w;
    const float *x = logits + r * ld;
    int64_t tg = targets[r];
    d[0] = loc[r].m;
    d[1] = loc[r].s;
    if (tg != a.o.ignore_index && tg >= 0 && (uint64_t)tg >= c.col0 && (uint64_t)tg - c.col0 < local_cols)
      d[2] = (double)x[(uint64_t)tg - c.col0];   /* the owner alone reads it */
    if (w == 4) {
      double sx = 0.0;
      for (size_t j = 0; j < local_cols; j++) sx += (double)x[j];
      d[3] = sx;
    }
  }
  if (st != SMX_OK) {
    memset(rec, 0, (n + 2) * w * sizeof *rec);
    for (size_t r = 0; r < n; r++) rec[r * w] = -INFINITY;
  }
  rec[n * w] = (double)st;
  rec[(n + 1) * w] = -INFINITY;
  rec[(n + 1) * w + 2] = (double)local_cols;   /* the total number of classes */
  if (MPI_Allreduce(MPI_IN_PLACE, rec, (int)(n + 2), smx_mpi_pair_plus_type((int)w), smx_mpi_pair_plus_op((int)w),
                    comm) != MPI_SUCCESS)
    st = SMX_E_INTERNAL;
  else
    st = smx_mpi_status_of(rec[n * w]);
  double V = rec[(n + 1) * w + 2];
  if (st == SMX_OK && n > 0 && V == 0.0) st = SMX_E_INVALID_ARG;
  for (size_t r = 0; r < n && st == SMX_OK; r++)
    if (targets[r] != a.o.ignore_index && (targets[r] < 0 || (double)targets[r] >= V)) st = SMX_E_INVALID_ARG;
  /* the forward pass, on every rank: row losses in row order, in double */
  double sum = 0.0;
  uint64_t kept = 0;
  double *lses = st == SMX_OK ? malloc((n + 1) * sizeof *lses) : NULL;
  if (st == SMX_OK && !lses) st = SMX_E_NOMEM;   /* local only: nothing collective follows */
  for (size_t r = 0; r < n && st == SMX_OK; r++) {
    int ign = targets[r] == a.o.ignore_index;
    double l = row_loss(&a, rec + r * w, V, targets[r], &lses[r]);
    if (ign) l = 0.0;
    else kept++;
    if (a.o.reduction == SMX_REDUCTION_NONE) loss[r] = (float)l;
    else sum += l;
    if (lse) lse[r] = lses[r] != lses[r] ? NAN : smx_mpi_to_float(lses[r]);
  }
  if (st == SMX_OK) {
    if (a.o.reduction == SMX_REDUCTION_SUM) *loss = (float)sum;
    if (a.o.reduction == SMX_REDUCTION_MEAN) *loss = (float)(sum / (double)kept);
    if (n == 0 && a.o.reduction != SMX_REDUCTION_NONE) *loss = a.o.reduction == SMX_REDUCTION_SUM ? 0.0f : NAN;
  }
  if (st == SMX_OK && grad && local_cols > 0 && n > 0) {
    double gs = a.o.grad_scale == 0.0 ? 1.0 : a.o.grad_scale;
    double scale = a.o.reduction == SMX_REDUCTION_MEAN ? (kept ? gs / (double)kept : 0.0) : gs;
    st = smx_softmax_rows_f32(logits, ld, grad, ldg, n, local_cols, &lo);
    for (size_t r = 0; r < n && st == SMX_OK; r++)
      grad_row(&a, grad + r * ldg, rec + r * w, loc[r], lses[r], scale, V, targets[r], c.col0,
               targets[r] == a.o.ignore_index);
  }
  free(lses);
  free(rec);
  free(loc);
  return st;
}
