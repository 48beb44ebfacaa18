/*
 * smx eval over MPI ranks (docs/mpi.md): when the smx binary is built with
 * MPI and started by an MPI launcher (mpirun / mpiexec / srun set
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE), eval initialises MPI; each
 * rank scores its own block of rows of every file, the scores come to rank 0
 * (8 bytes per row and score, never the logits), which computes the metrics
 * with the same code as one process, so the table and the JSON are the same
 * bytes. Started any other way (or built without MPI), size is 1 and no MPI
 * call is made: smx then needs no MPI runtime at all.
 */
#ifndef SMX_PROGRAMS_EVAL_DIST_H
#define SMX_PROGRAMS_EVAL_DIST_H
#include <stdint.h>

typedef struct smx_eval_dist {
  int rank, size;
  int mpi;   /* MPI was initialised here (finalised by smx_eval_dist_end) */
} smx_eval_dist;

/* Initialises MPI when launched under it; 0, or an exit code (message printed). */
int smx_eval_dist_begin(smx_eval_dist *d);
void smx_eval_dist_end(smx_eval_dist *d);
/* This rank's block [*first, *end) of n rows (rank order, sizes differing by at most 1). */
void smx_eval_dist_block(const smx_eval_dist *d, uint64_t n, uint64_t *first, uint64_t *end);
/* The largest exit code of all ranks; every rank must call it at the same
 * point. Ranks other than 0 print nothing (their messages are held from
 * smx_eval_dist_begin on): rank 0 has printed its own error, or prints the
 * first failing rank's as "rank N: ...". */
int smx_eval_dist_agree(const smx_eval_dist *d, int rc);
/* Every rank's block of v (n values in all) into rank 0's v. 0 or an exit code. */
int smx_eval_dist_gather(const smx_eval_dist *d, double *v, uint64_t n);
#endif
