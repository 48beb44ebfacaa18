/*
 * What every smx_mpi call shares: the call's check and column offset (one
 * MPI_Exscan), the (max, sum) pair and its MPI_Op, the status that travels
 * in the data collective, and the local options.
 */
#ifndef SMX_MPI_COMMON_H
#define SMX_MPI_COMMON_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

/* Which call: part of the check, so that different calls do not pair up. */
enum { SMX_MPI_FN_LSE = 1, SMX_MPI_FN_SOFTMAX, SMX_MPI_FN_LOG_SOFTMAX, SMX_MPI_FN_TOPK, SMX_MPI_FN_SAMPLE,
       SMX_MPI_FN_XENT };

typedef struct smx_mpi_call {
  MPI_Comm comm;
  int rank, size;
  uint64_t col0;     /* global index of this rank's first column */
  size_t rows;       /* rank 0's row count: the size of every collective */
  uint64_t ref[3];   /* rank 0's p0, p1, p2: the sizes of the collective come from them */
  int mismatch;      /* this rank's rows or parameters differ from rank 0's */
} smx_mpi_call;

/*
 * The MPI_Exscan: the column offset, and rank 0's (fn, rows, p0, p1, p2),
 * compared here with this rank's. SMX_E_INTERNAL if MPI returned an error.
 */
smx_status smx_mpi_begin(smx_mpi_call *c, MPI_Comm comm, int fn, size_t rows, size_t local_cols, uint64_t p0,
                         uint64_t p1, uint64_t p2);

/* (max, sum) of exp over a slice, the max already divided by T; the empty
 * state is (-inf, 0), a NaN row (NaN, NaN), k entries +inf (+inf, k). */
typedef struct smx_mpi_pair { double m, s; } smx_mpi_pair;
void smx_mpi_pair_merge(smx_mpi_pair *a, smx_mpi_pair b);

/* MPI handles, created once (MPI_Finalize frees them). */
MPI_Datatype smx_mpi_pair_type(void);  /* two doubles */
MPI_Op smx_mpi_pair_op(void);
/* n doubles per element: a pair, then n - 2 doubles that are summed */
MPI_Datatype smx_mpi_pair_plus_type(int n);
MPI_Op smx_mpi_pair_plus_op(int n);

/* The status slot: a pair whose max is the status code (the merge keeps the
 * worst); its sum is irrelevant. */
static inline smx_mpi_pair smx_mpi_status_pair(smx_status s) {
  smx_mpi_pair p = { (double)s, 0.0 };
  return p;
}

/* The pair of each row of a slice, from the engine's fused top-1 (one read
 * of the slice): max = x at the top index, sum = 1 / its probability. */
smx_status smx_mpi_local_pairs(const float *x, size_t ldx, size_t rows, size_t cols, double inv_t,
                               const smx_options *opt, smx_mpi_pair *pairs);

/* The options the local engine calls get: these, without the masked-row flag
 * (which only the whole row decides). Sets *inv_t = 1 / T. Returns
 * SMX_E_INVALID_ARG for options the engine would refuse here. */
smx_status smx_mpi_local_options(const smx_options *opt, smx_options *local, double *inv_t);

/* The bits of a double, for the parameter check. */
uint64_t smx_mpi_bits(double v);

/* A status code back from a double that came through a collective. */
smx_status smx_mpi_status_of(double v);

#endif
