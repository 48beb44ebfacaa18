/*
 * The vnorm kernels (f32), written once over the vector layer. Included
 * (once) by each per-ISA file, which first includes its src/simd/<isa>.h and
 * defines SMX_VNORM_TABLE. Exponentials are math/vexp_f32.h's degree-6
 * polynomial (1.18 ulp). Sums are kept in float lanes for at most
 * VN_FLUSH elements and then added into double lanes, so their error does
 * not grow with the row length. Tails use masked loads and stores.
 */
#include <math.h>

#include "math/vexp_f32.h"

#define VN_FLUSH (16 * VF_W)

#if SMX_VF_SCALE2_SATURATES
#define VN_AMIN(c) ((c)->amin_s)
#else
#define VN_AMIN(c) ((c)->amin)
#endif

/* Loops over [0, n) a vector at a time; the tail is the full-width body on
 * a masked load (lanes beyond n read as `fill`) and a masked store. */
#define VN_TAIL(i, n) (n - i >= VF_W ? kf_full() : kf_tail(n - i))

SMX_INLINE void vn_flush(vf_t *acc, vd_t *d0, vd_t *d1) {
  *d0 = vd_add(*d0, vf_lo_pd(*acc));
  *d1 = vd_add(*d1, vf_hi_pd(*acc));
  *acc = vf_zero();
}

/* Output stores of the last pass of a backward: non-temporal where the
 * caller asks (outputs far larger than the caches; y aligned by vn_head). */
SMX_INLINE void vn_store(int stream, float *p, vf_t v) {
  if (stream) vf_st_nt(p, v);
  else vf_st(p, v);
}

/* elements to store the ordinary way before y reaches a vector boundary
 * (all of them where y is not 4-byte aligned) */
SMX_INLINE size_t vn_head(const float *y, size_t n) {
  const uintptr_t vb = VF_W * sizeof(float);
  if ((uintptr_t)y & 3) return n;
  size_t h = (size_t)((vb - ((uintptr_t)y & (vb - 1))) & (vb - 1)) / sizeof(float);
  return h < n ? h : n;
}

SMX_INLINE double vn_total(vd_t d0, vd_t d1) { return vd_reduce_add(vd_add(d0, d1)); }

/* log1p(u) for u in [0, 1]: 2 atanh(t), t = u / (2 + u) <= 1/3, by its odd
 * series to t^15 (truncation below 1.5e-9 relative) */
SMX_INLINE vf_t vn_log1p01_t(vf_t t) {
  vf_t w = vf_mul(t, t);
  vf_t p = vf_set1(1.0f / 15.0f);
  p = vf_fmadd(p, w, vf_set1(1.0f / 13.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f / 11.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f / 9.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f / 7.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f / 5.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f / 3.0f));
  p = vf_fmadd(p, w, vf_set1(1.0f));
  return vf_mul(vf_add(t, t), p);
}

SMX_INLINE vf_t vn_log1p01(vf_t u) { return vn_log1p01_t(vf_div(u, vf_add(vf_set1(2.0f), u))); }

/* exp(-|x|) (NaN kept) */
SMX_INLINE vf_t vn_expnabs(vf_t x, vexpf_c cc, vf_t amin) { return vexpf_neg(vf_sub(vf_zero(), vf_abs(x)), cc, amin); }

SMX_INLINE vf_t vn_softplus(vf_t x, vexpf_c cc, vf_t amin) {
  return vf_add(vf_max(vf_zero(), x), vn_log1p01(vn_expnabs(x, cc, amin)));   /* max(0, NaN) is NaN */
}

SMX_INLINE vf_t vn_sigmoid(vf_t x, vexpf_c cc, vf_t amin) {
  const vf_t one = vf_set1(1.0f);
  vf_t e = vn_expnabs(x, cc, amin);
  return vf_div(vf_sel(vf_gt(x, vf_zero()), one, e), vf_add(one, e));
}

