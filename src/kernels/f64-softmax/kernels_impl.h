/*
 * The f64 kernels, written once over a small vector layer. Included (once)
 * by avx2.c and avx512.c, each of which first defines: the vector type V
 * with W lanes, its mask type M, the v_* operations and the names
 * SMX_F64_TABLE and SMX_F64_ISA_NAME. Compiled only with that file's ISA
 * flags.
 *
 * exp(a/T) = 2^(a c): n = round(a hi), r = (a hi - n, one FMA, exact before
 * its rounding) + a lo, 2^r by the degree-11 polynomial of math/exp2_poly.h
 * (Horner with FMAs), 2^n by v_scale2 (rounded once, subnormals included).
 * Sums: Knuth two-sum per lane (value, error), reduced lane by lane in a
 * fixed order as double-doubles.
 */
#include <float.h>
#include <math.h>

#include "math/exp2_poly.h"
#include "runtime/reduce_state_f64.h"

/* a c below this gives +0 (2^-1090 rounds to zero) */
#define SMX_F64_ZMIN (-1090.0)

typedef struct cvec { V hi, lo, amin, invc; } cvec;

SMX_INLINE cvec cvec_load(const smx_expcd *c) {
  cvec v = { v_set1(c->hi), v_set1(c->lo), v_set1(SMX_F64_ZMIN / c->hi), v_set1(1.0 / c->hi) };
  return v;
}

/* 2^r for |r| <= 0.5005 (math/exp2_poly.h) */
SMX_INLINE V exp2_poly11(V r) {
  V p = v_set1(SMX_EXP2D11_C11);
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C10));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C9));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C8));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C7));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C6));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C5));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C4));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C3));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C2));
  p = v_fmadd(p, r, v_set1(SMX_EXP2D11_C1));
  return v_fmadd(p, r, v_set1(1.0));
}

/* a (hi + lo) = n + r */
SMX_INLINE V split(V a, cvec c, V *n) {
  *n = v_round(v_mul(a, c.hi));
  return v_fmadd(a, c.lo, v_fmsub(a, c.hi, *n));
}

/* 2^(a c) for a c <= 2; below ZMIN (and -inf) +0; NaN stays NaN */
SMX_INLINE V exp_neg(V a, cvec c) {
  a = v_max(c.amin, a);   /* the second operand is returned for NaN: NaN is kept */
  V n;
  V r = split(a, c, &n);
  return v_scale2(exp2_poly11(r), n);
}

/* 2^((a - b) c) with a - b formed exactly (two-sum), for a <= b */
SMX_INLINE V exp_diff(V a, V b, cvec c) {
  V dh = v_sub(a, b);
  V bp = v_sub(dh, a);
  V dl = v_add(v_sub(a, v_sub(dh, bp)), v_sub(v_sub(v_set1(0.0), b), bp));
  M low = v_gt(c.amin, dh);
  dh = v_max(c.amin, dh);
  dl = v_sel(low, v_set1(0.0), dl);
  V n = v_round(v_mul(dh, c.hi));
  V r = v_add(v_fmsub(dh, c.hi, n), v_fmadd(dh, c.lo, v_mul(dl, c.hi)));
  return v_scale2(exp2_poly11(r), n);
}

/* (*s, *e) += t, Knuth's two-sum per lane */
SMX_INLINE void acc_add(V *s, V *e, V t) {
  V s2 = v_add(*s, t);
  V bp = v_sub(s2, *s);
  V err = v_add(v_sub(*s, v_sub(s2, bp)), v_sub(t, bp));
  *s = s2;
  *e = v_add(*e, err);
}

/* (*s, *e) += t by Dekker's fast two-sum, exact when *s >= t >= 0: the
 * three-pass sums start at a bias of 2 (every term is at most 1), so that
 * holds throughout, and the bias is taken off exactly at the end. */
#define SMX_F64_BIAS 2.0
SMX_INLINE void acc_add_biased(V *s, V *e, V t) {
  V s2 = v_add(*s, t);
  *e = v_add(*e, v_sub(t, v_sub(s2, *s)));
  *s = s2;
}

