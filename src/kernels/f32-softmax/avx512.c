/*
 * AVX-512F f32 softmax kernels (this file alone is built with -mavx512f/dq/vl/bw).
 *
 * exp(a/T) = 2^(a c): n = round(a c_hi), r = a c_hi - n + a c_lo (two FMAs, the
 * product a*c_hi exact inside the FMA), 2^r by the degree-6 polynomial of
 * math/exp2_poly.h, and vscalefps applies 2^n with hardware under/overflow.
 * Sums go to double every SMX_FLUSH elements, so the error of the
 * reduction does not grow with the row length.
 * Tails use masked loads and stores: nothing outside [0, n) is touched.
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/f32-softmax/ukernels.h"
#include "math/exp2_poly.h"
#include "math/exp2_scalar.h"

#define SMX_INLINE static inline __attribute__((always_inline))

/* float sums of at most this many elements per lane accumulator (4 terms) go to double */
#define SMX_FLUSH 256
/* Prefetch distance of the two-pass kernels, in floats (measured: 2048-8192 all
 * reach the plateau on a 64Mi row; below 1024 the first look at a block stalls). */
#define SMX_EXT_PREFETCH 4096
/* rows up to this length prefetch the data after them (see raddexp_impl) */
#define SMX_SHORT_ROW 8192

SMX_INLINE __mmask16 tail_mask(size_t rem) { return (__mmask16)((1u << rem) - 1u); }

typedef struct expv { __m512 hi, lo; } expv;

SMX_INLINE expv expv_load(const smx_expc *c) {
  expv e = { _mm512_set1_ps(c->hi), _mm512_set1_ps(c->lo) };
  return e;
}

/* 2^r for r in [-0.5, 0.5] */
SMX_INLINE __m512 exp2_poly(__m512 r) {
  __m512 p = _mm512_set1_ps(SMX_EXP2_C6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_C1));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

/* 2^r, degree 5: for exponentials that are only summed */
SMX_INLINE __m512 exp2_poly5(__m512 r) {
  __m512 p = _mm512_set1_ps(SMX_EXP2_D5_C5);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_D5_C4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_D5_C3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_D5_C2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SMX_EXP2_D5_C1));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

/* Splits a*c into n + r; a must be clamped by the caller (NaN passes through). */
SMX_INLINE __m512 split(__m512 a, expv c, __m512 *n) {
  *n = _mm512_roundscale_ps(_mm512_mul_ps(a, c.hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmsub_ps(a, c.hi, *n);
  return _mm512_fmadd_ps(a, c.lo, r);
}

/* 2^(a c) for a <= 0; a < amin (and -inf) give +0, NaN gives NaN. */
SMX_INLINE __m512 exp_neg(__m512 a, expv c, __m512 amin) {
  a = _mm512_max_ps(amin, a);  /* second operand returned for NaN: NaN is kept */
  __m512 n;
  __m512 r = split(a, c, &n);
  return _mm512_scalef_ps(exp2_poly(r), n);
}

/* The same with the degree-5 polynomial, for sums that feed a logarithm only. */
SMX_INLINE __m512 exp_neg_sum(__m512 a, expv c, __m512 amin) {
  a = _mm512_max_ps(amin, a);
  __m512 n;
  __m512 r = split(a, c, &n);
  return _mm512_scalef_ps(exp2_poly5(r), n);
}

/* Software prefetch of the 4 cache lines SMX_EXT_PREFETCH floats ahead of p.
 * Integer arithmetic: the address may lie past the caller's buffer, which a
 * prefetch may touch (it never faults) but a C pointer may not point to. */
SMX_INLINE void prefetch_ahead(const float *p) {
  uintptr_t a = (uintptr_t)p + SMX_EXT_PREFETCH * sizeof(float);
  for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(a + 64 * (uintptr_t)l), _MM_HINT_T0);
}

/* The same for lines about to be written: fetched in exclusive state, so the
 * stores do not wait for a read-for-ownership. */
SMX_INLINE void prefetchw_ahead(const float *p) {
  uintptr_t a = (uintptr_t)p + SMX_EXT_PREFETCH * sizeof(float);
  for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(a + 64 * (uintptr_t)l), _MM_HINT_ET0);
}

