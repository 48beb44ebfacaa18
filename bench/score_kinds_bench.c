/*
 * score_kinds_bench — each logit score's compute time against msp's, in the
 * same run, on one thread (issue 25 item 8: every score within 1.5x msp).
 * The logits are 16384 x 4096 float32 N(0, 9), scored as the CLI sends them:
 * calls of 64 rows (1 MiB, smx score's and smx eval's block), the blocks
 * taken round-robin from 8 MiB (cache-resident, as after the CLI's pread),
 * or with --memory as one call over the whole 256 MiB (from DRAM). The last
 * row is every default score of smx eval in one smx_scores_multi_rows_f32
 * call (odin at T = 1000). Medians of --reps runs.
 *
 *   score_kinds_bench [--reps R] [--memory]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smx/smx.h"

#define ROWS 16384
#define COLS 4096
#define BLOCK_ROWS 64
#define POOL_BLOCKS 8
#define NKINDS 9
#define MAX_REPS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static uint64_t rng = 1;
static double urand(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return ((double)(rng >> 11) + 0.5) * 0x1p-53;
}

int main(int argc, char **argv) {
  int reps = 5, memory = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--memory")) memory = 1;
    else {
      fprintf(stderr, "usage: score_kinds_bench [--reps R] [--memory]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > MAX_REPS) reps = 5;
  size_t n = memory ? (size_t)ROWS * COLS : (size_t)POOL_BLOCKS * BLOCK_ROWS * COLS;
  float *x = malloc(n * sizeof(float));
  double *o = malloc((size_t)ROWS * NKINDS * sizeof(double));
  if (!x || !o) return 1;
  for (size_t i = 0; i < n; i += 2) {   /* Box-Muller, sd 3 */
    double r = 3.0 * sqrt(-2.0 * log(urand())), a = 6.283185307179586 * urand();
    x[i] = (float)(r * cos(a));
    x[i + 1] = (float)(r * sin(a));
  }
  const smx_score_kind kinds[NKINDS] = { SMX_SCORE_MSP,         SMX_SCORE_MAX_LOGIT,   SMX_SCORE_ENERGY,
                                         SMX_SCORE_NEG_ENTROPY, SMX_SCORE_MARGIN_PROB, SMX_SCORE_MARGIN_LOGIT,
                                         SMX_SCORE_GEN,         SMX_SCORE_ODIN,        SMX_SCORE_NONUNIFORMITY };
  smx_score_params p[NKINDS];
  memset(p, 0, sizeof p);
  p[7].temperature = 1000.0;
  smx_options opt = { .threads = 1 };
  printf("%d x %d float32, one thread, %s, median of %d\n", ROWS, COLS,
         memory ? "one call over 256 MiB" : "calls of 64 rows from 8 MiB", reps);
  printf("%-16s %9s %8s %7s\n", "score", "s", "vs msp", "GB/s");
  double msp = 0.0;
  for (int k = 0; k <= NKINDS; k++) {
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      size_t calls = memory ? 1 : ROWS / BLOCK_ROWS, rows = memory ? ROWS : BLOCK_ROWS;
      for (size_t b = 0; b < calls; b++) {
        const float *xb = x + (b % POOL_BLOCKS) * BLOCK_ROWS * COLS;
        smx_status st;
        if (k < NKINDS) {
          st = smx_scores_rows_f32(xb, COLS, o, rows, COLS, kinds[k], &p[k], &opt);
        } else {
          double *outs[NKINDS];
          for (int q = 0; q < NKINDS; q++) outs[q] = o + (size_t)q * rows;
          st = smx_scores_multi_rows_f32(xb, COLS, outs, rows, COLS, NKINDS, kinds, p, &opt);
        }
        if (st != SMX_OK) {
          fprintf(stderr, "score_kinds_bench: %s\n", smx_status_string(st));
          return 1;
        }
      }
      t[r] = now() - t0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    double m = t[reps / 2];
    if (k == 0) msp = m;
    printf("%-16s %9.4f %8.2f %7.2f\n", k < NKINDS ? smx_score_name(kinds[k]) : "all (one call)", m, m / msp,
           (double)ROWS * COLS * sizeof(float) / m * 1e-9);
  }
  free(x);
  free(o);
  return 0;
}
