/*
 * The f32 softmax kernels, written once over the vector layer. Included
 * (once) by each per-ISA file (avx2.c, avx512.c), which first includes its
 * src/simd/<isa>.h and defines SMX_F32_TABLE, the table's name; compiled
 * only with that file's ISA flags.
 *
 * Exponentials are math/vexp_f32.h. Float sums go to double every
 * SMX_FLUSH elements (4 terms per lane accumulator), so the error of a
 * reduction does not grow with the row length. Tails use masked loads and
 * stores: nothing outside [0, n) is touched.
 *
 * Where the layer has no saturating vf_scale2 (AVX2), 2^n is built in the
 * exponent field and is exact only down to 2^-126: the exponential's
 * argument is then clamped at -127 (smx_expc.amin) instead of -200
 * (amin_s), and the two-pass sum keeps a running exponent per accumulator
 * instead of one exponent per block (raddextexp below).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "math/vexp_f32.h"

#define SMX_FLUSH (16 * VF_W)
/* Prefetch distance, in floats (measured: 2048-8192 all reach the plateau
 * on a 64Mi row; below 1024 the first look at a block stalls). */
#define SMX_PREFETCH_AHEAD 4096
/* rows up to this length prefetch the data after them (see raddexp_impl) */
#define SMX_SHORT_ROW 8192

#if SMX_VF_SCALE2_SATURATES
#define SMX_AMIN(c) ((c)->amin_s)
#else
#define SMX_AMIN(c) ((c)->amin)
#endif

/* The 4 cache lines SMX_PREFETCH_AHEAD floats past p (w: for writing). */
SMX_INLINE void prefetch_ahead(const float *p, int w) {
  uintptr_t a = (uintptr_t)p + SMX_PREFETCH_AHEAD * sizeof(float);
  for (uintptr_t l = 0; l < 4; l++) {
    if (w) smx_prefetchw(a + 64 * l);
    else smx_prefetch(a + 64 * l);
  }
}

/* Output stores: non-temporal for streamed rows (y aligned by stream_head). */
SMX_INLINE void store_out(int stream, float *p, vf_t v) {
  if (stream) vf_st_nt(p, v);
  else vf_st(p, v);
}

/* Elements to store the ordinary way before y reaches a vector boundary. */
SMX_INLINE size_t stream_head(const float *y, size_t n) {
  const uintptr_t vb = VF_W * sizeof(float);
  size_t h = (size_t)((vb - ((uintptr_t)y & (vb - 1))) & (vb - 1)) / sizeof(float);
  return h < n ? h : n;
}

/* Streaming is skipped when y is not 4-byte aligned (it could never reach
 * a vector boundary). */
SMX_INLINE int stream_ok(int stream, const float *y) { return stream && !((uintptr_t)y & 3); }

static float rmax_k(size_t n, const float *x) {
  const vf_t ninf = vf_set1(-INFINITY);
  vf_t m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  size_t i = 0;
  /* max(x, acc) returns acc when x is NaN: NaN entries are skipped */
  for (; i + 4 * VF_W <= n; i += 4 * VF_W) {
    m0 = vf_max(vf_ld(x + i), m0);
    m1 = vf_max(vf_ld(x + i + VF_W), m1);
    m2 = vf_max(vf_ld(x + i + 2 * VF_W), m2);
    m3 = vf_max(vf_ld(x + i + 3 * VF_W), m3);
  }
  for (; i + VF_W <= n; i += VF_W) m0 = vf_max(vf_ld(x + i), m0);
  if (i < n) m1 = vf_max(vf_ld_k(x + i, kf_tail(n - i), ninf), m1);
  return vf_reduce_max(vf_max(vf_max(m0, m1), vf_max(m2, m3)));
}

SMX_INLINE void flush_to_double(vf_t s, vd_t *d0, vd_t *d1) {
  *d0 = vd_add(*d0, vf_lo_pd(s));
  *d1 = vd_add(*d1, vf_hi_pd(s));
}