static double softpick_exp_k(size_t n, const float *x, float *e, float m, const smx_expc *c, float em) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), vem = vf_set1(em), amin = vf_set1(VN_AMIN(c)), ninf = vf_set1(-INFINITY);
  vd_t d0 = vd_set1(0.0), d1 = d0;
  vf_t acc = vf_zero();
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t xv = vf_ld_k(x + i, k, ninf);
    vf_t ev = vexpf_neg(vf_sub(xv, vm), cc, amin);
    vf_st_k(e + i, k, ev);
    /* masked entries (and the lanes past n) are left out of the sum */
    acc = vf_add(acc, vf_sel(vf_eq(xv, ninf), vf_zero(), vf_abs(vf_sub(ev, vem))));
    if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); f = 0; }
  }
  vn_flush(&acc, &d0, &d1);
  return vn_total(d0, d1);
}

static void softpick_out_k(size_t n, const float *e, float *y, float em, float s) {
  const vf_t vem = vf_set1(em), vs = vf_set1(s);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_st_k(y + i, k, vf_mul(vf_max(vf_sub(vf_ldz_k(e + i, k), vem), vf_zero()), vs));
  }
}

static double softpick_dot_k(size_t n, const float *x, const float *g, float m, const smx_expc *c, float em,
                             double *gy) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), vem = vf_set1(em), amin = vf_set1(VN_AMIN(c)), ninf = vf_set1(-INFINITY);
  vd_t d0 = vd_set1(0.0), d1 = d0, g0 = d0, g1 = d0;
  vf_t acc = vf_zero(), gacc = vf_zero();
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t xv = vf_ld_k(x + i, k, ninf), gv = vf_ldz_k(g + i, k);
    vf_t a = vf_sub(vexpf_neg(vf_sub(xv, vm), cc, amin), vem);
    acc = vf_add(acc, vf_sel(vf_eq(xv, ninf), vf_zero(), vf_abs(a)));
    gacc = vf_fmadd(gv, vf_max(a, vf_zero()), gacc);
    if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); vn_flush(&gacc, &g0, &g1); f = 0; }
  }
  vn_flush(&acc, &d0, &d1);
  vn_flush(&gacc, &g0, &g1);
  *gy = vn_total(g0, g1);
  return vn_total(d0, d1);
}

static void softpick_bwd_k(size_t n, const float *x, const float *g, float *dx, float m, const smx_expc *c, float s,
                           float d) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(VN_AMIN(c)), vs = vf_set1(s), vd = vf_set1(d), z = vf_zero();
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t xv = vf_ldz_k(x + i, k), gv = vf_ldz_k(g + i, k);
    vf_t e = vf_mul(vexpf_neg(vf_sub(xv, vm), cc, amin), vs);
    vf_t t = vf_sel(vf_gt(xv, z), vf_sub(gv, vd), vf_sel(vf_gt(z, xv), vd, z));
    vf_st_k(dx + i, k, vf_mul(e, t));
  }
}

static double softplus_k(size_t n, const float *x, float *y, const float *g, double *gy, const smx_expc *c) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t amin = vf_set1(VN_AMIN(c));
  vd_t d0 = vd_set1(0.0), d1 = d0, g0 = d0, g1 = d0;
  vf_t acc = vf_zero(), gacc = vf_zero();
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t sp = vf_keep_k(vn_softplus(vf_ldz_k(x + i, k), cc, amin), k);
    if (y) vf_st_k(y + i, k, sp);
    acc = vf_add(acc, sp);
    if (g) gacc = vf_fmadd(vf_ldz_k(g + i, k), sp, gacc);
    if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); vn_flush(&gacc, &g0, &g1); f = 0; }
  }
  vn_flush(&acc, &d0, &d1);
  vn_flush(&gacc, &g0, &g1);
  if (gy) *gy = vn_total(g0, g1);
  return vn_total(d0, d1);
}

static void softplus_bwd_k(size_t n, const float *x, const float *g, float *dx, float s, float d,
                           const smx_expc *c) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t amin = vf_set1(VN_AMIN(c)), vs = vf_set1(s), vd = vf_set1(d);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t sg = vn_sigmoid(vf_ldz_k(x + i, k), cc, amin);
    vf_st_k(dx + i, k, vf_mul(vf_mul(sg, vs), vf_sub(vf_ldz_k(g + i, k), vd)));
  }
}

static void sa_out_k(size_t n, const float *x, const float *p, float *y, float lo, float s) {
  const vf_t vlo = vf_set1(lo), vs = vf_set1(s), z = vf_zero();
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t pv = vf_ldz_k(p + i, k), xv = vf_ldz_k(x + i, k);
    vf_t r = vf_mul(vf_mul(vf_sub(xv, vlo), vs), pv);
    vf_st_k(y + i, k, vf_sel(vf_eq(pv, z), z, r));   /* masked entries: 0, never -inf * 0 */
  }
}

