/*
 * Sharded fused softmax + top-k (smx_mpi.h): the engine's fused top-k of each
 * slice gives its (max, sum) pair and its k best candidates; one
 * MPI_Allreduce merges both; the values are then formed from the merged pair.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi/cand.h"
#include "mpi/mpi_common.h"
#include "mpi/mpi_util.h"
#include "smx/smx_mpi.h"

static smx_status check_local(const float *x, size_t ldx, size_t rows, size_t cols, size_t k, const float *values,
                              const int64_t *indices) {
  if (ldx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || k == 0) return SMX_OK;
  if (!values || !indices || (cols && !x)) return SMX_E_INVALID_ARG;
  if (rows > SIZE_MAX / 8 / k) return SMX_E_INVALID_ARG;
  if (smx_mpi_overlap(x, rows, cols, ldx, values, 1, rows * k, rows * k) ||
      smx_mpi_overlap_es(x, rows, cols * 4, ldx * 4, indices, 1, rows * k * 8, rows * k * 8, 1) ||
      smx_mpi_overlap_es(values, 1, rows * k * 4, rows * k * 4, indices, 1, rows * k * 8, rows * k * 8, 1))
    return SMX_E_INVALID_ARG;
  return SMX_OK;
}

/* The slice's records: its pair and candidates (local top k_loc of the slice). */
static smx_status local_records(const float *x, size_t ldx, size_t rows, size_t cols, size_t k, double inv_t,
                                const smx_options *local, uint64_t col0, double *rec, size_t w) {
  size_t kl = k < cols ? k : cols;
  float *v = malloc(rows * kl * sizeof *v), *xv = malloc(kl * sizeof *xv);
  int64_t *idx = malloc(rows * kl * sizeof *idx);
  smx_status st = v && idx && xv ? smx_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, kl, local) : SMX_E_NOMEM;
  for (size_t r = 0; r < rows && st == SMX_OK; r++) {
    const float *row = x + r * ldx;
    const int64_t *ir = idx + r * kl;
    double *d = rec + r * w;
    if (ir[0] < 0) {   /* NaN in the slice */
      d[0] = d[1] = NAN;
      smx_mpi_fill_cands(d + 2, k, xv, ir, 0, col0);
      continue;
    }
    float m = row[ir[0]];
    if (m == -INFINITY) {
      d[0] = -INFINITY;
      d[1] = 0.0;
    } else if (m == INFINITY) {
      double c = 0.0;
      for (size_t j = 0; j < cols; j++) c += row[j] == INFINITY;
      d[0] = INFINITY;
      d[1] = c;
    } else {
      d[0] = (double)m * inv_t;
      d[1] = 1.0 / (double)v[r * kl];
    }
    for (size_t j = 0; j < kl; j++) xv[j] = row[ir[j]];
    smx_mpi_fill_cands(d + 2, k, xv, ir, kl, col0);
  }
  free(v);
  free(xv);
  free(idx);
  return st;
}

smx_status smx_mpi_softmax_topk_rows_f32(MPI_Comm comm, const float *x, size_t ldx, float *values, int64_t *indices,
                                         size_t rows, size_t local_cols, size_t k, const smx_options *opt) {
  smx_options local;
  double inv_t;
  smx_status st = smx_mpi_local_options(opt, &local, &inv_t);
  if (st == SMX_OK) st = check_local(x, ldx, rows, local_cols, k, values, indices);
  uint32_t flags = opt ? opt->flags : 0;
  smx_mpi_call c;
  smx_status bs = smx_mpi_begin(&c, comm, SMX_MPI_FN_TOPK, rows, local_cols, smx_mpi_bits(1.0 / inv_t), flags, k);
  if (bs != SMX_OK) return bs;
  if (st == SMX_OK && c.mismatch) st = SMX_E_INVALID_ARG;
  /* the sizes of the collective: rank 0's rows and k, the same on every rank */
  size_t n = c.rows, kk = (size_t)c.ref[2], w = 2 + 2 * kk;
  if (n >= INT32_MAX - 2 || kk >= INT32_MAX / 4 || (n + 2) > SIZE_MAX / 8 / w) return SMX_E_INVALID_ARG;
  double *rec = malloc((n + 2) * w * sizeof *rec);
  MPI_Datatype type;
  if (!rec || !smx_mpi_record_type(2, kk, &type)) {
    free(rec);
    return SMX_E_NOMEM;
  }
  for (size_t r = 0; r < n + 2; r++) {
    double *d = rec + r * w;
    d[0] = -INFINITY;
    d[1] = 0.0;
    smx_mpi_fill_cands(d + 2, kk, NULL, NULL, 0, 0);
  }
  if (st == SMX_OK && local_cols > 0 && k > 0)
    st = local_records(x, ldx, n, local_cols, k, inv_t, &local, c.col0, rec, w);
  if (st != SMX_OK)
    for (size_t r = 0; r < n; r++) rec[r * w] = -INFINITY, rec[r * w + 1] = 0.0;
  rec[n * w] = (double)st;                     /* the status: the worst code wins */
  rec[(n + 1) * w + 1] = (double)local_cols;   /* (-inf, cols): the counts add up */
  if (MPI_Allreduce(MPI_IN_PLACE, rec, (int)(n + 2), type, smx_mpi_topk_op(), comm) != MPI_SUCCESS)
    st = SMX_E_INTERNAL;
  else
    st = smx_mpi_status_of(rec[n * w]);
  MPI_Type_free(&type);
  if (st == SMX_OK && k > 0 && n > 0) {
    if ((double)k > rec[(n + 1) * w + 1]) st = SMX_E_INVALID_ARG;   /* k above the whole row */
    for (size_t r = 0; r < n && st == SMX_OK; r++)
      if (rec[r * w + 3] == SMX_MPI_MERGE_FAILED) st = SMX_E_NOMEM;
  }
  for (size_t r = 0; r < n && st == SMX_OK && k > 0; r++) {
    const double *d = rec + r * w;
    double M = d[0], S = d[1];
    for (size_t j = 0; j < k; j++) {
      double xv = d[2 + 2 * j], gi = d[3 + 2 * j];
      float v;
      int64_t i = (int64_t)gi;
      if (M != M) {
        v = NAN;
        i = -1;
      } else if (M == -INFINITY) {
        v = (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : 0.0f;
      } else if (M == INFINITY) {
        v = xv == INFINITY ? (float)(1.0 / S) : 0.0f;
      } else {
        v = smx_mpi_to_float(exp(xv * inv_t - M) / S);
      }
      values[r * k + j] = v;
      indices[r * k + j] = i;
    }
  }
  free(rec);
  return st;
}
