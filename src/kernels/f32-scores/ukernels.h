/*
 * The logit-score kernel family (include/smx/smx_scores.h): the passes over
 * one f32 logits row that every per-sample score is assembled from. One body
 * over the vector layer (body.h, instantiated by avx2.c, avx512.c, neon.c)
 * and a portable table (scalar.c), the only one used at extreme temperatures
 * (smx_expcd.div set), as for the f64 softmax kernels.
 *
 * A row is read from memory once (top2); the exponential passes then read it
 * again from L1. Exponentials are in double (math/vexp_f64.h, 1.07 ulp), the
 * logits converted exactly; every sum is compensated (a two-sum per lane,
 * reduced lane by lane as double-doubles), so no error grows with the row
 * length. Contract: any n >= 1, any alignment, nothing outside [0, n)
 * touched, no allocation, no special-value policy (the caller sends rows
 * with NaN, +inf or no finite entry elsewhere).
 */
#ifndef SMX_KERNELS_F32_SCORES_UKERNELS_H
#define SMX_KERNELS_F32_SCORES_UKERNELS_H

#include <stddef.h>

#include "kernels/f32-softmax/ukernels.h"   /* smx_expc */
#include "kernels/f64-softmax/ukernels.h"   /* smx_expcd, smx_dd */

/* The row's two largest entries, repeats counted (m2 = m1 when the maximum
 * is repeated; -inf when there is none); nan is 1 when some entry is NaN,
 * and m1, m2 are then unspecified. */
typedef struct smx_score_top2 {
  float m1, m2;
  int nan;
} smx_score_top2;

/* One exponential pass at a temperature T, m the row maximum (finite),
 * e_j = 2^((z_j - m) c) = exp((z_j - m) / T): */
typedef struct smx_score_sums {
  smx_dd s;      /* sum of e_j over z_j < m (the entries equal to m add n_eq) */
  smx_dd w;      /* sum of e_j (z_j - m) over z_j < m (when asked; else 0)    */
  double n_eq;   /* the number of entries equal to m                          */
} smx_score_sums;

typedef struct smx_scores_ukernels {
  const char *isa;
  void (*top2)(size_t n, const float *z, smx_score_top2 *out);
  /* the row's largest entry; *has_nan = 1 when some entry is NaN (the
   * result is then unspecified), else 0. */
  float (*max_nan)(size_t n, const float *z, int *has_nan);
  /* the sums above; e_j stored to e unless e is NULL; w formed when want_w. */
  void (*expsum)(size_t n, const float *z, double m, const smx_expcd *c, double *e, int want_w,
                 smx_score_sums *out);
  /* the same sums from f32 exponentials (1.18 ulp, a = z_j - m rounded to
   * float), kept in float lanes for a few vectors, then in double: s the sum
   * over every entry but one maximum (the others at m included), n_eq = 1
   * (the ties at m are not counted); relative error of s + 1 below
   * 16 * 2^-24. c: the f32 constants of T (core/temperature.h), cd its f64
   * constants (the scalar table computes in double with them, and returns
   * expsum's sums). e_j is stored as a float (half the bytes of a double row:
   * it stays in L1 for the pass that reads it again). s.lo and w.lo are 0. */
  void (*expsum32)(size_t n, const float *z, float m, const smx_expc *c, const smx_expcd *cd, float *e,
                   int want_w, smx_score_sums *out);
  /* sum_j max(e_j - u, 0), compensated (u >= 0; nonuniformity). */
  double (*excess)(size_t n, const double *e, double u);
  /* the same over expsum32's float e: float lanes flushed to double (the
   * terms are nonnegative: relative error below 16 * 2^-24). */
  double (*excess32)(size_t n, const float *e, float u);
  /* GEN's candidates: the z_j > thr copied to vals in index order (their
   * number returned; vals has room for n + 16 floats: whole vectors may be
   * stored past the count), *n_eq the number of them equal to m (m > thr). */
  size_t (*filter_vals)(size_t n, const float *z, float thr, float m, float *vals, size_t *n_eq);
  /* the number of v_j > t (GEN's selection counts by bisection). */
  size_t (*count_gt)(size_t n, const float *v, float t);
  /* GEN's terms at T = 1 over the entries z_j < m (the others add 0):
   * sum (q_j (1 - q_j))^g, q_j = e_j / s, e_j = exp(z_j - m), formed as
   * exp(g (z_j - m - log_s + log1p(-q_j))); e_j = 0 adds 0. s >= 1 is the
   * row's exponential sum (so q_j <= 1/2 for z_j < m), log_s = log s. */
  double (*gen_sum)(size_t n, const float *z, double m, double s, double log_s, double g);
} smx_scores_ukernels;

extern const smx_scores_ukernels smx_scores_ukernels_scalar;
extern const smx_scores_ukernels smx_scores_ukernels_avx2;
extern const smx_scores_ukernels smx_scores_ukernels_avx512;
extern const smx_scores_ukernels smx_scores_ukernels_neon;

#endif