static double sa_dot_k(size_t n, const float *x, const float *p, const float *g, float lo, float s, double *gp) {
  const vf_t vlo = vf_set1(lo), vs = vf_set1(s), z = vf_zero();
  vd_t d0 = vd_set1(0.0), d1 = d0, g0 = d0, g1 = d0;
  vf_t acc = z, gacc = z;
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t pv = vf_ldz_k(p + i, k), xv = vf_ldz_k(x + i, k), pg = vf_mul(pv, vf_ldz_k(g + i, k));
    vf_t w = vf_sel(vf_eq(pv, z), z, vf_mul(vf_sub(xv, vlo), vs));
    acc = vf_fmadd(pg, w, acc);
    gacc = vf_add(gacc, pg);
    if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); vn_flush(&gacc, &g0, &g1); f = 0; }
  }
  vn_flush(&acc, &d0, &d1);
  vn_flush(&gacc, &g0, &g1);
  *gp = vn_total(g0, g1);
  return vn_total(d0, d1);
}

static void sa_bwd_k(size_t n, const float *x, const float *p, const float *g, float *dx, float lo, float s,
                     float d) {
  const vf_t vlo = vf_set1(lo), vs = vf_set1(s), vd = vf_set1(d), z = vf_zero();
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t pv = vf_ldz_k(p + i, k), xv = vf_ldz_k(x + i, k), gv = vf_ldz_k(g + i, k);
    vf_t w = vf_mul(vf_sub(xv, vlo), vs);
    vf_t r = vf_mul(pv, vf_fmadd(gv, vf_add(w, vs), vf_sub(z, vd)));
    vf_st_k(dx + i, k, vf_sel(vf_eq(pv, z), z, r));
  }
}

/* max over [0, n) ignoring NaN (-inf when none) */
SMX_INLINE float vn_blockmax(size_t n, const float *x) {
  vf_t acc = vf_set1(-INFINITY);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    acc = vf_max(vf_ld_k(x + i, k, vf_set1(-INFINITY)), acc);   /* NaN in the first operand: acc kept */
  }
  return vf_reduce_max(acc);
}

static void softpick_stats_k(size_t n, const float *x, const float *g, const smx_expc *c, smx_softpick_state *st) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t amin = vf_set1(VN_AMIN(c)), ninf = vf_set1(-INFINITY), z = vf_zero();
  st->m = -INFINITY;
  st->d = 0.0;
  st->gy = 0.0;
  st->blk = 0;
  for (size_t b0 = 0; b0 < n; b0 += SMX_SOFTPICK_BLOCK) {
    size_t len = n - b0 < SMX_SOFTPICK_BLOCK ? n - b0 : SMX_SOFTPICK_BLOCK;
    const float *xb = x + b0;
    float bm = vn_blockmax(len, xb);
    if (bm == INFINITY) { st->m = INFINITY; return; }
    if (bm == -INFINITY) {   /* only -inf (or NaN): a NaN still has to reach the sum */
      int nan = 0;
      for (size_t i = 0; i < len; i++) nan |= xb[i] != xb[i];
      if (nan) st->d = NAN;
      continue;
    }
    /* the block's terms at the larger of its max and the running one: only a
     * new max rescales (the running state, by e^(m - m') < 1) */
    float at = bm > st->m ? bm : st->m;
    float em = (float)exp(-(double)at);   /* +inf below -88.7: the caller's fallback */
    const vf_t vm = vf_set1(at), vem = vf_set1(em);
    vf_t acc = z, gacc = z;
    vd_t d0 = vd_set1(0.0), d1 = d0, g0 = d0, g1 = d0;
    size_t f = 0;
    for (size_t i = 0; i < len; i += VF_W) {
      kf_t k = VN_TAIL(i, len);
      vf_t xv = vf_ld_k(xb + i, k, ninf);
      vf_t a = vf_sub(vexpf_neg(vf_sub(xv, vm), cc, amin), vem);
      acc = vf_add(acc, vf_sel(vf_eq(xv, ninf), z, vf_abs(a)));
      if (g) gacc = vf_fmadd(vf_ldz_k(g + b0 + i, k), vf_max(a, z), gacc);
      if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); vn_flush(&gacc, &g0, &g1); f = 0; }
    }
    vn_flush(&acc, &d0, &d1);
    vn_flush(&gacc, &g0, &g1);
    double db = vn_total(d0, d1), gb = vn_total(g0, g1);
    if (bm > st->m) {
      double r = st->m == -INFINITY ? 0.0 : exp((double)st->m - (double)bm);
      st->d = st->d * r + db;
      st->gy = st->gy * r + gb;
      st->m = bm;
      st->blk = b0;
    } else {
      st->d += db;
      st->gy += gb;
    }
  }
}