/* Stored exponentials are outputs and get the degree-6 polynomial. */
SMX_INLINE vf_t exp_for(int stored, vf_t a, vexpf_c c, vf_t amin) {
  return stored ? vexpf_neg(a, c, amin) : vexpf_neg_sum(a, c, amin);
}

/* mode 0: sum only; 1: also store e_i (softmax); 2: also store x_i - m (log-softmax at T = 1). */
SMX_INLINE double raddexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, int mode) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(SMX_AMIN(c));
  /* A short row is usually one of a batch: fetch the rows that follow (x, and
   * y for writing, so that stores do not wait for ownership) while this one
   * is computed. Long rows are a single stream the hardware prefetcher keeps
   * up with; prefetching them was measured slower. */
  const int short_row = n <= SMX_SHORT_ROW;
  vd_t d0 = vd_set1(0.0), d1 = d0;
  size_t i = 0;
  while (n - i >= 4 * VF_W) {
    vf_t a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t end = n - i >= SMX_FLUSH ? i + SMX_FLUSH : i + ((n - i) & ~(size_t)(4 * VF_W - 1));
    for (; i < end; i += 4 * VF_W) {
      if (short_row && !(i & 63)) {   /* once per 64 floats: 4 lines */
        prefetch_ahead(x + i, 0);
        if (mode) prefetch_ahead(y + i, 1);
      }
      vf_t t0 = vf_sub(vf_ld(x + i), vm), t1 = vf_sub(vf_ld(x + i + VF_W), vm);
      vf_t t2 = vf_sub(vf_ld(x + i + 2 * VF_W), vm), t3 = vf_sub(vf_ld(x + i + 3 * VF_W), vm);
      vf_t e0 = exp_for(mode == 1, t0, cv, amin), e1 = exp_for(mode == 1, t1, cv, amin);
      vf_t e2 = exp_for(mode == 1, t2, cv, amin), e3 = exp_for(mode == 1, t3, cv, amin);
      if (mode) {
        vf_st(y + i, mode == 1 ? e0 : t0);
        vf_st(y + i + VF_W, mode == 1 ? e1 : t1);
        vf_st(y + i + 2 * VF_W, mode == 1 ? e2 : t2);
        vf_st(y + i + 3 * VF_W, mode == 1 ? e3 : t3);
      }
      a0 = vf_add(a0, e0);
      a1 = vf_add(a1, e1);
      a2 = vf_add(a2, e2);
      a3 = vf_add(a3, e3);
    }
    flush_to_double(vf_add(vf_add(a0, a1), vf_add(a2, a3)), &d0, &d1);
  }
  if (i < n) {
    vf_t a0 = vf_zero();
    for (; i + VF_W <= n; i += VF_W) {
      vf_t t = vf_sub(vf_ld(x + i), vm);
      vf_t e = exp_for(mode == 1, t, cv, amin);
      if (mode) vf_st(y + i, mode == 1 ? e : t);
      a0 = vf_add(a0, e);
    }
    if (i < n) {
      kf_t k = kf_tail(n - i);
      vf_t t = vf_sub(vf_ldz_k(x + i, k), vm);
      vf_t e = vf_keep_k(exp_for(mode == 1, t, cv, amin), k);
      if (mode) vf_st_k(y + i, k, mode == 1 ? e : t);
      a0 = vf_add(a0, e);
    }
    flush_to_double(a0, &d0, &d1);
  }
  return vd_reduce_add(vd_add(d0, d1));
}

static double raddstoreexp_k(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return y ? raddexp_impl(n, x, y, m, c, 1) : raddexp_impl(n, x, NULL, m, c, 0);
}

static double raddexpstoresub_k(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return raddexp_impl(n, x, y, m, c, 2);
}

