/*
 * Sharded log-sum-exp, softmax and log-softmax (smx_mpi.h): each slice's
 * (max, sum) from the engine's fused top-1, one MPI_Allreduce of the pairs,
 * then the slice's outputs against the whole row's pair.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/mpi_common.h"
#include "mpi/mpi_util.h"
#include "smx/smx_mpi.h"

typedef struct norm_args {
  int fn;
  const float *x;
  size_t ldx;
  float *y;      /* softmax, log-softmax */
  size_t ldy;
  float *out;    /* log-sum-exp */
  size_t rows, cols;
} norm_args;

static smx_status check_local(const norm_args *a) {
  if (a->ldx < a->cols) return SMX_E_INVALID_ARG;
  if (a->rows == 0) return SMX_OK;
  if (a->fn == SMX_MPI_FN_LSE) {
    if (!a->out) return SMX_E_INVALID_ARG;
    if (a->cols && smx_mpi_overlap(a->x, a->rows, a->cols, a->ldx, a->out, 1, a->rows, a->rows))
      return SMX_E_INVALID_ARG;
  }
  if (a->cols == 0) return SMX_OK;
  if (!a->x) return SMX_E_INVALID_ARG;
  if (a->fn != SMX_MPI_FN_LSE) {
    if (!a->y || a->ldy < a->cols) return SMX_E_INVALID_ARG;
    int same = a->x == a->y && a->ldx == a->ldy;
    if (!same && smx_mpi_overlap(a->x, a->rows, a->cols, a->ldx, a->y, a->rows, a->cols, a->ldy))
      return SMX_E_INVALID_ARG;
  }
  return SMX_OK;
}

/*
 * Log-sum-exp alone needs no (max, sum) split: the slice's own log-sum-exp
 * l_r (the engine's fastest pass) is the pair (l_r, 1). Its error, at most
 * 4 eps max(1, |l_r|), enters the whole row's with weight exp(l_r - lse) <= 1,
 * and w (|lse| + d) e^-d <= |lse| + 1/e for l_r = lse - d: hence the bound of
 * smx_mpi.h. (Softmax needs the exact max: a rounded l_r would scale every
 * probability by its rounding, relative |l_r| eps.)
 */
static smx_status lse_pairs(const norm_args *a, const smx_options *local, smx_mpi_pair *loc) {
  if (a->rows == 0 || a->cols == 0) return SMX_OK;
  float *l = malloc(a->rows * sizeof *l);
  if (!l) return SMX_E_NOMEM;
  smx_status st = smx_logsumexp_rows_f32(a->x, a->ldx, l, a->rows, a->cols, local);
  for (size_t r = 0; r < a->rows && st == SMX_OK; r++)
    loc[r] = l[r] != l[r] ? (smx_mpi_pair){ NAN, NAN }
             : l[r] == -INFINITY ? (smx_mpi_pair){ -INFINITY, 0.0 }
                                 : (smx_mpi_pair){ (double)l[r], 1.0 };
  free(l);
  return st;
}

static void softmax_rows(const norm_args *a, const smx_mpi_pair *loc, const smx_mpi_pair *all, uint32_t flags) {
  for (size_t r = 0; r < a->rows; r++) {
    float *y = a->y + r * a->ldy;
    smx_mpi_pair g = all[r], l = loc[r];
    size_t n = a->cols;
    if (g.m != g.m || (g.m == -INFINITY && (flags & SMX_FLAG_MASKED_ROW_NAN))) {
      for (size_t j = 0; j < n; j++) y[j] = NAN;
    } else if (g.m == INFINITY) {
      /* the limit: 1/k on the k entries equal to +inf (the engine's y > 0 here) */
      float v = (float)(1.0 / g.s);
      for (size_t j = 0; j < n; j++) y[j] = l.m == INFINITY && y[j] > 0.0f ? v : 0.0f;
    } else if (l.m > -INFINITY) {
      double f = l.s * exp(l.m - g.m) / g.s;
      if (f != 1.0)
        for (size_t j = 0; j < n; j++) y[j] = (float)((double)y[j] * f);
    }   /* a slice of -inf only: the engine's zeros stand */
  }
}

