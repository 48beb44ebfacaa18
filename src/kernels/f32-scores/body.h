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
/* per lane: a the largest, b the second largest, repeats counted. A NaN
 * entry leaves a and b meaningless, but the caller's NaN flag then makes
 * the row NaN whatever they are. */
SMX_INLINE void sc_top2_step(vf_t v, vf_t *a, vf_t *b) {
  *b = vf_max(*b, vf_min(*a, v));
  *a = vf_max(*a, v);
}

static void top2_k(size_t n, const float *z, smx_score_top2 *out) {
  const vf_t ninf = vf_set1(-INFINITY);
  vf_t a0 = ninf, b0 = ninf, a1 = ninf, b1 = ninf;
  mf_t nan = mf_none();
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t v0 = vf_ld(z + i), v1 = vf_ld(z + i + VF_W);
    nan = mf_or(nan, vf_unord(v0, v1));   /* one compare finds a NaN in either */
    sc_top2_step(v0, &a0, &b0);
    sc_top2_step(v1, &a1, &b1);
  }
  for (; i < n; i += VF_W) {   /* tails read -inf */
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_t v = vf_ld_k(z + i, k, ninf);
    nan = mf_or(nan, vf_unord(v, v));
    sc_top2_step(v, &a0, &b0);
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

/* --------------------------------------------------------------- max_nan */
/* The max alone (a NaN lane leaves it meaningless; *nan says so) */
static float max_nan_k(size_t n, const float *z, int *has_nan) {
  const vf_t ninf = vf_set1(-INFINITY);
  vf_t a0 = ninf, a1 = ninf, a2 = ninf, a3 = ninf;
  mf_t nan = mf_none();
  size_t i = 0;
  for (; i + 4 * VF_W <= n; i += 4 * VF_W) {
    vf_t v0 = vf_ld(z + i), v1 = vf_ld(z + i + VF_W), v2 = vf_ld(z + i + 2 * VF_W), v3 = vf_ld(z + i + 3 * VF_W);
    nan = mf_or(nan, mf_or(vf_unord(v0, v1), vf_unord(v2, v3)));
    a0 = vf_max(a0, v0);
    a1 = vf_max(a1, v1);
    a2 = vf_max(a2, v2);
    a3 = vf_max(a3, v3);
  }
  for (; i < n; i += VF_W) {   /* tails read -inf */
    vf_t v = vf_ld_k(z + i, n - i >= VF_W ? kf_full() : kf_tail(n - i), ninf);
    nan = mf_or(nan, vf_unord(v, v));
    a0 = vf_max(a0, v);
  }
  *has_nan = mf_any(nan);
  return vf_reduce_max(vf_max(vf_max(a0, a1), vf_max(a2, a3)));
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

/* Rows up to SC_SHORT_ROW floats fetch the data SC_PREFETCH_AHEAD floats
 * ahead (the next row of a 4096-class matrix) while this one is computed
 * from L1, as the f32 softmax kernels' exponential pass does: the next
 * row's top2 then finds it in cache instead of waiting on memory. */
#define SC_PREFETCH_AHEAD 4096
#define SC_SHORT_ROW 8192
SMX_INLINE void sc_prefetch_ahead(const float *p) {   /* 4 lines: 64 floats */
  uintptr_t a = (uintptr_t)p + SC_PREFETCH_AHEAD * sizeof(float);
  for (uintptr_t l = 0; l < 4; l++) smx_prefetch(a + 64 * l);
}

typedef struct sc32 {
  vf_t v, w;     /* float partial sums: terms, e a   */
  vd_t vd, wd;   /* their double totals (lo and hi halves added) */
} sc32;

/* one vector: its terms into a, its entries with n = 0 counted into *c0
 * (a mask count, on the integer side: the float pipes are the bottleneck) */
SMX_INLINE vf_t sc32_step(vf_t x, vf_t vm, vexpf_c cv, vf_t amin, vf_t one, vf_t zero, int want_w, int store,
                          sc32 *a, size_t *c0) {
  vf_t t = vf_max(amin, vf_sub(x, vm));   /* -inf and huge negatives: 2^(amin c) = +0, t finite */
  vf_t nf;
  vf_t r = vexpf_split(t, cv, &nf);
  vf_t q = vf_set1(SMX_EXP2_C6);
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C5));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C4));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C3));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C2));
  q = vf_fmadd(q, r, vf_set1(SMX_EXP2_C1));
  /* the term: 2^r = 1 + r q scaled by 2^n, except at n = 0, where it is u = r q alone (the 1 is
   * counted): one fma with 0 or 1 as its addend, and 2^0 = 1 scales u exactly */
  mf_t n0 = vf_eq(nf, zero);
  vf_t term = vf_scale2(vf_fmadd(q, r, vf_sel(n0, zero, one)), nf);
  a->v = vf_add(a->v, term);
  *c0 += (size_t)__builtin_popcount(mf_bits(n0));
  if (!want_w && !store) return term;
  vf_t e = vf_add(term, vf_sel(n0, one, zero));   /* e itself: 1 + u where n = 0 */
  if (want_w) a->w = vf_fmadd(e, t, a->w);         /* e = 0 where t was clamped, so 0 there */
  return e;
}

