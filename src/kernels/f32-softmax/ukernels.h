/*
 * The f32 softmax micro-kernel family: one implementation per ISA
 * (scalar.c, avx2.c, avx512.c in this folder), all with the same contract.
 *
 * Kernels never check arguments, never allocate and never decide the
 * special-value policy: they compute, and a non-finite result tells the
 * caller (src/ops/softmax_row_f32.c) to hand the row to its policy entry (src/core/policy.h).
 * Every kernel accepts any n >= 1 and any alignment, and touches exactly
 * x[0..n) and y[0..n) (tails use masked loads and stores).
 *
 * exp(a / T) is computed as 2^(a * c) with c = log2(e) / T; see smx_expc.
 */
#ifndef SMX_KERNELS_F32_SOFTMAX_UKERNELS_H
#define SMX_KERNELS_F32_SOFTMAX_UKERNELS_H

#include <stddef.h>
#include "math/reduce_state.h"

typedef struct smx_expc {
  float hi, lo;  /* c = log2(e) / T ~ hi + lo (about 48 bits): a*c is exact enough for any a  */
  float amin;    /* a = x - m is clamped to >= amin: a*c >= -127, and 2^-127 built in the       */
                 /* exponent field is +0 (AVX2), so -inf and huge negatives give exactly +0      */
  float amin_s;  /* the same for kernels that scale with scalef: a*c >= -200 rounds to +0        */
  float xlim;    /* two-pass only: x is clamped to >= -xlim, so that |x*c| <= 2^21             */
  double c;      /* c in double, for scalar code and state merges                               */
} smx_expc;

/* Two-pass: a row may use the (mantissa, exponent) kernels only while its
 * exponent stays inside this window; outside it, n = round(x*c) is not exact
 * in float and the caller falls back to the three-pass algorithm. */
#define SMX_EXTEXP_E_MAX 2097150.0          /* 2^21 - 2       */
#define SMX_EXTEXP_E_MIN (-2097152.0 + 256) /* -2^21 + 256    */

typedef struct smx_f32_ukernels {
  const char *isa;
  /* max_i x_i, NaN entries ignored; -inf when every entry is -inf or NaN. */
  float (*rmax)(size_t n, const float *x);
  /* e_i = 2^((x_i - m) c); stores e_i to y unless y is NULL; returns the sum
   * of e_i accumulated in double partial sums. NaN in x gives a NaN sum. */
  double (*raddstoreexp)(size_t n, const float *x, float *y, float m, const smx_expc *c);
  /* Log-softmax pass 2 at T = 1: returns the same sum (exponentials that only
   * feed a logarithm may use a cheaper polynomial) and stores y_i = x_i - m. */
  double (*raddexpstoresub)(size_t n, const float *x, float *y, float m, const smx_expc *c);
  /* The kernels that write a full output row take `stream`: nonzero stores
   * full vectors with non-temporal stores (no read-for-ownership of y; used
   * when the output is far larger than the caches), after aligning y. */
  /* y_i = x_i * s (y may equal x). */
  void (*vscale)(size_t n, const float *x, float *y, float s, int stream);
  /* y_i = 2^((x_i - m) c) * s. */
  void (*vscaleexp)(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream);
  /* Online normalizer over the block: returns (m, d) with d = sum 2^((x_i - m) c).
   * Every entry -inf: (m <= -FLT_MAX, 0); a NaN anywhere: d NaN. */
  smx_online_state (*ronline)(size_t n, const float *x, const smx_expc *c);
  /* Dukhan-Ablavatski pass 1: sum 2^(x_i c) = v * 2^e. */
  smx_ext_state (*raddextexp)(size_t n, const float *x, const smx_expc *c);
  /* Pass 2: y_i = 2^(x_i c - e) * inv_v, with neg_e = -e. */
  void (*vscaleextexp)(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e,
                       int stream);
  /* y_i = (x_i - m) * s - off (log-softmax). Where x_i - m overflows float
   * (a row spanning more than FLT_MAX) the value is formed in double. s is a
   * double so that scalar kernels can carry 1/T for any T > 0. */
  void (*vlogsub)(size_t n, const float *x, float *y, float m, double s, float off, int stream);
} smx_f32_ukernels;

extern const smx_f32_ukernels smx_f32_ukernels_scalar;
extern const smx_f32_ukernels smx_f32_ukernels_avx2;
extern const smx_f32_ukernels smx_f32_ukernels_avx512;
extern const smx_f32_ukernels smx_f32_ukernels_neon;

#endif
