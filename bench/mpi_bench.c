/*
 * mpi_bench: the sharded log-sum-exp of smx_mpi (one MPI_Allreduce of
 * (max, sum) pairs) against the two-collective design (all-reduce the max,
 * then the sums) and against gathering the logits to rank 0, over a
 * vocabulary split evenly across the ranks; and the sharded call against one
 * process on one thread over the whole matrix.
 *
 *   mpirun -np 2 ./build/bench/mpi_bench [ROWS [COLS]]     (default 4096 x 256000)
 *
 * Rank 0 holds the whole matrix (for the one-process baseline and the
 * gather), the others their slice only: about (1 + 1/P) x ROWS x COLS x 4
 * bytes in all. Times are the best of a few runs; latency rows are medians.
 * On a machine shared with other work, --bind-to none lets the ranks move
 * off busy cores (Open MPI binds 2 ranks to a core each by default).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_args.h"
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smx/smx_mpi.h"

static int rank_, size_;

static void fill(float *x, size_t rows, size_t cols, size_t ld, size_t c0) {
  for (size_t r = 0; r < rows; r++)
    for (size_t j = 0; j < cols; j++) {
      uint64_t h = (r * 2654435761u) ^ ((c0 + j) * 0x9e3779b97f4a7c15ull);
      h ^= h >> 29;
      x[r * ld + j] = (float)((h >> 40) & 0xffff) * (1.0f / 4096.0f) - 8.0f;
    }
}

/* The two-collective design: max, all-reduce MAX, then the slice's sum
 * exp(x - M) (from its log-sum-exp), all-reduce SUM. */
