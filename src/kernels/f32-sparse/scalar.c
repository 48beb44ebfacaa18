/* Portable sparse-simplex kernels: the same passes element by element (the reference for the vector kernels). */
#include <math.h>

#include "kernels/f32-sparse/ukernels.h"

/* The indices of the entries at or above thr (NaN flagged), stopping once past cap: one body for f32 and f64 rows */
#define VSELECT_SCALAR(name, T)                                                                 \
  static size_t name(size_t n, const T *x, T thr, size_t *idx, int *nan, size_t cap) {          \
    size_t cnt = 0;                                                                             \
    for (size_t i = 0; i < n; i++) {                                                            \
      if (x[i] >= thr) { idx[cnt++] = i; if (cnt > cap) return cnt; }                           \
      else if (x[i] != x[i]) *nan = 1;                                                          \
    }                                                                                           \
    return cnt;                                                                                 \
  }
VSELECT_SCALAR(vselect_scalar, float)
VSELECT_SCALAR(vselect_f64_scalar, double)

static void vthresh_scalar(size_t n, const float *x, float *y, float m, float a, float th, float tl, int sq) {
  for (size_t i = 0; i < n; i++) {
    float t = (((x[i] - m) * a) - th) - tl;
    t = t > 0.0f ? t : 0.0f;
    y[i] = sq ? t * t : t;
  }
}

static void vthresh_f64_scalar(size_t n, const double *x, double *y, double m, double a, double th, int sq) {
  for (size_t i = 0; i < n; i++) {
    double t = ((x[i] - m) * a) - th;
    t = t > 0.0 ? t : 0.0;
    y[i] = sq ? t * t : t;
  }
}

static void rnewton_scalar(size_t n, const float *x, float m, float a, float th, float tl, double *s) {
  s[0] = s[1] = s[2] = 0.0;
  for (size_t i = 0; i < n; i++) {
    float u = ((x[i] - m) * a - th) - tl;
    if (u > 0.0f) { s[0] += 1.0; s[1] += u; s[2] += (double)u * u; }
  }
}

static void rnewton_f64_scalar(size_t n, const double *x, double m, double a, double t, double *s) {
  s[0] = s[1] = s[2] = 0.0;
  for (size_t i = 0; i < n; i++) {
    double u = (x[i] - m) * a - t;
    if (u > 0.0) { s[0] += 1.0; s[1] += u; s[2] += u * u; }
  }
}

static double rsupsum_scalar(size_t n, const float *y, const float *dy, size_t *count, int *nan) {
  double s = 0.0;
  size_t c = 0;
  for (size_t i = 0; i < n; i++) {
    if (y[i] > 0.0f) { s += (double)dy[i]; c++; }
    else if (y[i] != y[i]) *nan = 1;
  }
  *count = c;
  return s;
}

static double rsupsum_f64_scalar(size_t n, const double *y, const double *dy, size_t *count, int *nan) {
  double s = 0.0, comp = 0.0;   /* Neumaier */
  size_t c = 0;
  for (size_t i = 0; i < n; i++) {
    if (y[i] > 0.0) {
      double v = dy[i], t = s + v;
      comp += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
      s = t;
      c++;
    } else if (y[i] != y[i]) *nan = 1;
  }
  *count = c;
  return s + comp;
}

static void vsupsub_scalar(size_t n, const float *y, const float *dy, float *dx, float mu) {
  for (size_t i = 0; i < n; i++) dx[i] = y[i] > 0.0f ? dy[i] - mu : 0.0f;
}

static void vsupsub_f64_scalar(size_t n, const double *y, const double *dy, double *dx, double mu) {
  for (size_t i = 0; i < n; i++) dx[i] = y[i] > 0.0 ? dy[i] - mu : 0.0;
}

const smx_sparse_ukernels smx_sparse_ukernels_scalar = {
  "scalar", vselect_scalar, vselect_f64_scalar, vthresh_scalar, vthresh_f64_scalar,
  rnewton_scalar, rnewton_f64_scalar, rsupsum_scalar, rsupsum_f64_scalar, vsupsub_scalar, vsupsub_f64_scalar,
};
