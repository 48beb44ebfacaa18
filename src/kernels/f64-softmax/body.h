/*
 * The f64 softmax kernels, written once over the vector layer. Included
 * (once) by each per-ISA file (avx2.c, avx512.c), which first includes its
 * src/simd/<isa>.h and defines SMX_F64_TABLE, the table's name; compiled
 * only with that file's ISA flags. The ISA name comes from the layer.
 *
 * Exponentials are math/vexp_f64.h. Sums: Knuth two-sum per lane (value,
 * error), reduced lane by lane in a fixed order as double-doubles.
 */
#include <float.h>
#include <math.h>

#include "math/vexp_f64.h"
#include "math/reduce_state_f64.h"

/* (*s, *e) += t, Knuth's two-sum per lane */
SMX_INLINE void acc_add(vd_t *s, vd_t *e, vd_t t) {
  vd_t s2 = vd_add(*s, t);
  vd_t bp = vd_sub(s2, *s);
  vd_t err = vd_add(vd_sub(*s, vd_sub(s2, bp)), vd_sub(t, bp));
  *s = s2;
  *e = vd_add(*e, err);
}

/* (*s, *e) += t by Dekker's fast two-sum, exact when *s >= t >= 0: the
 * three-pass sums start at a bias of 2 (every term is at most 1), so that
 * holds throughout, and the bias is taken off exactly at the end. */
#define SMX_F64_BIAS 2.0
SMX_INLINE void acc_add_biased(vd_t *s, vd_t *e, vd_t t) {
  vd_t s2 = vd_add(*s, t);
  *e = vd_add(*e, vd_sub(t, vd_sub(s2, *s)));
  *s = s2;
}

/* The lanes of two (sum, error) pairs as one double-double, in lane order. */
SMX_INLINE smx_dd lanes_dd(vd_t s0, vd_t e0, vd_t s1, vd_t e1) {
  double a[VD_W], b[VD_W], c[VD_W], d[VD_W];
  vd_st(a, s0);
  vd_st(b, e0);
  vd_st(c, s1);
  vd_st(d, e1);
  smx_dd r = { 0.0, 0.0 };
  for (int l = 0; l < VD_W; l++) {
    smx_dd t = { a[l], b[l] }, u = { c[l], d[l] };
    r = smx_dd_add(r, smx_dd_add(t, u));
  }
  return r;
}

/* Output stores: non-temporal for streamed rows (y aligned by stream_head). */
SMX_INLINE void store_out(int stream, double *p, vd_t v) {
  if (stream) vd_st_nt(p, v);
  else vd_st(p, v);
}

/* Elements before y reaches a vector boundary (stored the ordinary way). */
SMX_INLINE size_t stream_head(const double *y, size_t n) {
  size_t h = ((VD_W * 8 - ((uintptr_t)y & (VD_W * 8 - 1))) & (VD_W * 8 - 1)) / 8;
  return h < n ? h : n;
}

/* Streaming is used only when y is 8-byte aligned (so that it can reach a vector boundary). */
SMX_INLINE int stream_ok(int stream, const double *y) { return stream && !((uintptr_t)y & 7); }

static double rmax_k(size_t n, const double *x) {
  const vd_t ninf = vd_set1(-INFINITY);
  vd_t m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  size_t i = 0;
  /* max(x, acc) returns acc when x is NaN: NaN entries are skipped */
  for (; i + 4 * VD_W <= n; i += 4 * VD_W) {
    m0 = vd_max(vd_ld(x + i), m0);
    m1 = vd_max(vd_ld(x + i + VD_W), m1);
    m2 = vd_max(vd_ld(x + i + 2 * VD_W), m2);
    m3 = vd_max(vd_ld(x + i + 3 * VD_W), m3);
  }
  for (; i + VD_W <= n; i += VD_W) m0 = vd_max(vd_ld(x + i), m0);
  if (i < n) m1 = vd_max(vd_ld_part(x + i, n - i, -INFINITY), m1);
  return vd_reduce_max(vd_max(vd_max(m0, m1), vd_max(m2, m3)));
}

