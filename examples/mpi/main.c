/*
 * A vocabulary sharded across MPI ranks, the way a tensor-parallel output
 * layer leaves it: every rank holds its slice of the logits of the same rows.
 * One call each gives the log-sum-exp, the top-5, a sampled token and the
 * cross-entropy (with the gradient of the rank's own slice) of the whole
 * rows; rank 0 checks them against one process over the whole rows.
 *
 *   mpirun -np 2 ./mpi_example      (prints "smx_mpi example: ok" and exits 0)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "smx/smx_mpi.h"

#define ROWS 4
#define VOCAB 50000
#define K 5

static float logit(size_t r, size_t j) {   /* the same numbers on every rank */
  unsigned h = (unsigned)(r * 2654435761u) ^ (unsigned)(j * 40503u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)(h % 20000) / 1000.0f - 10.0f;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* this rank's columns: an even split, in rank order */
  size_t c0 = VOCAB * (size_t)rank / (size_t)size, c1 = VOCAB * (size_t)(rank + 1) / (size_t)size, n = c1 - c0;
  float *x = malloc(ROWS * (n ? n : 1) * sizeof *x), *grad = malloc(ROWS * (n ? n : 1) * sizeof *grad);
  for (size_t r = 0; r < ROWS; r++)
    for (size_t j = 0; j < n; j++) x[r * n + j] = logit(r, c0 + j);

  float lse[ROWS], values[ROWS * K], loss;
  int64_t indices[ROWS * K], tokens[ROWS], targets[ROWS] = { 7, 123, 49999, 25000 };
  smx_sample_params sp = { 0.8, 50, 0.0, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 };   /* T 0.8, top-50, Gumbel-max */
  smx_status st = smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x, n, lse, ROWS, n, NULL);
  if (!st) st = smx_mpi_softmax_topk_rows_f32(MPI_COMM_WORLD, x, n, values, indices, ROWS, n, K, NULL);
  if (!st) st = smx_mpi_sample_rows_f32(MPI_COMM_WORLD, x, n, tokens, ROWS, n, &sp, 2024, 0, NULL);
  if (!st) st = smx_mpi_cross_entropy_f32(MPI_COMM_WORLD, x, n, targets, &loss, grad, n, NULL, ROWS, n, NULL);
  int bad = st != SMX_OK;
  if (rank == 0 && !bad) {
    /* one process over the whole rows */
    float *full = malloc(ROWS * VOCAB * sizeof *full), lse1[ROWS], v1[ROWS * K], loss1;
    int64_t i1[ROWS * K], t1[ROWS];
    for (size_t r = 0; r < ROWS; r++)
      for (size_t j = 0; j < VOCAB; j++) full[r * VOCAB + j] = logit(r, j);
    smx_logsumexp_rows_f32(full, VOCAB, lse1, ROWS, VOCAB, NULL);
    smx_softmax_topk_rows_f32(full, VOCAB, v1, i1, ROWS, VOCAB, K, NULL);
    smx_sample_rows_f32(full, VOCAB, t1, ROWS, VOCAB, &sp, 2024, 0, NULL);
    smx_cross_entropy_f32(full, VOCAB, targets, &loss1, NULL, 0, NULL, ROWS, VOCAB, NULL);
    for (size_t r = 0; r < ROWS; r++) {
      bad |= fabsf(lse[r] - lse1[r]) > 1e-5f * fmaxf(1.0f, fabsf(lse1[r]));
      bad |= tokens[r] != t1[r];
      for (size_t j = 0; j < K; j++) bad |= indices[r * K + j] != i1[r * K + j];
      printf("row %zu: lse %.6f  top-1 %lld (p = %.3g)  token %lld\n", r, lse[r], (long long)indices[r * K],
             values[r * K], (long long)tokens[r]);
    }
    bad |= fabsf(loss - loss1) > 1e-5f * fmaxf(1.0f, fabsf(loss1));
    printf("mean cross-entropy %.6f on %d rank%s (one process: %.6f)\n", loss, size, size > 1 ? "s" : "", loss1);
    free(full);
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("smx_mpi example: %s\n", bad ? "FAILED" : "ok");
  free(x);
  free(grad);
  MPI_Finalize();
  return bad;
}
