/*
 * scores_bench — the two speed targets of the scores issue, each next to its
 * yardstick in the same run:
 *
 *  1. One-pass scores over a streamed logits file (default 1M x 1000 float32,
 *     4 GB, written to --dir and deleted at the end): MSP, energy and max-logit
 *     (smx_scores_rows_f32) against the engine's softmax and log-sum-exp
 *     (smx_softmax_rows_f32 in place, smx_logsumexp_rows_f32) on the same
 *     blocks read the same way (smx_npy_read_rows_f32, 16 MiB blocks, as
 *     smx score / smx eval / smx softmax read them), plus the read alone.
 *     Also the compute alone on one in-memory block, where the read does not
 *     hide anything. Target: scores >= 70% of softmax throughput.
 *  2. AUROC on 10M scores (5M ID + 5M OOD, float32 with ties): the full
 *     smx_ood_metrics_f32 / _f64 (AUROC, both AUPRs, every FPR rule) against
 *     one sort of 10M floats: qsort, and the radix sort the metrics use (key
 *     mapping included). Target: metrics < 2x one sort. With --python, NumPy's
 *     np.sort and scikit-learn's roc_auc_score on the same sizes, same run.
 *
 * Times are medians of --reps runs; contenders are interleaved within each
 * repetition so that machine noise hits them alike.
 *
 *   scores_bench [--quick] [--rows N] [--cols K] [--n-auroc N] [--reps R] [--dir D] [--python]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/npy_io.h"
#include "scores/radix_sort.h"
#include "smx/smx.h"

#define BLOCK_BYTES ((size_t)16 << 20)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_d);
  return v[n / 2];
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * 0x1p-53;
}
static double nrand(void) {
  double u = urand(), v = urand();
  if (u < 1e-300) u = 1e-300;
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

enum { OP_READ, OP_SOFTMAX, OP_LSE, OP_MSP, OP_ENERGY, OP_MAXLOGIT, OP_COUNT };
static const char *op_name[OP_COUNT] = { "read only", "softmax (engine)", "logsumexp (engine)", "msp", "energy",
                                         "max_logit" };

/* One op over a block of nr rows. */
static int run_op(int op, float *x, size_t nr, size_t K, double *out) {
  smx_status s = SMX_OK;
  switch (op) {
    case OP_READ: break;
    case OP_SOFTMAX: s = smx_softmax_rows_f32(x, K, x, K, nr, K, NULL); break;
    case OP_LSE: {
      float *l = (float *)(void *)out;   /* nr floats fit in nr doubles */
      s = smx_logsumexp_rows_f32(x, K, l, nr, K, NULL);
      break;
    }
    case OP_MSP: s = smx_scores_rows_f32(x, K, out, nr, K, SMX_SCORE_MSP, NULL, NULL); break;
    case OP_ENERGY: s = smx_scores_rows_f32(x, K, out, nr, K, SMX_SCORE_ENERGY, NULL, NULL); break;
    case OP_MAXLOGIT: s = smx_scores_rows_f32(x, K, out, nr, K, SMX_SCORE_MAX_LOGIT, NULL, NULL); break;
  }
  return s != SMX_OK;
}

static double stream_file(const char *path, int op, float *x, double *out, size_t block) {
  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) { fprintf(stderr, "%s\n", err); exit(2); }
  uint64_t rows = smx_npy_reader_info(r)->rows;
  size_t K = (size_t)smx_npy_reader_info(r)->cols;
  double t0 = now();
  for (uint64_t r0 = 0; r0 < rows; r0 += block) {
    size_t nr = (size_t)(rows - r0 < block ? rows - r0 : block);
    if (smx_npy_read_rows_f32(r, r0, nr, x, err, sizeof err) != SMX_OK) { fprintf(stderr, "%s\n", err); exit(2); }
    if (run_op(op, x, nr, K, out)) { fprintf(stderr, "op %s failed\n", op_name[op]); exit(2); }
  }
  double t = now() - t0;
  smx_npy_close(r);
  return t;
}

