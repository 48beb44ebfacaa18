/*
 * The sparse-simplex kernels, written once over the vector layer. Included
 * (once) by each per-ISA file, which first includes its src/simd/<isa>.h and
 * defines SMX_SPARSE_TABLE, the table's name. Every lane is independent, and
 * the sums run in a fixed order (lanes, then blocks), so a row's result does
 * not depend on anything but the row.
 */
#include <math.h>
#include <stdint.h>

static size_t vselect_k(size_t n, const float *x, float thr, size_t *idx, int *nan, size_t cap) {
  const vf_t t = vf_set1(thr);
  size_t cnt = 0, i = 0;
  mf_t bad = mf_none();
  for (; i < n; i += VF_W) {
    size_t len = n - i >= VF_W ? VF_W : n - i;
    vf_t v = len == VF_W ? vf_ld(x + i) : vf_ld_k(x + i, kf_tail(len), t);
    bad = mf_or(bad, vf_unord(v, v));
    /* x >= thr is "not (thr > x)" except for NaN, which the mask above catches */
    mf_t ge = mf_or(vf_gt(v, t), vf_eq(v, t));
    if (!mf_any(ge)) continue;
    unsigned bits = mf_bits(ge) & (len == VF_W ? ~0u : (1u << len) - 1u);
    for (; bits; bits &= bits - 1u) idx[cnt++] = i + (size_t)__builtin_ctz(bits);
    if (cnt > cap) return cnt;
  }
  if (mf_any(bad)) *nan = 1;
  return cnt;
}

static size_t vselect_f64_k(size_t n, const double *x, double thr, size_t *idx, int *nan, size_t cap) {
  const vd_t t = vd_set1(thr);
  size_t cnt = 0;
  int bad = 0;
  for (size_t i = 0; i < n; i += VD_W) {
    size_t len = n - i >= VD_W ? VD_W : n - i;
    vd_t v = len == VD_W ? vd_ld(x + i) : vd_ld_part(x + i, len, -INFINITY);
    /* lanes that are not below thr: a candidate or a NaN; a block without one is skipped */
    if (!md_any(md_andnot(vd_gt(t, v), vd_eq(t, t)))) continue;
    for (size_t l = 0; l < len; l++) {
      double a = x[i + l];
      if (a >= thr) idx[cnt++] = i + l;
      else if (a != a) bad = 1;
    }
    if (cnt > cap) return cnt;
  }
  if (bad) *nan = 1;
  return cnt;
}

SMX_INLINE vf_t thresh_v(vf_t x, vf_t m, vf_t a, vf_t th, vf_t tl, int sq) {
  vf_t t = vf_max(vf_sub(vf_sub(vf_mul(vf_sub(x, m), a), th), tl), vf_zero());
  return sq ? vf_mul(t, t) : t;
}

static void vthresh_k(size_t n, const float *x, float *y, float m, float a, float th, float tl, int sq) {
  const vf_t vm = vf_set1(m), va = vf_set1(a), vh = vf_set1(th), vl = vf_set1(tl);
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t p = thresh_v(vf_ld(x + i), vm, va, vh, vl, sq), q = thresh_v(vf_ld(x + i + VF_W), vm, va, vh, vl, sq);
    vf_st(y + i, p);
    vf_st(y + i + VF_W, q);
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_st_k(y + i, k, thresh_v(vf_ldz_k(x + i, k), vm, va, vh, vl, sq));
  }
}

SMX_INLINE vd_t thresh_vd(vd_t x, vd_t m, vd_t a, vd_t th, int sq) {
  vd_t t = vd_max(vd_sub(vd_mul(vd_sub(x, m), a), th), vd_set1(0.0));
  return sq ? vd_mul(t, t) : t;
}

static void vthresh_f64_k(size_t n, const double *x, double *y, double m, double a, double th, int sq) {
  const vd_t vm = vd_set1(m), va = vd_set1(a), vh = vd_set1(th);
  size_t i = 0;
  for (; i + VD_W <= n; i += VD_W) vd_st(y + i, thresh_vd(vd_ld(x + i), vm, va, vh, sq));
  if (i < n) vd_st_part(y + i, n - i, thresh_vd(vd_ld_part(x + i, n - i, m), vm, va, vh, sq));
}

static void rnewton_k(size_t n, const float *x, float m, float a, float th, float tl, double *s) {
  const vf_t vm = vf_set1(m), va = vf_set1(a), vt = vf_set1(th), vl = vf_set1(tl), z = vf_zero(), one = vf_set1(1.0f);
  const vf_t ninf = vf_set1(-INFINITY);
  vd_t d0 = vd_set1(0.0), d1 = d0, d2 = d0;
  for (size_t b = 0; b < n; b += 1024) {
    size_t e = n - b > 1024 ? b + 1024 : n;
    vf_t c0 = z, c1 = z, c2 = z;
    for (size_t i = b; i < e; i += VF_W) {
      vf_t v = e - i >= VF_W ? vf_ld(x + i) : vf_ld_k(x + i, kf_tail(e - i), ninf);
      vf_t u = vf_sub(vf_sub(vf_mul(vf_sub(v, vm), va), vt), vl);
      mf_t on = vf_gt(u, z);
      u = vf_sel(on, u, z);
      c0 = vf_add(c0, vf_sel(on, one, z));
      c1 = vf_add(c1, u);
      c2 = vf_fmadd(u, u, c2);
    }
    d0 = vd_add(d0, vd_add(vf_lo_pd(c0), vf_hi_pd(c0)));
    d1 = vd_add(d1, vd_add(vf_lo_pd(c1), vf_hi_pd(c1)));
    d2 = vd_add(d2, vd_add(vf_lo_pd(c2), vf_hi_pd(c2)));
  }
  s[0] = vd_reduce_add(d0);
  s[1] = vd_reduce_add(d1);
  s[2] = vd_reduce_add(d2);
}