/* Output stores: non-temporal for streamed rows (y aligned by stream_head). */
SMX_INLINE void store_out(int stream, float *p, __m512 v) {
  if (stream) _mm512_stream_ps(p, v);
  else _mm512_storeu_ps(p, v);
}

/* Streaming is skipped when y is not 4-byte aligned (it could never reach a
 * vector boundary). Elements to handle with ordinary stores before y reaches a 64-byte boundary. */
SMX_INLINE size_t stream_head(const float *y, size_t n) {
  size_t h = ((64 - ((uintptr_t)y & 63)) & 63) / sizeof(float);
  return h < n ? h : n;
}

static float rmax_avx512(size_t n, const float *x) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  size_t i = 0;
  /* max(x, acc) returns acc when x is NaN: NaN entries are skipped */
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
    m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
    m2 = _mm512_max_ps(_mm512_loadu_ps(x + i + 32), m2);
    m3 = _mm512_max_ps(_mm512_loadu_ps(x + i + 48), m3);
  }
  for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
  if (i < n) m1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, tail_mask(n - i), x + i), m1);
  m0 = _mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3));
  return _mm512_reduce_max_ps(m0);
}

SMX_INLINE void flush_to_double(__m512 s, __m512d *d0, __m512d *d1) {
  *d0 = _mm512_add_pd(*d0, _mm512_cvtps_pd(_mm512_castps512_ps256(s)));
  *d1 = _mm512_add_pd(*d1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))));
}

/* Stored exponentials are outputs and get the degree-6 polynomial. */
SMX_INLINE __m512 exp_neg_for(int stored, __m512 a, expv c, __m512 amin) {
  return stored ? exp_neg(a, c, amin) : exp_neg_sum(a, c, amin);
}

/* mode 0: sum only; 1: also store e_i (softmax); 2: also store x_i - m (log-softmax at T = 1). */
SMX_INLINE double raddexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, int mode) {
  const expv cv = expv_load(c);
  const __m512 vm = _mm512_set1_ps(m), amin = _mm512_set1_ps(c->amin_s);
  /* A short row is usually one of a batch: fetch the rows that follow (x, and
   * y for writing, so that stores do not wait for ownership) while this one
   * is computed. Long rows are a single stream the hardware prefetcher keeps
   * up with; prefetching them was measured slower. */
  const int short_row = n <= SMX_SHORT_ROW;
  __m512d d0 = _mm512_setzero_pd(), d1 = _mm512_setzero_pd();
  size_t i = 0;
  while (n - i >= 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t end = n - i >= SMX_FLUSH ? i + SMX_FLUSH : i + ((n - i) & ~(size_t)63);
    for (; i < end; i += 64) {
      if (short_row) {
        prefetch_ahead(x + i);
        if (mode) prefetchw_ahead(y + i);
      }
      __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), vm), t1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm);
      __m512 t2 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 32), vm), t3 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 48), vm);
      __m512 e0 = exp_neg_for(mode == 1, t0, cv, amin), e1 = exp_neg_for(mode == 1, t1, cv, amin);
      __m512 e2 = exp_neg_for(mode == 1, t2, cv, amin), e3 = exp_neg_for(mode == 1, t3, cv, amin);
      if (mode) {
        _mm512_storeu_ps(y + i, mode == 1 ? e0 : t0);
        _mm512_storeu_ps(y + i + 16, mode == 1 ? e1 : t1);
        _mm512_storeu_ps(y + i + 32, mode == 1 ? e2 : t2);
        _mm512_storeu_ps(y + i + 48, mode == 1 ? e3 : t3);
      }
      a0 = _mm512_add_ps(a0, e0);
      a1 = _mm512_add_ps(a1, e1);
      a2 = _mm512_add_ps(a2, e2);
      a3 = _mm512_add_ps(a3, e3);
    }
    flush_to_double(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), &d0, &d1);
  }
  if (i < n) {
    __m512 a0 = _mm512_setzero_ps();
    for (; i + 16 <= n; i += 16) {
      __m512 t = _mm512_sub_ps(_mm512_loadu_ps(x + i), vm);
      __m512 e = exp_neg_for(mode == 1, t, cv, amin);
      if (mode) _mm512_storeu_ps(y + i, mode == 1 ? e : t);
      a0 = _mm512_add_ps(a0, e);
    }
    if (i < n) {
      __mmask16 k = tail_mask(n - i);
      __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm);
      __m512 e = _mm512_maskz_mov_ps(k, exp_neg_for(mode == 1, t, cv, amin));
      if (mode) _mm512_mask_storeu_ps(y + i, k, mode == 1 ? e : t);
      a0 = _mm512_add_ps(a0, e);
    }
    flush_to_double(a0, &d0, &d1);
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(d0, d1));
}