/* The lanes of two (sum, error) pairs as one double-double, in lane order. */
SMX_INLINE smx_dd lanes_dd(V s0, V e0, V s1, V e1) {
  double a[W], b[W], c[W], d[W];
  v_st(a, s0);
  v_st(b, e0);
  v_st(c, s1);
  v_st(d, e1);
  smx_dd r = { 0.0, 0.0 };
  for (int l = 0; l < W; l++) {
    smx_dd t = { a[l], b[l] }, u = { c[l], d[l] };
    r = smx_dd_add(r, smx_dd_add(t, u));
  }
  return r;
}

/* Output stores: non-temporal for streamed rows (y aligned by stream_head). */
SMX_INLINE void store_out(int stream, double *p, V v) {
  if (stream) v_st_nt(p, v);
  else v_st(p, v);
}

/* Elements before y reaches a vector boundary (stored the ordinary way). */
SMX_INLINE size_t stream_head(const double *y, size_t n) {
  size_t h = ((W * 8 - ((uintptr_t)y & (W * 8 - 1))) & (W * 8 - 1)) / 8;
  return h < n ? h : n;
}

/* Streaming is used only when y is 8-byte aligned (so that it can reach a vector boundary). */
SMX_INLINE int stream_ok(int stream, const double *y) { return stream && !((uintptr_t)y & 7); }

static double rmax_k(size_t n, const double *x) {
  const V ninf = v_set1(-INFINITY);
  V m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  size_t i = 0;
  /* max(x, acc) returns acc when x is NaN: NaN entries are skipped */
  for (; i + 4 * W <= n; i += 4 * W) {
    m0 = v_max(v_ld(x + i), m0);
    m1 = v_max(v_ld(x + i + W), m1);
    m2 = v_max(v_ld(x + i + 2 * W), m2);
    m3 = v_max(v_ld(x + i + 3 * W), m3);
  }
  for (; i + W <= n; i += W) m0 = v_max(v_ld(x + i), m0);
  if (i < n) m1 = v_max(v_ld_part(x + i, n - i, -INFINITY), m1);
  return v_reduce_max(v_max(v_max(m0, m1), v_max(m2, m3)));
}

SMX_INLINE smx_dd raddexp_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, int store) {
  const cvec cv = cvec_load(c);
  const V vm = v_set1(m), z = v_set1(0.0), bias = v_set1(SMX_F64_BIAS);
  V s0 = bias, e0 = z, s1 = bias, e1 = z;
  size_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V t0 = exp_neg(v_sub(v_ld(x + i), vm), cv), t1 = exp_neg(v_sub(v_ld(x + i + W), vm), cv);
    V t2 = exp_neg(v_sub(v_ld(x + i + 2 * W), vm), cv), t3 = exp_neg(v_sub(v_ld(x + i + 3 * W), vm), cv);
    if (store) {
      v_st(y + i, t0);
      v_st(y + i + W, t1);
      v_st(y + i + 2 * W, t2);
      v_st(y + i + 3 * W, t3);
    }
    acc_add_biased(&s0, &e0, t0);
    acc_add_biased(&s1, &e1, t1);
    acc_add_biased(&s0, &e0, t2);
    acc_add_biased(&s1, &e1, t3);
  }
  for (; i < n; i += W) {
    size_t k = n - i < W ? n - i : W;
    V xv = k == W ? v_ld(x + i) : v_ld_part(x + i, k, -INFINITY);
    V t = exp_neg(v_sub(xv, vm), cv);
    if (store) {
      if (k == W) v_st(y + i, t);
      else v_st_part(y + i, k, t);
    }
    acc_add_biased(&s0, &e0, t);
  }
  smx_dd r = lanes_dd(s0, e0, s1, e1);
  smx_dd unbias = { -2.0 * W * SMX_F64_BIAS, 0.0 };
  return smx_dd_add(r, unbias);
}

static smx_dd raddstoreexp_k(size_t n, const double *x, double *y, double m, const smx_expcd *c) {
  return y ? raddexp_impl(n, x, y, m, c, 1) : raddexp_impl(n, x, NULL, m, c, 0);
}

