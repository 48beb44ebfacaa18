/*
 * The f64 vector exponential, written once over the vector layer: include
 * a src/simd/<isa>.h first. exp(a/T) = 2^(a c), c = log2(e)/T as a
 * double-double hi + lo: n = round(a hi), r = (a hi - n, one FMA, exact
 * before its rounding) + a lo, 2^r by the degree-11 polynomial of
 * math/exp2_poly.h (Horner with FMAs), 2^n by vd_scale2 (rounded once,
 * subnormals included).
 *
 * Bound (tests/unit/test_exp_f64.c, 2^22 random arguments over
 * [-745.2, 0.75] plus a dense sweep of [-1, 0], against x87 expl):
 * 1.067 ulp, 0.741 eps relative.
 */
#ifndef SMX_MATH_VEXP_F64_H
#define SMX_MATH_VEXP_F64_H

#include "math/exp2_poly.h"

/* a c below this gives +0 (2^-1090 rounds to zero) */
#define SMX_VEXPD_ZMIN (-1090.0)

typedef struct vexpd_c { vd_t hi, lo, amin, invc; } vexpd_c;

SMX_INLINE vexpd_c vexpd_c_set(double hi, double lo) {
  vexpd_c v = { vd_set1(hi), vd_set1(lo), vd_set1(SMX_VEXPD_ZMIN / hi), vd_set1(1.0 / hi) };
  return v;
}

/* 2^r for |r| <= 0.5005 */
SMX_INLINE vd_t vexp2d_poly11(vd_t r) {
  vd_t p = vd_set1(SMX_EXP2D11_C11);
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C10));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C9));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C8));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C7));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C6));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C5));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C4));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C3));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C2));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D11_C1));
  return vd_fmadd(p, r, vd_set1(1.0));
}

/* a (hi + lo) = n + r */
SMX_INLINE vd_t vexpd_split(vd_t a, vexpd_c c, vd_t *n) {
  *n = vd_round(vd_mul(a, c.hi));
  return vd_fmadd(a, c.lo, vd_fmsub(a, c.hi, *n));
}

/* 2^(a c) for a c <= 2; below ZMIN (and -inf) +0; NaN stays NaN */
SMX_INLINE vd_t vexpd_neg(vd_t a, vexpd_c c) {
  a = vd_max(c.amin, a);   /* the second operand is returned for NaN: NaN is kept */
  vd_t n;
  vd_t r = vexpd_split(a, c, &n);
  return vd_scale2(vexp2d_poly11(r), n);
}

/* 2^((a - b) c) with a - b formed exactly (two-sum), for a <= b */
SMX_INLINE vd_t vexpd_diff(vd_t a, vd_t b, vexpd_c c) {
  vd_t dh = vd_sub(a, b);
  vd_t bp = vd_sub(dh, a);
  vd_t dl = vd_add(vd_sub(a, vd_sub(dh, bp)), vd_sub(vd_sub(vd_set1(0.0), b), bp));
  md_t low = vd_gt(c.amin, dh);
  dh = vd_max(c.amin, dh);
  dl = vd_sel(low, vd_set1(0.0), dl);
  vd_t n = vd_round(vd_mul(dh, c.hi));
  vd_t r = vd_add(vd_fmsub(dh, c.hi, n), vd_fmadd(dh, c.lo, vd_mul(dl, c.hi)));
  return vd_scale2(vexp2d_poly11(r), n);
}

#endif