static double raddstoreexp_avx512(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return y ? raddexp_impl(n, x, y, m, c, 1) : raddexp_impl(n, x, NULL, m, c, 0);
}

static double raddexpstoresub_avx512(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return raddexp_impl(n, x, y, m, c, 2);
}

SMX_INLINE void vscale_impl(size_t n, const float *x, float *y, float s, int stream) {
  const __m512 vs = _mm512_set1_ps(s);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 v0 = _mm512_mul_ps(_mm512_loadu_ps(x + i), vs);
    __m512 v1 = _mm512_mul_ps(_mm512_loadu_ps(x + i + 16), vs);
    __m512 v2 = _mm512_mul_ps(_mm512_loadu_ps(x + i + 32), vs);
    __m512 v3 = _mm512_mul_ps(_mm512_loadu_ps(x + i + 48), vs);
    store_out(stream, y + i, v0);
    store_out(stream, y + i + 16, v1);
    store_out(stream, y + i + 32, v2);
    store_out(stream, y + i + 48, v3);
  }
  for (; i + 16 <= n; i += 16) store_out(stream, y + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), vs));
  if (i < n) {
    __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vs));
  }
}

static void vscale_avx512(size_t n, const float *x, float *y, float s, int stream) {
  /* streaming needs y 4-byte aligned to reach a vector boundary */
  if (!stream || ((uintptr_t)y & 3)) { vscale_impl(n, x, y, s, 0); return; }
  size_t h = stream_head(y, n);
  vscale_impl(h, x, y, s, 0);
  vscale_impl(n - h, x + h, y + h, s, 1);
  _mm_sfence();
}

SMX_INLINE void vscaleexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  const expv cv = expv_load(c);
  const __m512 vm = _mm512_set1_ps(m), amin = _mm512_set1_ps(c->amin_s), vs = _mm512_set1_ps(s);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 e0 = exp_neg(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm), cv, amin);
    __m512 e1 = exp_neg(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm), cv, amin);
    store_out(stream, y + i, _mm512_mul_ps(e0, vs));
    store_out(stream, y + i + 16, _mm512_mul_ps(e1, vs));
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 e = exp_neg(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm), cv, amin);
    _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(e, vs));
  }
}

static void vscaleexp_avx512(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  if (!stream || ((uintptr_t)y & 3)) { vscaleexp_impl(n, x, y, m, c, s, 0); return; }
  size_t h = stream_head(y, n);
  vscaleexp_impl(h, x, y, m, c, s, 0);
  vscaleexp_impl(n - h, x + h, y + h, m, c, s, 1);
  _mm_sfence();
}

/* Per-lane maximum of a block: `full` whole vectors then the lanes in kt,
 * starting from init. NaN entries are skipped (max returns the accumulator). */
SMX_INLINE __m512 block_lane_max(const float *xb, size_t full, __mmask16 kt, __m512 init) {
  __m512 bm0 = init, bm1 = init;
  size_t j = 0;
  for (; j + 32 <= full; j += 32) {
    bm0 = _mm512_max_ps(_mm512_loadu_ps(xb + j), bm0);
    bm1 = _mm512_max_ps(_mm512_loadu_ps(xb + j + 16), bm1);
  }
  if (j < full) bm0 = _mm512_max_ps(_mm512_loadu_ps(xb + j), bm0);
  if (kt) bm1 = _mm512_max_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), kt, xb + full), bm1);
  return _mm512_max_ps(bm0, bm1);
}

/* 2^z in double for z <= 0 (NaN kept, z < -1022 gives 2^-1022): the online
 * kernels rescale a running sum by this once per block, hundreds of times per
 * row, so a float factor's rounding would compound (math/exp2_poly.h). */
