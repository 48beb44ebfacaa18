/*
 * The top-p prefix of a set of (weight, index) candidates: the order the
 * sampler's filters use (larger weight first, then lower index) and a
 * mass-guided quickselect over it. Header-only, because two libraries run
 * it and must agree bit for bit: the engine's sampler (sample_row.c) and
 * smx_mpi's sharded sampler (src/mpi/sample_filter.c), which links only
 * smx's public API.
 */
#ifndef SMX_OPS_SAMPLE_PREFIX_H
#define SMX_OPS_SAMPLE_PREFIX_H
#include <stddef.h>
#include <stdint.h>

/* the order of the filters: larger weight first, then lower index */
static inline int smx_prefix_before(const double *w, const int64_t *idx, size_t a, size_t b) {
  return w[a] > w[b] || (w[a] == w[b] && idx[a] < idx[b]);
}

static inline void smx_prefix_swap(double *w, int64_t *idx, size_t a, size_t b) {
  double tw = w[a];
  int64_t ti = idx[a];
  w[a] = w[b];
  idx[a] = idx[b];
  w[b] = tw;
  idx[b] = ti;
}

static inline void smx_prefix_insertion_sort(double *w, int64_t *idx, size_t lo, size_t hi) {
  for (size_t i = lo + 1; i < hi; i++)
    for (size_t j = i; j > lo && smx_prefix_before(w, idx, j, j - 1); j--) smx_prefix_swap(w, idx, j, j - 1);
}

/* Reorders (w, idx)[0, c) so that its first r entries are the smallest prefix,
 * in the filters' order, whose sum reaches target (>= target); returns r (c if
 * the whole set falls short). No full sort: expected O(c). */
static inline size_t smx_sample_prefix(double *w, int64_t *idx, size_t c, double target) {
  size_t lo = 0, hi = c;
  double acc = 0.0;   /* mass of [0, lo), all of which is in the prefix */
  while (hi - lo > 16) {
    /* median of three (in the order) as the pivot, moved to hi - 1 */
    size_t a = lo, b = lo + (hi - lo) / 2, d = hi - 1;
    if (smx_prefix_before(w, idx, b, a)) smx_prefix_swap(w, idx, a, b);
    if (smx_prefix_before(w, idx, d, b)) {
      smx_prefix_swap(w, idx, b, d);
      if (smx_prefix_before(w, idx, b, a)) smx_prefix_swap(w, idx, a, b);
    }
    smx_prefix_swap(w, idx, b, hi - 1);
    size_t p = hi - 1, s = lo;
    double mass = 0.0;
    for (size_t i = lo; i < p; i++)
      if (smx_prefix_before(w, idx, i, p)) {
        smx_prefix_swap(w, idx, i, s);
        mass += w[s];
        s++;
      }
    smx_prefix_swap(w, idx, s, p);   /* the pivot now sits at s; [lo, s) comes before it */
    if (acc + mass >= target) { hi = s; continue; }
    if (acc + mass + w[s] >= target) return s + 1;
    acc += mass + w[s];
    lo = s + 1;
  }
  smx_prefix_insertion_sort(w, idx, lo, hi);
  for (size_t i = lo; i < hi; i++) {
    acc += w[i];
    if (acc >= target) return i + 1;
  }
  return hi;   /* hi < c only when rounding of the walk fell short of the partition's sum */
}
#endif