SMX_INLINE void vscale_impl(size_t n, const double *x, double *y, double s, int stream) {
  const V vs = v_set1(s);
  size_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V a0 = v_mul(v_ld(x + i), vs), a1 = v_mul(v_ld(x + i + W), vs);
    V a2 = v_mul(v_ld(x + i + 2 * W), vs), a3 = v_mul(v_ld(x + i + 3 * W), vs);
    store_out(stream, y + i, a0);
    store_out(stream, y + i + W, a1);
    store_out(stream, y + i + 2 * W, a2);
    store_out(stream, y + i + 3 * W, a3);
  }
  for (; i + W <= n; i += W) store_out(stream, y + i, v_mul(v_ld(x + i), vs));
  if (i < n) v_st_part(y + i, n - i, v_mul(v_ld_part(x + i, n - i, 0.0), vs));
}

static void vscale_k(size_t n, const double *x, double *y, double s, int stream) {
  if (!stream_ok(stream, y)) { vscale_impl(n, x, y, s, 0); return; }
  size_t h = stream_head(y, n);
  vscale_impl(h, x, y, s, 0);
  vscale_impl(n - h, x + h, y + h, s, 1);
  v_sfence();
}

SMX_INLINE void vscaleexp_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s,
                               int stream) {
  const cvec cv = cvec_load(c);
  const V vm = v_set1(m), vs = v_set1(s);
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    V t0 = exp_neg(v_sub(v_ld(x + i), vm), cv), t1 = exp_neg(v_sub(v_ld(x + i + W), vm), cv);
    store_out(stream, y + i, v_mul(t0, vs));
    store_out(stream, y + i + W, v_mul(t1, vs));
  }
  for (; i < n; i += W) {
    size_t k = n - i < W ? n - i : W;
    V xv = k == W ? v_ld(x + i) : v_ld_part(x + i, k, -INFINITY);
    V t = v_mul(exp_neg(v_sub(xv, vm), cv), vs);
    if (k == W) store_out(stream, y + i, t);
    else v_st_part(y + i, k, t);
  }
}

static void vscaleexp_k(size_t n, const double *x, double *y, double m, const smx_expcd *c, double s, int stream) {
  if (!stream_ok(stream, y)) { vscaleexp_impl(n, x, y, m, c, s, 0); return; }
  size_t h = stream_head(y, n);
  vscaleexp_impl(h, x, y, m, c, s, 0);
  vscaleexp_impl(n - h, x + h, y + h, m, c, s, 1);
  v_sfence();
}

/* One online step over block maxima bm (>= m, from a NaN-skipping chain),
 * lane by lane as smx_online_dd_merge (reduce_state_f64.h): lanes whose max
 * rose by more than 1/c move their reference to m + k/c, k an integer, and
 * scale their sums by 2^-k exactly with the tiny rest of the factor put in
 * the error word, so rescales never compound; a lane too far behind (or
 * whose m is too large for m + k/c to be near) takes bm and an ordinary
 * exponential factor. */
SMX_INLINE void online_rescale(V bm, V *m, V *s0, V *e0, V *s1, V *e1, cvec cv) {
  const V one = v_set1(1.0), z = v_set1(0.0);
  V gap = v_mul(v_sub(bm, *m), cv.hi);
  M up = v_gt(gap, one);
  if (!m_any(up)) return;
  V k = v_ceil(v_min(gap, v_set1(1000.0)));   /* NaN-free: min returns 1000 for NaN gap */
  V mn = v_add(*m, v_mul(k, cv.invc));
  V dh = v_sub(mn, *m);
  V bp = v_sub(dh, mn);
  V dl = v_add(v_sub(mn, v_sub(dh, bp)), v_sub(v_sub(z, *m), bp));
  V delta = v_sub(v_fnmadd(dh, cv.hi, k), v_fmadd(dh, cv.lo, v_mul(dl, cv.hi)));
  V adelta = v_max(delta, v_sub(z, delta));
  M exact = m_and(m_and(up, v_gt(v_set1(1000.5), gap)), v_gt(v_set1(0x1p-30), adelta));
  V f = v_sel(exact, v_scale2(one, v_sub(z, k)), v_sel(up, exp_diff(*m, bm, cv), one));
  V corr = v_sel(exact, v_mul(delta, v_set1(SMX_LN2_HI)), z);
  *m = v_sel(exact, mn, v_sel(up, bm, *m));
  *s0 = v_mul(*s0, f);
  *e0 = v_fmadd(*s0, corr, v_mul(*e0, f));
  *s1 = v_mul(*s1, f);
  *e1 = v_fmadd(*s1, corr, v_mul(*e1, f));
}