SMX_INLINE smx_dd raddexp_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, int store) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const vd_t vm = vd_set1(m), z = vd_set1(0.0), bias = vd_set1(SMX_F64_BIAS);
  vd_t s0 = bias, e0 = z, s1 = bias, e1 = z;
  size_t i = 0;
  for (; i + 4 * VD_W <= n; i += 4 * VD_W) {
    vd_t t0 = vexpd_neg(vd_sub(vd_ld(x + i), vm), cv), t1 = vexpd_neg(vd_sub(vd_ld(x + i + VD_W), vm), cv);
    vd_t t2 = vexpd_neg(vd_sub(vd_ld(x + i + 2 * VD_W), vm), cv), t3 = vexpd_neg(vd_sub(vd_ld(x + i + 3 * VD_W), vm), cv);
    if (store) {
      vd_st(y + i, t0);
      vd_st(y + i + VD_W, t1);
      vd_st(y + i + 2 * VD_W, t2);
      vd_st(y + i + 3 * VD_W, t3);
    }
    acc_add_biased(&s0, &e0, t0);
    acc_add_biased(&s1, &e1, t1);
    acc_add_biased(&s0, &e0, t2);
    acc_add_biased(&s1, &e1, t3);
  }
  for (; i < n; i += VD_W) {
    size_t k = n - i < VD_W ? n - i : VD_W;
    vd_t xv = k == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, k, -INFINITY);
    vd_t t = vexpd_neg(vd_sub(xv, vm), cv);
    if (store) {
      if (k == VD_W) vd_st(y + i, t);
      else vd_st_part(y + i, k, t);
    }
    acc_add_biased(&s0, &e0, t);
  }
  smx_dd r = lanes_dd(s0, e0, s1, e1);
  smx_dd unbias = { -2.0 * VD_W * SMX_F64_BIAS, 0.0 };
  return smx_dd_add(r, unbias);
}

static smx_dd raddstoreexp_k(size_t n, const double *x, double *y, double m, const smx_expcd *c) {
  return y ? raddexp_impl(n, x, y, m, c, 1) : raddexp_impl(n, x, NULL, m, c, 0);
}

SMX_INLINE void vscale_impl(size_t n, const double *x, double *y, double s, int stream) {
  const vd_t vs = vd_set1(s);
  size_t i = 0;
  for (; i + 4 * VD_W <= n; i += 4 * VD_W) {
    vd_t a0 = vd_mul(vd_ld(x + i), vs), a1 = vd_mul(vd_ld(x + i + VD_W), vs);
    vd_t a2 = vd_mul(vd_ld(x + i + 2 * VD_W), vs), a3 = vd_mul(vd_ld(x + i + 3 * VD_W), vs);
    store_out(stream, y + i, a0);
    store_out(stream, y + i + VD_W, a1);
    store_out(stream, y + i + 2 * VD_W, a2);
    store_out(stream, y + i + 3 * VD_W, a3);
  }
  for (; i + VD_W <= n; i += VD_W) store_out(stream, y + i, vd_mul(vd_ld(x + i), vs));
  if (i < n) vd_st_part(y + i, n - i, vd_mul(vd_ld_part(x + i, n - i, 0.0), vs));
}

static void vscale_k(size_t n, const double *x, double *y, double s, int stream) {
  if (!stream_ok(stream, y)) { vscale_impl(n, x, y, s, 0); return; }
  size_t h = stream_head(y, n);
  vscale_impl(h, x, y, s, 0);
  vscale_impl(n - h, x + h, y + h, s, 1);
  smx_sfence();
}

SMX_INLINE void vscaleexp_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s,
                               int stream) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const vd_t vm = vd_set1(m), vs = vd_set1(s);
  size_t i = 0;
  for (; i + 2 * VD_W <= n; i += 2 * VD_W) {
    vd_t t0 = vexpd_neg(vd_sub(vd_ld(x + i), vm), cv), t1 = vexpd_neg(vd_sub(vd_ld(x + i + VD_W), vm), cv);
    store_out(stream, y + i, vd_mul(t0, vs));
    store_out(stream, y + i + VD_W, vd_mul(t1, vs));
  }
  for (; i < n; i += VD_W) {
    size_t k = n - i < VD_W ? n - i : VD_W;
    vd_t xv = k == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, k, -INFINITY);
    vd_t t = vd_mul(vexpd_neg(vd_sub(xv, vm), cv), vs);
    if (k == VD_W) store_out(stream, y + i, t);
    else vd_st_part(y + i, k, t);
  }
}