static void log_softmax_rows(const norm_args *a, const smx_mpi_pair *all, double inv_t, uint32_t flags) {
  for (size_t r = 0; r < a->rows; r++) {
    const float *x = a->x + r * a->ldx;
    float *y = a->y + r * a->ldy;
    smx_mpi_pair g = all[r];
    size_t n = a->cols;
    if (g.m != g.m || (g.m == -INFINITY && (flags & SMX_FLAG_MASKED_ROW_NAN))) {
      for (size_t j = 0; j < n; j++) y[j] = NAN;
    } else if (g.m == -INFINITY) {
      for (size_t j = 0; j < n; j++) y[j] = -INFINITY;
    } else if (g.m == INFINITY) {
      float v = (float)-log(g.s);
      for (size_t j = 0; j < n; j++) y[j] = x[j] == INFINITY ? v : -INFINITY;
    } else {
      /* x / T - M / T is exact at the max (the same product as the pair's)
       * and off by 2^-53 relative elsewhere, where it is at least a float
       * spacing of the max away from 0 */
      double m = g.m, ls = log(g.s);
      for (size_t j = 0; j < n; j++) y[j] = smx_mpi_to_float(((double)x[j] * inv_t - m) - ls);
    }
  }
}

static smx_status run(MPI_Comm comm, norm_args a, const smx_options *opt) {
  smx_options local;
  double inv_t;
  smx_status st = smx_mpi_local_options(opt, &local, &inv_t);
  if (st == SMX_OK) st = check_local(&a);
  uint32_t flags = opt ? opt->flags : 0;
  smx_mpi_call c;
  smx_status bs = smx_mpi_begin(&c, comm, a.fn, a.rows, a.cols, smx_mpi_bits(1.0 / inv_t), flags, 0);
  if (bs != SMX_OK) return bs;
  if (st == SMX_OK && c.mismatch) st = SMX_E_INVALID_ARG;
  size_t n = c.rows;
  /* n + 1 pairs: the collective's size is rank 0's; the last pair is the status */
  if (n >= INT32_MAX) return SMX_E_INVALID_ARG;   /* MPI counts are int; n is the same on every rank */
  smx_mpi_pair *all = malloc((n + 1) * sizeof *all), *loc = malloc((n + 1) * sizeof *loc);
  if (!all || !loc) {
    free(all);
    free(loc);
    return SMX_E_NOMEM;   /* cannot take part: docs say the others then wait */
  }
  for (size_t r = 0; r < n; r++) loc[r] = (smx_mpi_pair){ -INFINITY, 0.0 };
  if (st == SMX_OK && a.fn == SMX_MPI_FN_LSE) st = lse_pairs(&a, &local, loc);
  else if (st == SMX_OK) st = smx_mpi_local_pairs(a.x, a.ldx, a.rows, a.cols, inv_t, &local, loc);
  for (size_t r = 0; r < n; r++) all[r] = st == SMX_OK ? loc[r] : (smx_mpi_pair){ -INFINITY, 0.0 };
  all[n] = smx_mpi_status_pair(st);
  if (MPI_Allreduce(MPI_IN_PLACE, all, (int)(n + 1), smx_mpi_pair_type(), smx_mpi_pair_op(), comm) != MPI_SUCCESS)
    st = SMX_E_INTERNAL;
  else
    st = smx_mpi_status_of(all[n].m);
  if (st == SMX_OK) {
    if (a.fn == SMX_MPI_FN_LSE) {
      for (size_t r = 0; r < n; r++) {
        smx_mpi_pair g = all[r];
        a.out[r] = g.m != g.m ? NAN
                   : g.m == -INFINITY ? ((flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -INFINITY)
                   : g.m == INFINITY  ? INFINITY
                                      : smx_mpi_to_float(g.m + log(g.s));
      }
    } else if (a.cols > 0 && n > 0) {
      if (a.fn == SMX_MPI_FN_SOFTMAX) {
        st = smx_softmax_rows_f32(a.x, a.ldx, a.y, a.ldy, n, a.cols, &local);
        if (st == SMX_OK) softmax_rows(&a, loc, all, flags);
      } else {
        log_softmax_rows(&a, all, inv_t, flags);
      }
    }
  }
  free(all);
  free(loc);
  return st;
}

smx_status smx_mpi_logsumexp_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *out, size_t rows,
                                      size_t local_cols, const smx_options *opt) {
  norm_args a = { SMX_MPI_FN_LSE, x, ldx, NULL, 0, out, rows, local_cols };
  return run(comm, a, opt);
}

smx_status smx_mpi_softmax_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                    size_t local_cols, const smx_options *opt) {
  norm_args a = { SMX_MPI_FN_SOFTMAX, x, ldx, y, ldy, NULL, rows, local_cols };
  return run(comm, a, opt);
}

smx_status smx_mpi_log_softmax_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *y, size_t ldy,
                                        size_t rows, size_t local_cols, const smx_options *opt) {
  norm_args a = { SMX_MPI_FN_LOG_SOFTMAX, x, ldx, y, ldy, NULL, rows, local_cols };
  return run(comm, a, opt);
}
