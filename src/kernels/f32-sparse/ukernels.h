/*
 * The sparse-simplex kernel family (sparsemax, entmax; f32 and f64): the
 * passes over a whole row that the threshold search leaves, written once over
 * the vector layer (body.h, instantiated by avx2.c, avx512.c and neon.c), with
 * a scalar twin (scalar.c). The threshold itself is found on the few candidate
 * entries by scalar code (src/ops/sparse_tau.c).
 *
 * Every kernel takes any n >= 1 and any alignment and touches nothing outside
 * [0, n); y (dx) may equal x (y, dy).
 */
#ifndef SMX_KERNELS_F32_SPARSE_UKERNELS_H
#define SMX_KERNELS_F32_SPARSE_UKERNELS_H

#include <stddef.h>

typedef struct smx_sparse_ukernels {
  const char *isa;
  /* The indices i, ascending, with x_i >= thr, into idx; returns their count.
   * *nan is set to 1 when some x_i is NaN (and left alone otherwise). Stops
   * early once more than cap are found (then returns a count > cap, idx holds
   * at most cap + 16 of them, and NaN may be missed). */
  size_t (*vselect)(size_t n, const float *x, float thr, size_t *idx, int *nan, size_t cap);
  size_t (*vselect_f64)(size_t n, const double *x, double thr, size_t *idx, int *nan, size_t cap);
  /* t_i = ((x_i - m) * a - th) - tl, y_i = max(t_i, 0), or max(t_i, 0)^2 when sq.
   * a is 1 or 1/2 (exact); th + tl is the threshold relative to m, split in two
   * floats so that y keeps a relative accuracy near the threshold. */
  void (*vthresh)(size_t n, const float *x, float *y, float m, float a, float th, float tl, int sq);
  void (*vthresh_f64)(size_t n, const double *x, double *y, double m, double a, double th, int sq);
  /* With u_i = ((x_i - m) * a - th) - tl (f32: t = th + tl as two floats; f64: t): s[0] = the count of u_i > 0, s[1] = sum of those u_i,
   * s[2] = sum of their squares (f32 within blocks of 1024 entries, then double).
   * -inf entries count nowhere; x must hold no NaN. */
  void (*rnewton)(size_t n, const float *x, float m, float a, float th, float tl, double *s);
  void (*rnewton_f64)(size_t n, const double *x, double m, double a, double t, double *s);
  /* Sum of dy_i over the entries with y_i > 0 (in double), their count in *count;
   * *nan set to 1 when some y_i is NaN. */
  double (*rsupsum)(size_t n, const float *y, const float *dy, size_t *count, int *nan);
  double (*rsupsum_f64)(size_t n, const double *y, const double *dy, size_t *count, int *nan);
  /* dx_i = dy_i - mu where y_i > 0, +0 elsewhere. */
  void (*vsupsub)(size_t n, const float *y, const float *dy, float *dx, float mu);
  void (*vsupsub_f64)(size_t n, const double *y, const double *dy, double *dx, double mu);
} smx_sparse_ukernels;

extern const smx_sparse_ukernels smx_sparse_ukernels_scalar;
extern const smx_sparse_ukernels smx_sparse_ukernels_avx2;
extern const smx_sparse_ukernels smx_sparse_ukernels_avx512;
extern const smx_sparse_ukernels smx_sparse_ukernels_neon;

#endif