SMX_INLINE void sc32_flush(sc32 *a, vf_t zero, int want_w) {
  a->vd = vd_add(a->vd, vd_add(vf_lo_pd(a->v), vf_hi_pd(a->v)));
  if (want_w) a->wd = vd_add(a->wd, vd_add(vf_lo_pd(a->w), vf_hi_pd(a->w)));
  a->v = zero;
  a->w = zero;
}

SMX_INLINE void expsum32_impl(size_t n, const float *z, float m, const smx_expc *c, float *e, int want_w,
                              smx_score_sums *out, int store) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(SC_AMIN(c)), one = vf_set1(1.0f), zero = vf_zero(),
             ninf = vf_set1(-INFINITY);
  const vd_t dz = vd_set1(0.0);
  sc32 a[4] = { { zero, zero, dz, dz }, { zero, zero, dz, dz }, { zero, zero, dz, dz }, { zero, zero, dz, dz } };
  size_t i = 0, f = 0, c0 = 0;
  const int short_row = n <= SC_SHORT_ROW;
  /* four vectors a step, each into its own sums (four independent chains) */
  for (; i + 4 * VF_W <= n; i += 4 * VF_W) {
    if (short_row && !(i & 63)) sc_prefetch_ahead(z + i);
    for (int q = 0; q < 4; q++) {
      vf_t eq = sc32_step(vf_ld(z + i + (size_t)q * VF_W), vm, cv, amin, one, zero, want_w, store, &a[q], &c0);
      if (store) vf_st(e + i + (size_t)q * VF_W, eq);
    }
    if (++f == SC_FLUSH / 2) {
      for (int q = 0; q < 4; q++) sc32_flush(&a[q], zero, want_w);
      f = 0;
    }
  }
  for (; i < n; i += VF_W) {
    size_t k = n - i >= VF_W ? VF_W : n - i;
    kf_t kt = k == VF_W ? kf_full() : kf_tail(k);
    vf_t e0 = sc32_step(vf_ld_k(z + i, kt, ninf), vm, cv, amin, one, zero, want_w, store, &a[0], &c0);
    if (store) vf_st_k(e + i, kt, e0);
  }
  for (int q = 0; q < 4; q++) sc32_flush(&a[q], zero, want_w);
  /* tails read -inf: e = 0 and never n = 0, so they count nowhere. The
   * maximum is among the n = 0 entries (u = 0): leaving one of them out
   * leaves the sum of all the others. */
  double v = sc_lane_sum(vd_add(vd_add(a[0].vd, a[1].vd), vd_add(a[2].vd, a[3].vd)));
  out->s.hi = ((double)c0 - 1.0) + v;
  out->s.lo = 0.0;
  out->w.hi = want_w ? sc_lane_sum(vd_add(vd_add(a[0].wd, a[1].wd), vd_add(a[2].wd, a[3].wd))) : 0.0;
  out->w.lo = 0.0;
  out->n_eq = 1.0;
}