SMX_INLINE void vscale_impl(size_t n, const float *x, float *y, float s, int stream) {
  const vf_t vs = vf_set1(s);
  size_t i = 0;
  for (; i + 4 * VF_W <= n; i += 4 * VF_W) {
    vf_t v0 = vf_mul(vf_ld(x + i), vs), v1 = vf_mul(vf_ld(x + i + VF_W), vs);
    vf_t v2 = vf_mul(vf_ld(x + i + 2 * VF_W), vs), v3 = vf_mul(vf_ld(x + i + 3 * VF_W), vs);
    store_out(stream, y + i, v0);
    store_out(stream, y + i + VF_W, v1);
    store_out(stream, y + i + 2 * VF_W, v2);
    store_out(stream, y + i + 3 * VF_W, v3);
  }
  for (; i + VF_W <= n; i += VF_W) store_out(stream, y + i, vf_mul(vf_ld(x + i), vs));
  if (i < n) {
    kf_t k = kf_tail(n - i);
    vf_st_k(y + i, k, vf_mul(vf_ldz_k(x + i, k), vs));
  }
}

static void vscale_k(size_t n, const float *x, float *y, float s, int stream) {
  if (!stream_ok(stream, y)) { vscale_impl(n, x, y, s, 0); return; }
  size_t h = stream_head(y, n);
  vscale_impl(h, x, y, s, 0);
  vscale_impl(n - h, x + h, y + h, s, 1);
  smx_sfence();
}

SMX_INLINE void vscaleexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t vm = vf_set1(m), amin = vf_set1(SMX_AMIN(c)), vs = vf_set1(s);
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t e0 = vexpf_neg(vf_sub(vf_ld(x + i), vm), cv, amin);
    vf_t e1 = vexpf_neg(vf_sub(vf_ld(x + i + VF_W), vm), cv, amin);
    store_out(stream, y + i, vf_mul(e0, vs));
    store_out(stream, y + i + VF_W, vf_mul(e1, vs));
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_t e = vexpf_neg(vf_sub(vf_ldz_k(x + i, k), vm), cv, amin);
    vf_st_k(y + i, k, vf_mul(e, vs));
  }
}

static void vscaleexp_k(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  if (!stream_ok(stream, y)) { vscaleexp_impl(n, x, y, m, c, s, 0); return; }
  size_t h = stream_head(y, n);
  vscaleexp_impl(h, x, y, m, c, s, 0);
  vscaleexp_impl(n - h, x + h, y + h, m, c, s, 1);
  smx_sfence();
}

/* Per-lane maximum of a block: `full` whole vectors then the lanes in kt,
 * starting from init. NaN entries are skipped (max returns the accumulator). */
SMX_INLINE vf_t block_lane_max(const float *xb, size_t full, size_t rem, vf_t init) {
  vf_t bm0 = init, bm1 = init;
  size_t j = 0;
  for (; j + 2 * VF_W <= full; j += 2 * VF_W) {
    bm0 = vf_max(vf_ld(xb + j), bm0);
    bm1 = vf_max(vf_ld(xb + j + VF_W), bm1);
  }
  if (j < full) bm0 = vf_max(vf_ld(xb + j), bm0);
  if (rem) bm1 = vf_max(vf_ld_k(xb + full, kf_tail(rem), vf_set1(-INFINITY)), bm1);
  return vf_max(bm0, bm1);
}

/* Online normalizer, blocked and per lane: each lane keeps its own running max
 * and a double sum; once per block of SMX_FLUSH elements the lane max moves
 * and the lane sum is rescaled by one double exponential (a float factor's
 * rounding would compound over hundreds of blocks). */