static void two_collectives(const float *x, size_t ld, size_t rows, size_t lc, float *out, float *m, float *s) {
  for (size_t r = 0; r < rows; r++) {
    /* 16 running maxima: a loop the compiler turns into vector max */
    float a[16], v = -INFINITY;
    const float *row = x + r * ld;
    for (int k = 0; k < 16; k++) a[k] = -INFINITY;
    size_t j = 0;
    for (; j + 16 <= lc; j += 16)
      for (int k = 0; k < 16; k++) a[k] = row[j + k] > a[k] ? row[j + k] : a[k];
    for (; j < lc; j++) v = row[j] > v ? row[j] : v;
    for (int k = 0; k < 16; k++) v = a[k] > v ? a[k] : v;
    m[r] = v;
  }
  MPI_Allreduce(MPI_IN_PLACE, m, (int)rows, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  smx_logsumexp_rows_f32(x, ld, out, rows, lc, NULL);
  for (size_t r = 0; r < rows; r++) s[r] = lc ? expf(out[r] - m[r]) : 0.0f;
  MPI_Allreduce(MPI_IN_PLACE, s, (int)rows, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (size_t r = 0; r < rows; r++) out[r] = m[r] + logf(s[r]);
}

/* Gather to rank 0: every slice into rank 0's whole matrix, one process
 * computes, the results go back by broadcast. */
static void gather_root(float *full, const float *x, size_t ld, size_t rows, size_t cols, const size_t *off,
                        float *out) {
  if (rank_ == 0) {
    for (int r = 1; r < size_; r++) {
      size_t lc = off[r + 1] - off[r];
      MPI_Datatype t;
      MPI_Type_vector((int)rows, (int)lc, (int)cols, MPI_FLOAT, &t);
      MPI_Type_commit(&t);
      MPI_Recv(full + off[r], 1, t, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Type_free(&t);
    }
    smx_logsumexp_rows_f32(full, cols, out, rows, cols, NULL);
  } else {
    size_t lc = off[rank_ + 1] - off[rank_];
    MPI_Datatype t;
    MPI_Type_vector((int)rows, (int)lc, (int)ld, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    MPI_Send(x, 1, t, 0, 7, MPI_COMM_WORLD);
    MPI_Type_free(&t);
  }
  MPI_Bcast(out, (int)rows, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

/* A barrier that does not spin: the waiting ranks sleep between polls, so
 * that they leave the cores to a one-process run on rank 0. */
static void quiet_barrier(void) {
  MPI_Request q;
  MPI_Ibarrier(MPI_COMM_WORLD, &q);
  for (int done = 0;;) {
    MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    if (done) return;
    struct timespec ts = { 0, 200000 };
    nanosleep(&ts, NULL);
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  size_t rows = bench_size_arg(argc, argv, 1, 4096, "[rows (4096) [cols (256000)]]");
  size_t cols = bench_size_arg(argc, argv, 2, 256000, "[rows (4096) [cols (256000)]]");
  size_t *off = malloc((size_t)(size_ + 1) * sizeof *off);
  for (int r = 0; r <= size_; r++) off[r] = cols * (size_t)r / (size_t)size_;
  size_t c0 = off[rank_], lc = off[rank_ + 1] - c0;
  /* rank 0: the whole matrix, its slice a view into it; the others: their slice */
  size_t ld = rank_ == 0 ? cols : lc;
  float *full = malloc(rows * ld * sizeof(float)), *x = full;
  float *out = malloc(rows * sizeof(float)), *ref = malloc(rows * sizeof(float));
  float *m = malloc(rows * sizeof(float)), *s = malloc(rows * sizeof(float));
  if (!full || !out || !ref || !m || !s) {
    fprintf(stderr, "mpi_bench: rank %d: out of memory for %zu x %zu\n", rank_, rows, ld);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fill(x, rows, rank_ == 0 ? cols : lc, ld, rank_ == 0 ? 0 : c0);
  const int reps = 3;
  double t_one = 1e30, t_two = 1e30, t_gather = 1e30, t_single = 1e30, t_pool = 1e30;
  for (int it = 0; it < reps; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x, ld, out, rows, lc, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    t_one = fmin(t_one, MPI_Wtime() - t);
    t = MPI_Wtime();
    two_collectives(x, ld, rows, lc, out, m, s);
    MPI_Barrier(MPI_COMM_WORLD);
    t_two = fmin(t_two, MPI_Wtime() - t);
    t = MPI_Wtime();
    gather_root(full, x, ld, rows, cols, off, out);
    MPI_Barrier(MPI_COMM_WORLD);
    t_gather = fmin(t_gather, MPI_Wtime() - t);
    /* one process over the whole matrix, on one thread and on P (the engine's
     * pool), while the other ranks sleep */
    quiet_barrier();
    if (rank_ == 0) {
      t = MPI_Wtime();
      smx_logsumexp_rows_f32(full, cols, ref, rows, cols, NULL);
      t_single = fmin(t_single, MPI_Wtime() - t);
      smx_options po = { SMX_ALGO_AUTO, 0.0, 0, size_, NULL };
      t = MPI_Wtime();
      smx_logsumexp_rows_f32(full, cols, out, rows, cols, &po);
      t_pool = fmin(t_pool, MPI_Wtime() - t);
    }
    quiet_barrier();
  }
  /* the sharded result against the one-process one */
  smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x, ld, out, rows, lc, NULL);
  double worst = 0.0;
  for (size_t r = 0; rank_ == 0 && r < rows; r++)
    worst = fmax(worst, fabs((double)out[r] - ref[r]) / fmax(1.0, fabs((double)ref[r])) / 0x1p-23);
  if (rank_ == 0) {
    double gb = (double)rows * (double)cols * 4 / 1e9;
    printf("mpi_bench: log-sum-exp of %zu x %zu floats (%.2f GB) split over %d ranks; best of %d\n", rows, cols, gb,
           size_, reps);
    printf("%-34s %10s %10s %14s %16s\n", "design", "time ms", "GB/s", "vs 1 process", "bytes moved/rank");
    printf("%-34s %10.1f %10.2f %13.2fx %16s\n", "one process, one thread", t_single * 1e3, gb / t_single, 1.0, "0");
    printf("%-34s %10.1f %10.2f %13.2fx %16s\n", "one process, P threads (engine pool)", t_pool * 1e3, gb / t_pool,
           t_single / t_pool, "0");
    printf("%-34s %10.1f %10.2f %13.2fx %16.0f\n", "smx_mpi: 1 all-reduce (max,sum)", t_one * 1e3, gb / t_one,
           t_single / t_one, (double)(rows + 1) * 16 + 48);
    printf("%-34s %10.1f %10.2f %13.2fx %16.0f\n", "2 all-reduces (max, then sum)", t_two * 1e3, gb / t_two,
           t_single / t_two, (double)rows * 8);
    printf("%-34s %10.1f %10.2f %13.2fx %16.0f\n", "gather logits to rank 0 + bcast", t_gather * 1e3,
           gb / t_gather, t_single / t_gather, (double)rows * (double)(cols - cols / (size_t)size_) * 4 / (size_ - 1 ? size_ - 1 : 1));
    printf("sharded vs one process: worst |diff| %.2f eps x max(1, |lse|)\n\n", worst);
  }

  /* latency at 1..64 rows: the same three designs on the first rows */
  enum { LAT_REPS = 200 };
  double *ts = malloc(3 * LAT_REPS * sizeof *ts);
  if (rank_ == 0)
    printf("%-6s %14s %14s %14s %14s %14s %14s\n", "rows", "1 coll us", "2 coll us", "gather us", "1 coll bytes",
           "2 coll bytes", "gather bytes");
  for (size_t nr = 1; nr <= 64 && nr <= rows; nr *= 2) {
    for (int it = 0; it < LAT_REPS; it++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      smx_mpi_logsumexp_rows_f32(MPI_COMM_WORLD, x, ld, out, nr, lc, NULL);
      ts[it] = MPI_Wtime() - t;
      MPI_Barrier(MPI_COMM_WORLD);
      t = MPI_Wtime();
      two_collectives(x, ld, nr, lc, out, m, s);
      ts[LAT_REPS + it] = MPI_Wtime() - t;
      if (it < LAT_REPS / 10) {   /* the gather moves megabytes: fewer runs */
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        gather_root(full, x, ld, nr, cols, off, out);
        ts[2 * LAT_REPS + it] = MPI_Wtime() - t;
      }
    }
    qsort(ts, LAT_REPS, sizeof *ts, cmp);
    qsort(ts + LAT_REPS, LAT_REPS, sizeof *ts, cmp);
    qsort(ts + 2 * LAT_REPS, LAT_REPS / 10, sizeof *ts, cmp);
    if (rank_ == 0)
      printf("%-6zu %14.1f %14.1f %14.1f %14zu %14zu %14zu\n", nr, ts[LAT_REPS / 2] * 1e6,
             ts[LAT_REPS + LAT_REPS / 2] * 1e6, ts[2 * LAT_REPS + LAT_REPS / 20] * 1e6, (nr + 1) * 16 + 48, nr * 8,
             nr * (cols - cols / (size_t)size_) * 4);
  }

  /* the collectives alone (no compute): where the one all-reduce saves a round trip */
  if (rank_ == 0) printf("\ncollectives alone (median us): rows, 1 all-reduce of pairs, 2 all-reduces of floats\n");
  double *pairs = malloc(2 * 65 * sizeof *pairs);
  for (size_t nr = 1; nr <= 64; nr *= 2) {
    for (int it = 0; it < LAT_REPS; it++) {
      for (size_t r = 0; r < 2 * (nr + 1); r++) pairs[r] = 1.0;
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, pairs, (int)(2 * (nr + 1)), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      ts[it] = MPI_Wtime() - t;
      MPI_Barrier(MPI_COMM_WORLD);
      t = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, m, (int)nr, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, s, (int)nr, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      ts[LAT_REPS + it] = MPI_Wtime() - t;
    }
    qsort(ts, LAT_REPS, sizeof *ts, cmp);
    qsort(ts + LAT_REPS, LAT_REPS, sizeof *ts, cmp);
    if (rank_ == 0) printf("%-6zu %14.2f %14.2f\n", nr, ts[LAT_REPS / 2] * 1e6, ts[LAT_REPS + LAT_REPS / 2] * 1e6);
  }
  free(pairs);
  free(ts);
  free(full), free(out), free(ref), free(m), free(s), free(off);
  MPI_Finalize();
  return 0;
}
