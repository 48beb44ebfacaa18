/*
 * The logit-score kernels, written once over the vector layer. Included
 * (once) by each per-ISA file, which first includes its src/simd/<isa>.h and
 * defines SMX_SCORES_TABLE, the table's name; compiled only with that file's
 * ISA flags. Contracts: ukernels.h.
 *
 * The logits are loaded VF_W floats at a time and converted exactly into two
 * double vectors (vf_lo_pd, vf_hi_pd; VF_W = 2 VD_W on every layer). Tails
 * are masked loads filled with -inf, whose exponential is 0 and which is
 * never equal to the (finite) maximum, so they add nothing anywhere.
 * Sums: Dekker's fast two-sum per lane from a bias that keeps |sum| >= |term|
 * (as the f64 softmax kernels), reduced lane by lane as double-doubles.
 */
#include <float.h>
#include <math.h>

#include "math/vexp_f32.h"
#include "math/vexp_f64.h"
#include "math/reduce_state_f64.h"

/* (*s, *e) += t, exact error capture while |*s| >= |t| (the bias sees to it) */
SMX_INLINE void sc_acc(vd_t *s, vd_t *e, vd_t t) {
  vd_t s2 = vd_add(*s, t);
  *e = vd_add(*e, vd_sub(t, vd_sub(s2, *s)));
  *s = s2;
}

/* the lanes of n (sum, error) vector pairs as one double-double, lanes in order */
static smx_dd sc_lanes(const vd_t *s, const vd_t *e, int n, double bias) {
  smx_dd r = { 0.0, 0.0 };
  for (int v = 0; v < n; v++) {
    double a[VD_W], b[VD_W];
    vd_st(a, s[v]);
    vd_st(b, e[v]);
    for (int l = 0; l < VD_W; l++) {
      smx_dd t = { a[l], b[l] };
      r = smx_dd_add(r, t);
    }
  }
  smx_dd unbias = { -bias * VD_W * n, 0.0 };   /* exact: a small integer multiple of a power of two */
  return smx_dd_add(r, unbias);
}

static double sc_lane_sum(vd_t v) {
  double a[VD_W], s = 0.0;
  vd_st(a, v);
  for (int l = 0; l < VD_W; l++) s += a[l];
  return s;
}

/* ------------------------------------------------------------------ top2 */
/* per lane: a the largest, b the second largest, repeats counted (NaN as -inf) */
SMX_INLINE void sc_top2_step(vf_t v, vf_t *a, vf_t *b, mf_t *nan, vf_t ninf) {
  mf_t u = vf_unord(v, v);
  *nan = mf_or(*nan, u);
  v = vf_sel(u, ninf, v);
  *b = vf_max(*b, vf_min(*a, v));
  *a = vf_max(*a, v);
}

static void top2_k(size_t n, const float *z, smx_score_top2 *out) {
  const vf_t ninf = vf_set1(-INFINITY);
  vf_t a0 = ninf, b0 = ninf, a1 = ninf, b1 = ninf;
  mf_t nan = mf_none();
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    sc_top2_step(vf_ld(z + i), &a0, &b0, &nan, ninf);
    sc_top2_step(vf_ld(z + i + VF_W), &a1, &b1, &nan, ninf);
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    sc_top2_step(vf_ld_k(z + i, k, ninf), &a0, &b0, &nan, ninf);
  }
  float la[2 * VF_W], lb[2 * VF_W];
  vf_st(la, a0);
  vf_st(la + VF_W, a1);
  vf_st(lb, b0);
  vf_st(lb + VF_W, b1);
  float m1 = -INFINITY, m2 = -INFINITY;
  for (int l = 0; l < 2 * VF_W; l++) {
    float c[2] = { la[l], lb[l] };
    for (int q = 0; q < 2; q++) {
      if (c[q] > m1) { m2 = m1; m1 = c[q]; }
      else if (c[q] > m2) m2 = c[q];
    }
  }
  out->m1 = m1;
  out->m2 = m2;
  out->nan = mf_any(nan);
}

/* ---------------------------------------------------------------- expsum */
/* One vector of doubles of the row: its exponentials into the sums. */
SMX_INLINE vd_t sc_exp_step(vd_t x, vd_t vm, vexpd_c cv, vd_t one, vd_t zero, int want_w, vd_t *s, vd_t *se,
                            vd_t *w, vd_t *we, vd_t *cnt) {
  md_t eq = vd_eq(x, vm);
  vd_t a = vd_max(cv.amin, vd_sub(x, vm));   /* below amin the exponential is 0: a finite a keeps e a = 0 */
  vd_t nk;
  vd_t r = vexpd_split(a, cv, &nk);
  vd_t e = vd_scale2(vexp2d_poly11(r), nk);
  vd_t t = vd_sel(eq, zero, e);
  sc_acc(s, se, t);
  *cnt = vd_add(*cnt, vd_sel(eq, one, zero));
  if (want_w) sc_acc(w, we, vd_mul(t, a));
  return e;
}

