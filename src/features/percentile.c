/*
 * ReAct's threshold: the p-th percentile of all training feature values with
 * NumPy's default rule ("linear": h = (n - 1) p / 100, v[floor h] + (h -
 * floor h) (v[floor h + 1] - v[floor h]) over the sorted values), exact, in
 * O(n) time and 2^16 counters: the two order statistics come from a radix
 * select on the order-preserving 32-bit keys of the floats (top 16 bits, then
 * the low 16 bits inside the one bucket), with no copy of the bank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/model.h"

static uint32_t key_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static float float_of(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The value of rank r (0-based) among the n values; hist: 65536 counters. */
static float select_rank(const float *x, size_t n, uint64_t r, uint64_t *hist) {
  memset(hist, 0, 65536 * sizeof *hist);
  for (size_t i = 0; i < n; i++) hist[key_of(x[i]) >> 16]++;
  uint32_t hi = 0;
  for (; hi < 65535 && r >= hist[hi]; hi++) r -= hist[hi];
  memset(hist, 0, 65536 * sizeof *hist);
  for (size_t i = 0; i < n; i++) {
    uint32_t k = key_of(x[i]);
    if ((k >> 16) == hi) hist[k & 0xffffu]++;
  }
  uint32_t lo = 0;
  for (; lo < 65535 && r >= hist[lo]; lo++) r -= hist[lo];
  return float_of(hi << 16 | lo);
}

double smx_feat_percentile(const float *x, size_t n, double p) {
  uint64_t *hist = malloc(65536 * sizeof *hist);
  if (!hist || n == 0) { free(hist); return NAN; }
  double h = (double)(n - 1) * (p / 100.0);
  double fl = floor(h);
  uint64_t i = (uint64_t)fl;
  if (i > n - 1) i = n - 1;
  double t = h - fl;
  double a = select_rank(x, n, i, hist);
  double b = i + 1 < n ? select_rank(x, n, i + 1, hist) : a;
  free(hist);
  /* numpy.lib.function_base._lerp: a + (b - a) t, from the upper end when t >= 0.5 */
  double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}