static void expsum32_k(size_t n, const float *z, float m, const smx_expc *c, const smx_expcd *cd, float *e,
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

/* sum_j max(e_j - u, 0) over f32 e: float lanes flushed to double every
 * SC_FLUSH vectors, as expsum32's sums (the terms are nonnegative, so the
 * error is relative to the result) */
static double excess32_k(size_t n, const float *e, float u) {
  const vf_t vu = vf_set1(u), zero = vf_zero();
  vf_t a = zero, b = zero;
  vd_t d = vd_set1(0.0);
  size_t i = 0, f = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    a = vf_add(a, vf_max(vf_sub(vf_ld(e + i), vu), zero));
    b = vf_add(b, vf_max(vf_sub(vf_ld(e + i + VF_W), vu), zero));
    if (++f == SC_FLUSH) {
      d = vd_add(d, vd_add(vd_add(vf_lo_pd(a), vf_hi_pd(a)), vd_add(vf_lo_pd(b), vf_hi_pd(b))));
      a = zero;
      b = zero;
      f = 0;
    }
  }
  for (; i < n; i += VF_W) {   /* tails read u: they add 0 */
    size_t k = n - i >= VF_W ? VF_W : n - i;
    a = vf_add(a, vf_max(vf_sub(vf_ld_k(e + i, k == VF_W ? kf_full() : kf_tail(k), vu), vu), zero));
  }
  d = vd_add(d, vd_add(vd_add(vf_lo_pd(a), vf_hi_pd(a)), vd_add(vf_lo_pd(b), vf_hi_pd(b))));
  return sc_lane_sum(d);
}

/* ----------------------------------------------------------- filter_vals */
static size_t filter_vals_k(size_t n, const float *z, float thr, float m, float *vals, size_t *n_eq) {
  const vf_t vt = vf_set1(thr), vm = vf_set1(m), ninf = vf_set1(-INFINITY);
  size_t c = 0, eq = 0;
  for (size_t i = 0; i < n; i += VF_W) {   /* tails read -inf: never above thr, never m */
    vf_t v = n - i >= VF_W ? vf_ld(z + i) : vf_ld_k(z + i, kf_tail(n - i), ninf);
    c += vf_compress_st(vals + c, vf_gt(v, vt), v);   /* no branch on the data */
    eq += (size_t)__builtin_popcount(mf_bits(vf_eq(v, vm)));
  }
  *n_eq = eq;
  return c;
}

/* ------------------------------------------------------------- count_gt */
static size_t count_gt_k(size_t n, const float *v, float t) {
  const vf_t vt = vf_set1(t), ninf = vf_set1(-INFINITY);
  size_t c0 = 0, c1 = 0, i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    c0 += (size_t)__builtin_popcount(mf_bits(vf_gt(vf_ld(v + i), vt)));
    c1 += (size_t)__builtin_popcount(mf_bits(vf_gt(vf_ld(v + i + VF_W), vt)));
  }
  for (; i < n; i += VF_W) {   /* tails read -inf: never above t */
    size_t k = n - i >= VF_W ? VF_W : n - i;
    c0 += (size_t)__builtin_popcount(mf_bits(vf_gt(vf_ld_k(v + i, k == VF_W ? kf_full() : kf_tail(k), ninf), vt)));
  }
  return c0 + c1;
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

const smx_scores_ukernels SMX_SCORES_TABLE = { SMX_SIMD_ISA, top2_k,    max_nan_k, expsum_k,  expsum32_k, excess_k,
                                                excess32_k,   filter_vals_k, count_gt_k, gen_sum_k };