static void vscaleexp_k(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s, int stream) {
  if (!stream_ok(stream, y)) { vscaleexp_impl(n, x, y, m, c, s, 0); return; }
  size_t h = stream_head(y, n);
  vscaleexp_impl(h, x, y, m, c, s, 0);
  vscaleexp_impl(n - h, x + h, y + h, m, c, s, 1);
  smx_sfence();
}

/* One online step over block maxima bm (>= m, from a NaN-skipping chain),
 * lane by lane as smx_online_dd_merge (reduce_state_f64.h): lanes whose max
 * rose by more than 1/c move their reference to m + k/c, k an integer, and
 * scale their sums by 2^-k exactly with the tiny rest of the factor put in
 * the error word, so rescales never compound; a lane too far behind (or
 * whose m is too large for m + k/c to be near) takes bm and an ordinary
 * exponential factor. */
SMX_INLINE void online_rescale(vd_t bm, vd_t *m, vd_t *s0, vd_t *e0, vd_t *s1, vd_t *e1, vexpd_c cv) {
  const vd_t one = vd_set1(1.0), z = vd_set1(0.0);
  vd_t gap = vd_mul(vd_sub(bm, *m), cv.hi);
  md_t up = vd_gt(gap, one);
  if (!md_any(up)) return;
  vd_t k = vd_ceil(vd_min(gap, vd_set1(1000.0)));   /* NaN-free: min returns 1000 for NaN gap */
  vd_t mn = vd_add(*m, vd_mul(k, cv.invc));
  vd_t dh = vd_sub(mn, *m);
  vd_t bp = vd_sub(dh, mn);
  vd_t dl = vd_add(vd_sub(mn, vd_sub(dh, bp)), vd_sub(vd_sub(z, *m), bp));
  vd_t delta = vd_sub(vd_fnmadd(dh, cv.hi, k), vd_fmadd(dh, cv.lo, vd_mul(dl, cv.hi)));
  vd_t adelta = vd_max(delta, vd_sub(z, delta));
  md_t exact = md_and(md_and(up, vd_gt(vd_set1(1000.5), gap)), vd_gt(vd_set1(0x1p-30), adelta));
  vd_t f = vd_sel(exact, vd_scale2(one, vd_sub(z, k)), vd_sel(up, vexpd_diff(*m, bm, cv), one));
  vd_t corr = vd_sel(exact, vd_mul(delta, vd_set1(SMX_LN2_HI)), z);
  *m = vd_sel(exact, mn, vd_sel(up, bm, *m));
  *s0 = vd_mul(*s0, f);
  *e0 = vd_fmadd(*s0, corr, vd_mul(*e0, f));
  *s1 = vd_mul(*s1, f);
  *e1 = vd_fmadd(*s1, corr, vd_mul(*e1, f));
}