static smx_online_state ronline_k(size_t n, const float *x, const smx_expc *c) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t amin = vf_set1(SMX_AMIN(c)), ninf = vf_set1(-INFINITY);
  const vd_t cd = vd_set1(c->c);
  vf_t vm = vf_set1(-FLT_MAX);   /* finite, so vm - new max is never -inf - -inf */
  vd_t d0 = vd_set1(0.0), d1 = d0;
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH;
    const float *xb = x + i;
    size_t full = nb & ~(size_t)(VF_W - 1), rem = nb - full;
    vf_t nm = vf_max(block_lane_max(xb, full, rem, ninf), vm);
    vf_t a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t j = 0;
    for (; j + 4 * VF_W <= full; j += 4 * VF_W) {
      a0 = vf_add(a0, vexpf_neg(vf_sub(vf_ld(xb + j), nm), cv, amin));
      a1 = vf_add(a1, vexpf_neg(vf_sub(vf_ld(xb + j + VF_W), nm), cv, amin));
      a2 = vf_add(a2, vexpf_neg(vf_sub(vf_ld(xb + j + 2 * VF_W), nm), cv, amin));
      a3 = vf_add(a3, vexpf_neg(vf_sub(vf_ld(xb + j + 3 * VF_W), nm), cv, amin));
    }
    for (; j < full; j += VF_W) a0 = vf_add(a0, vexpf_neg(vf_sub(vf_ld(xb + j), nm), cv, amin));
    if (rem) {
      kf_t kt = kf_tail(rem);
      vf_t e = vexpf_neg(vf_sub(vf_ld_k(xb + full, kt, ninf), nm), cv, amin);
      a1 = vf_add(a1, vf_keep_k(e, kt));
    }
    vf_t s = vf_add(vf_add(a0, a1), vf_add(a2, a3));
    /* rescale the lane sums to the new lane maxima, in double */
    d0 = vd_fmadd(d0, vexp2d_neg(vd_mul(vd_sub(vf_lo_pd(vm), vf_lo_pd(nm)), cd)), vf_lo_pd(s));
    d1 = vd_fmadd(d1, vexp2d_neg(vd_mul(vd_sub(vf_hi_pd(vm), vf_hi_pd(nm)), cd)), vf_hi_pd(s));
    vm = nm;
  }
  float lm[VF_W];
  double ld[VF_W];
  vf_st(lm, vm);
  vd_st(ld, d0);
  vd_st(ld + VD_W, d1);
  smx_online_state st = smx_online_identity();
  for (int l = 0; l < VF_W; l++) {
    smx_online_state ls = { lm[l], ld[l] };
    st = smx_online_merge(st, ls, c->c);
  }
  if (st.d == 0.0) st.m = -FLT_MAX;
  return st;
}

/* Dukhan & Ablavatski two-pass: 2^(x c) = p 2^n per element, x clamped at
 * -xlim (-inf and huge negatives become negligible; NaN kept). */
SMX_INLINE vf_t ext_term(vf_t x, vexpf_c cv, vf_t xmin, vf_t *n) {
  return vexp2f_poly6(vexpf_split(vf_max(xmin, x), cv, n));
}

/* The lane states (v, e) as one sum v 2^e, lanes merged in order. */
SMX_INLINE smx_ext_state ext_lanes(vd_t vd0, vd_t vd1, vf_t ed) {
  float le[VF_W];
  double lv[VF_W];
  vf_st(le, ed);
  vd_st(lv, vd0);
  vd_st(lv + VD_W, vd1);
  smx_ext_state st = smx_ext_identity();
  for (int l = 0; l < VF_W; l++) {
    /* an exponent that is not finite means |x c| overflowed float (|x/T| >
     * 2.36e38, or +inf): where the scaling of inf - inf does not give NaN,
     * say so explicitly; the caller then takes the three-pass path */
    if (lv[l] != lv[l] || !(le[l] <= FLT_MAX)) { st.v = NAN; break; }
    smx_ext_state ls = { lv[l], le[l] };
    st = smx_ext_merge(st, ls);
  }
  return st;
}

#if SMX_VF_SCALE2_SATURATES
/* Pass 1 with a saturating scale: within a block of SMX_FLUSH elements every
 * lane shares one exponent E, the exponent of the lane's block maximum
 * (found by a first look at the block, from L1), so each term is added as
 * scale2(p, n - E) with n <= E and no per-element exponent bookkeeping.
 * Blocks are folded into per-lane double (v, e) states. */
