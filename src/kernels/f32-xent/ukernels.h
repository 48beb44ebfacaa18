/*
 * The f32 gradient micro-kernel family (softmax / log-softmax backward and
 * the cross-entropy gradient): one implementation per ISA (scalar.c, avx2.c,
 * avx512.c in this folder), all with the same contract. The forward
 * reductions of cross-entropy reuse the softmax family (ronline).
 *
 * Like every smx kernel they never check arguments, never allocate and never
 * decide the special-value policy. Any n >= 1, any alignment; they touch
 * exactly the n elements of each array (tails are masked). Sums and dot
 * products are formed in double lanes (floats widen, and their products are,
 * exactly), so cancelling sums lose nothing. y / x may equal dx / g.
 */
#ifndef SMX_KERNELS_F32_XENT_UKERNELS_H
#define SMX_KERNELS_F32_XENT_UKERNELS_H

#include <stddef.h>

#include "kernels/f32-softmax/ukernels.h"

typedef struct smx_xent_ukernels {
  const char *isa;
  /* sum_i x_i (double partial sums; NaN and infinities propagate). */
  double (*rsum)(size_t n, const float *x);
  /* sum_i a_i * b_i (exact products, sums in double). */
  double (*rdot)(size_t n, const float *a, const float *b);
  /* Softmax backward: dx_i = y_i * (dy_i - dot) * s. */
  void (*vsoftmax_bwd)(size_t n, const float *y, const float *dy, float *dx, float dot, float s);
  /* Log-softmax backward: dx_i = (dy_i - e^(y_i) * sum) * s (y_i above 88 saturates). */
  void (*vlogsoftmax_bwd)(size_t n, const float *y, const float *dy, float *dx, float sum, float s);
  /* Cross-entropy gradient: g_i = 2^((x_i - m) c) * a + b, for x_i <= m (x_i = -inf
   * gives b). Returns sum_i x_i in double when want_sum, else 0. g may equal x. */
  double (*vexpaffine)(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                       int want_sum);
} smx_xent_ukernels;

extern const smx_xent_ukernels smx_xent_ukernels_scalar;
extern const smx_xent_ukernels smx_xent_ukernels_avx2;
extern const smx_xent_ukernels smx_xent_ukernels_avx512;
extern const smx_xent_ukernels smx_xent_ukernels_neon;

#endif