SMX_INLINE __m512d exp2_pd_neg(__m512d z) {
  z = _mm512_max_pd(_mm512_set1_pd(-1022.0), z);
  __m512d n = _mm512_roundscale_pd(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_sub_pd(z, n);
  __m512d p = _mm512_set1_pd(SMX_EXP2D_C10);
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C9));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C8));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C7));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C6));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C5));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C4));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C3));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C2));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(SMX_EXP2D_C1));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  return _mm512_scalef_pd(p, n);
}

SMX_INLINE __m512d lo_pd(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
SMX_INLINE __m512d hi_pd(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* Online normalizer, blocked and per lane: each lane keeps its own running max
 * and a double sum; once per block of SMX_FLUSH elements the lane max moves
 * and the lane sum is rescaled by one vector exp. */
static smx_online_state ronline_avx512(size_t n, const float *x, const smx_expc *c) {
  const expv cv = expv_load(c);
  const __m512 amin = _mm512_set1_ps(c->amin_s), ninf = _mm512_set1_ps(-INFINITY);
  __m512 vm = _mm512_set1_ps(-FLT_MAX);   /* finite, so vm - new max is never -inf - -inf */
  __m512d d0 = _mm512_setzero_pd(), d1 = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH;
    const float *xb = x + i;
    size_t full = nb & ~(size_t)15;
    __mmask16 kt = tail_mask(nb - full);
    __m512 nm = _mm512_max_ps(block_lane_max(xb, full, kt, ninf), vm);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t j = 0;
    for (; j + 64 <= full; j += 64) {
      a0 = _mm512_add_ps(a0, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(xb + j), nm), cv, amin));
      a1 = _mm512_add_ps(a1, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(xb + j + 16), nm), cv, amin));
      a2 = _mm512_add_ps(a2, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(xb + j + 32), nm), cv, amin));
      a3 = _mm512_add_ps(a3, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(xb + j + 48), nm), cv, amin));
    }
    for (; j < full; j += 16)
      a0 = _mm512_add_ps(a0, exp_neg(_mm512_sub_ps(_mm512_loadu_ps(xb + j), nm), cv, amin));
    if (kt) {
      __m512 e = exp_neg(_mm512_sub_ps(_mm512_mask_loadu_ps(ninf, kt, xb + full), nm), cv, amin);
      a1 = _mm512_add_ps(a1, _mm512_maskz_mov_ps(kt, e));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
    /* rescale the lane sums to the new lane maxima, in double */
    __m512d cd = _mm512_set1_pd(c->c);
    d0 = _mm512_fmadd_pd(d0, exp2_pd_neg(_mm512_mul_pd(_mm512_sub_pd(lo_pd(vm), lo_pd(nm)), cd)), lo_pd(s));
    d1 = _mm512_fmadd_pd(d1, exp2_pd_neg(_mm512_mul_pd(_mm512_sub_pd(hi_pd(vm), hi_pd(nm)), cd)), hi_pd(s));
    vm = nm;
  }
  float lm[16];
  double ld[16];
  _mm512_storeu_ps(lm, vm);
  _mm512_storeu_pd(ld, d0);
  _mm512_storeu_pd(ld + 8, d1);
  smx_online_state st = smx_online_identity();
  for (int l = 0; l < 16; l++) {
    smx_online_state ls = { lm[l], ld[l] };
    st = smx_online_merge(st, ls, c->c);
  }
  if (st.d == 0.0) st.m = -FLT_MAX;
  return st;
}

/* Dukhan & Ablavatski pass 1: per lane (v, e) pairs with sum 2^(x c) = v 2^e.
 * Within a block of SMX_FLUSH elements every lane shares one exponent E, the
 * exponent of the lane's block maximum (found by a first look at the block,
 * from L1), so each term is added as scalef(p, n - E) with n <= E and no
 * per-element exponent bookkeeping. Blocks are folded into per-lane double
 * (v, e) states, so the sum does not lose accuracy on long rows. */
SMX_INLINE __m512 ext_term(__m512 x, expv cv, __m512 xmin, __m512 *n) {
  x = _mm512_max_ps(xmin, x);   /* -inf and huge negatives become negligible; NaN kept */
  return exp2_poly(split(x, cv, n));
}

SMX_INLINE __m512 ext_scaled(__m512 x, expv cv, __m512 xmin, __m512 e) {
  __m512 n;
  __m512 p = ext_term(x, cv, xmin, &n);
  return _mm512_scalef_ps(p, _mm512_sub_ps(n, e));
}