static void softpick_outx_k(size_t n, const float *x, float *y, float m, const smx_expc *c, float em, float s) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), vem = vf_set1(em), vs = vf_set1(s), amin = vf_set1(VN_AMIN(c)), z = vf_zero();
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t a0 = vf_sub(vexpf_neg(vf_sub(vf_ld(x + i), vm), cc, amin), vem);
    vf_t a1 = vf_sub(vexpf_neg(vf_sub(vf_ld(x + i + VF_W), vm), cc, amin), vem);
    vf_st(y + i, vf_mul(vf_max(a0, z), vs));
    vf_st(y + i + VF_W, vf_mul(vf_max(a1, z), vs));
  }
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t a = vf_sub(vexpf_neg(vf_sub(vf_ldz_k(x + i, k), vm), cc, amin), vem);
    vf_st_k(y + i, k, vf_mul(vf_max(a, z), vs));
  }
}

static void sig_bwd_k(size_t n, const float *y, const float *g, float *dx, float s) {
  const vf_t one = vf_set1(1.0f), vs = vf_set1(s);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t yv = vf_ldz_k(y + i, k);
    vf_st_k(dx + i, k, vf_mul(vf_mul(yv, vf_sub(one, yv)), vf_mul(vf_ldz_k(g + i, k), vs)));
  }
}

/* softplus-l1 backward, pass 1: the softplus terms summed (and against g)
 * and sigmoid(x_i) stored to sg, from one exp(-|x_i|) */
static double softplus_sig_k(size_t n, const float *x, const float *g, float *sg, double *gy, const smx_expc *c) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t amin = vf_set1(VN_AMIN(c)), one = vf_set1(1.0f), two = vf_set1(2.0f), z = vf_zero();
  vd_t d0 = vd_set1(0.0), d1 = d0, g0 = d0, g1 = d0;
  vf_t acc = z, gacc = z;
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t xv = vf_ldz_k(x + i, k), e = vn_expnabs(xv, cc, amin);
    /* e / (2 + e) and 1 / (1 + e) from one division: (2 + e)(1 + e) is in [2, 6] */
    vf_t a = vf_add(two, e), b = vf_add(one, e), q = vf_div(one, vf_mul(a, b));
    vf_t sp = vf_keep_k(vf_add(vf_max(z, xv), vn_log1p01_t(vf_mul(vf_mul(e, b), q))), k);
    vf_st_k(sg + i, k, vf_mul(vf_mul(vf_sel(vf_gt(xv, z), one, e), a), q));
    acc = vf_add(acc, sp);
    gacc = vf_fmadd(vf_ldz_k(g + i, k), sp, gacc);
    if (++f == VN_FLUSH / VF_W) { vn_flush(&acc, &d0, &d1); vn_flush(&gacc, &g0, &g1); f = 0; }
  }
  vn_flush(&acc, &d0, &d1);
  vn_flush(&gacc, &g0, &g1);
  *gy = vn_total(g0, g1);
  return vn_total(d0, d1);
}

/* softplus-l1 backward, pass 2: dx_i = sg_i s (g_i - d) */
SMX_INLINE void sig_scale_impl(size_t n, const float *sg, const float *g, float *dx, float s, float d, int stream) {
  const vf_t vs = vf_set1(s), vd = vf_set1(d);
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W)
    vn_store(stream, dx + i, vf_mul(vf_mul(vf_ld(sg + i), vs), vf_sub(vf_ld(g + i), vd)));
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_st_k(dx + i, k, vf_mul(vf_mul(vf_ldz_k(sg + i, k), vs), vf_sub(vf_ldz_k(g + i, k), vd)));
  }
}

