/*
 * Records of the top-k merges: a two-double header, then k candidates
 * (logit, global index), both as doubles (an index below 2^53 is exact), in
 * the order of smx_topk.h: larger logit first, equal logits by lower index;
 * an empty slot has index -1 and comes last. The header is a (max, sum) pair
 * (top-k) or a (max, first index of the max) pair (sampling).
 */
#ifndef SMX_MPI_CAND_H
#define SMX_MPI_CAND_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define SMX_MPI_EMPTY (-1.0)
#define SMX_MPI_MERGE_FAILED (-2.0)   /* an op could not get its work space */

/* A committed type of header + 2k doubles; free it with MPI_Type_free. */
int smx_mpi_record_type(size_t header, size_t k, MPI_Datatype *t);
MPI_Op smx_mpi_topk_op(void);    /* header (2): (max, sum) pair */
MPI_Op smx_mpi_maxloc_op(void);  /* header (3): (max, lowest index of it; NaN absorbs), then a summed count */

/* Fills the candidates c (after the header) from a slice's local top-k (k_loc of them,
 * local indices, values = the logits), offset to global indices. */
void smx_mpi_fill_cands(double *rec, size_t k, const float *vals, const int64_t *idx, size_t k_loc, uint64_t col0);

/* (max, index) merge, ties to the lower index; NaN absorbs. */
void smx_mpi_maxloc_merge(double *a, const double *b);
#endif