static smx_ext_state raddextexp_avx512(size_t n, const float *x, const smx_expc *c) {
  const expv cv = expv_load(c);
  const __m512 xmin = _mm512_set1_ps(-c->xlim), ninf = _mm512_set1_ps(-INFINITY);
  __m512d vd0 = _mm512_setzero_pd(), vd1 = _mm512_setzero_pd();
  __m512 ed = _mm512_set1_ps(-FLT_MAX);
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH;
    const float *xb = x + i;
    size_t full = nb & ~(size_t)15;
    __mmask16 kt = tail_mask(nb - full);
    __m512 e = _mm512_roundscale_ps(_mm512_mul_ps(block_lane_max(xb, full, kt, xmin), cv.hi),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t j = 0;
    for (; j + 64 <= full; j += 64) {
      /* the block's first look (max) would otherwise stall on memory: fetch ahead */
      prefetch_ahead(xb + j);
      a0 = _mm512_add_ps(a0, ext_scaled(_mm512_loadu_ps(xb + j), cv, xmin, e));
      a1 = _mm512_add_ps(a1, ext_scaled(_mm512_loadu_ps(xb + j + 16), cv, xmin, e));
      a2 = _mm512_add_ps(a2, ext_scaled(_mm512_loadu_ps(xb + j + 32), cv, xmin, e));
      a3 = _mm512_add_ps(a3, ext_scaled(_mm512_loadu_ps(xb + j + 48), cv, xmin, e));
    }
    for (; j < full; j += 16) a0 = _mm512_add_ps(a0, ext_scaled(_mm512_loadu_ps(xb + j), cv, xmin, e));
    if (kt) {
      __m512 t = ext_scaled(_mm512_mask_loadu_ps(ninf, kt, xb + full), cv, xmin, e);
      a1 = _mm512_add_ps(a1, _mm512_maskz_mov_ps(kt, t));
    }
    __m512 vb = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
    /* fold the block (vb, e) into the double lane state (vd, ed) */
    __m512 en = _mm512_max_ps(ed, e);
    __m512 sa = _mm512_sub_ps(ed, en), sb = _mm512_sub_ps(e, en);
    __m512d sa0 = _mm512_cvtps_pd(_mm512_castps512_ps256(sa));
    __m512d sa1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sa), 1)));
    __m512d sb0 = _mm512_cvtps_pd(_mm512_castps512_ps256(sb));
    __m512d sb1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sb), 1)));
    __m512d vb0 = _mm512_cvtps_pd(_mm512_castps512_ps256(vb));
    __m512d vb1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vb), 1)));
    vd0 = _mm512_add_pd(_mm512_scalef_pd(vd0, sa0), _mm512_scalef_pd(vb0, sb0));
    vd1 = _mm512_add_pd(_mm512_scalef_pd(vd1, sa1), _mm512_scalef_pd(vb1, sb1));
    ed = en;
  }
  float le[16];
  double lv[16];
  _mm512_storeu_ps(le, ed);
  _mm512_storeu_pd(lv, vd0);
  _mm512_storeu_pd(lv + 8, vd1);
  smx_ext_state st = smx_ext_identity();
  for (int l = 0; l < 16; l++) {
    if (lv[l] != lv[l]) { st.v = NAN; break; }
    smx_ext_state ls = { lv[l], le[l] };
    st = smx_ext_merge(st, ls);
  }
  return st;
}

SMX_INLINE void vscaleextexp_impl(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e, int stream) {
  const expv cv = expv_load(c);
  const __m512 xmin = _mm512_set1_ps(-c->xlim), vinv = _mm512_set1_ps(inv_v), vne = _mm512_set1_ps(neg_e);
  size_t i = 0;
  __m512 n0, n1;
  for (; i + 32 <= n; i += 32) {
    __m512 p0 = ext_term(_mm512_loadu_ps(x + i), cv, xmin, &n0);
    __m512 p1 = ext_term(_mm512_loadu_ps(x + i + 16), cv, xmin, &n1);
    store_out(stream, y + i, _mm512_scalef_ps(_mm512_mul_ps(p0, vinv), _mm512_add_ps(n0, vne)));
    store_out(stream, y + i + 16, _mm512_scalef_ps(_mm512_mul_ps(p1, vinv), _mm512_add_ps(n1, vne)));
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 p = ext_term(_mm512_maskz_loadu_ps(k, x + i), cv, xmin, &n0);
    _mm512_mask_storeu_ps(y + i, k, _mm512_scalef_ps(_mm512_mul_ps(p, vinv), _mm512_add_ps(n0, vne)));
  }
}

