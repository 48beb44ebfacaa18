/*
 * The f32 gradient kernels, written once over the vector layer. Included
 * (once) by each per-ISA file (avx2.c, avx512.c), which first includes its
 * src/simd/<isa>.h and defines SMX_XENT_TABLE, the table's name.
 *
 * Exponentials are math/vexp_f32.h (degree 6). Where the layer's vf_scale2
 * does not saturate (AVX2: exponent field, exact for n in [-127, 127]),
 * arguments are also clamped from above, so that 2^n stays representable;
 * with vscalef an overflow gives +inf by itself. Sums are formed in double
 * lanes (exact widening). Tails use masked loads and stores: nothing
 * outside [0, n) is touched.
 */
#include <math.h>

#include "math/vexp_f32.h"

#if SMX_VF_SCALE2_SATURATES
#define SMX_XENT_AMIN(c) ((c)->amin_s)
#define SMX_XENT_LOG_AMIN (-150.0f)   /* 2^-216: +0 after vscalef */
#else
#define SMX_XENT_AMIN(c) ((c)->amin)
#define SMX_XENT_LOG_AMIN (-88.0f)    /* e^-88: a c >= -127 */
#endif
#define SMX_XENT_LOG_AMAX 88.0f       /* e^88: a c <= 127 */

/* 2^(a c), a clamped to [amin, amax] where the scale cannot saturate (NaN kept) */
SMX_INLINE vf_t exp2c(vf_t a, vexpf_c c, vf_t amin, vf_t amax) {
#if SMX_VF_SCALE2_SATURATES
  (void)amax;
#else
  a = vf_min(amax, a);   /* the second operand is returned for NaN: NaN is kept */
#endif
  return vexpf_neg(a, c, amin);
}

/* Adds the floats of v to two double accumulators (exact widening): sums
 * that can cancel (<dy, y>, sum dy, sum x) lose nothing to float partial sums. */
SMX_INLINE void acc_double(vf_t v, vd_t *d0, vd_t *d1) {
  *d0 = vd_add(*d0, vf_lo_pd(v));
  *d1 = vd_add(*d1, vf_hi_pd(v));
}

SMX_INLINE kf_t tail_or_full(size_t left) { return left >= VF_W ? kf_full() : kf_tail(left); }

/* The same lanes and order as the sum inside expaffine_impl, so a loss is the
 * same bits with or without a gradient. */
static double rsum_k(size_t n, const float *x) {
  vd_t d0 = vd_set1(0.0), d1 = d0;
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    acc_double(vf_ld(x + i), &d0, &d1);
    acc_double(vf_ld(x + i + VF_W), &d0, &d1);
  }
  for (; i < n; i += VF_W) acc_double(vf_ldz_k(x + i, tail_or_full(n - i)), &d0, &d1);
  return vd_reduce_add(vd_add(d0, d1));
}

/* Products of two floats are exact in double, and so is nothing lost before the sum. */
static double rdot_k(size_t n, const float *a, const float *b) {
  vd_t d0 = vd_set1(0.0), d1 = d0;
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = tail_or_full(n - i);
    vf_t va = vf_ldz_k(a + i, k), vb = vf_ldz_k(b + i, k);
    d0 = vd_fmadd(vf_lo_pd(va), vf_lo_pd(vb), d0);
    d1 = vd_fmadd(vf_hi_pd(va), vf_hi_pd(vb), d1);
  }
  return vd_reduce_add(vd_add(d0, d1));
}

static void vsoftmax_bwd_k(size_t n, const float *y, const float *dy, float *dx, float dot, float s) {
  const vf_t vd = vf_set1(dot), vs = vf_set1(s);
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st(dx + i, vf_mul(vf_mul(vf_ld(y + i), vf_sub(vf_ld(dy + i), vd)), vs));
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_t t = vf_mul(vf_ldz_k(y + i, k), vf_sub(vf_ldz_k(dy + i, k), vd));
    vf_st_k(dx + i, k, vf_mul(t, vs));
  }
}

static void vlogsoftmax_bwd_k(size_t n, const float *y, const float *dy, float *dx, float sum, float s) {
  const float hi = (float)SMX_LOG2E_D;
  const vexpf_c c = vexpf_c_set(hi, (float)(SMX_LOG2E_D - (double)hi));
  const vf_t amin = vf_set1(SMX_XENT_LOG_AMIN), amax = vf_set1(SMX_XENT_LOG_AMAX);
  const vf_t nsum = vf_set1(-sum), vs = vf_set1(s);
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) {
    vf_t e = exp2c(vf_ld(y + i), c, amin, amax);
    vf_st(dx + i, vf_mul(vf_fmadd(e, nsum, vf_ld(dy + i)), vs));
  }
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_t e = exp2c(vf_ldz_k(y + i, k), c, amin, amax);
    vf_st_k(dx + i, k, vf_mul(vf_fmadd(e, nsum, vf_ldz_k(dy + i, k)), vs));
  }
}

SMX_INLINE double expaffine_impl(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                                 int want_sum) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(SMX_XENT_AMIN(c)), amax = vf_zero();
  const vf_t va = vf_set1(a), vb = vf_set1(b);
  vd_t d0 = vd_set1(0.0), d1 = d0;
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t x0 = vf_ld(x + i), x1 = vf_ld(x + i + VF_W);
    if (want_sum) { acc_double(x0, &d0, &d1); acc_double(x1, &d0, &d1); }
    vf_t e0 = exp2c(vf_sub(x0, vm), cv, amin, amax), e1 = exp2c(vf_sub(x1, vm), cv, amin, amax);
    vf_st(g + i, vf_fmadd(e0, va, vb));
    vf_st(g + i + VF_W, vf_fmadd(e1, va, vb));
  }
  for (; i < n; i += VF_W) {
    kf_t k = tail_or_full(n - i);
    vf_t x0 = vf_ldz_k(x + i, k);
    if (want_sum) acc_double(x0, &d0, &d1);
    vf_st_k(g + i, k, vf_fmadd(exp2c(vf_sub(x0, vm), cv, amin, amax), va, vb));
  }
  return want_sum ? vd_reduce_add(vd_add(d0, d1)) : 0.0;
}

static double vexpaffine_k(size_t n, const float *x, float *g, float m, const smx_expc *c, float a, float b,
                           int want_sum) {
  return want_sum ? expaffine_impl(n, x, g, m, c, a, b, 1) : expaffine_impl(n, x, g, m, c, a, b, 0);
}

const smx_xent_ukernels SMX_XENT_TABLE = {
  SMX_SIMD_ISA, rsum_k, rdot_k, vsoftmax_bwd_k, vlogsoftmax_bwd_k, vexpaffine_k,
};