#define SC_BIAS_S 2.0    /* every term is in [0, 1]                        */
#define SC_BIAS_W (-1.0) /* every term e a = x e^x (T = 1) is in [-1/e, 0] */

SMX_INLINE void expsum_impl(size_t n, const float *z, double m, const smx_expcd *c, double *e, int want_w,
                            smx_score_sums *out, int store) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const vd_t vm = vd_set1(m), one = vd_set1(1.0), zero = vd_set1(0.0), bs = vd_set1(SC_BIAS_S),
             bw = vd_set1(SC_BIAS_W);
  const vf_t ninf = vf_set1(-INFINITY);
  vd_t s[4] = { bs, bs, bs, bs }, se[4] = { zero, zero, zero, zero };
  vd_t w[4] = { bw, bw, bw, bw }, we[4] = { zero, zero, zero, zero };
  vd_t cnt = zero;
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t f0 = vf_ld(z + i), f1 = vf_ld(z + i + VF_W);
    vd_t e0 = sc_exp_step(vf_lo_pd(f0), vm, cv, one, zero, want_w, &s[0], &se[0], &w[0], &we[0], &cnt);
    vd_t e1 = sc_exp_step(vf_hi_pd(f0), vm, cv, one, zero, want_w, &s[1], &se[1], &w[1], &we[1], &cnt);
    vd_t e2 = sc_exp_step(vf_lo_pd(f1), vm, cv, one, zero, want_w, &s[2], &se[2], &w[2], &we[2], &cnt);
    vd_t e3 = sc_exp_step(vf_hi_pd(f1), vm, cv, one, zero, want_w, &s[3], &se[3], &w[3], &we[3], &cnt);
    if (store) {
      vd_st(e + i, e0);
      vd_st(e + i + VD_W, e1);
      vd_st(e + i + 2 * VD_W, e2);
      vd_st(e + i + 3 * VD_W, e3);
    }
  }
  for (; i < n; i += VF_W) {
    size_t k = n - i >= VF_W ? VF_W : n - i;
    vf_t f = vf_ld_k(z + i, k == VF_W ? kf_full() : kf_tail(k), ninf);
    vd_t e0 = sc_exp_step(vf_lo_pd(f), vm, cv, one, zero, want_w, &s[0], &se[0], &w[0], &we[0], &cnt);
    vd_t e1 = sc_exp_step(vf_hi_pd(f), vm, cv, one, zero, want_w, &s[1], &se[1], &w[1], &we[1], &cnt);
    if (store) {
      if (k >= VD_W) {
        vd_st(e + i, e0);
        if (k == VF_W) vd_st(e + i + VD_W, e1);
        else if (k > VD_W) vd_st_part(e + i + VD_W, k - VD_W, e1);
      } else {
        vd_st_part(e + i, k, e0);
      }
    }
  }
  out->s = sc_lanes(s, se, 4, SC_BIAS_S);
  if (want_w) {
    out->w = sc_lanes(w, we, 4, SC_BIAS_W);
  } else {
    out->w.hi = 0.0;
    out->w.lo = 0.0;
  }
  out->n_eq = sc_lane_sum(cnt);
}

static void expsum_k(size_t n, const float *z, double m, const smx_expcd *c, double *e, int want_w,
                     smx_score_sums *out) {
  /* four specialisations, so that the loop carries no test of its options */
  if (e) {
    if (want_w) expsum_impl(n, z, m, c, e, 1, out, 1);
    else expsum_impl(n, z, m, c, e, 0, out, 1);
  } else {
    if (want_w) expsum_impl(n, z, m, c, NULL, 1, out, 0);
    else expsum_impl(n, z, m, c, NULL, 0, out, 0);
  }
}

/* -------------------------------------------------------------- expsum32 */
/*
 * The same sums from f32 exponentials (math/vexp_f32.h's split and degree-6
 * polynomial, 1.18 ulp). An entry with |a c| < 1/2 (n = 0) adds 1 + u with
 * u = r q(r) = 2^r - 1 kept apart: 1 is counted and u summed, so
 * exponentials near 1 (a high temperature) keep their own bits instead of
 * rounding to the few floats near 1, where distinct rows would tie. Sums and
 * counts are kept in float lanes for SC_FLUSH vectors (counts exact, sums of
 * at most SC_FLUSH terms) and then added into double lanes, as the f32
 * softmax kernels do, so the error does not grow with the row length.
 */
