/* Portable sigmoid: f32 in double arithmetic (within about 0.5 ulp, the reference for the vector kernels); f64 with libm. */
#include <math.h>

#include "kernels/f32-sigmoid/ukernels.h"
#include "math/exp2d_scalar.h"

static void vsigmoid_scalar(size_t n, const float *x, float *y, const smx_expc *c) {
  for (size_t i = 0; i < n; i++) {
    double z = (double)x[i] * c->c;   /* x / T in units of ln 2; may be +-inf at extreme T */
    double e = exp2(-fabs(z));
    y[i] = (float)((z > 0.0 ? 1.0 : e) / (1.0 + e));
  }
}

/* f64: e = e^(-|x|/T) with the argument carried exactly (c as a double-double,
 * or x/T as one at extreme T), about 1 ulp, then the same two steps (about 2 ulp) */
static void vsigmoid_f64_scalar(size_t n, const double *x, double *y, const smx_expcd *c) {
  for (size_t i = 0; i < n; i++) {
    double a = -fabs(x[i]);
    double e = c->div ? smx_exp2d_div(a, c->t, c->hi, c->lo) : smx_exp2d_ac(a, c->hi, c->lo);
    y[i] = (x[i] > 0.0 ? 1.0 : e) / (1.0 + e);
  }
}

static void vsigmoid_shift_scalar(size_t n, const float *x, float *y, const smx_expc *c, float shift) {
  for (size_t i = 0; i < n; i++) {
    float v = x[i] + shift;   /* the same float sum as the vector kernels */
    vsigmoid_scalar(1, &v, y + i, c);
  }
}

static void vsigmoid_shift_f64_scalar(size_t n, const double *x, double *y, const smx_expcd *c, double shift) {
  for (size_t i = 0; i < n; i++) {
    double v = x[i] + shift;
    vsigmoid_f64_scalar(1, &v, y + i, c);
  }
}

const smx_sigmoid_ukernels smx_sigmoid_ukernels_scalar = { "scalar", vsigmoid_scalar, vsigmoid_f64_scalar,
                                                           vsigmoid_shift_scalar, vsigmoid_shift_f64_scalar };
