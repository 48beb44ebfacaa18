#include "score_set.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* Order-preserving map of a non-NaN double to an unsigned key: flip all bits
 * of negatives, the sign bit of the rest. */
static uint64_t key_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

enum { DIGIT_BITS = 11, BUCKETS = 1 << DIGIT_BITS, PASSES = (64 + DIGIT_BITS - 1) / DIGIT_BITS };

int rep_sort_desc(double *v, size_t n) {
  /* Millions of scores per set and several sets per score: an LSD radix sort
   * is several times faster than qsort. 11-bit digits (six passes) keep the
   * 2048 write streams of a pass within the caches and the TLB, which 16-bit
   * digits (65536 streams) do not. */
  if (n < 4096) {
    qsort(v, n, sizeof *v, cmp_desc);
    return 0;
  }
  uint64_t *a = malloc(n * sizeof *a), *t = malloc(n * sizeof *t);
  size_t(*count)[BUCKETS] = calloc(PASSES, sizeof *count);
  if (a == NULL || t == NULL || count == NULL) {
    free(a);
    free(t);
    free(count);
    return -1;
  }
  /* complemented keys: ascending keys = descending values; all digit
   * histograms in one read */
  for (size_t i = 0; i < n; i++) {
    uint64_t k = ~key_of(v[i]);
    a[i] = k;
    for (int p = 0; p < PASSES; p++) count[p][(k >> (p * DIGIT_BITS)) & (BUCKETS - 1)]++;
  }
  for (int p = 0; p < PASSES; p++) {
    int shift = p * DIGIT_BITS;
    /* a digit that every key shares (the exponent of scores in a narrow
     * range, say) leaves the order as it is: skip the pass */
    if (count[p][(a[0] >> shift) & (BUCKETS - 1)] == n) continue;
    size_t sum = 0;
    for (size_t d = 0; d < BUCKETS; d++) {
      size_t c = count[p][d];
      count[p][d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) t[count[p][(a[i] >> shift) & (BUCKETS - 1)]++] = a[i];
    uint64_t *s = a;
    a = t;
    t = s;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t k = ~a[i];
    uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
    memcpy(&v[i], &u, sizeof u);
  }
  free(a);
  free(t);
  free(count);
  return 0;
}

int rep_scores_make(rep_scores *out, const double *x, size_t n) {
  memset(out, 0, sizeof *out);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) kept += !isnan(x[i]);
  out->n_nan = n - kept;
  if (kept == 0) return 0;
  out->v = malloc(kept * sizeof *out->v);
  if (out->v == NULL) return -1;
  for (size_t i = 0, k = 0; i < n; i++) {
    double d = x[i];
    if (isnan(d)) continue;
    out->v[k++] = d == 0 ? 0.0 : d;  /* -0 == +0: one key for both */
    out->n_posinf += d == INFINITY;
    out->n_neginf += d == -INFINITY;
  }
  out->n = kept;
  if (rep_sort_desc(out->v, kept) != 0) {
    rep_scores_free(out);
    return -1;
  }
  return 0;
}

void rep_scores_free(rep_scores *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