SMX_INLINE vf_t ext_scaled(vf_t x, vexpf_c cv, vf_t xmin, vf_t e) {
  vf_t n;
  vf_t p = ext_term(x, cv, xmin, &n);
  return vf_scale2(p, vf_sub(n, e));
}

static smx_ext_state raddextexp_k(size_t n, const float *x, const smx_expc *c) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t xmin = vf_set1(-c->xlim), ninf = vf_set1(-INFINITY);
  vd_t vd0 = vd_set1(0.0), vd1 = vd0;
  vf_t ed = vf_set1(-FLT_MAX);
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH;
    const float *xb = x + i;
    size_t full = nb & ~(size_t)(VF_W - 1), rem = nb - full;
    vf_t e = vf_round(vf_mul(block_lane_max(xb, full, rem, xmin), cv.hi));
    vf_t a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t j = 0;
    for (; j + 4 * VF_W <= full; j += 4 * VF_W) {
      /* the block's first look (max) would otherwise stall on memory: fetch ahead */
      if (!(j & 63)) prefetch_ahead(xb + j, 0);
      a0 = vf_add(a0, ext_scaled(vf_ld(xb + j), cv, xmin, e));
      a1 = vf_add(a1, ext_scaled(vf_ld(xb + j + VF_W), cv, xmin, e));
      a2 = vf_add(a2, ext_scaled(vf_ld(xb + j + 2 * VF_W), cv, xmin, e));
      a3 = vf_add(a3, ext_scaled(vf_ld(xb + j + 3 * VF_W), cv, xmin, e));
    }
    for (; j < full; j += VF_W) a0 = vf_add(a0, ext_scaled(vf_ld(xb + j), cv, xmin, e));
    if (rem) {
      kf_t kt = kf_tail(rem);
      a1 = vf_add(a1, vf_keep_k(ext_scaled(vf_ld_k(xb + full, kt, ninf), cv, xmin, e), kt));
    }
    vf_t vb = vf_add(vf_add(a0, a1), vf_add(a2, a3));
    /* fold the block (vb, e) into the double lane state (vd, ed) */
    vf_t en = vf_max(ed, e);
    vf_t sa = vf_sub(ed, en), sb = vf_sub(e, en);
    vd0 = vd_add(vd_scale2(vd0, vf_lo_pd(sa)), vd_scale2(vf_lo_pd(vb), vf_lo_pd(sb)));
    vd1 = vd_add(vd_scale2(vd1, vf_hi_pd(sa)), vd_scale2(vf_hi_pd(vb), vf_hi_pd(sb)));
    ed = en;
  }
  return ext_lanes(vd0, vd1, ed);
}
#else
/* Pass 1 with an exponent-field scale, which flushes below 2^-126: each of
 * four accumulators keeps its own running exponent, so a term is scaled
 * only against a nearby exponent and nothing that matters is flushed. */
SMX_INLINE void ext_add(vf_t *v, vf_t *e, vf_t p, vf_t n) {
  vf_t me = vf_max(*e, n);
  *v = vf_fmadd(p, vf_pow2i(vf_sub(n, me)), vf_mul(*v, vf_pow2i(vf_sub(*e, me))));
  *e = me;
}

/* 2^d in double for integer-valued d <= 0 (d < -1022 gives 2^-1022:
 * negligible next to any live sum). A NaN d (inf - inf, from an infinite
 * exponent) gives 1, so that such a lane keeps v = inf and e = inf: an
 * exponent outside the two-pass window sends the row to three-pass, where
 * a NaN v would read as a NaN input. */
SMX_INLINE vd_t pow2_neg_pd(vd_t d) {
  return vd_pow2i(vd_max(vd_set1(-1022.0), vd_min(d, vd_set1(0.0))));   /* min returns 0 for NaN */
}