static void bench_stream(size_t rows, size_t K, int reps, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/smx_scores_bench_%d.npy", dir, (int)getpid());
  size_t block = BLOCK_BYTES / sizeof(float) / K;
  if (block < 1) block = 1;
  float *x = malloc(block * K * sizeof(float));
  double *out = malloc(block * sizeof(double));
  if (!x || !out) { fprintf(stderr, "out of memory\n"); exit(2); }
  /* the file: logits ~ 3 N(0,1) plus a class bump, like a classifier's */
  char err[512];
  uint64_t shape[2] = { rows, K };
  smx_npy_writer *w = NULL;
  double t0 = now();
  if (smx_npy_writer_open(path, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) != SMX_OK) {
    fprintf(stderr, "%s\n", err);
    exit(2);
  }
  for (size_t r0 = 0; r0 < rows; r0 += block) {
    size_t nr = rows - r0 < block ? rows - r0 : block;
    for (size_t i = 0; i < nr; i++) {
      size_t c = (size_t)(urand() * (double)K);
      for (size_t j = 0; j < K; j++) x[i * K + j] = (float)(3.0 * (urand() - 0.5) * 3.4 + (j == c ? 6.0 : 0.0));
    }
    if (smx_npy_write_rows_f32(w, x, nr, err, sizeof err) != SMX_OK) { fprintf(stderr, "%s\n", err); exit(2); }
  }
  if (smx_npy_writer_finish(w, err, sizeof err) != SMX_OK) { fprintf(stderr, "%s\n", err); exit(2); }
  printf("file %s: %zu x %zu float32 (%.2f GB), written in %.1f s; ISA %s, 1 thread, %d reps (median)\n\n", path,
         rows, K, (double)rows * (double)K * 4e-9, now() - t0, smx_isa(), reps);

  double ts[OP_COUNT][32];
  for (int op = 0; op < OP_COUNT; op++) stream_file(path, op, x, out, block);   /* warm the page cache */
  for (int rep = 0; rep < reps; rep++)
    for (int op = 0; op < OP_COUNT; op++) ts[op][rep] = stream_file(path, op, x, out, block);
  /* compute only: one block in memory, the same ops, repeated */
  size_t nb = rows < block ? rows : block;
  double tm[OP_COUNT][32];
  for (size_t i = 0; i < nb * K; i++) x[i] = (float)(3.0 * nrand());
  float *keep = malloc(nb * K * sizeof(float));
  if (!keep) exit(2);
  memcpy(keep, x, nb * K * sizeof(float));
  for (int rep = 0; rep < reps; rep++)
    for (int op = 1; op < OP_COUNT; op++) {
      int inner = 8;
      double t = 0;
      for (int k = 0; k < inner; k++) {
        memcpy(x, keep, nb * K * sizeof(float));   /* softmax works in place: same input every time */
        double s = now();
        run_op(op, x, nb, K, out);
        t += now() - s;
      }
      tm[op][rep] = t / inner;
    }
  free(keep);
  double med[OP_COUNT], medm[OP_COUNT];
  for (int op = 0; op < OP_COUNT; op++) med[op] = median(ts[op], reps);
  for (int op = 1; op < OP_COUNT; op++) medm[op] = median(tm[op], reps);
  double gb = (double)rows * (double)K * 4e-9;
  printf("%-20s %10s %8s %12s | %14s %12s\n", "streamed file", "time (s)", "GB/s", "vs softmax", "in-memory ns/el",
         "vs softmax");
  for (int op = 0; op < OP_COUNT; op++) {
    printf("%-20s %10.3f %8.2f %11.0f%% |", op_name[op], med[op], gb / med[op], 100.0 * med[OP_SOFTMAX] / med[op]);
    if (op == OP_READ) printf(" %14s %12s\n", "-", "-");
    else printf(" %14.3f %11.0f%%\n", medm[op] * 1e9 / (double)(nb * K), 100.0 * medm[OP_SOFTMAX] / medm[op]);
  }
  printf("(vs softmax = softmax time / this time: throughput relative to the engine's softmax; target >= 70%%)\n\n");
  unlink(path);
  free(x);
  free(out);
}