static void vscaleextexp_avx512(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e, int stream) {
  if (!stream || ((uintptr_t)y & 3)) { vscaleextexp_impl(n, x, y, c, inv_v, neg_e, 0); return; }
  size_t h = stream_head(y, n);
  vscaleextexp_impl(h, x, y, c, inv_v, neg_e, 0);
  vscaleextexp_impl(n - h, x + h, y + h, c, inv_v, neg_e, 1);
  _mm_sfence();
}

/* Lanes where x - m overflowed to -inf although x is finite (a row spanning
 * more than FLT_MAX, T > 1) are redone in double; never taken on ordinary rows.
 * Per vector, before the store, so that in-place rows still have their x. */
static __attribute__((noinline)) __m512 logsub_overflow(__m512 x, __m512 v, __mmask16 o, float m, float s, float off) {
  float xs[16], ys[16];
  _mm512_storeu_ps(xs, x);
  _mm512_storeu_ps(ys, v);
  for (int l = 0; l < 16; l++)
    if ((o >> l) & 1) ys[l] = (float)(((double)xs[l] - (double)m) * s - (double)off);
  return _mm512_loadu_ps(ys);
}

typedef struct logsub_c { __m512 vm, vs, voff; float m, s, off; } logsub_c;

SMX_INLINE __m512 logsub(__m512 x, const logsub_c *c, int check) {
  __m512 d = _mm512_sub_ps(x, c->vm);
  __m512 v = _mm512_fmsub_ps(d, c->vs, c->voff);
  if (!check) return v;
  __mmask16 o = _mm512_cmp_ps_mask(d, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ) &
                _mm512_cmp_ps_mask(x, _mm512_set1_ps(-INFINITY), _CMP_NEQ_UQ);
  if (__builtin_expect(o != 0, 0)) v = logsub_overflow(x, v, o, c->m, c->s, c->off);
  return v;
}

SMX_INLINE void vlogsub_impl(size_t n, const float *x, float *y, float m, float s, float off, int stream, int check) {
  const logsub_c c = { _mm512_set1_ps(m), _mm512_set1_ps(s), _mm512_set1_ps(off), m, s, off };
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    store_out(stream, y + i, logsub(_mm512_loadu_ps(x + i), &c, check));
    store_out(stream, y + i + 16, logsub(_mm512_loadu_ps(x + i + 16), &c, check));
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, k, logsub(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i), &c, check));
  }
}

SMX_INLINE void vlogsub_run(size_t n, const float *x, float *y, float m, float s, float off, int stream, int check) {
  /* streaming needs y 4-byte aligned to reach a vector boundary */
  if (!stream || ((uintptr_t)y & 3)) { vlogsub_impl(n, x, y, m, s, off, 0, check); return; }
  size_t h = stream_head(y, n);
  vlogsub_impl(h, x, y, m, s, off, 0, check);
  vlogsub_impl(n - h, x + h, y + h, m, s, off, 1, check);
  _mm_sfence();
}

static void vlogsub_avx512(size_t n, const float *x, float *y, float m, double sd, float off, int stream) {
  float s = (float)sd;   /* vector kernels run only while 1/T fits a float (src/api/softmax_api.c) */
  /* x - m can overflow only for m >= 2^103, and the -inf it gives is wrong only for T > 1:
   * the check is compiled out of the common case */
  if (m >= 0x1p103f && s < 1.0f) vlogsub_run(n, x, y, m, s, off, stream, 1);
  else vlogsub_run(n, x, y, m, s, off, stream, 0);
}

const smx_f32_ukernels smx_f32_ukernels_avx512 = {
  "avx512",
  rmax_avx512,
  raddstoreexp_avx512,
  raddexpstoresub_avx512,
  vscale_avx512,
  vscaleexp_avx512,
  ronline_avx512,
  raddextexp_avx512,
  vscaleextexp_avx512,
  vlogsub_avx512,
};