static smx_ext_state raddextexp_k(size_t n, const float *x, const smx_expc *c) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t xmin = vf_set1(-c->xlim), ninf = vf_set1(-INFINITY), lowest = vf_set1(-FLT_MAX);
  vd_t vd0 = vd_set1(0.0), vd1 = vd0;
  vf_t ed = lowest;
  size_t i = 0;
  while (i < n) {
    size_t end = n - i >= SMX_FLUSH ? i + SMX_FLUSH : n;
    vf_t v0 = vf_zero(), v1 = v0, v2 = v0, v3 = v0;
    vf_t e0 = lowest, e1 = lowest, e2 = lowest, e3 = lowest;
    vf_t n0, n1, n2, n3;
    for (; i + 4 * VF_W <= end; i += 4 * VF_W) {
      vf_t p0 = ext_term(vf_ld(x + i), cv, xmin, &n0);
      vf_t p1 = ext_term(vf_ld(x + i + VF_W), cv, xmin, &n1);
      vf_t p2 = ext_term(vf_ld(x + i + 2 * VF_W), cv, xmin, &n2);
      vf_t p3 = ext_term(vf_ld(x + i + 3 * VF_W), cv, xmin, &n3);
      ext_add(&v0, &e0, p0, n0);
      ext_add(&v1, &e1, p1, n1);
      ext_add(&v2, &e2, p2, n2);
      ext_add(&v3, &e3, p3, n3);
    }
    for (; i < end; i += VF_W) {
      kf_t k = end - i >= VF_W ? kf_full() : kf_tail(end - i);
      vf_t p = vf_keep_k(ext_term(vf_ld_k(x + i, k, ninf), cv, xmin, &n0), k);
      ext_add(&v0, &e0, p, n0);
    }
    vf_t em = vf_max(vf_max(e0, e1), vf_max(e2, e3));
    vf_t vb = vf_add(vf_add(vf_mul(v0, vf_pow2i(vf_sub(e0, em))), vf_mul(v1, vf_pow2i(vf_sub(e1, em)))),
                     vf_add(vf_mul(v2, vf_pow2i(vf_sub(e2, em))), vf_mul(v3, vf_pow2i(vf_sub(e3, em)))));
    vf_t en = vf_max(ed, em);
    vf_t sa = vf_sub(ed, en), sb = vf_sub(em, en);
    vd0 = vd_fmadd(vd0, pow2_neg_pd(vf_lo_pd(sa)), vd_mul(vf_lo_pd(vb), pow2_neg_pd(vf_lo_pd(sb))));
    vd1 = vd_fmadd(vd1, pow2_neg_pd(vf_hi_pd(sa)), vd_mul(vf_hi_pd(vb), pow2_neg_pd(vf_hi_pd(sb))));
    ed = en;
  }
  return ext_lanes(vd0, vd1, ed);
}
#endif

SMX_INLINE void vscaleextexp_impl(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e,
                                  int stream) {
  const vexpf_c cv = vexpf_c_set(c->hi, c->lo);
  const vf_t xmin = vf_set1(-c->xlim), vinv = vf_set1(inv_v), vne = vf_set1(neg_e);
  size_t i = 0;
  vf_t n0, n1;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    vf_t p0 = ext_term(vf_ld(x + i), cv, xmin, &n0);
    vf_t p1 = ext_term(vf_ld(x + i + VF_W), cv, xmin, &n1);
    store_out(stream, y + i, vf_scale2_sat(vf_mul(p0, vinv), vf_add(n0, vne)));
    store_out(stream, y + i + VF_W, vf_scale2_sat(vf_mul(p1, vinv), vf_add(n1, vne)));
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_t p = ext_term(vf_ldz_k(x + i, k), cv, xmin, &n0);
    vf_st_k(y + i, k, vf_scale2_sat(vf_mul(p, vinv), vf_add(n0, vne)));
  }
}

