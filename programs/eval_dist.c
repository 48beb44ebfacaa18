/* smx eval over MPI ranks (eval_dist.h); without MPI, one rank and no calls. */
#include <stdlib.h>

#include "cli/message.h"
#include "eval_dist.h"

#ifdef SMX_HAVE_MPI
#include <limits.h>
#include <mpi.h>
#include <string.h>

/* A rank other than 0 holds its first error message here (message.h). */
static char held[1024];

/* The launchers' own variables: Open MPI, PMIx (Open MPI 5, Slurm), PMI (MPICH / Intel MPI / Slurm). */
static int launched_by_mpi(void) {
  static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK" };
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

int smx_eval_dist_begin(smx_eval_dist *d) {
  d->rank = 0;
  d->size = 1;
  d->mpi = 0;
  if (!launched_by_mpi()) return 0;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
    return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "eval: MPI_Init failed under an MPI launcher");
  d->mpi = !inited;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &d->size);
  /* every rank runs the same command line on the same files: its messages
   * would repeat rank 0's, interleaved; rank 0 alone speaks */
  if (d->size > 1 && d->rank != 0) smx_cli_hold_messages(held, sizeof held);
  return 0;
}

void smx_eval_dist_end(smx_eval_dist *d) {
  if (d->size > 1 && d->rank != 0) {
    smx_cli_hold_messages(NULL, 0);
    /* an error after the last agreement never reached rank 0: better said
     * twice than not at all */
    if (held[0]) smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "rank %d: %s", d->rank, held);
    held[0] = '\0';
  }
  if (d->mpi) MPI_Finalize();
  d->mpi = 0;
}

int smx_eval_dist_agree(const smx_eval_dist *d, int rc) {
  if (d->size == 1) return rc;
  int all = rc;
  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
    return rc ? rc : smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "eval: MPI_Allreduce failed");
  if (all == 0) return 0;
  /* Rank 0 reports. When it failed itself it has said why; else the first
   * failing rank's message is sent over (a file only that rank could not
   * read, memory only it lacked). Every rank takes part in both calls, so
   * none waits for one that never comes. */
  int me = rc ? d->rank : INT_MAX, first = INT_MAX;
  if (MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && first != 0 &&
      first < d->size) {
    char text[sizeof held];
    if (d->rank == first) memcpy(text, held, sizeof text);
    text[sizeof text - 1] = '\0';
    if (MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, MPI_COMM_WORLD) == MPI_SUCCESS && d->rank == 0) {
      text[sizeof text - 1] = '\0';
      smx_cli_fail(all, "rank %d: %s", first, text[0] ? text : "failed (no message)");
    }
  }
  if (d->rank != 0) held[0] = '\0';   /* rank 0 has reported for everyone */
  return all;
}

int smx_eval_dist_gather(const smx_eval_dist *d, double *v, uint64_t n) {
  if (d->size == 1) return 0;
  int *counts = malloc(2 * (size_t)d->size * sizeof *counts), *displs = counts ? counts + d->size : NULL;
  int rc = 0;
  if (!counts || n > (uint64_t)INT_MAX) rc = SMX_CLI_EXIT_COMPUTE;
  rc = smx_eval_dist_agree(d, rc);   /* the same answer everywhere before the collective */
  if (rc) {
    free(counts);
    return smx_cli_fail(rc, "eval: cannot gather %llu scores to rank 0", (unsigned long long)n);
  }
  smx_eval_dist q = *d;
  for (int r = 0; r < d->size; r++) {
    uint64_t a, b;
    q.rank = r;
    smx_eval_dist_block(&q, n, &a, &b);
    counts[r] = (int)(b - a);
    displs[r] = (int)a;
  }
  int e = d->rank == 0 ? MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, v, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD)
                       : MPI_Gatherv(v + displs[d->rank], counts[d->rank], MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, 0,
                                     MPI_COMM_WORLD);
  free(counts);
  return e == MPI_SUCCESS ? 0 : smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "eval: MPI_Gatherv failed");
}
#else
int smx_eval_dist_begin(smx_eval_dist *d) {
  d->rank = 0;
  d->size = 1;
  d->mpi = 0;
  return 0;
}
void smx_eval_dist_end(smx_eval_dist *d) { (void)d; }
int smx_eval_dist_agree(const smx_eval_dist *d, int rc) { (void)d; return rc; }
int smx_eval_dist_gather(const smx_eval_dist *d, double *v, uint64_t n) {
  (void)d, (void)v, (void)n;
  return 0;
}
#endif

void smx_eval_dist_block(const smx_eval_dist *d, uint64_t n, uint64_t *first, uint64_t *end) {
  uint64_t p = (uint64_t)d->size, r = (uint64_t)d->rank, q = n / p, m = n % p;
  *first = r * q + (r < m ? r : m);
  *end = *first + q + (r < m);
}