static void sig_scale_k(size_t n, const float *sg, const float *g, float *dx, float s, float d, int stream) {
  size_t h = stream ? vn_head(dx, n) : n;
  sig_scale_impl(h, sg, g, dx, s, d, 0);
  if (h < n) {
    sig_scale_impl(n - h, sg + h, g + h, dx + h, s, d, 1);
    smx_sfence();
  }
}

/* self-adjust backward from x, pass 2 (after the max m): e_i = exp(x_i - m)
 * stored; returns sum e_i, *egw = sum e_i g_i w_i, *eg = sum e_i g_i */
static double sa_bexp_k(size_t n, const float *x, const float *g, float *e, float m, const smx_expc *c, float lo,
                        float s, double *egw, double *eg) {
  vexpf_c cc = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), vlo = vf_set1(lo), vs = vf_set1(s), amin = vf_set1(VN_AMIN(c)), z = vf_zero();
  const vf_t ninf = vf_set1(-INFINITY);
  vd_t s0 = vd_set1(0.0), s1 = s0, w0 = s0, w1 = s0, g0 = s0, g1 = s0;
  vf_t acc = z, wacc = z, gacc = z;
  size_t i = 0, f = 0;
  for (; i < n; i += VF_W) {
    kf_t k = VN_TAIL(i, n);
    vf_t xv = vf_ld_k(x + i, k, ninf);
    vf_t ev = vexpf_neg(vf_sub(xv, vm), cc, amin), evg = vf_mul(ev, vf_ldz_k(g + i, k));
    vf_st_k(e + i, k, ev);
    vf_t w = vf_sel(vf_eq(ev, z), z, vf_mul(vf_sub(xv, vlo), vs));   /* masked: 0, never -inf * 0 */
    acc = vf_add(acc, ev);
    wacc = vf_fmadd(evg, w, wacc);
    gacc = vf_add(gacc, evg);
    if (++f == VN_FLUSH / VF_W) {
      vn_flush(&acc, &s0, &s1); vn_flush(&wacc, &w0, &w1); vn_flush(&gacc, &g0, &g1);
      f = 0;
    }
  }
  vn_flush(&acc, &s0, &s1); vn_flush(&wacc, &w0, &w1); vn_flush(&gacc, &g0, &g1);
  *egw = vn_total(w0, w1);
  *eg = vn_total(g0, g1);
  return vn_total(s0, s1);
}

/* self-adjust backward from x, pass 3: p_i = e_i inv, then sa_bwd's dx_i */
SMX_INLINE vf_t sa_bwde_v(vf_t xv, vf_t ev, vf_t gv, vf_t vlo, vf_t vs, vf_t vd, vf_t vinv) {
  const vf_t z = vf_zero();
  vf_t pv = vf_mul(ev, vinv), w = vf_mul(vf_sub(xv, vlo), vs);
  vf_t r = vf_mul(pv, vf_fmadd(gv, vf_add(w, vs), vf_sub(z, vd)));
  return vf_sel(vf_eq(pv, z), z, r);
}

SMX_INLINE void sa_bwde_impl(size_t n, const float *x, const float *e, const float *g, float *dx, float lo, float s,
                             float d, float inv, int stream) {
  const vf_t vlo = vf_set1(lo), vs = vf_set1(s), vd = vf_set1(d), vinv = vf_set1(inv);
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W)
    vn_store(stream, dx + i, sa_bwde_v(vf_ld(x + i), vf_ld(e + i), vf_ld(g + i), vlo, vs, vd, vinv));
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_st_k(dx + i, k, sa_bwde_v(vf_ldz_k(x + i, k), vf_ldz_k(e + i, k), vf_ldz_k(g + i, k), vlo, vs, vd, vinv));
  }
}

static void sa_bwde_k(size_t n, const float *x, const float *e, const float *g, float *dx, float lo, float s,
                      float d, float inv, int stream) {
  size_t h = stream ? vn_head(dx, n) : n;
  sa_bwde_impl(h, x, e, g, dx, lo, s, d, inv, 0);
  if (h < n) {
    sa_bwde_impl(n - h, x + h, e + h, g + h, dx + h, lo, s, d, inv, 1);
    smx_sfence();
  }
}