static void vscaleextexp_k(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e,
                           int stream) {
  if (!stream_ok(stream, y)) { vscaleextexp_impl(n, x, y, c, inv_v, neg_e, 0); return; }
  size_t h = stream_head(y, n);
  vscaleextexp_impl(h, x, y, c, inv_v, neg_e, 0);
  vscaleextexp_impl(n - h, x + h, y + h, c, inv_v, neg_e, 1);
  smx_sfence();
}

/* Lanes where x - m overflowed to -inf although x is finite (a row spanning
 * more than FLT_MAX, T > 1) are redone in double; never taken on ordinary rows.
 * Per vector, before the store, so that in-place rows still have their x. */
static __attribute__((noinline)) vf_t logsub_overflow(vf_t x, vf_t v, unsigned o, float m, float s, float off) {
  float xs[VF_W], ys[VF_W];
  vf_st(xs, x);
  vf_st(ys, v);
  for (int l = 0; l < VF_W; l++)
    if ((o >> l) & 1) ys[l] = (float)(((double)xs[l] - (double)m) * s - (double)off);
  return vf_ld(ys);
}

typedef struct logsub_c { vf_t vm, vs, voff; float m, s, off; } logsub_c;

SMX_INLINE vf_t logsub(vf_t x, const logsub_c *c, int check) {
  vf_t d = vf_sub(x, c->vm);
  vf_t v = vf_fmsub(d, c->vs, c->voff);
  if (!check) return v;
  const vf_t ninf = vf_set1(-INFINITY);
  unsigned o = mf_bits(mf_and(vf_eq(d, ninf), vf_neq(x, ninf)));
  if (__builtin_expect(o != 0, 0)) v = logsub_overflow(x, v, o, c->m, c->s, c->off);
  return v;
}

SMX_INLINE void vlogsub_impl(size_t n, const float *x, float *y, float m, float s, float off, int stream, int check) {
  const logsub_c c = { vf_set1(m), vf_set1(s), vf_set1(off), m, s, off };
  size_t i = 0;
  for (; i + 2 * VF_W <= n; i += 2 * VF_W) {
    store_out(stream, y + i, logsub(vf_ld(x + i), &c, check));
    store_out(stream, y + i + VF_W, logsub(vf_ld(x + i + VF_W), &c, check));
  }
  for (; i < n; i += VF_W) {
    kf_t k = n - i >= VF_W ? kf_full() : kf_tail(n - i);
    vf_st_k(y + i, k, logsub(vf_ld_k(x + i, k, vf_set1(-INFINITY)), &c, check));
  }
}

SMX_INLINE void vlogsub_run(size_t n, const float *x, float *y, float m, float s, float off, int stream, int check) {
  if (!stream_ok(stream, y)) { vlogsub_impl(n, x, y, m, s, off, 0, check); return; }
  size_t h = stream_head(y, n);
  vlogsub_impl(h, x, y, m, s, off, 0, check);
  vlogsub_impl(n - h, x + h, y + h, m, s, off, 1, check);
  smx_sfence();
}

static void vlogsub_k(size_t n, const float *x, float *y, float m, double sd, float off, int stream) {
  float s = (float)sd;   /* vector kernels run only while 1/T fits a float (core/temperature.h) */
  /* x - m can overflow only for m >= 2^103, and the -inf it gives is wrong only for T > 1:
   * the check is compiled out of the common case */
  if (m >= 0x1p103f && s < 1.0f) vlogsub_run(n, x, y, m, s, off, stream, 1);
  else vlogsub_run(n, x, y, m, s, off, stream, 0);
}

const smx_f32_ukernels SMX_F32_TABLE = {
  SMX_SIMD_ISA,
  rmax_k,
  raddstoreexp_k,
  raddexpstoresub_k,
  vscale_k,
  vscaleexp_k,
  ronline_k,
  raddextexp_k,
  vscaleextexp_k,
  vlogsub_k,
};