static smx_online_dd ronline_k(size_t n, const double *x, const smx_expcd *c) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const vd_t z = vd_set1(0.0);
  /* -DBL_MAX, not -inf: x - m stays defined (-inf entries give -inf, then +0) */
  vd_t m = vd_set1(-DBL_MAX), s0 = z, e0 = z, s1 = z, e1 = z;
  size_t i = 0;
  for (; i + 4 * VD_W <= n; i += 4 * VD_W) {
    vd_t x0 = vd_ld(x + i), x1 = vd_ld(x + i + VD_W), x2 = vd_ld(x + i + 2 * VD_W), x3 = vd_ld(x + i + 3 * VD_W);
    /* a chain from m, which is never NaN: NaN entries are skipped */
    vd_t bm = vd_max(x0, vd_max(x1, vd_max(x2, vd_max(x3, m))));
    online_rescale(bm, &m, &s0, &e0, &s1, &e1, cv);
    acc_add(&s0, &e0, vexpd_neg(vd_sub(x0, m), cv));
    acc_add(&s1, &e1, vexpd_neg(vd_sub(x1, m), cv));
    acc_add(&s0, &e0, vexpd_neg(vd_sub(x2, m), cv));
    acc_add(&s1, &e1, vexpd_neg(vd_sub(x3, m), cv));
  }
  for (; i < n; i += VD_W) {
    size_t k = n - i < VD_W ? n - i : VD_W;
    vd_t xv = k == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, k, -INFINITY);
    online_rescale(vd_max(xv, m), &m, &s0, &e0, &s1, &e1, cv);
    acc_add(&s0, &e0, vexpd_neg(vd_sub(xv, m), cv));
  }
  /* lanes merged in order, each lane's two pairs first */
  double ml[VD_W], a[VD_W], b[VD_W], cc[VD_W], d[VD_W];
  vd_st(ml, m);
  vd_st(a, s0);
  vd_st(b, e0);
  vd_st(cc, s1);
  vd_st(d, e1);
  smx_online_dd st = smx_online_dd_identity();
  for (int l = 0; l < VD_W; l++) {
    smx_dd t = { a[l], b[l] }, u = { cc[l], d[l] };
    smx_online_dd ls = { ml[l], smx_dd_add(t, u) };
    st = smx_online_dd_merge(st, ls, c->hi, c->lo);
  }
  return st;
}

/* Two-pass: x clamped so that |x c| <= 2^41 (n exact, x lo tiny); a clamped
 * entry is either negligible or makes e leave the window (three-pass then). */
typedef struct xclamp { vd_t lo, hi; } xclamp;

SMX_INLINE xclamp xclamp_load(const smx_expcd *c) {
  xclamp k = { vd_set1(-0x1p40 / c->hi), vd_set1(0x1p41 / c->hi) };
  return k;
}

SMX_INLINE vd_t ext_split(vd_t xv, xclamp xl, vexpd_c cv, vd_t *n) {
  xv = vd_min(xl.hi, vd_max(xl.lo, xv));   /* NaN is kept by both */
  return vexp2d_poly11(vexpd_split(xv, cv, n));
}

static smx_ext_dd raddextexp_k(size_t n, const double *x, const smx_expcd *c) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const xclamp xl = xclamp_load(c);
  const vd_t z = vd_set1(0.0), one = vd_set1(1.0);
  vd_t e = vd_set1(-0x1p42), s0 = z, e0 = z, s1 = z, e1 = z;
  size_t i = 0;
  for (; i < n; i += 4 * VD_W) {
    vd_t xv[4], p[4], k[4];
    int nv = 0;
    for (; nv < 4 && i + (size_t)nv * VD_W < n; nv++) {
      size_t o = i + (size_t)nv * VD_W, cnt = n - o < VD_W ? n - o : VD_W;
      xv[nv] = cnt == VD_W ? vd_ld(x + o) : vd_ld_part(x + o, cnt, -INFINITY);
      p[nv] = ext_split(xv[nv], xl, cv, &k[nv]);
    }
    vd_t bn = e;
    for (int j = 0; j < nv; j++) bn = vd_max(k[j], bn);   /* NaN skipped; its p is NaN */
    md_t up = vd_gt(bn, e);
    if (md_any(up)) {
      vd_t f = vd_scale2(one, vd_sub(e, bn));   /* exact powers of two (or 0) */
      s0 = vd_mul(s0, f);
      e0 = vd_mul(e0, f);
      s1 = vd_mul(s1, f);
      e1 = vd_mul(e1, f);
      e = bn;
    }
    for (int j = 0; j < nv; j++) {
      vd_t t = vd_scale2(p[j], vd_sub(k[j], e));
      if (j & 1) acc_add(&s1, &e1, t);
      else acc_add(&s0, &e0, t);
    }
  }
  double el[VD_W], a[VD_W], b[VD_W], cc[VD_W], d[VD_W];
  vd_st(el, e);
  vd_st(a, s0);
  vd_st(b, e0);
  vd_st(cc, s1);
  vd_st(d, e1);
  smx_ext_dd st = smx_ext_dd_identity();
  for (int l = 0; l < VD_W; l++) {
    smx_dd t = { a[l], b[l] }, u = { cc[l], d[l] };
    smx_ext_dd ls = { smx_dd_add(t, u), el[l] };
    st = smx_ext_dd_merge(st, ls);
  }
  return st;
}