#if SMX_VF_SCALE2_SATURATES
#define SC_AMIN(c) ((c)->amin_s)
#else
#define SC_AMIN(c) ((c)->amin)
#endif
#define SC_FLUSH 16

typedef struct sc32 {
  vf_t v, w, c0;       /* float partial sums: terms, e a, entries with n = 0 */
  vd_t vd, wd, c0d;    /* their double totals (lo and hi halves added)     */
} sc32;

SMX_INLINE vf_t sc32_step(vf_t x, vf_t vm, vexpf_c cv, vf_t amin, vf_t one, vf_t zero, int want_w, sc32 *a) {
  vf_t t = vf_max(amin, vf_sub(x, vm));   /* -inf and huge negatives: 2^(amin c) = +0, t finite */
  vf_t nf;
  vf_t r = vexpf_split(t, cv, &nf);
  vf_t q = vf_set1(SMX_EXP2_C6);
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C5));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C4));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C3));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C2));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C1));
  vf_t u = vf_mul(q, r);
  vf_t e = vf_scale2(vf_add(u, one), nf);
  mf_t n0 = vf_eq(nf, zero);
  a->v = vf_add(a->v, vf_sel(n0, u, e));
  a->c0 = vf_add(a->c0, vf_sel(n0, one, zero));
  if (want_w) a->w = vf_fmadd(e, t, a->w);   /* e = 0 where t was clamped, so 0 there */
  return e;
}

SMX_INLINE void sc32_flush(sc32 *a, vf_t zero, int want_w) {
  a->vd = vd_add(a->vd, vd_add(vf_lo_pd(a->v), vf_hi_pd(a->v)));
  a->c0d = vd_add(a->c0d, vd_add(vf_lo_pd(a->c0), vf_hi_pd(a->c0)));
  if (want_w) a->wd = vd_add(a->wd, vd_add(vf_lo_pd(a->w), vf_hi_pd(a->w)));
  a->v = zero;
  a->c0 = zero;
  a->w = zero;
}

/* e (as doubles) at i: k <= VF_W entries */
SMX_INLINE void sc32_store(double *e, size_t k, vf_t v) {
  vd_t lo = vf_lo_pd(v), hi = vf_hi_pd(v);
  if (k == VF_W) {
    vd_st(e, lo);
    vd_st(e + VD_W, hi);
  } else if (k > VD_W) {
    vd_st(e, lo);
    vd_st_part(e + VD_W, k - VD_W, hi);
  } else if (k == VD_W) {
    vd_st(e, lo);
  } else {
    vd_st_part(e, k, lo);
  }
}

SMX_INLINE void expsum32_impl(size_t n, const float *z, float m, const smx_expc *c, double *e, int want_w,
                              smx_score_sums *out, int store) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(SC_AMIN(c)), one = vf_set1(1.0f), zero = vf_zero(),
             ninf = vf_set1(-INFINITY);
  const vd_t dz = vd_set1(0.0);
  sc32 a = { zero, zero, zero, dz, dz, dz }, b = a;
  size_t i = 0, f = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t e0 = sc32_step(vf_ld(z + i), vm, cv, amin, one, zero, want_w, &a);
    vf_t e1 = sc32_step(vf_ld(z + i + VF_W), vm, cv, amin, one, zero, want_w, &b);
    if (store) {
      sc32_store(e + i, VF_W, e0);
      sc32_store(e + i + VF_W, VF_W, e1);
    }
    if (++f == SC_FLUSH) { sc32_flush(&a, zero, want_w); sc32_flush(&b, zero, want_w); f = 0; }
  }
  for (; i < n; i += VF_W) {
    size_t k = n - i >= VF_W ? VF_W : n - i;
    vf_t e0 = sc32_step(vf_ld_k(z + i, k == VF_W ? kf_full() : kf_tail(k), ninf), vm, cv, amin, one, zero, want_w, &a);
    if (store) sc32_store(e + i, k, e0);
  }
  sc32_flush(&a, zero, want_w);
  sc32_flush(&b, zero, want_w);
  /* tails read -inf: e = 0 and never n = 0, so they count nowhere. The
   * maximum is among the n = 0 entries (u = 0): leaving one of them out
   * leaves the sum of all the others. */
  double c0 = sc_lane_sum(vd_add(a.c0d, b.c0d)), v = sc_lane_sum(vd_add(a.vd, b.vd));
  out->s.hi = (c0 - 1.0) + v;
  out->s.lo = 0.0;
  out->w.hi = want_w ? sc_lane_sum(vd_add(a.wd, b.wd)) : 0.0;
  out->w.lo = 0.0;
  out->n_eq = 1.0;
}

