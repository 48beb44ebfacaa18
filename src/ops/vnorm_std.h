/*
 * The z-score of logit standardisation (standardize_softmax.c, kd_loss.c):
 * mean and unbiased standard deviation over a row's finite entries, and the
 * VJP of z = (x - mean) / (std + 1e-7) (layer norm without affine
 * parameters, n - 1 convention).
 */
#ifndef SMX_OPS_VNORM_STD_H
#define SMX_OPS_VNORM_STD_H

#include <math.h>
#include <stddef.h>

#include "core/ksum.h"

#define SMX_VN_STD_EPS 1e-7

typedef struct smx_vn_moments {
  double mean, sd;   /* over the finite entries; sd = 0 for fewer than two */
  size_t nf;         /* finite entries */
  int ex;            /* the entries were scaled by 2^-ex (max |x| in [1/2, 1)) */
  double sds;        /* sd 2^-ex: finite where sd overflows (rows near DBL_MAX) */
} smx_vn_moments;


/* the entries are scaled by a power of two near 1/max|x| first, so that
 * neither the sum nor the squares overflow (f64 rows up to DBL_MAX) */
#define SMX_VN_MOMENTS_BODY                                                   \
  smx_vn_moments m = { 0.0, 0.0, 0, 0, 0.0 };                                 \
  double amax = 0.0;                                                          \
  for (size_t i = 0; i < n; i++)                                              \
    if (isfinite(x[i])) { double a = fabs((double)x[i]); if (a > amax) amax = a; m.nf++; } \
  if (!m.nf) return m;                                                        \
  int ex = 0;                                                                 \
  if (amax > 0.0) frexp(amax, &ex);                                           \
  double s = 0.0, sc = 0.0;                                                   \
  for (size_t i = 0; i < n; i++)                                              \
    if (isfinite(x[i])) smx_kadd(&s, &sc, ldexp((double)x[i], -ex));       \
  double mean = (s + sc) / (double)m.nf;                                      \
  /* the corrected two-pass sum: the rounding of the mean is taken back out */ \
  double q = 0.0, qc = 0.0, r = 0.0, rc = 0.0;                                \
  for (size_t i = 0; i < n; i++)                                              \
    if (isfinite(x[i])) {                                                     \
      double d = ldexp((double)x[i], -ex) - mean;                             \
      smx_kadd(&q, &qc, d * d);                                            \
      smx_kadd(&r, &rc, d);                                                \
    }                                                                         \
  r += rc;                                                                    \
  q = q + qc - r * r / (double)m.nf;                                          \
  m.mean = ldexp(mean + r / (double)m.nf, ex);                                \
  m.sds = m.nf > 1 && q > 0.0 ? sqrt(q / (double)(m.nf - 1)) : 0.0;           \
  m.sd = ldexp(m.sds, ex);                                                    \
  m.ex = ex;                                                                  \
  return m;

static inline smx_vn_moments smx_vn_moments_f32(const float *x, size_t n) { SMX_VN_MOMENTS_BODY }
static inline smx_vn_moments smx_vn_moments_f64(const double *x, size_t n) { SMX_VN_MOMENTS_BODY }

/* gz (in dx, dL/dz) into dL/dx in place:
 *   dx_j = (gz_j - mean(gz)) / (sd + eps) - (sum gz_i (x_i - mean)) (x_j - mean) / ((sd + eps)^2 (nf - 1) sd)
 * over the finite entries (the last term only where sd > 0); 0 elsewhere;
 * NaN everywhere on a row with NaN. */
#define SMX_VN_ZSCORE_VJP(T, x, dx, n, mo)                                                       \
  do {                                                                                           \
    double sg = 0.0, sgx = 0.0, inv = 1.0 / ((mo).sd + SMX_VN_STD_EPS);                          \
    int nan_row = 0;                                                                             \
    for (size_t i = 0; i < n; i++) {                                                             \
      if (x[i] != x[i]) nan_row = 1;                                                             \
      if (!isfinite(x[i])) continue;                                                             \
      sg += dx[i];                                                                               \
      sgx += (double)dx[i] * ((double)x[i] - (mo).mean);                                         \
    }                                                                                            \
    double mg = (mo).nf ? sg / (double)(mo).nf : 0.0;                                            \
    double k = (mo).sd > 0.0 ? sgx * inv * inv / ((double)((mo).nf - 1) * (mo).sd) : 0.0;        \
    for (size_t i = 0; i < n; i++) {                                                             \
      if (nan_row) dx[i] = (T)NAN;                                                               \
      else if (!isfinite(x[i])) dx[i] = 0;                                                       \
      else dx[i] = (T)(((double)dx[i] - mg) * inv - k * ((double)x[i] - (mo).mean));              \
    }                                                                                            \
  } while (0)

#endif