static smx_online_dd ronline_k(size_t n, const double *x, const smx_expcd *c) {
  const cvec cv = cvec_load(c);
  const V z = v_set1(0.0);
  /* -DBL_MAX, not -inf: x - m stays defined (-inf entries give -inf, then +0) */
  V m = v_set1(-DBL_MAX), s0 = z, e0 = z, s1 = z, e1 = z;
  size_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V x0 = v_ld(x + i), x1 = v_ld(x + i + W), x2 = v_ld(x + i + 2 * W), x3 = v_ld(x + i + 3 * W);
    /* a chain from m, which is never NaN: NaN entries are skipped */
    V bm = v_max(x0, v_max(x1, v_max(x2, v_max(x3, m))));
    online_rescale(bm, &m, &s0, &e0, &s1, &e1, cv);
    acc_add(&s0, &e0, exp_neg(v_sub(x0, m), cv));
    acc_add(&s1, &e1, exp_neg(v_sub(x1, m), cv));
    acc_add(&s0, &e0, exp_neg(v_sub(x2, m), cv));
    acc_add(&s1, &e1, exp_neg(v_sub(x3, m), cv));
  }
  for (; i < n; i += W) {
    size_t k = n - i < W ? n - i : W;
    V xv = k == W ? v_ld(x + i) : v_ld_part(x + i, k, -INFINITY);
    online_rescale(v_max(xv, m), &m, &s0, &e0, &s1, &e1, cv);
    acc_add(&s0, &e0, exp_neg(v_sub(xv, m), cv));
  }
  /* lanes merged in order, each lane's two pairs first */
  double ml[W], a[W], b[W], cc[W], d[W];
  v_st(ml, m);
  v_st(a, s0);
  v_st(b, e0);
  v_st(cc, s1);
  v_st(d, e1);
  smx_online_dd st = smx_online_dd_identity();
  for (int l = 0; l < W; l++) {
    smx_dd t = { a[l], b[l] }, u = { cc[l], d[l] };
    smx_online_dd ls = { ml[l], smx_dd_add(t, u) };
    st = smx_online_dd_merge(st, ls, c->hi, c->lo);
  }
  return st;
}

/* Two-pass: x clamped so that |x c| <= 2^41 (n exact, x lo tiny); a clamped
 * entry is either negligible or makes e leave the window (three-pass then). */
typedef struct xclamp { V lo, hi; } xclamp;

SMX_INLINE xclamp xclamp_load(const smx_expcd *c) {
  xclamp k = { v_set1(-0x1p40 / c->hi), v_set1(0x1p41 / c->hi) };
  return k;
}

SMX_INLINE V ext_split(V xv, xclamp xl, cvec cv, V *n) {
  xv = v_min(xl.hi, v_max(xl.lo, xv));   /* NaN is kept by both */
  return exp2_poly11(split(xv, cv, n));
}

static smx_ext_dd raddextexp_k(size_t n, const double *x, const smx_expcd *c) {
  const cvec cv = cvec_load(c);
  const xclamp xl = xclamp_load(c);
  const V z = v_set1(0.0), one = v_set1(1.0);
  V e = v_set1(-0x1p42), s0 = z, e0 = z, s1 = z, e1 = z;
  size_t i = 0;
  for (; i < n; i += 4 * W) {
    V xv[4], p[4], k[4];
    int nv = 0;
    for (; nv < 4 && i + (size_t)nv * W < n; nv++) {
      size_t o = i + (size_t)nv * W, cnt = n - o < W ? n - o : W;
      xv[nv] = cnt == W ? v_ld(x + o) : v_ld_part(x + o, cnt, -INFINITY);
      p[nv] = ext_split(xv[nv], xl, cv, &k[nv]);
    }
    V bn = e;
    for (int j = 0; j < nv; j++) bn = v_max(k[j], bn);   /* NaN skipped; its p is NaN */
    M up = v_gt(bn, e);
    if (m_any(up)) {
      V f = v_scale2(one, v_sub(e, bn));   /* exact powers of two (or 0) */
      s0 = v_mul(s0, f);
      e0 = v_mul(e0, f);
      s1 = v_mul(s1, f);
      e1 = v_mul(e1, f);
      e = bn;
    }
    for (int j = 0; j < nv; j++) {
      V t = v_scale2(p[j], v_sub(k[j], e));
      if (j & 1) acc_add(&s1, &e1, t);
      else acc_add(&s0, &e0, t);
    }
  }
  double el[W], a[W], b[W], cc[W], d[W];
  v_st(el, e);
  v_st(a, s0);
  v_st(b, e0);
  v_st(cc, s1);
  v_st(d, e1);
  smx_ext_dd st = smx_ext_dd_identity();
  for (int l = 0; l < W; l++) {
    smx_dd t = { a[l], b[l] }, u = { cc[l], d[l] };
    smx_ext_dd ls = { smx_dd_add(t, u), el[l] };
    st = smx_ext_dd_merge(st, ls);
  }
  return st;
}

