/*
 * The calibration run behind wisdom. For each of the two row crossovers
 * (softmax's x + y working set, log-sum-exp's x) it times the three-pass and
 * two-pass f32 algorithms, one thread, at working sets of 1/4, 1/2, 1, 2 and
 * 4 times the cache model's crossover, alternating the two algorithms and
 * keeping each one's fastest call (the least disturbed by other processes).
 * The crossover becomes the geometric middle between the largest size where
 * two-pass does not win by 2% and the next one, when two-pass wins at every
 * size above; NEVER when it never wins. Log-softmax has softmax's working set
 * and was measured to cross over with it, so it shares that crossover.
 */
#define _POSIX_C_SOURCE 200809L
#include "tune/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPOINTS 5
#define MAX_ALLOC ((size_t)64 << 20) /* bytes, x and y together */
#define MIN_COLS 1024
#define WIN 0.98                     /* two-pass must be 2% faster to count as a win */
#define MIN_REPS 3
#define MAX_REPS 15
#define REP_TARGET_S 0.003           /* per algorithm and size, when the budget allows */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bufs {
  float *x, *y;
  float lse;
} bufs;

static int run(bufs *b, int lse, smx_algo algo, size_t cols) {
  smx_options o;
  memset(&o, 0, sizeof o);
  o.algo = algo;
  o.threads = 1;
  smx_status st = lse ? smx_logsumexp_f32(b->x, &b->lse, cols, &o) : smx_softmax_f32(b->x, b->y, cols, &o);
  return st == SMX_OK ? 0 : -1;
}

/* Fastest call of each algorithm at `cols`; -1 when out of time or on error.
 * The deadline is checked before every call, so a calibration overruns its
 * budget by one call at most (about 2 ms at the largest size). */
static int time_point(bufs *b, int lse, size_t cols, double deadline, double *t3, double *t2) {
  double best[2] = {INFINITY, INFINITY};
  const smx_algo algo[2] = {SMX_ALGO_THREE_PASS, SMX_ALGO_TWO_PASS};
  for (int a = 0; a < 2; a++)
    if (now_s() > deadline || run(b, lse, algo[a], cols) != 0) return -1; /* warm-up */
  double spent = 0.0;
  for (int rep = 0; rep < MAX_REPS; rep++) {
    if (rep >= MIN_REPS && spent >= 2 * REP_TARGET_S) break;
    for (int a = 0; a < 2; a++) {
      double t0 = now_s();
      if (t0 > deadline) return -1;
      if (run(b, lse, algo[a], cols) != 0) return -1;
      double dt = now_s() - t0;
      spent += dt;
      if (dt < best[a]) best[a] = dt;
    }
  }
  *t3 = best[0];
  *t2 = best[1];
  return 0;
}

/* One crossover: base bytes of working set, bpc bytes of working set a column.
 * 0 and *out set, or -1 (out of time or memory). */
static int calibrate_rule(bufs *b, size_t cap_cols, int lse, size_t base, size_t bpc, double deadline, size_t *out) {
  size_t ws[NPOINTS], cols[NPOINTS];
  int n = 0;
  for (int k = -2; k <= 2; k++) {
    size_t w = k < 0 ? base >> -k : base << k;
    size_t c = w / bpc / 64 * 64;
    if (c < MIN_COLS || c > cap_cols) continue;
    ws[n] = c * bpc;
    cols[n++] = c;
  }
  if (n < 2) return -1;
  int wins[NPOINTS];
  for (int i = 0; i < n; i++) {
    double t3, t2;
    if (time_point(b, lse, cols[i], deadline, &t3, &t2) != 0) return -1;
    wins[i] = t2 < WIN * t3;
    if (getenv("SMX_TUNE_DEBUG"))
      fprintf(stderr, "smx calibration: %s, %zu columns: three-pass %.3f, two-pass %.3f ns/element\n",
              lse ? "logsumexp" : "softmax", cols[i], t3 * 1e9 / (double)cols[i], t2 * 1e9 / (double)cols[i]);
  }
  int first = n; /* two-pass wins at every tested size from here on */
  while (first > 0 && wins[first - 1]) first--;
  if (first == n) *out = SMX_TUNE_NEVER;
  else if (first == 0) *out = (size_t)((double)ws[0] / sqrt(2.0));
  else *out = (size_t)sqrt((double)ws[first - 1] * (double)ws[first]);
  return 0;
}

int smx_tune_calibrate(const smx_cpu_caches *c, smx_tune_table *t, double budget_s) {
  double deadline = now_s() + budget_s;
  /* the AVX-512 model's crossovers are the centres, whatever the kernel set */
  smx_tune_table centre;
  smx_tune_model(c, "avx512", &centre);
  /* the largest sizes tried: 4 times the centres, x and y within MAX_ALLOC */
  size_t sm_cols = centre.softmax_ws / (2 * sizeof(float)) * 4, lse_cols = centre.lse_ws / sizeof(float) * 4;
  size_t max_cols = sm_cols > lse_cols ? sm_cols : lse_cols;
  if (max_cols > MAX_ALLOC / (2 * sizeof(float))) max_cols = MAX_ALLOC / (2 * sizeof(float));
  if (max_cols < MIN_COLS) return 0;
  bufs b;
  b.x = malloc(max_cols * sizeof(float));
  b.y = malloc(max_cols * sizeof(float));
  if (!b.x || !b.y) {
    free(b.x);
    free(b.y);
    return 0;
  }
  /* logits like the benchmark's, uniform in [-10, 10); writing them faults the pages in */
  if (now_s() > deadline) max_cols = 0; /* the allocation took the time: fill nothing */
  uint64_t s = 0x5eed5eed12345678ull;
  for (size_t i = 0; i < max_cols; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    b.x[i] = -10.0f + 20.0f * (float)(s >> 40) * 0x1p-24f;
  }
  memset(b.y, 0, max_cols * sizeof(float));
  int measured = 0;
  size_t v;
  if (calibrate_rule(&b, max_cols, 1, centre.lse_ws, sizeof(float), deadline, &v) == 0) {
    t->lse_ws = v;
    measured++;
  }
  if (calibrate_rule(&b, max_cols, 0, centre.softmax_ws, 2 * sizeof(float), deadline, &v) == 0) {
    t->softmax_ws = v;
    measured++;
  }
  free(b.x);
  free(b.y);
  return measured;
}
