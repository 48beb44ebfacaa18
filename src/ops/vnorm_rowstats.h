/*
 * Row facts the variants' special-value rules need, in one scan: NaN
 * present, the count of +inf entries, the max over the finite entries
 * (-inf when none) and the first index holding the row max.
 */
#ifndef SMX_OPS_VNORM_ROWSTATS_H
#define SMX_OPS_VNORM_ROWSTATS_H

#include <math.h>
#include <stddef.h>

typedef struct smx_vn_stats {
  int nan;
  size_t kinf;
  double fmax;     /* max over finite entries; -inf when none */
  size_t imax;     /* first index of fmax (n when none) */
  double fmin;     /* min over finite entries; +inf when none */
  size_t imin;     /* first index of fmin */
} smx_vn_stats;

#define SMX_VN_STATS_BODY                                            \
  smx_vn_stats s = { 0, 0, -INFINITY, n, INFINITY, n };               \
  for (size_t i = 0; i < n; i++) {                                    \
    double v = x[i];                                                  \
    if (v != v) s.nan = 1;                                            \
    else if (v == INFINITY) s.kinf++;                                 \
    else if (v != -INFINITY) {                                        \
      if (v > s.fmax) { s.fmax = v; s.imax = i; }                     \
      if (v < s.fmin) { s.fmin = v; s.imin = i; }                     \
    }                                                                 \
  }                                                                   \
  return s;

static inline smx_vn_stats smx_vn_stats_f32(const float *x, size_t n) { SMX_VN_STATS_BODY }
static inline smx_vn_stats smx_vn_stats_f64(const double *x, size_t n) { SMX_VN_STATS_BODY }

#endif