static void expsum32_k(size_t n, const float *z, float m, const smx_expc *c, const smx_expcd *cd, double *e,
                       int want_w, smx_score_sums *out) {
  (void)cd;
  if (e) {
    if (want_w) expsum32_impl(n, z, m, c, e, 1, out, 1);
    else expsum32_impl(n, z, m, c, e, 0, out, 1);
  } else {
    if (want_w) expsum32_impl(n, z, m, c, NULL, 1, out, 0);
    else expsum32_impl(n, z, m, c, NULL, 0, out, 0);
  }
}

/* ---------------------------------------------------------------- excess */
static double excess_k(size_t n, const double *e, double u) {
  const vd_t vu = vd_set1(u), zero = vd_set1(0.0), bs = vd_set1(SC_BIAS_S);
  vd_t s[2] = { bs, bs }, se[2] = { zero, zero };
  size_t i = 0;
  for (; i + 2 * VD_W <= n; i += 2 * VD_W) {
    sc_acc(&s[0], &se[0], vd_max(vd_sub(vd_ld(e + i), vu), zero));
    sc_acc(&s[1], &se[1], vd_max(vd_sub(vd_ld(e + i + VD_W), vu), zero));
  }
  for (; i < n; i += VD_W) {
    size_t k = n - i >= VD_W ? VD_W : n - i;
    vd_t x = k == VD_W ? vd_ld(e + i) : vd_ld_part(e + i, k, 0.0);
    sc_acc(&s[0], &se[0], vd_max(vd_sub(x, vu), zero));
  }
  return smx_dd_value(sc_lanes(s, se, 2, SC_BIAS_S));
}

/* ------------------------------------------------------------------- gen */
/* log1p(-q) for q in [0, 1/2]: -2 atanh(t), t = q / (2 - q) in [0, 1/3],
 * by the odd series of atanh to t^35 (truncation below 2e-18 relative) */
SMX_INLINE vd_t sc_log1m(vd_t q) {
  vd_t t = vd_div(q, vd_sub(vd_set1(2.0), q));
  vd_t w = vd_mul(t, t);
  vd_t p = vd_set1(1.0 / 35.0);
  p = vd_fmadd(p, w, vd_set1(1.0 / 33.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 31.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 29.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 27.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 25.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 23.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 21.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 19.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 17.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 15.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 13.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 11.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 9.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 7.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 5.0));
  p = vd_fmadd(p, w, vd_set1(1.0 / 3.0));
  p = vd_mul(p, w);   /* atanh(t) = t + t p: the leading 1 added last keeps its bits */
  return vd_mul(vd_set1(-2.0), vd_fmadd(t, p, t));
}

SMX_INLINE vd_t sc_gen_term(vd_t x, vd_t vm, vexpd_c c1, vd_t inv_s, vd_t log_s, vd_t g, vd_t zero) {
  md_t lt = vd_gt(vm, x);
  vd_t a = vd_max(c1.amin, vd_sub(x, vm));
  vd_t e = vexpd_neg(a, c1);
  vd_t lq = vd_add(vd_sub(a, log_s), sc_log1m(vd_mul(e, inv_s)));   /* log(q (1 - q)) */
  vd_t term = vexpd_neg(vd_mul(g, lq), c1);
  /* only z < m, and e = 0 adds 0 (a probability that underflowed counts as 0) */
  return vd_sel(md_and(lt, vd_gt(e, zero)), term, zero);
}

static double gen_sum_k(size_t n, const float *z, double m, double s, double log_s, double g) {
  const vexpd_c c1 = vexpd_c_set(SMX_LOG2E_HI, SMX_LOG2E_LO);
  const vd_t vm = vd_set1(m), inv_s = vd_set1(1.0 / s), ls = vd_set1(log_s), vg = vd_set1(g), zero = vd_set1(0.0),
             bs = vd_set1(SC_BIAS_S);
  const vf_t ninf = vf_set1(-INFINITY);
  vd_t acc[2] = { bs, bs }, err[2] = { zero, zero };
  for (size_t i = 0; i < n; i += VF_W) {
    size_t k = n - i >= VF_W ? VF_W : n - i;
    vf_t f = vf_ld_k(z + i, k == VF_W ? kf_full() : kf_tail(k), ninf);
    sc_acc(&acc[0], &err[0], sc_gen_term(vf_lo_pd(f), vm, c1, inv_s, ls, vg, zero));
    sc_acc(&acc[1], &err[1], sc_gen_term(vf_hi_pd(f), vm, c1, inv_s, ls, vg, zero));
  }
  return smx_dd_value(sc_lanes(acc, err, 2, SC_BIAS_S));
}

const smx_scores_ukernels SMX_SCORES_TABLE = { SMX_SIMD_ISA, top2_k, expsum_k, expsum32_k, excess_k, gen_sum_k };