SMX_INLINE void vscaleextexp_impl(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v,
                                  double e, int stream) {
  const cvec cv = cvec_load(c);
  const xclamp xl = xclamp_load(c);
  const V vi = v_set1(inv_v), ve = v_set1(e);
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    V k0, k1;
    V p0 = ext_split(v_ld(x + i), xl, cv, &k0), p1 = ext_split(v_ld(x + i + W), xl, cv, &k1);
    store_out(stream, y + i, v_scale2(v_mul(p0, vi), v_sub(k0, ve)));
    store_out(stream, y + i + W, v_scale2(v_mul(p1, vi), v_sub(k1, ve)));
  }
  for (; i < n; i += W) {
    size_t cnt = n - i < W ? n - i : W;
    V k;
    V p = ext_split(cnt == W ? v_ld(x + i) : v_ld_part(x + i, cnt, -INFINITY), xl, cv, &k);
    V t = v_scale2(v_mul(p, vi), v_sub(k, ve));
    if (cnt == W) store_out(stream, y + i, t);
    else v_st_part(y + i, cnt, t);
  }
}

static void vscaleextexp_k(size_t n, const double *x, double *y, const smx_expcd *c, double inv_v, double e,
                           int stream) {
  if (!stream_ok(stream, y)) { vscaleextexp_impl(n, x, y, c, inv_v, e, 0); return; }
  size_t h = stream_head(y, n);
  vscaleextexp_impl(h, x, y, c, inv_v, e, 0);
  vscaleextexp_impl(n - h, x + h, y + h, c, inv_v, e, 1);
  v_sfence();
}

/* (x - m)/T - off; where x - m overflows (a row spanning more than DBL_MAX),
 * the halves' difference times 2/T */
SMX_INLINE V logsub1(V xv, V vm, V vs, V voff) {
  V a = v_sub(xv, vm);
  V t = v_mul(a, vs);
  const V ninf = v_set1(-INFINITY), half = v_set1(0.5);
  M over = m_andnot(v_eq(xv, ninf), v_eq(a, ninf));
  V t2 = v_mul(v_mul(v_sub(v_mul(xv, half), v_mul(vm, half)), vs), v_set1(2.0));
  return v_sub(v_sel(over, t2, t), voff);
}

SMX_INLINE void vlogsub_impl(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off,
                             int stream) {
  const V vm = v_set1(m), vs = v_set1(c->inv_t), voff = v_set1(off);
  size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    store_out(stream, y + i, logsub1(v_ld(x + i), vm, vs, voff));
    store_out(stream, y + i + W, logsub1(v_ld(x + i + W), vm, vs, voff));
  }
  for (; i < n; i += W) {
    size_t k = n - i < W ? n - i : W;
    V t = logsub1(k == W ? v_ld(x + i) : v_ld_part(x + i, k, 0.0), vm, vs, voff);
    if (k == W) store_out(stream, y + i, t);
    else v_st_part(y + i, k, t);
  }
}

static void vlogsub_k(size_t n, const double *x, double *y, double m, const smx_expcd *c, double off, int stream) {
  if (!stream_ok(stream, y)) { vlogsub_impl(n, x, y, m, c, off, 0); return; }
  size_t h = stream_head(y, n);
  vlogsub_impl(h, x, y, m, c, off, 0);
  vlogsub_impl(n - h, x + h, y + h, m, c, off, 1);
  v_sfence();
}

const smx_f64_ukernels SMX_F64_TABLE = {
  SMX_F64_ISA_NAME,
  rmax_k,
  raddstoreexp_k,
  vscale_k,
  vscaleexp_k,
  ronline_k,
  raddextexp_k,
  vscaleextexp_k,
  vlogsub_k,
};
