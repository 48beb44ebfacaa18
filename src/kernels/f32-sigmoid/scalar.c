/* Portable sigmoid, in double: within about 0.5 ulp, the reference for the vector kernels. */
#include <math.h>

#include "kernels/f32-sigmoid/ukernels.h"

static void vsigmoid_scalar(size_t n, const float *x, float *y, const smx_expc *c) {
  for (size_t i = 0; i < n; i++) {
    double z = (double)x[i] * c->c;   /* x / T in units of ln 2; may be +-inf at extreme T */
    double e = exp2(-fabs(z));
    y[i] = (float)((z > 0.0 ? 1.0 : e) / (1.0 + e));
  }
}

const smx_sigmoid_ukernels smx_sigmoid_ukernels_scalar = { "scalar", vsigmoid_scalar };
