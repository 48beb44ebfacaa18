/* The top-k candidate records and their MPI_Ops (cand.h). */
#include <stdlib.h>
#include <string.h>

#include "mpi/cand.h"
#include "mpi/mpi_common.h"

static int before(const double *a, const double *b) {
  if (a[1] < 0.0) return 0;
  if (b[1] < 0.0) return 1;
  return a[0] > b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* inout's k candidates become the k first of both lists */
static void merge(const double *in, double *inout, size_t k, double *tmp) {
  size_t i = 0, j = 0;
  for (size_t w = 0; w < k; w++) {
    const double *a = inout + 2 * i, *b = in + 2 * j;
    const double *p = before(b, a) ? (j++, b) : (i++, a);
    tmp[2 * w] = p[0];
    tmp[2 * w + 1] = p[1];
  }
  memcpy(inout, tmp, 2 * k * sizeof(double));
}

static void records(void *in, void *inout, int *len, MPI_Datatype *dt, int maxloc) {
  int bytes = 0;
  MPI_Type_size(*dt, &bytes);
  size_t h = maxloc ? 3 : 2, w = (size_t)bytes / sizeof(double), k = (w - h) / 2;
  double stack[2 * 256], *tmp = k <= 256 ? stack : malloc(2 * k * sizeof(double));
  const double *a = in;
  double *b = inout;
  for (int e = 0; e < *len; e++, a += w, b += w) {
    if (maxloc) {
      smx_mpi_maxloc_merge(b, a);
      b[2] += a[2];
    } else {
      smx_mpi_pair p = { b[0], b[1] };
      smx_mpi_pair_merge(&p, (smx_mpi_pair){ a[0], a[1] });
      b[0] = p.m;
      b[1] = p.s;
    }
    if (k == 0) continue;
    if (!tmp || a[h + 1] == SMX_MPI_MERGE_FAILED) b[h + 1] = SMX_MPI_MERGE_FAILED;
    if (b[h + 1] == SMX_MPI_MERGE_FAILED) continue;
    merge(a + h, b + h, k, tmp);
  }
  if (tmp != stack) free(tmp);
}
static void topk_fn(void *in, void *inout, int *len, MPI_Datatype *dt) { records(in, inout, len, dt, 0); }
static void maxloc_fn(void *in, void *inout, int *len, MPI_Datatype *dt) { records(in, inout, len, dt, 1); }

void smx_mpi_maxloc_merge(double *a, const double *b) {
  if (a[0] != a[0]) return;
  if (b[0] != b[0] || b[0] > a[0] || (b[0] == a[0] && b[1] < a[1])) {
    a[0] = b[0];
    a[1] = b[1];
  }
}

static MPI_Op topk_op = MPI_OP_NULL, maxloc_op = MPI_OP_NULL;
MPI_Op smx_mpi_topk_op(void) {
  if (topk_op == MPI_OP_NULL) MPI_Op_create(topk_fn, 1, &topk_op);
  return topk_op;
}
MPI_Op smx_mpi_maxloc_op(void) {
  if (maxloc_op == MPI_OP_NULL) MPI_Op_create(maxloc_fn, 1, &maxloc_op);
  return maxloc_op;
}

int smx_mpi_record_type(size_t header, size_t k, MPI_Datatype *t) {
  if (MPI_Type_contiguous((int)(header + 2 * k), MPI_DOUBLE, t) != MPI_SUCCESS) return 0;
  return MPI_Type_commit(t) == MPI_SUCCESS;
}

void smx_mpi_fill_cands(double *c, size_t k, const float *vals, const int64_t *idx, size_t k_loc, uint64_t col0) {
  for (size_t j = 0; j < k; j++) {
    int ok = j < k_loc && idx[j] >= 0;
    c[2 * j] = ok ? (double)vals[j] : 0.0;
    c[2 * j + 1] = ok ? (double)(col0 + (uint64_t)idx[j]) : SMX_MPI_EMPTY;
  }
}