static void bench_auroc(size_t n, int reps, int python) {
  size_t na = n / 2, nb = n - na;
  float *s = malloc(n * sizeof(float)), *c = malloc(n * sizeof(float));
  double *sd = malloc(n * sizeof(double));
  /* the same huge-page buffers the metrics use, so the sort is timed on equal terms */
  uint32_t *k = smx_sort_buffer_alloc(n * sizeof(uint32_t)), *t = smx_sort_buffer_alloc(n * sizeof(uint32_t));
  if (!s || !c || !sd || !k || !t) { fprintf(stderr, "out of memory\n"); exit(2); }
  for (size_t i = 0; i < n; i++) {
    /* rounded to 1/4096: plenty of ties, as saturated MSP scores have */
    s[i] = (float)(floor((nrand() + (i < na ? 1.0 : 0.0)) * 4096.0) / 4096.0);
    sd[i] = s[i];
  }
  double tq[32], tr[32], tm32[32], tm64[32];
  smx_ood_metrics m32, m64;
  for (int rep = 0; rep < reps; rep++) {
    memcpy(c, s, n * sizeof(float));
    double t0 = now();
    qsort(c, n, sizeof(float), cmp_f);
    tq[rep] = now() - t0;
    t0 = now();
    for (size_t i = 0; i < n; i++) k[i] = smx_key_from_f32(s[i]);
    uint32_t *sorted = smx_radix_sort_u32(k, t, n);
    tr[rep] = now() - t0;
    if (smx_f32_from_key(sorted[n - 1]) != c[n - 1]) { fprintf(stderr, "radix sort disagrees with qsort\n"); exit(2); }
    t0 = now();
    if (smx_ood_metrics_f32(s, s + na, &m32, na, nb, 0, NULL) != SMX_OK) exit(2);
    tm32[rep] = now() - t0;
    t0 = now();
    if (smx_ood_metrics_f64(sd, sd + na, &m64, na, nb, 0, NULL) != SMX_OK) exit(2);
    tm64[rep] = now() - t0;
  }
  double q = median(tq, reps), r = median(tr, reps), a = median(tm32, reps), b = median(tm64, reps);
  printf("AUROC on %zu scores (%zu ID + %zu OOD, float32, %llu tied values), %d reps (median)\n", n, na, nb,
         (unsigned long long)m32.n_tied_values, reps);
  printf("%-44s %10s %14s %14s\n", "", "time (s)", "/ radix sort", "/ qsort");
  printf("%-44s %10.3f %14.2f %14.2f\n", "qsort of the floats", q, q / r, 1.0);
  printf("%-44s %10.3f %14.2f %14.2f\n", "radix sort of the floats (with key mapping)", r, 1.0, r / q);
  printf("%-44s %10.3f %14.2f %14.2f\n", "smx_ood_metrics_f32 (all metrics)", a, a / r, a / q);
  printf("%-44s %10.3f %14.2f %14.2f\n", "smx_ood_metrics_f64 (same scores as double)", b, b / r, b / q);
  printf("AUROC %.12f (f32) %.12f (f64); target: metrics < 2x one sort of %zu floats\n", m32.auroc, m64.auroc, n);
  smx_sort_buffer_free(k, n * sizeof(uint32_t));
  smx_sort_buffer_free(t, n * sizeof(uint32_t));
  free(s);
  free(c);
  free(sd);
  if (python) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \""
             "import numpy as np, time, sys\n"
             "from sklearn.metrics import roc_auc_score\n"
             "rng=np.random.default_rng(0); n=%zu; na=n//2\n"
             "s=(np.floor((rng.standard_normal(n)+np.r_[np.ones(na),np.zeros(n-na)])*4096)/4096).astype(np.float32)\n"
             "y=np.r_[np.ones(na),np.zeros(n-na)]\n"
             "def med(f,r=%d):\n"
             "  ts=[]\n"
             "  for _ in range(r):\n"
             "    t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)\n"
             "  return sorted(ts)[len(ts)//2]\n"
             "print('%%-44s %%10.3f' %% ('numpy np.sort (float32)', med(lambda: np.sort(s))))\n"
             "print('%%-44s %%10.3f' %% ('sklearn roc_auc_score', med(lambda: roc_auc_score(y, s), max(1, %d//2))))\n"
             "\"",
             n, reps, reps);
    fflush(stdout);
    if (system(cmd) != 0) printf("(python peers not available)\n");
  }
}

int main(int argc, char **argv) {
  size_t rows = 1000000, K = 1000, n = 10000000;
  int reps = 5, python = 0, skip_stream = 0;
  const char *dir = "/tmp";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick")) { rows = 100000; n = 2000000; reps = 3; }
    else if (!strcmp(a, "--rows") && v) { rows = strtoull(v, NULL, 10); i++; }
    else if (!strcmp(a, "--cols") && v) { K = strtoull(v, NULL, 10); i++; }
    else if (!strcmp(a, "--n-auroc") && v) { n = strtoull(v, NULL, 10); i++; }
    else if (!strcmp(a, "--reps") && v) { reps = atoi(v); i++; }
    else if (!strcmp(a, "--dir") && v) { dir = v; i++; }
    else if (!strcmp(a, "--python")) python = 1;
    else if (!strcmp(a, "--auroc-only")) skip_stream = 1;
    else {
      fprintf(stderr, "usage: scores_bench [--quick] [--rows N] [--cols K] [--n-auroc N] [--reps R] [--dir D] "
                      "[--python] [--auroc-only]\n");
      return 1;
    }
  }
  if (reps < 1 || reps > 32 || rows < 1 || K < 1 || n < 2) { fprintf(stderr, "bad sizes\n"); return 1; }
  if (!skip_stream) bench_stream(rows, K, reps, dir);
  bench_auroc(n, reps, python);
  return 0;
}