static void rnewton_f64_k(size_t n, const double *x, double m, double a, double t, double *s) {
  const vd_t vm = vd_set1(m), va = vd_set1(a), vt = vd_set1(t), z = vd_set1(0.0), one = vd_set1(1.0);
  vd_t c0 = z, c1 = z, c2 = z;
  for (size_t i = 0; i < n; i += VD_W) {
    vd_t v = n - i >= VD_W ? vd_ld(x + i) : vd_ld_part(x + i, n - i, -INFINITY);
    vd_t u = vd_sub(vd_mul(vd_sub(v, vm), va), vt);
    md_t on = vd_gt(u, z);
    u = vd_sel(on, u, z);
    c0 = vd_add(c0, vd_sel(on, one, z));
    c1 = vd_add(c1, u);
    c2 = vd_fmadd(u, u, c2);
  }
  s[0] = vd_reduce_add(c0);
  s[1] = vd_reduce_add(c1);
  s[2] = vd_reduce_add(c2);
}

static double rsupsum_k(size_t n, const float *y, const float *dy, size_t *count, int *nan) {
  const vf_t z = vf_zero();
  vd_t s0 = vd_set1(0.0), s1 = vd_set1(0.0);
  size_t cnt = 0;
  mf_t bad = mf_none();
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_t yv = vf_ldz_k(y + i, k);
    bad = mf_or(bad, vf_unord(yv, yv));
    mf_t on = vf_gt(yv, z);
    if (!mf_any(on)) continue;
    vf_t g = vf_sel(on, vf_ldz_k(dy + i, k), z);
    s0 = vd_add(s0, vf_lo_pd(g));
    s1 = vd_add(s1, vf_hi_pd(g));
    cnt += (size_t)__builtin_popcount(mf_bits(on));
  }
  if (mf_any(bad)) *nan = 1;
  *count = cnt;
  return vd_reduce_add(vd_add(s0, s1));
}

/* f64: lane-wise compensated sums (Neumaier), so that the mean of a support of
 * any length is good to a few ulps */
static double rsupsum_f64_k(size_t n, const double *y, const double *dy, size_t *count, int *nan) {
  const vd_t z = vd_set1(0.0);
  vd_t s = z, c = z;
  size_t cnt = 0;
  int bad = 0;
  for (size_t i = 0; i < n; i += VD_W) {
    size_t len = n - i >= VD_W ? VD_W : n - i;
    vd_t yv = vd_ld_part(y + i, len, 0.0);
    md_t on = vd_gt(yv, z);
    if (md_any(md_andnot(vd_eq(yv, yv), vd_eq(z, z)))) bad = 1;
    if (!md_any(on)) continue;
    vd_t v = vd_sel(on, vd_ld_part(dy + i, len, 0.0), z), t = vd_add(s, v);
    vd_t big = vd_sel(vd_gt(vd_abs(s), vd_abs(v)), s, v), small = vd_sel(vd_gt(vd_abs(s), vd_abs(v)), v, s);
    c = vd_add(c, vd_add(vd_sub(big, t), small));
    s = t;
    for (size_t l = 0; l < len; l++) cnt += y[i + l] > 0.0;
  }
  if (bad) *nan = 1;
  *count = cnt;
  double ls[VD_W], lc[VD_W], tot = 0.0, comp = 0.0;
  vd_st(ls, s);
  vd_st(lc, c);
  for (int l = 0; l < VD_W; l++) {
    double t = tot + ls[l];
    comp += fabs(tot) >= fabs(ls[l]) ? (tot - t) + ls[l] : (ls[l] - t) + tot;
    tot = t;
    comp += lc[l];
  }
  return tot + comp;
}

static void vsupsub_k(size_t n, const float *y, const float *dy, float *dx, float mu) {
  const vf_t z = vf_zero(), m = vf_set1(mu);
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_t yv = vf_ldz_k(y + i, k);
    vf_st_k(dx + i, k, vf_sel(vf_gt(yv, z), vf_sub(vf_ldz_k(dy + i, k), m), z));
  }
}

static void vsupsub_f64_k(size_t n, const double *y, const double *dy, double *dx, double mu) {
  const vd_t z = vd_set1(0.0), m = vd_set1(mu);
  size_t i = 0;
  for (; i + VD_W <= n; i += VD_W) vd_st(dx + i, vd_sel(vd_gt(vd_ld(y + i), z), vd_sub(vd_ld(dy + i), m), z));
  if (i < n)
    vd_st_part(dx + i, n - i,
               vd_sel(vd_gt(vd_ld_part(y + i, n - i, 0.0), z), vd_sub(vd_ld_part(dy + i, n - i, 0.0), m), z));
}

const smx_sparse_ukernels SMX_SPARSE_TABLE = { SMX_SIMD_ISA, vselect_k,   vselect_f64_k, vthresh_k,   vthresh_f64_k,
                                               rnewton_k,    rnewton_f64_k, rsupsum_k,   rsupsum_f64_k, vsupsub_k,
                                               vsupsub_f64_k };
