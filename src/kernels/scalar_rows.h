/*
 * The scalar row loops that the f32 and f64 softmax kernels share word for
 * word (kernels/f32-softmax/scalar.c, kernels/f64-softmax/scalar.c), written
 * once over the element type T. Each expands to static functions named for
 * the ukernel table they fill.
 */
#ifndef SMX_KERNELS_SCALAR_ROWS_H
#define SMX_KERNELS_SCALAR_ROWS_H

#include <math.h>
#include <stddef.h>

/* rmax_scalar: the largest entry, with NaN skipped (it compares false), or -inf;
 * two accumulators, as the vector kernels have lanes.
 * vscale_scalar: y = x s (the store hint is for the vector kernels). */
#define SMX_SCALAR_ROWS(T)                                 \
  static T rmax_scalar(size_t n, const T *x) {             \
    T m0 = -INFINITY, m1 = -INFINITY;                      \
    size_t i = 0;                                          \
    for (; i + 2 <= n; i += 2) {                           \
      m0 = x[i] > m0 ? x[i] : m0;                          \
      m1 = x[i + 1] > m1 ? x[i + 1] : m1;                  \
    }                                                      \
    if (i < n) m0 = x[i] > m0 ? x[i] : m0;                 \
    return m1 > m0 ? m1 : m0;                              \
  }                                                        \
  static void vscale_scalar(size_t n, const T *x, T *y, T s, int stream) { \
    (void)stream;                                          \
    for (size_t i = 0; i < n; i++) y[i] = x[i] * s;        \
  }

#endif
