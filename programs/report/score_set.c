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

int rep_sort_desc(double *v, size_t n) {
  /* Millions of scores per set and several sets per score: an LSD radix sort
   * on 16-bit digits (four passes) is several times faster than qsort. */
  if (n < 4096) {
    qsort(v, n, sizeof *v, cmp_desc);
    return 0;
  }
  uint64_t *a = malloc(n * sizeof *a), *t = malloc(n * sizeof *t);
  size_t *count = malloc(65536 * sizeof *count);
  if (a == NULL || t == NULL || count == NULL) {
    free(a);
    free(t);
    free(count);
    return -1;
  }
  for (size_t i = 0; i < n; i++) a[i] = ~key_of(v[i]);  /* complemented: ascending keys = descending values */
  for (int pass = 0; pass < 4; pass++) {
    int shift = 16 * pass;
    memset(count, 0, 65536 * sizeof *count);
    for (size_t i = 0; i < n; i++) count[(a[i] >> shift) & 0xFFFF]++;
    size_t sum = 0;
    for (size_t d = 0; d < 65536; d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) t[count[(a[i] >> shift) & 0xFFFF]++] = a[i];
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
