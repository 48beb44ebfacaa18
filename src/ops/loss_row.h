/*
 * The softmax statistics of one row that the losses on softmax outputs share
 * (focal, soft Dice, InfoNCE): pass 1 is the online (max, sum) reduction of
 * the softmax kernels, as in the fused cross-entropy (xent_row.c); pass 2
 * writes a * softmax(x / T)_j over the row with the cross-entropy gradient
 * kernel (f32) or the f64 scale-exp kernel, so no loss forms a probability
 * matrix of its own. f32 and f64 rows; the registry of the calling config.
 */
#ifndef SMX_OPS_LOSS_ROW_H
#define SMX_OPS_LOSS_ROW_H

#include <stddef.h>

#include "kernels/f32-softmax/ukernels.h"
#include "kernels/f32-xent/ukernels.h"
#include "kernels/f64-softmax/ukernels.h"

typedef struct smx_lrow {
  const smx_f32_ukernels *k32;
  const smx_xent_ukernels *g32;
  const smx_f64_ukernels *k64;
  smx_expc c32;
  smx_expcd c64;
  double inv_t;   /* 1/T */
} smx_lrow;

/* The statistics of a row: x / T - lse = (x - m) / T - logd. */
typedef struct smx_lstat {
  double m;      /* f32: exactly the row's largest entry; f64: the online kernel's reference, within
                    ln2 T of the largest (the vector kernels move it by whole steps, reduce_state_f64.h) */
  double d;      /* sum_j exp((x_j - m) / T): in [1, n] in f32, within a factor 2 of that in f64 */
  double logd;
  double lse;    /* m / T + logd */
} smx_lstat;

/* T: a resolved temperature (finite, > 0). */
void smx_lrow_init(smx_lrow *p, double temperature);

/* Pass 1. Returns 1 for an ordinary row, 0 for a special one (a NaN, a +inf,
 * or every entry -inf), whose statistics are then meaningless. n >= 1. */
int smx_lrow_stat_f32(const smx_lrow *p, const float *x, size_t n, smx_lstat *s);
int smx_lrow_stat_f64(const smx_lrow *p, const double *x, size_t n, smx_lstat *s);

/* log softmax(x / T)_j of one entry, in double: to about eps absolutely. */
double smx_lrow_logp(const smx_lrow *p, const smx_lstat *s, double xj);

/* log p_t of the entry x[t] of an f64 row with 1 - p_t to eps relatively (focal's q^gamma): where
 * p_t > e^-1/2, x_t is the row's strict maximum and the row is summed again against it, so that its own
 * term is exactly 1 and log p_t = -log1p(the rest). (The statistics' reference m need not be an entry:
 * (x_t - m) - logd then cancels to eps absolutely, and q = 1 - p_t of 1e-35 came out as 5e-17.) */
double smx_lrow_logp_target_f64(const smx_lrow *p, const smx_lstat *s, const double *x, size_t n, size_t t);

/* Pass 2: g_j = a * softmax(x / T)_j over the row (g may equal x). */
void smx_lrow_scaled_p_f32(const smx_lrow *p, const smx_lstat *s, const float *x, float *g, size_t n, double a);
void smx_lrow_scaled_p_f64(const smx_lrow *p, const smx_lstat *s, const double *x, double *g, size_t n, double a);

/* double to float, saturating at +-FLT_MAX (no undefined conversion); NaN stays NaN */
static inline float smx_lrow_sat(double v) {
  return v > 3.4028234663852886e38 ? 3.4028234663852886e38f : v < -3.4028234663852886e38 ? -3.4028234663852886e38f
                                                                                           : (float)v;
}

#endif
