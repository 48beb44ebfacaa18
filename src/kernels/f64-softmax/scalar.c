/*
 * Scalar f64 softmax kernels: the portable fallback, and the only kernels
 * used at extreme temperatures (smx_expcd.div). Two independent compensated
 * accumulators per loop, as the vector kernels have lanes.
 */
#include <float.h>
#include <math.h>

#include "kernels/f64-softmax/ukernels.h"
#include "kernels/scalar_rows.h"
#include "math/exp2d_scalar.h"

SMX_SCALAR_ROWS(double)

/* e^((x - m)/T): x - m rounded once (the rounding the contract allows) */
static inline double exp_arg(double x, double m, const smx_expcd *c) {
  double a = x - m;
  if (c->div) {
    /* a row spanning more than DBL_MAX: the halves' difference over T/2 */
    if (a == -INFINITY && x != -INFINITY) return smx_exp2d_div(x * 0.5 - m * 0.5, c->t * 0.5, c->hi, c->lo);
    return smx_exp2d_div(a, c->t, c->hi, c->lo);
  }
  return smx_exp2d_ac(a, c->hi, c->lo);
}

static smx_dd raddstoreexp_scalar(size_t n, const double *x, double *y, double m, const smx_expcd *c) {
  smx_dd s0 = { 0.0, 0.0 }, s1 = { 0.0, 0.0 };
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    double e0 = exp_arg(x[i], m, c), e1 = exp_arg(x[i + 1], m, c);
    if (y) { y[i] = e0; y[i + 1] = e1; }
    smx_dd_add_d(&s0, e0);
    smx_dd_add_d(&s1, e1);
  }
  if (i < n) {
    double e = exp_arg(x[i], m, c);
    if (y) y[i] = e;
    smx_dd_add_d(&s0, e);
  }
  return smx_dd_add(s0, s1);
}

static void vscaleexp_scalar(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s,
                             int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) y[i] = exp_arg(x[i], m, c) * s;
}

/* Blocked online normalizer: the max of a block, a (lazy) rescale per block. */
static smx_online_dd ronline_scalar(size_t n, const double *x, const smx_expcd *c) {
  enum { BLOCK = 64 };
  smx_online_dd st = smx_online_dd_identity();
  for (size_t i = 0; i < n; i += BLOCK) {
    size_t nb = n - i < BLOCK ? n - i : BLOCK;
    smx_online_dd b;
    b.m = rmax_scalar(nb, x + i);
    b.d.hi = 0.0;
    b.d.lo = 0.0;
    /* the block's terms against the running reference when it is close */
    double ref = b.m;
    if (st.d.hi != 0.0 && (b.m - st.m) * c->hi <= 1.0) ref = st.m;
    if (!(ref > -INFINITY)) {
      /* an all -inf (or NaN) block: only a NaN matters. An integer flag, not `if (x != x) d = NAN` in
       * the loop: gcc 12 -O3 vectorizes that conditional constant as a min reduction, which drops the
       * NaN ({-inf, NaN} gave d = 0, a NaN-free row) */
      int nan = 0;
      for (size_t j = 0; j < nb; j++) nan |= x[i + j] != x[i + j];
      if (nan) {
        b.d.hi = NAN;
        return b;
      }
      continue;
    }
    b.m = ref;
    for (size_t j = 0; j < nb; j++) smx_dd_add_d(&b.d, exp_arg(x[i + j], ref, c));
    st = smx_online_dd_merge(st, b, c->hi, c->lo);
    if (st.d.hi != st.d.hi) return st;
  }
  return st;
}

/* Dukhan & Ablavatski pass 1: each term is p 2^k, k an integer. */
static smx_ext_dd raddextexp_scalar(size_t n, const double *x, const smx_expcd *c) {
  smx_dd v = { 0.0, 0.0 };
  double e = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i];
    if (xi == -INFINITY) continue;          /* a masked entry adds nothing */
    double z = xi * c->hi;
    if (z != z || z == INFINITY) { v.hi = NAN; break; }  /* NaN or +inf: the caller applies the policy */
    double k, p;
    if (z < -0x1p40) { k = -0x1p40; p = 1.0; }          /* negligible unless the whole row is out of the window */
    else if (z > 0x1p40) { k = 0x1p41; p = 1.0; }       /* out of the window: the caller uses three-pass */
    else p = smx_exp2d_poly(smx_exp2d_reduce(xi, c->hi, c->lo, &k));
    if (k > e) {
      v = smx_dd_scale(v, smx_pow2d_neg(e - k));
      e = k;
      smx_dd_add_d(&v, p);
    } else {
      smx_dd_add_d(&v, p * smx_pow2d_neg(k - e));
    }
  }
  smx_ext_dd st = { v, e };
  return st;
}

static void vscaleextexp_scalar(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v, double e,
                                int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    double z = x[i] * c->hi;
    if (!(z >= -0x1p40)) { y[i] = z != z ? z : 0.0; continue; }
    double k;
    double p = smx_exp2d_poly(smx_exp2d_reduce(x[i], c->hi, c->lo, &k));
    /* k - e <= 0; below -1100 the term is 0 */
    double d = k - e;
    y[i] = !(d >= -1100.0) ? 0.0 : smx_scale2d(p * inv_v, d);
  }
}

static void vlogsub_scalar(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off,
                           int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    double a = x[i] - m;
    /* a row spanning more than DBL_MAX: the halves' difference over T/2 */
    double t = a == -INFINITY && x[i] != -INFINITY ? (x[i] * 0.5 - m * 0.5) / (c->t * 0.5) : a / c->t;
    y[i] = t - off;
  }
}

const smx_f64_ukernels smx_f64_ukernels_scalar = {
  "scalar",
  rmax_scalar,
  raddstoreexp_scalar,
  vscale_scalar,
  vscaleexp_scalar,
  ronline_scalar,
  raddextexp_scalar,
  vscaleextexp_scalar,
  vlogsub_scalar,
};
