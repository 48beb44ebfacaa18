/*
 * The sigmoid kernels (f32 and f64), written once over the vector layer. Included (once)
 * by each per-ISA file, which first includes its src/simd/<isa>.h and defines
 * SMX_SIGMOID_TABLE, the table's name.
 *
 * e = 2^(-|x| c) is math/vexp_f32.h's degree-6 exponential (1.18 ulp), then
 * one addition and one division: at most about 2.2 ulp in all. Where the
 * layer's vf_scale2 saturates (vscalef) the exponential is exact down to the
 * subnormals; otherwise (exponent field) e is flushed to 0 below 2^-127, so
 * outputs below FLT_MIN carry an absolute error under 2^-126.
 * f64: math/vexp_f64.h's exponential (1.07 ulp), the same two steps: about
 * 2.1 ulp; subnormal outputs within one subnormal step.
 */
#include "math/vexp_f32.h"
#include "math/vexp_f64.h"

#if SMX_VF_SCALE2_SATURATES
#define SMX_SIGMOID_AMIN(c) ((c)->amin_s)
#else
#define SMX_SIGMOID_AMIN(c) ((c)->amin)
#endif

SMX_INLINE vf_t sigmoid_v(vf_t x, vexpf_c c, vf_t amin) {
  const vf_t one = vf_set1(1.0f), zero = vf_zero();
  vf_t e = vexpf_neg(vf_sub(zero, vf_abs(x)), c, amin);   /* NaN stays NaN */
  vf_t num = vf_sel(vf_gt(x, zero), one, e);
  return vf_div(num, vf_add(one, e));
}

static void vsigmoid_k(size_t n, const float *x, float *y, const smx_expc *c) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  vf_t amin = vf_set1(SMX_SIGMOID_AMIN(c));
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t a = sigmoid_v(vf_ld(x + i), cc, amin), b = sigmoid_v(vf_ld(x + i + VF_W), cc, amin);
    vf_st(y + i, a);
    vf_st(y + i + VF_W, b);
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_st_k(y + i, k, sigmoid_v(vf_ldz_k(x + i, k), cc, amin));
  }
}

static void vsigmoid_shift_k(size_t n, const float *x, float *y, const smx_expc *c, float shift) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  vf_t amin = vf_set1(SMX_SIGMOID_AMIN(c)), vs = vf_set1(shift);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_st_k(y + i, k, sigmoid_v(vf_add(vf_ldz_k(x + i, k), vs), cc, amin));
  }
}

SMX_INLINE vd_t sigmoid_vd(vd_t x, vexpd_c c) {
  const vd_t one = vd_set1(1.0), zero = vd_set1(0.0);
  vd_t e = vexpd_neg(vd_sub(zero, vd_abs(x)), c);   /* NaN stays NaN */
  vd_t num = vd_sel(vd_gt(x, zero), one, e);
  return vd_div(num, vd_add(one, e));
}

static void vsigmoid_f64_k(size_t n, const double *x, double *y, const smx_expcd *c) {
  vexpd_c cc = vexpd_c_set(c->hi, c->lo);
  size_t i = 0;
  for (; i + VD_W <= n; i += VD_W) vd_st(y + i, sigmoid_vd(vd_ld(x + i), cc));
  if (i < n) vd_st_part(y + i, n - i, sigmoid_vd(vd_ld_part(x + i, n - i, 0.0), cc));
}

static void vsigmoid_shift_f64_k(size_t n, const double *x, double *y, const smx_expcd *c, double shift) {
  vexpd_c cc = vexpd_c_set(c->hi, c->lo);
  vd_t vs = vd_set1(shift);
  size_t i = 0;
  for (; i + VD_W <= n; i += VD_W) vd_st(y + i, sigmoid_vd(vd_add(vd_ld(x + i), vs), cc));
  if (i < n) vd_st_part(y + i, n - i, sigmoid_vd(vd_add(vd_ld_part(x + i, n - i, 0.0), vs), cc));
}

const smx_sigmoid_ukernels SMX_SIGMOID_TABLE = { SMX_SIMD_ISA, vsigmoid_k, vsigmoid_f64_k, vsigmoid_shift_k,
                                                 vsigmoid_shift_f64_k };
