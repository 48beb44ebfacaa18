/*
 * The f32 vector exponential, written once over the vector layer: include
 * a src/simd/<isa>.h first. exp(a/T) = 2^(a c) with c = log2(e)/T carried
 * as a float pair hi + lo: n = round(a hi), r = (a hi - n, exact inside the
 * FMA) + a lo, 2^r by a polynomial of math/exp2_poly.h, then p 2^n by
 * vf_scale2.
 *
 * Bounds (tests/unit/test_exp.c, every float a c in [-87.34, 0]):
 *   vexpf_neg      degree 6: 1.179 ulp, 0.832 eps relative;
 *   vexpf_neg_sum  degree 5: about 1.3 eps, for terms that are only summed
 *                  into a logarithm, where the error averages out;
 *   vexp2d_neg     double, degree-10 Taylor: 2.2e-13 relative, for factors
 *                  applied to one running sum again and again.
 */
#ifndef SMX_MATH_VEXP_F32_H
#define SMX_MATH_VEXP_F32_H

#include "math/exp2_poly.h"

typedef struct vexpf_c { vf_t hi, lo; } vexpf_c;

SMX_INLINE vexpf_c vexpf_c_set(float hi, float lo) {
  vexpf_c c = { vf_set1(hi), vf_set1(lo) };
  return c;
}

/* 2^r for r in [-0.5, 0.5] */
SMX_INLINE vf_t vexp2f_poly6(vf_t r) {
  vf_t p = vf_set1(SMX_EXP2_C6);
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_C5));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_C4));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_C3));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_C2));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_C1));
  return vf_fmadd(p, r, vf_set1(1.0f));
}

/* 2^r, degree 5: for exponentials that are only summed */
SMX_INLINE vf_t vexp2f_poly5(vf_t r) {
  vf_t p = vf_set1(SMX_EXP2_D5_C5);
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_D5_C4));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_D5_C3));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_D5_C2));
  p = vf_fmadd(p, r, vf_set1(SMX_EXP2_D5_C1));
  return vf_fmadd(p, r, vf_set1(1.0f));
}

/* a c = n + r; a must be clamped by the caller (NaN passes through) */
SMX_INLINE vf_t vexpf_split(vf_t a, vexpf_c c, vf_t *n) {
  *n = vf_round(vf_mul(a, c.hi));
  return vf_fmadd(a, c.lo, vf_fmsub(a, c.hi, *n));
}

/* 2^(a c) for a <= 0; a < amin (and -inf) give +0, NaN gives NaN. amin
 * must keep a c above the lowest n vf_scale2 takes (-127 unless
 * SMX_VF_SCALE2_SATURATES). */
SMX_INLINE vf_t vexpf_neg(vf_t a, vexpf_c c, vf_t amin) {
  a = vf_max(amin, a);   /* the second operand is returned for NaN: NaN is kept */
  vf_t n;
  vf_t r = vexpf_split(a, c, &n);
  return vf_scale2(vexp2f_poly6(r), n);
}

/* the same with the degree-5 polynomial */
SMX_INLINE vf_t vexpf_neg_sum(vf_t a, vexpf_c c, vf_t amin) {
  a = vf_max(amin, a);
  vf_t n;
  vf_t r = vexpf_split(a, c, &n);
  return vf_scale2(vexp2f_poly5(r), n);
}

/* 2^z in double for z <= 0 (NaN kept, z < -1022 gives 2^-1022) */
SMX_INLINE vd_t vexp2d_neg(vd_t z) {
  z = vd_max(vd_set1(-1022.0), z);
  vd_t n = vd_round(z);
  vd_t r = vd_sub(z, n);
  vd_t p = vd_set1(SMX_EXP2D_C10);
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C9));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C8));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C7));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C6));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C5));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C4));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C3));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C2));
  p = vd_fmadd(p, r, vd_set1(SMX_EXP2D_C1));
  p = vd_fmadd(p, r, vd_set1(1.0));
  return vd_scale2(p, n);   /* p 2^n is one rounding on every layer */
}

#endif
