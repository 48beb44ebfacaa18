/* The check, the (max, sum) pair and its MPI_Op, the local options (mpi_common.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_common.h"

#define NCHECK 6   /* cols, fn, rows, p0, p1, p2 */

/* Exscan op: the columns add up; the rest is the lowest rank's (in comes from
 * the ranks below inout's, so this op is not commutative). */
static void check_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const uint64_t *a = in;
  uint64_t *b = inout;
  for (int e = 0; e < *len; e++, a += NCHECK, b += NCHECK) {
    b[0] += a[0];
    for (int i = 1; i < NCHECK; i++) b[i] = a[i];
  }
}

void smx_mpi_pair_merge(smx_mpi_pair *a, smx_mpi_pair b) {
  if (a->m != a->m || b.m != b.m) {
    a->m = a->s = NAN;
    return;
  }
  if (a->m == b.m) {   /* equal maxima, +-inf included: the counts or sums add */
    a->s += b.s;
    return;
  }
  /* the same expression for either order: the op is commutative bit for bit */
  smx_mpi_pair hi = a->m > b.m ? *a : b, lo = a->m > b.m ? b : *a;
  a->m = hi.m;
  a->s = hi.s + lo.s * exp(lo.m - hi.m);   /* lo.m - hi.m < 0; -inf gives 0 */
}

static void pair_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const smx_mpi_pair *a = in;
  smx_mpi_pair *b = inout;
  for (int e = 0; e < *len; e++) smx_mpi_pair_merge(&b[e], a[e]);
}

/* a pair, then w - 2 summed doubles */
static void plus_fn(void *in, void *inout, int *len, int w) {
  const double *a = in;
  double *b = inout;
  for (int e = 0; e < *len; e++, a += w, b += w) {
    smx_mpi_pair p = { b[0], b[1] };
    smx_mpi_pair_merge(&p, (smx_mpi_pair){ a[0], a[1] });
    b[0] = p.m;
    b[1] = p.s;
    for (int i = 2; i < w; i++) b[i] += a[i];
  }
}
static void plus3_fn(void *in, void *inout, int *len, MPI_Datatype *dt) { (void)dt; plus_fn(in, inout, len, 3); }
static void plus4_fn(void *in, void *inout, int *len, MPI_Datatype *dt) { (void)dt; plus_fn(in, inout, len, 4); }

/* Created on first use. Calls on one communicator are collective, hence
 * serialised per process by MPI's own rules for the threads that make them;
 * two threads racing here could only create a handle twice (a small leak). */
static MPI_Datatype check_type = MPI_DATATYPE_NULL, pair_type = MPI_DATATYPE_NULL;
static MPI_Datatype plus_type[5] = { MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL,
                                     MPI_DATATYPE_NULL };
static MPI_Op check_op = MPI_OP_NULL, pair_op = MPI_OP_NULL, plus_op[5] = { MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL,
                                                                            MPI_OP_NULL, MPI_OP_NULL };

static MPI_Datatype contiguous(MPI_Datatype *t, int n, MPI_Datatype base) {
  if (*t == MPI_DATATYPE_NULL) {
    MPI_Datatype nt;
    MPI_Type_contiguous(n, base, &nt);
    MPI_Type_commit(&nt);
    *t = nt;
  }
  return *t;
}

static MPI_Op op(MPI_Op *o, MPI_User_function *f, int commute) {
  if (*o == MPI_OP_NULL) {
    MPI_Op no;
    MPI_Op_create(f, commute, &no);
    *o = no;
  }
  return *o;
}

MPI_Datatype smx_mpi_pair_type(void) { return contiguous(&pair_type, 2, MPI_DOUBLE); }
MPI_Op smx_mpi_pair_op(void) { return op(&pair_op, pair_fn, 1); }
MPI_Datatype smx_mpi_pair_plus_type(int n) { return contiguous(&plus_type[n], n, MPI_DOUBLE); }
MPI_Op smx_mpi_pair_plus_op(int n) { return op(&plus_op[n], n == 3 ? plus3_fn : plus4_fn, 1); }