SMX_INLINE void vscaleextexp_impl(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v,
                                  double e, int stream) {
  const vexpd_c cv = vexpd_c_set(c->hi, c->lo);
  const xclamp xl = xclamp_load(c);
  const vd_t vi = vd_set1(inv_v), ve = vd_set1(e);
  size_t i = 0;
  for (; i + 2 * VD_W <= n; i += 2 * VD_W) {
    vd_t k0, k1;
    vd_t p0 = ext_split(vd_ld(x + i), xl, cv, &k0), p1 = ext_split(vd_ld(x + i + VD_W), xl, cv, &k1);
    store_out(stream, y + i, vd_scale2(vd_mul(p0, vi), vd_sub(k0, ve)));
    store_out(stream, y + i + VD_W, vd_scale2(vd_mul(p1, vi), vd_sub(k1, ve)));
  }
  for (; i < n; i += VD_W) {
    size_t cnt = n - i < VD_W ? n - i : VD_W;
    vd_t k;
    vd_t p = ext_split(cnt == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, cnt, -INFINITY), xl, cv, &k);
    vd_t t = vd_scale2(vd_mul(p, vi), vd_sub(k, ve));
    if (cnt == VD_W) store_out(stream, y + i, t);
    else vd_st_part(y + i, cnt, t);
  }
}

static void vscaleextexp_k(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v, double e,
                           int stream) {
  if (!stream_ok(stream, y)) { vscaleextexp_impl(n, x, y, c, inv_v, e, 0); return; }
  size_t h = stream_head(y, n);
  vscaleextexp_impl(h, x, y, c, inv_v, e, 0);
  vscaleextexp_impl(n - h, x + h, y + h, c, inv_v, e, 1);
  smx_sfence();
}

/* (x - m)/T - off; where x - m overflows (a row spanning more than DBL_MAX),
 * the halves' difference times 2/T */
SMX_INLINE vd_t logsub1(vd_t xv, vd_t vm, vd_t vs, vd_t voff) {
  vd_t a = vd_sub(xv, vm);
  vd_t t = vd_mul(a, vs);
  const vd_t ninf = vd_set1(-INFINITY), half = vd_set1(0.5);
  md_t over = md_andnot(vd_eq(xv, ninf), vd_eq(a, ninf));
  vd_t t2 = vd_mul(vd_mul(vd_sub(vd_mul(xv, half), vd_mul(vm, half)), vs), vd_set1(2.0));
  return vd_sub(vd_sel(over, t2, t), voff);
}

SMX_INLINE void vlogsub_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off,
                             int stream) {
  const vd_t vm = vd_set1(m), vs = vd_set1(c->inv_t), voff = vd_set1(off);
  size_t i = 0;
  for (; i + 2 * VD_W <= n; i += 2 * VD_W) {
    store_out(stream, y + i, logsub1(vd_ld(x + i), vm, vs, voff));
    store_out(stream, y + i + VD_W, logsub1(vd_ld(x + i + VD_W), vm, vs, voff));
  }
  for (; i < n; i += VD_W) {
    size_t k = n - i < VD_W ? n - i : VD_W;
    vd_t t = logsub1(k == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, k, 0.0), vm, vs, voff);
    if (k == VD_W) store_out(stream, y + i, t);
    else vd_st_part(y + i, k, t);
  }
}

static void vlogsub_k(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off, int stream) {
  if (!stream_ok(stream, y)) { vlogsub_impl(n, x, y, m, c, off, 0); return; }
  size_t h = stream_head(y, n);
  vlogsub_impl(h, x, y, m, c, off, 0);
  vlogsub_impl(n - h, x + h, y + h, m, c, off, 1);
  smx_sfence();
}

const smx_f64_ukernels SMX_F64_TABLE = {
  SMX_SIMD_ISA,
  rmax_k,
  raddstoreexp_k,
  vscale_k,
  vscaleexp_k,
  ronline_k,
  raddextexp_k,
  vscaleextexp_k,
  vlogsub_k,
};
