/*
 * The special-value rule that softpick and softplus-l1 share for a row whose
 * max is not finite (include/smx/smx_norm.h): NaN anywhere gives a NaN row;
 * otherwise the k entries at +inf share the mass (1/k each) and the rest is 0.
 * The backward (grad = 1) of such a row is 0, or NaN with a NaN. One copy, so
 * that the two operations cannot drift apart on it.
 */
#ifndef SMX_OPS_INF_SHARE_ROW_H
#define SMX_OPS_INF_SHARE_ROW_H

#include <math.h>

#define SMX_INF_SHARE_ROW(T, x, y, n, grad)                                                      \
  do {                                                                                           \
    size_t kinf_ = 0;                                                                            \
    int nan_ = 0;                                                                                \
    for (size_t i_ = 0; i_ < (n); i_++) {                                                        \
      if ((x)[i_] != (x)[i_]) nan_ = 1;                                                          \
      else if ((x)[i_] == (T)INFINITY) kinf_++;                                                  \
    }                                                                                            \
    for (size_t i_ = 0; i_ < (n); i_++)                                                          \
      (y)[i_] = nan_ ? (T)NAN : (grad) ? (T)0                                                    \
              : (x)[i_] == (T)INFINITY ? (T)(1.0 / (double)kinf_) : (T)0;                        \
  } while (0)

#endif
