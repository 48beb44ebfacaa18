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

/* The log-softmax backward's term e^y_i (-sum), formed as (e^y_i 2^64)(-sum 2^-64) where e^y_i is below
 * 2^-100: e^y_i under FLT_MIN (y_i < -87.3) was lost (AVX2, NEON: 2^n built in the exponent field gives 0) or
 * kept only as a subnormal, while its product with a large sum (a long row) over a small T is a normal number
 * (soak: dx = 5.9e-38 returned as 0 at T = 0.01). Both scalings are exact while -sum 2^-64 is normal, so the
 * product, and every lane with e^y_i >= 2^-100, is the same real number and the same bits as unscaled; with
 * |sum| < 2^-60 the term is below 2^-160 and nothing is scaled. Below y = -132 (2^-190; -200 where the scale
 * saturates) the term is +0, as for y = -inf. */
#if SMX_VF_SCALE2_SATURATES
#define SMX_XENT_LOG_AMIN_LOW (-200.0f)
#else
#define SMX_XENT_LOG_AMIN_LOW (-132.5f)   /* n + 64 <= -127 there: +0 from the exponent field */
#endif
typedef struct lbwd_c { vexpf_c c; vf_t amin, amax, nlow, nsum, nsum_lo, vs; } lbwd_c;

SMX_INLINE vf_t lbwd1(vf_t y, vf_t dy, const lbwd_c *k) {
#if SMX_VF_SCALE2_SATURATES
  vf_t a = vf_max(k->amin, y);   /* NaN kept; a large y overflows to +inf by itself */
#else
  vf_t a = vf_max(k->amin, vf_min(k->amax, y));   /* NaN kept by both */
#endif
  vf_t n;
  vf_t p = vexp2f_poly6(vexpf_split(a, k->c, &n));
  mf_t low = vf_gt(k->nlow, n);
  vf_t e = vf_scale2(p, vf_sel(low, vf_add(n, vf_set1(64.0f)), n));
  return vf_mul(vf_fmadd(e, vf_sel(low, k->nsum_lo, k->nsum), dy), k->vs);
}

static void vlogsoftmax_bwd_k(size_t n, const float *y, const float *dy, float *dx, float sum, float s) {
  const float hi = (float)SMX_LOG2E_D;
  lbwd_c k;
  k.c = vexpf_c_set(hi, (float)(SMX_LOG2E_D - (double)hi));
  int scaled = fabsf(sum) >= 0x1p-60f;   /* (NaN: not scaled; every lane is NaN anyway) */
  k.amin = vf_set1(scaled ? SMX_XENT_LOG_AMIN_LOW : SMX_XENT_LOG_AMIN);
  k.amax = vf_set1(SMX_XENT_LOG_AMAX);
  k.nlow = vf_set1(scaled ? -100.0f : -1000.0f);
  k.nsum = vf_set1(-sum);
  k.nsum_lo = vf_set1(-sum * 0x1p-64f);
  k.vs = vf_set1(s);
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) vf_st(dx + i, lbwd1(vf_ld(y + i), vf_ld(dy + i), &k));
  if (i < n) {
    kf_t t = kf_tail(n - i);
    vf_st_k(dx + i, t, lbwd1(vf_ldz_k(y + i, t), vf_ldz_k(dy + i, t), &k));
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
