/*
 * smx_bench_f64: f64 softmax, log-softmax and log-sum-exp of smx, each with
 * every algorithm, against a plain C loop over libm's exp (what one writes
 * without smx).
 * oneDNN (2.6 here) has no f64 data type, so it has no f64 softmax to
 * compare; bench/f64_peers.py times NumPy, SciPy and PyTorch on the same
 * shapes. Each sample times whole calls (repeated until 20 ms), the methods
 * are interleaved sample by sample, and the table shows medians.
 *
 *   smx_bench_f64 [--cases 1Ki,64Ki,4Mi,4096x32000] [--reps N] [--threads T] [--cpu-time]
 *   SMX_MAX_ISA=avx2 smx_bench_f64 ...   (caps the kernels, as for the library)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smx/smx.h"

/* --cpu-time: process CPU time instead of wall time (steadier on a busy machine, one thread only) */
static clockid_t clock_id = CLOCK_MONOTONIC;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(clock_id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the baseline: max, exp + sum, scale; one row at a time */
static void plain_softmax_rows(const double *x, double *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; r++) {
    const double *xr = x + r * cols;
    double *yr = y + r * cols;
    double m = -INFINITY, s = 0.0;
    for (size_t i = 0; i < cols; i++) m = xr[i] > m ? xr[i] : m;
    for (size_t i = 0; i < cols; i++) {
      yr[i] = exp(xr[i] - m);
      s += yr[i];
    }
    double inv = 1.0 / s;
    for (size_t i = 0; i < cols; i++) yr[i] *= inv;
  }
}

static void plain_logsumexp_rows(const double *x, double *out, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; r++) {
    const double *xr = x + r * cols;
    double m = -INFINITY, s = 0.0;
    for (size_t i = 0; i < cols; i++) m = xr[i] > m ? xr[i] : m;
    for (size_t i = 0; i < cols; i++) s += exp(xr[i] - m);
    out[r] = m + log(s);
  }
}

/* methods: each op (softmax, log-softmax, logsumexp) with each algorithm, and the plain C loops */
enum { N_ALGO = 4, M_PLAIN = 3 * N_ALGO, M_PLAIN_LSE, M_COUNT };
static const char *const op_names[3] = { "softmax", "log-softmax", "logsumexp" };
static const char *const algo_names[N_ALGO] = { "auto", "three-pass", "two-pass", "online" };

static void method_name(int m, char *buf, size_t n) {
  if (m == M_PLAIN) snprintf(buf, n, "plain C softmax (libm exp)");
  else if (m == M_PLAIN_LSE) snprintf(buf, n, "plain C logsumexp (libm exp)");
  else snprintf(buf, n, "smx %s %s", op_names[m / N_ALGO], algo_names[m % N_ALGO]);
}

typedef struct ctx {
  const double *x;
  double *y, *lse;
  size_t rows, cols;
  int threads;
} ctx;

static int run(const ctx *c, int m) {
  size_t R = c->rows, C = c->cols;
  if (m == M_PLAIN) { plain_softmax_rows(c->x, c->y, R, C); return 0; }
  if (m == M_PLAIN_LSE) { plain_logsumexp_rows(c->x, c->lse, R, C); return 0; }
  smx_options o = { (smx_algo)(m % N_ALGO), 0, 0, c->threads, NULL };
  switch (m / N_ALGO) {
    case 0: return smx_softmax_rows_f64(c->x, C, c->y, C, R, C, &o) != SMX_OK;
    case 1: return smx_log_softmax_rows_f64(c->x, C, c->y, C, R, C, &o) != SMX_OK;
    default: return smx_logsumexp_rows_f64(c->x, C, c->lse, R, C, &o) != SMX_OK;
  }
}

/* seconds per call: a batch of calls (doubled until it lasts 20 ms) timed as a whole */
static double sample(const ctx *c, int m) {
  for (long calls = 1;; calls *= 2) {
    double t0 = now_s();
    for (long k = 0; k < calls; k++)
      if (run(c, m)) {
        char name[64];
        method_name(m, name, sizeof name);
        fprintf(stderr, "smx_bench_f64: %s failed\n", name);
        exit(1);
      }
    double t = now_s() - t0;
    if (t >= 0.02) return t / (double)calls;
  }
}

static int parse_case(const char *s, size_t *rows, size_t *cols) {
  char *end;
  unsigned long long a = strtoull(s, &end, 10);
  if (end == s) return -1;
  if (*end == 'x') {
    unsigned long long b = strtoull(end + 1, &end, 10);
    if (*end) return -1;
    *rows = a;
    *cols = b;
    return 0;
  }
  if (!strcmp(end, "Ki")) a <<= 10;
  else if (!strcmp(end, "Mi")) a <<= 20;
  else if (*end) return -1;
  *rows = 1;
  *cols = a;
  return 0;
}

int main(int argc, char **argv) {
  const char *cases = "1Ki,64Ki,4Mi,4096x32000";
  int reps = 5, threads = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cases") && i + 1 < argc) cases = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cpu-time")) clock_id = CLOCK_PROCESS_CPUTIME_ID;
    else {
      fprintf(stderr, "usage: smx_bench_f64 [--cases 1Ki,64Ki,4Mi,4096x32000] [--reps N] [--threads T] [--cpu-time]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  printf("smx %s f64, kernels: %s, threads: %d, medians of %d samples of %s time (ns per element; GB/s counts "
         "x read + y written)\n", smx_version_string(), smx_isa(), threads, reps,
         clock_id == CLOCK_MONOTONIC ? "wall" : "CPU");
  char buf[256];
  snprintf(buf, sizeof buf, "%s", cases);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    size_t rows, cols;
    if (parse_case(tok, &rows, &cols) || !rows || !cols) { fprintf(stderr, "smx_bench_f64: bad case %s\n", tok); return 2; }
    size_t n = rows * cols;
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double)), *lse = malloc(rows * sizeof(double));
    if (!x || !y || !lse) { fprintf(stderr, "smx_bench_f64: out of memory for %s\n", tok); return 1; }
    uint64_t s = 0x5eed;
    for (size_t i = 0; i < n; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (double)(s >> 11) * 0x1p-53 * 20.0 - 10.0;
      y[i] = 0.0;
    }
    ctx c = { x, y, lse, rows, cols, threads };
    double *t = malloc((size_t)reps * M_COUNT * sizeof(double));
    for (int m = 0; m < M_COUNT; m++) sample(&c, m);   /* warm-up: pages, caches, pool */
    for (int r = 0; r < reps; r++)
      for (int m = 0; m < M_COUNT; m++) t[m * reps + r] = sample(&c, m);
    printf("\n%s (%zu x %zu)\n", tok, rows, cols);
    printf("  %-30s %10s %8s %14s\n", "method", "ns/elem", "GB/s", "vs plain C");
    double med[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) {
      qsort(t + m * reps, (size_t)reps, sizeof(double), cmp_double);
      med[m] = t[m * reps + reps / 2];
    }
    for (int m = 0; m < M_COUNT; m++) {
      int lse_op = m == M_PLAIN_LSE || (m < M_PLAIN && m / N_ALGO == 2);
      double bytes = (double)n * 8.0 * (lse_op ? 1.0 : 2.0);
      double base = lse_op ? med[M_PLAIN_LSE] : med[M_PLAIN];
      char name[64];
      method_name(m, name, sizeof name);
      printf("  %-30s %10.3f %8.2f %13.2fx\n", name, med[m] * 1e9 / (double)n, bytes / med[m] * 1e-9, base / med[m]);
    }
    free(t);
    free(x);
    free(y);
    free(lse);
  }
  return 0;
}