/* the first index in [0, n) holding v (n when none) */
SMX_INLINE size_t vn_first_eq(size_t n, const float *x, float v) {
  const vf_t vv = vf_set1(v), nan = vf_set1(NAN);
  for (size_t i = 0; i < n; i += VF_W) {
    unsigned b = mf_bits(vf_eq(vf_ld_k(x + i, VN_TAIL(i, n), nan), vv));
    if (b) return i + (size_t)__builtin_ctz(b);
  }
  return n;
}

static void sa_stats_k(size_t n, const float *x, smx_vnorm_stats *st) {
  const vf_t pinf = vf_set1(INFINITY), ninf = vf_set1(-INFINITY), z = vf_zero(), one = vf_set1(1.0f);
  vf_t mx = ninf, mn = pinf, nan = z, inf = z;
  for (size_t i = 0; i < n; i += VF_W) {
    vf_t xv = vf_ld_k(x + i, VN_TAIL(i, n), ninf);
    mf_t fin = vf_gt(pinf, vf_abs(xv));   /* false for NaN and +-inf */
    mx = vf_max(vf_sel(fin, xv, ninf), mx);
    mn = vf_min(vf_sel(fin, xv, pinf), mn);
    nan = vf_max(vf_sel(vf_unord(xv, xv), one, z), nan);
    inf = vf_max(vf_sel(vf_eq(xv, pinf), one, z), inf);
  }
  st->nan = vf_reduce_max(nan) != 0.0f;
  st->pinf = vf_reduce_max(inf) != 0.0f;
  st->fmax = vf_reduce_max(mx);
  st->fmin = -vf_reduce_max(vf_sub(z, mn));
  st->imax = st->fmax == -INFINITY ? n : vn_first_eq(n, x, st->fmax);
  st->imin = st->fmin == INFINITY ? n : vn_first_eq(n, x, st->fmin);
}

/* MultiMax backward: one vector of g = dL/ds, its dx, and (sums) the eight
 * parameter terms added into acc[0..7] */
typedef struct vn_mm { vf_t r0, r1, r2, r3, t0, t1, t2, t3, dot, s; } vn_mm;

SMX_INLINE vf_t mm_vec(const vn_mm *c, vf_t xv, vf_t yv, vf_t dyv, kf_t k, vf_t *acc, int sums) {
  const vf_t z = vf_zero(), one = vf_set1(1.0f);
  mf_t inf = vf_eq(vf_abs(xv), vf_set1(INFINITY));
  vf_t v = vf_sel(inf, z, xv);   /* s is the identity at +-inf: the terms at 0, then masked */
  vf_t g = vf_keep_k(vf_mul(vf_mul(yv, vf_sub(dyv, c->dot)), c->s), k);
  vf_t a = vf_max(vf_sub(c->r0, v), z), b = vf_max(vf_sub(v, c->r1), z);
  vf_t cc = vf_max(vf_sub(c->r2, v), z), d = vf_max(vf_sub(v, c->r3), z);
  vf_t lo = vf_sel(vf_gt(c->r0, v), c->t0, z), hi = vf_sel(vf_gt(v, c->r1), c->t1, z);
  vf_t qc = vf_mul(c->t2, cc), qd = vf_mul(c->t3, d);   /* t2, t3 doubled by the caller */
  vf_t ds = vf_add(vf_sub(vf_add(vf_sub(one, lo), hi), qc), qd);
  if (sums) {
    vf_t gm = vf_sel(inf, z, g);
    acc[0] = vf_fmadd(gm, lo, acc[0]);
    acc[1] = vf_fmadd(gm, hi, acc[1]);   /* negated at the end */
    acc[2] = vf_fmadd(gm, qc, acc[2]);
    acc[3] = vf_fmadd(gm, qd, acc[3]);   /* negated at the end */
    acc[4] = vf_fmadd(gm, a, acc[4]);
    acc[5] = vf_fmadd(gm, b, acc[5]);
    acc[6] = vf_fmadd(vf_mul(gm, cc), cc, acc[6]);
    acc[7] = vf_fmadd(vf_mul(gm, d), d, acc[7]);
  }
  return vf_sel(inf, z, vf_mul(g, ds));
}

/* the parameter sums: float lanes flushed into double every VN_FLUSH
 * entries, on a schedule that depends only on the index in the row */
