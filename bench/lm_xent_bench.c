/*
 * lm_xent_bench: smx fused cross-entropy, forward and forward + backward, on
 * rows x cols f32 logits (default 4096 x 128000 = 2 GiB), on 1 and 2 threads,
 * with the peak extra memory of each call (the growth of the process's peak
 * resident set over the buffers already touched).
 *
 *   lm_xent_bench [--rows R] [--cols C] [--reps N] [--threads 1,2] [--csv]
 *
 * Modes: "fwd" (loss only), "fwd+bwd" (loss and the gradient into a separate
 * buffer), "fwd+bwd in place" (the gradient over the logits; each repetition
 * then runs on the previous one's gradient, which costs the same: the
 * arithmetic does not depend on the values). Medians of --reps runs.
 * bench/python/bench_xent_torch.py runs this next to PyTorch and prints ratios.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smx/smx.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* a field of /proc/self/status in KiB (VmHWM: peak resident set; VmRSS: now) */
static long status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') { v = atol(line + n + 1); break; }
  fclose(f);
  return v;
}

/* resets VmHWM to the current RSS (Linux >= 4.0), so each call's peak is its own */
static void reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) { fputs("5", f); fclose(f); }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  size_t rows = 4096, cols = 128000;
  int reps = 3, csv = 0;
  int threads[8] = { 1, 2 }, nthreads = 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--csv")) csv = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      nthreads = 0;
      for (char *p = strtok(argv[++i], ","); p && nthreads < 8; p = strtok(NULL, ",")) threads[nthreads++] = atoi(p);
    } else {
      fprintf(stderr, "usage: lm_xent_bench [--rows R] [--cols C] [--reps N] [--threads 1,2] [--csv]\n");
      return 1;
    }
  }
  if (reps < 1 || reps > 100 || rows < 1 || cols < 2) return 1;
  size_t n = rows * cols;
  float *x = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float));
  int64_t *t = malloc(rows * sizeof(int64_t));
  float *loss = malloc(rows * sizeof(float));
  if (!x || !g || !t || !loss) { fprintf(stderr, "lm_xent_bench: out of memory for %zu x %zu\n", rows, cols); return 1; }
  /* logits ~ N(0, 2) by a cheap sum of uniforms; targets uniform; every page touched */
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    float u = (float)(s >> 40) * 0x1p-24f + (float)((s >> 16) & 0xffffff) * 0x1p-24f - 1.0f;
    x[i] = 2.4f * u;
    g[i] = 1.0f;   /* not zero: malloc + zero stores may become calloc, leaving g untouched */
  }
  for (size_t r = 0; r < rows; r++) t[r] = (int64_t)((r * 2654435761u) % cols);

  if (csv) printf("impl,rows,cols,threads,mode,median_ms,gb_per_s,extra_mib\n");
  else printf("smx %s, kernels %s: cross-entropy of %zu x %zu f32 logits (%.2f GiB), median of %d\n",
              smx_version_string(), smx_isa(), rows, cols, (double)n * 4 / (1 << 30), reps);
  if (!csv) printf("%-8s %-18s %10s %10s %12s\n", "threads", "mode", "ms", "GB/s", "extra MiB");
  for (int ti = 0; ti < nthreads; ti++) {
    for (int mode = 0; mode < 3; mode++) {
      smx_options o = { SMX_ALGO_AUTO, 0.0, 0u, threads[ti], NULL };   /* NULL loss: PyTorch's defaults */
      double ts[100];
      long extra = 0;
      for (int k = 0; k < reps; k++) {
        long rss0 = status_kib("VmRSS");
        reset_peak();
        double t0 = now_s();
        smx_status st = smx_cross_entropy_f32(x, cols, t, loss, mode == 0 ? NULL : mode == 1 ? g : x, cols, NULL, rows,
                                              cols, &o);
        ts[k] = now_s() - t0;
        long hwm = status_kib("VmHWM");
        if (hwm - rss0 > extra) extra = hwm - rss0;
        if (st != SMX_OK) { fprintf(stderr, "lm_xent_bench: %s\n", smx_status_string(st)); return 1; }
        if (!(loss[0] == loss[0])) { fprintf(stderr, "lm_xent_bench: NaN loss\n"); return 1; }
      }
      qsort(ts, (size_t)reps, sizeof(double), cmp_double);
      double med = ts[reps / 2];
      /* bytes moved: the logits read once (fwd) or read and the gradient written (fwd+bwd) */
      double bytes = (double)n * 4 * (mode == 0 ? 1 : 2);
      static const char *names[3] = { "fwd", "fwd+bwd", "fwd+bwd in place" };
      if (csv) printf("smx,%zu,%zu,%d,%s,%.3f,%.2f,%.2f\n", rows, cols, threads[ti], names[mode], med * 1e3,
                      bytes / med / 1e9, extra / 1024.0);
      else printf("%-8d %-18s %10.1f %10.2f %12.2f\n", threads[ti], names[mode], med * 1e3, bytes / med / 1e9,
                  extra / 1024.0);
      fflush(stdout);
    }
  }
  free(x); free(g); free(t); free(loss);
  return 0;
}
