/*
 * The f64 softmax micro-kernel family: one implementation per ISA (scalar.c,
 * avx2.c, avx512.c in this folder), all with the same contract as the f32
 * family (src/kernels/f32-softmax/ukernels.h): no argument checks, no
 * allocation, no special-value policy (a non-finite result sends the row to
 * src/core/policy.h), any n >= 1, any alignment, exactly x[0..n) and
 * y[0..n) touched.
 *
 * exp(a / T) = 2^(a c) with c = log2(e) / T carried as hi + lo, reduced with
 * an FMA (src/math/exp2d_scalar.h), so the argument's error stays absolute.
 * With double data there is no wider type to sum in, so every sum is a
 * compensated one (Knuth's two-sum per lane, the (hi, lo) pair of smx_dd):
 * its error does not grow with the row length.
 */
#ifndef SMX_KERNELS_F64_SOFTMAX_UKERNELS_H
#define SMX_KERNELS_F64_SOFTMAX_UKERNELS_H

#include <stddef.h>

#include "math/reduce_state_f64.h"

typedef struct smx_expcd {
  double hi, lo;  /* c = log2(e)/T ~ hi + lo; with div set: log2(e) itself           */
  double t;       /* T                                                               */
  double inv_t;   /* 1/T rounded (log-softmax scaling)                                */
  int div;        /* extreme T (c outside [2^-900, 2^900]): a/T is formed first, then */
                  /* multiplied by log2(e); scalar kernels only                        */
} smx_expcd;

/* Two-pass: the exponents n = round(x c) stay exact in double and far from
 * overflow inside this window; outside it the caller uses three-pass. */
#define SMX_EXTEXP_D_E_MAX 0x1p40
#define SMX_EXTEXP_D_E_MIN (-0x1p40 + 2048.0)

typedef struct smx_f64_ukernels {
  const char *isa;
  /* max_i x_i, NaN entries ignored; -inf when every entry is -inf or NaN. */
  double (*rmax)(size_t n, const double *x);
  /* e_i = 2^((x_i - m) c); stored to y unless y is NULL; returns the
   * compensated sum. NaN in x gives a NaN sum. */
  smx_dd (*raddstoreexp)(size_t n, const double *x, double *y, double m, const smx_expcd *c);
  /* y_i = x_i * s (y may equal x). stream: non-temporal stores. */
  void (*vscale)(size_t n, const double *x, double *y, double s, int stream);
  /* y_i = 2^((x_i - m) c) * s. */
  void (*vscaleexp)(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s, int stream);
  /* Online normalizer: (m, d) with d = sum 2^((x_i - m) c). m may lag the
   * running maximum by up to 1/c (lazy rescale, see reduce_state_f64.h).
   * Every entry -inf: d = 0; a NaN anywhere (among -inf entries too): d NaN. */
  smx_online_dd (*ronline)(size_t n, const double *x, const smx_expcd *c);
  /* Dukhan-Ablavatski pass 1: sum 2^(x_i c) = v 2^e, e an integer. */
  smx_ext_dd (*raddextexp)(size_t n, const double *x, const smx_expcd *c);
  /* Pass 2: y_i = 2^(x_i c - e) * inv_v. */
  void (*vscaleextexp)(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v, double e,
                       int stream);
  /* y_i = (x_i - m) / T - off (log-softmax); where x_i - m overflows, x_i/T - m/T. */
  void (*vlogsub)(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off, int stream);
} smx_f64_ukernels;

extern const smx_f64_ukernels smx_f64_ukernels_scalar;
extern const smx_f64_ukernels smx_f64_ukernels_avx2;
extern const smx_f64_ukernels smx_f64_ukernels_avx512;
extern const smx_f64_ukernels smx_f64_ukernels_neon;

#endif