typedef struct vn_mm_sum { vf_t acc[8]; vd_t d[16]; size_t f; } vn_mm_sum;

SMX_INLINE void mm_bwd_run(size_t n, const float *x, const float *y, const float *dy, float *dx, const vn_mm *c,
                           vn_mm_sum *sm, int sums) {
  size_t i = 0;
  for (; i + VF_W <= n; i += VF_W) {
    vf_st(dx + i, mm_vec(c, vf_ld(x + i), vf_ld(y + i), vf_ld(dy + i), kf_full(), sm->acc, sums));
    if (sums && ++sm->f == VN_FLUSH / VF_W) {
      for (int q = 0; q < 8; q++) vn_flush(&sm->acc[q], &sm->d[2 * q], &sm->d[2 * q + 1]);
      sm->f = 0;
    }
  }
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_st_k(dx + i, k, mm_vec(c, vf_ldz_k(x + i, k), vf_ldz_k(y + i, k), vf_ldz_k(dy + i, k), k, sm->acc, sums));
  }
}

/* dst = src with non-temporal stores where dst is vector-aligned */
SMX_INLINE void vn_copy_nt(float *dst, const float *src, size_t n) {
  size_t h = vn_head(dst, n), i = h;
  if (h) vf_st_k(dst, kf_tail(h), vf_ldz_k(src, kf_tail(h)));
  for (; i + VF_W <= n; i += VF_W) vf_st_nt(dst + i, vf_ld(src + i));
  if (i < n) vf_st_k(dst + i, kf_tail(n - i), vf_ldz_k(src + i, kf_tail(n - i)));
}

/* streamed rows go through an L1 block, so that the sums' lanes are the same
 * with and without streaming (a multiple of VN_FLUSH) */
#define VN_MM_BLOCK 1024

SMX_INLINE void mm_bwd_all(size_t n, const float *x, const float *y, const float *dy, float *dx, const vn_mm *c,
                           vn_mm_sum *sm, int sums, int stream) {
  if (!stream) { mm_bwd_run(n, x, y, dy, dx, c, sm, sums); return; }
  float tmp[VN_MM_BLOCK];
  for (size_t i = 0; i < n; i += VN_MM_BLOCK) {
    size_t len = n - i < VN_MM_BLOCK ? n - i : VN_MM_BLOCK;
    mm_bwd_run(len, x + i, y + i, dy + i, tmp, c, sm, sums);
    vn_copy_nt(dx + i, tmp, len);
  }
  smx_sfence();
}

static void mm_bwd_k(size_t n, const float *x, const float *y, const float *dy, float *dx, float dot, float s,
                     const float p[8], double *pg, int stream) {
  vn_mm c = { vf_set1(p[0]), vf_set1(p[1]), vf_set1(p[2]), vf_set1(p[3]), vf_set1(p[4]), vf_set1(p[5]),
              vf_set1(2.0f * p[6]), vf_set1(2.0f * p[7]), vf_set1(dot), vf_set1(s) };
  vn_mm_sum sm;
  for (int q = 0; q < 8; q++) sm.acc[q] = vf_zero();
  for (int q = 0; q < 16; q++) sm.d[q] = vd_set1(0.0);
  sm.f = 0;
  if (pg) mm_bwd_all(n, x, y, dy, dx, &c, &sm, 1, stream);
  else mm_bwd_all(n, x, y, dy, dx, &c, &sm, 0, stream);
  if (!pg) return;
  for (int q = 0; q < 8; q++) vn_flush(&sm.acc[q], &sm.d[2 * q], &sm.d[2 * q + 1]);
  for (int q = 0; q < 8; q++) pg[q] = (q == 1 || q == 3 ? -1.0 : 1.0) * vn_total(sm.d[2 * q], sm.d[2 * q + 1]);
}

const smx_vnorm_ukernels SMX_VNORM_TABLE = {
  SMX_SIMD_ISA, softpick_exp_k, softpick_out_k, softpick_dot_k, softpick_bwd_k, softplus_k, softplus_bwd_k,
  sa_out_k,     sa_dot_k,       sa_bwd_k,       softpick_stats_k, softpick_outx_k, sig_bwd_k,
  softplus_sig_k, sig_scale_k, sa_bexp_k, sa_bwde_k, sa_stats_k, mm_bwd_k,
};
