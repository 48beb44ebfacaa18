/*
 * The sigmoid kernel family (f32 and f64): one body over the vector layer (body.h,
 * instantiated by avx2.c, avx512.c and neon.c) and a scalar reference
 * (scalar.c) that computes in double.
 *
 * y_i = sigma(x_i / T) = 1 / (1 + e^(-x_i / T)), formed as
 * e = 2^(-|x_i| c) (never above 1, so it cannot overflow) and then
 * 1 / (1 + e) for x_i > 0, e / (1 + e) otherwise: no cancellation on
 * either side. NaN gives NaN, +inf 1, -inf 0; every lane is independent.
 * Any n >= 1, any alignment; y may equal x; nothing outside [0, n) is touched.
 */
#ifndef SMX_KERNELS_F32_SIGMOID_UKERNELS_H
#define SMX_KERNELS_F32_SIGMOID_UKERNELS_H

#include <stddef.h>

#include "kernels/f32-softmax/ukernels.h"   /* smx_expc: c = log2(e)/T */
#include "kernels/f64-softmax/ukernels.h"   /* smx_expcd: the same in double-double */

typedef struct smx_sigmoid_ukernels {
  const char *isa;
  void (*vsigmoid)(size_t n, const float *x, float *y, const smx_expc *c);
  /* the same in double; c->div (extreme T, scalar kernels only): x / T is formed first */
  void (*vsigmoid_f64)(size_t n, const double *x, double *y, const smx_expcd *c);
  /* y_i = sigma((x_i + shift) / T): the bias b of sigma(x/T + b) enters as shift = b T */
  void (*vsigmoid_shift)(size_t n, const float *x, float *y, const smx_expc *c, float shift);
  void (*vsigmoid_shift_f64)(size_t n, const double *x, double *y, const smx_expcd *c, double shift);
} smx_sigmoid_ukernels;

extern const smx_sigmoid_ukernels smx_sigmoid_ukernels_scalar;
extern const smx_sigmoid_ukernels smx_sigmoid_ukernels_avx2;
extern const smx_sigmoid_ukernels smx_sigmoid_ukernels_avx512;
extern const smx_sigmoid_ukernels smx_sigmoid_ukernels_neon;

#endif
