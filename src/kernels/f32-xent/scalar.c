/*
 * Scalar gradient kernels: the portable fallback. Arithmetic in double, so
 * they are also the most exact and serve as the first-level oracle in tests.
 */
#include <math.h>

#include "kernels/f32-xent/ukernels.h"
#include "math/exp2_poly.h"
#include "math/exp2_scalar.h"

/* one accumulator, as in vexpaffine_scalar: a loss is the same bits with or without a gradient */
static double rsum_scalar(size_t n, const float *x) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s;
}

static double rdot_scalar(size_t n, const float *a, const float *b) {
  double s0 = 0.0, s1 = 0.0;
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    s0 += (double)a[i] * b[i];
    s1 += (double)a[i + 1] * b[i + 1];
  }
  if (i < n) s0 += (double)a[i] * b[i];
  return s0 + s1;
}

static void vsoftmax_bwd_scalar(size_t n, const float *y, const float *dy, float *dx, float dot, float s) {
  for (size_t i = 0; i < n; i++) dx[i] = (float)((double)y[i] * ((double)dy[i] - dot) * s);
}

static void vlogsoftmax_bwd_scalar(size_t n, const float *y, const float *dy, float *dx, float sum, float s) {
  for (size_t i = 0; i < n; i++) {
    double yi = y[i] > 200.0f ? 200.0 : (double)y[i];   /* smx_exp2_d wants z <= 1000; NaN kept */
    dx[i] = (float)(((double)dy[i] - smx_exp2_d(yi * SMX_LOG2E_D) * sum) * s);
  }
}

static double vexpaffine_scalar(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                int want_sum) {
  double sx = 0.0;
  for (size_t i = 0; i < n; i++) {
    float xi = x[i];
    if (want_sum) sx += xi;
    float t = xi - m;   /* the one rounding the softmax contract allows */
    g[i] = (float)(smx_exp2_d((double)t * c->c) * a + b);
  }
  return sx;
}

const smx_xent_ukernels smx_xent_ukernels_scalar = {
  "scalar", rsum_scalar, rdot_scalar, vsoftmax_bwd_scalar, vlogsoftmax_bwd_scalar, vexpaffine_scalar,
};