smx_status smx_mpi_begin(smx_mpi_call *c, MPI_Comm comm, int fn, size_t rows, size_t local_cols, uint64_t p0,
                         uint64_t p1, uint64_t p2) {
  memset(c, 0, sizeof *c);
  c->comm = comm;
  if (MPI_Comm_rank(comm, &c->rank) != MPI_SUCCESS || MPI_Comm_size(comm, &c->size) != MPI_SUCCESS)
    return SMX_E_INTERNAL;
  uint64_t mine[NCHECK] = { local_cols, (uint64_t)fn, rows, p0, p1, p2 }, below[NCHECK];
  memcpy(below, mine, sizeof below);
  if (MPI_Exscan(mine, below, 1, contiguous(&check_type, NCHECK, MPI_UINT64_T), op(&check_op, check_fn, 0), comm) !=
      MPI_SUCCESS)
    return SMX_E_INTERNAL;
  if (c->rank == 0) {   /* Exscan leaves rank 0's buffer undefined */
    memcpy(below, mine, sizeof below);
    below[0] = 0;
  }
  c->col0 = below[0];
  c->rows = (size_t)below[2];
  for (int i = 0; i < 3; i++) c->ref[i] = below[3 + i];
  c->mismatch = memcmp(below + 1, mine + 1, (NCHECK - 1) * sizeof(uint64_t)) != 0;
  return SMX_OK;
}

smx_status smx_mpi_local_options(const smx_options *opt, smx_options *local, double *inv_t) {
  smx_options o;
  memset(&o, 0, sizeof o);
  if (opt) o = *opt;
  *inv_t = 1.0;
  double t = o.temperature == 0.0 ? 1.0 : o.temperature;
  if (!(t > 0.0 && t <= DBL_MAX)) return SMX_E_INVALID_ARG;
  if (o.flags & ~(uint32_t)(SMX_FLAG_MASKED_ROW_NAN | SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES))
    return SMX_E_INVALID_ARG;
  if (o.threads < 0 || (unsigned)o.algo > (unsigned)SMX_ALGO_ONLINE) return SMX_E_INVALID_ARG;
  o.flags &= ~(uint32_t)SMX_FLAG_MASKED_ROW_NAN;
  *local = o;
  /* as the engine: below 2^-600 every float result is the T -> 0 limit already */
  *inv_t = 1.0 / (t < 0x1p-600 ? 0x1p-600 : t);
  return SMX_OK;
}

smx_status smx_mpi_local_pairs(const float *x, size_t ldx, size_t rows, size_t cols, double inv_t,
                               const smx_options *opt, smx_mpi_pair *pairs) {
  if (rows == 0) return SMX_OK;
  if (cols == 0) {
    for (size_t r = 0; r < rows; r++) pairs[r] = (smx_mpi_pair){ -INFINITY, 0.0 };
    return SMX_OK;
  }
  float *v = malloc(rows * sizeof *v);
  int64_t *idx = malloc(rows * sizeof *idx);
  smx_status st = v && idx ? smx_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, 1, opt) : SMX_E_NOMEM;
  for (size_t r = 0; r < rows && st == SMX_OK; r++) {
    const float *row = x + r * ldx;
    if (idx[r] < 0) {
      pairs[r] = (smx_mpi_pair){ NAN, NAN };
      continue;
    }
    float m = row[idx[r]];
    if (m == -INFINITY) {
      pairs[r] = (smx_mpi_pair){ -INFINITY, 0.0 };
    } else if (m == INFINITY) {
      double k = 0.0;
      for (size_t j = 0; j < cols; j++) k += row[j] == INFINITY;
      pairs[r] = (smx_mpi_pair){ INFINITY, k };
    } else {
      /* the top entry's probability is exp(0) / s */
      pairs[r] = (smx_mpi_pair){ (double)m * inv_t, 1.0 / (double)v[r] };
    }
  }
  free(v);
  free(idx);
  return st;
}

uint64_t smx_mpi_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

smx_status smx_mpi_status_of(double v) { return v > 0.0 ? (smx_status)(int)v : SMX_OK; }
