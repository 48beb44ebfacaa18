/*
 * AVX2 + FMA f32 softmax kernels (this file alone is built with -mavx2 -mfma).
 *
 * Same arithmetic as avx512.c, on 8 lanes, without vscalefps: 2^n is built
 * in the exponent field, (n + 127) << 23, after clamping n >= -127, where the
 * biased exponent 0 is the float +0 (so -inf and huge negatives give exactly +0).
 * Tails use vmaskmovps: nothing outside [0, n) is touched.
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/f32-softmax/ukernels.h"
#include "math/exp2_poly.h"

#define SMX_INLINE static inline __attribute__((always_inline))

#define SMX_FLUSH 128
/* rows up to this length prefetch the data after them (see raddexp_impl) */
#define SMX_SHORT_ROW 8192
#define SMX_PREFETCH_AHEAD 4096

/* Prefetch the 4 cache lines SMX_PREFETCH_AHEAD floats past p (ET0: for
 * writing). Integer arithmetic: the address may lie past the caller's buffer,
 * which a prefetch may touch (it never faults) but a C pointer may not. */
SMX_INLINE void prefetch_ahead(const float *p, int for_write) {
  uintptr_t a = (uintptr_t)p + SMX_PREFETCH_AHEAD * sizeof(float);
  for (int l = 0; l < 4; l++) {
    if (for_write) _mm_prefetch((const char *)(a + 64 * (uintptr_t)l), _MM_HINT_ET0);
    else _mm_prefetch((const char *)(a + 64 * (uintptr_t)l), _MM_HINT_T0);
  }
}

static const int32_t mask_table[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };

/* lanes [0, rem) set, rem in 0..8 */
SMX_INLINE __m256i tail_mask(size_t rem) { return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - rem)); }

SMX_INLINE __m256 load_or(__m256 fill, __m256i k, const float *p) {
  return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, k), _mm256_castsi256_ps(k));
}

typedef struct expv { __m256 hi, lo; } expv;

SMX_INLINE expv expv_load(const smx_expc *c) {
  expv e = { _mm256_set1_ps(c->hi), _mm256_set1_ps(c->lo) };
  return e;
}

SMX_INLINE __m256 exp2_poly(__m256 r) {
  __m256 p = _mm256_set1_ps(SMX_EXP2_C6);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_C1));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

/* 2^r, degree 5: for exponentials that are only summed */
SMX_INLINE __m256 exp2_poly5(__m256 r) {
  __m256 p = _mm256_set1_ps(SMX_EXP2_D5_C5);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_D5_C4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_D5_C3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_D5_C2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SMX_EXP2_D5_C1));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

SMX_INLINE __m256 split(__m256 a, expv c, __m256 *n) {
  *n = _mm256_round_ps(_mm256_mul_ps(a, c.hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmsub_ps(a, c.hi, *n);
  return _mm256_fmadd_ps(a, c.lo, r);
}

/* 2^d for integer-valued d <= 0; d <= -127 gives +0. */
SMX_INLINE __m256 pow2_neg(__m256 d) {
  d = _mm256_max_ps(_mm256_set1_ps(-127.0f), d);
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(d), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(b, 23));
}

/* 2^(a c) for a <= 0; a < amin (and -inf) give +0, NaN gives NaN. */
SMX_INLINE __m256 exp_neg(__m256 a, expv c, __m256 amin) {
  a = _mm256_max_ps(amin, a);  /* second operand returned for NaN: NaN is kept */
  __m256 n;
  __m256 r = split(a, c, &n);
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_mul_ps(exp2_poly(r), _mm256_castsi256_ps(_mm256_slli_epi32(b, 23)));
}


/* The same with the degree-5 polynomial, for sums that feed a logarithm only. */
SMX_INLINE __m256 exp_neg_sum(__m256 a, expv c, __m256 amin) {
  a = _mm256_max_ps(amin, a);
  __m256 n;
  __m256 r = split(a, c, &n);
  __m256i b = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_mul_ps(exp2_poly5(r), _mm256_castsi256_ps(_mm256_slli_epi32(b, 23)));
}

SMX_INLINE float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

/* Output stores: non-temporal for streamed rows (y aligned by stream_head). */
SMX_INLINE void store_out(int stream, float *p, __m256 v) {
  if (stream) _mm256_stream_ps(p, v);
  else _mm256_storeu_ps(p, v);
}

/* Streaming is skipped when y is not 4-byte aligned (it could never reach a
 * vector boundary). Elements to handle with ordinary stores before y reaches a 32-byte boundary. */
SMX_INLINE size_t stream_head(const float *y, size_t n) {
  size_t h = ((32 - ((uintptr_t)y & 31)) & 31) / sizeof(float);
  return h < n ? h : n;
}

static float rmax_avx2(size_t n, const float *x) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
    m2 = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), m2);
    m3 = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), m3);
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
  if (i < n) m1 = _mm256_max_ps(load_or(ninf, tail_mask(n - i), x + i), m1);
  return hmax(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
}

SMX_INLINE void flush_to_double(__m256 s, __m256d *d0, __m256d *d1) {
  *d0 = _mm256_add_pd(*d0, _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
  *d1 = _mm256_add_pd(*d1, _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
}

SMX_INLINE double hsum_pd(__m256d a, __m256d b) {
  double t[4];
  _mm256_storeu_pd(t, _mm256_add_pd(a, b));
  return (t[0] + t[1]) + (t[2] + t[3]);
}

/* Stored exponentials are outputs and get the degree-6 polynomial. */
SMX_INLINE __m256 exp_neg_for(int stored, __m256 a, expv c, __m256 amin) {
  return stored ? exp_neg(a, c, amin) : exp_neg_sum(a, c, amin);
}

/* mode 0: sum only; 1: also store e_i (softmax); 2: also store x_i - m (log-softmax at T = 1). */
SMX_INLINE double raddexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, int mode) {
  const expv cv = expv_load(c);
  const __m256 vm = _mm256_set1_ps(m), amin = _mm256_set1_ps(c->amin);
  /* a short row is usually one of a batch: fetch what follows (as avx512.c) */
  const int short_row = n <= SMX_SHORT_ROW;
  __m256d d0 = _mm256_setzero_pd(), d1 = _mm256_setzero_pd();
  size_t i = 0;
  while (n - i >= 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t end = n - i >= SMX_FLUSH ? i + SMX_FLUSH : i + ((n - i) & ~(size_t)31);
    for (; i < end; i += 32) {
      if (short_row && !(i & 32)) {
        prefetch_ahead(x + i, 0);
        if (mode) prefetch_ahead(y + i, 1);
      }
      __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm), t1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm);
      __m256 t2 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 16), vm), t3 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 24), vm);
      __m256 e0 = exp_neg_for(mode == 1, t0, cv, amin), e1 = exp_neg_for(mode == 1, t1, cv, amin);
      __m256 e2 = exp_neg_for(mode == 1, t2, cv, amin), e3 = exp_neg_for(mode == 1, t3, cv, amin);
      if (mode) {
        _mm256_storeu_ps(y + i, mode == 1 ? e0 : t0);
        _mm256_storeu_ps(y + i + 8, mode == 1 ? e1 : t1);
        _mm256_storeu_ps(y + i + 16, mode == 1 ? e2 : t2);
        _mm256_storeu_ps(y + i + 24, mode == 1 ? e3 : t3);
      }
      a0 = _mm256_add_ps(a0, e0);
      a1 = _mm256_add_ps(a1, e1);
      a2 = _mm256_add_ps(a2, e2);
      a3 = _mm256_add_ps(a3, e3);
    }
    flush_to_double(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)), &d0, &d1);
  }
  if (i < n) {
    __m256 a0 = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
      __m256 t = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
      __m256 e = exp_neg_for(mode == 1, t, cv, amin);
      if (mode) _mm256_storeu_ps(y + i, mode == 1 ? e : t);
      a0 = _mm256_add_ps(a0, e);
    }
    if (i < n) {
      __m256i k = tail_mask(n - i);
      __m256 t = _mm256_sub_ps(_mm256_maskload_ps(x + i, k), vm);
      __m256 e = _mm256_and_ps(exp_neg_for(mode == 1, t, cv, amin), _mm256_castsi256_ps(k));
      if (mode) _mm256_maskstore_ps(y + i, k, mode == 1 ? e : t);
      a0 = _mm256_add_ps(a0, e);
    }
    flush_to_double(a0, &d0, &d1);
  }
  return hsum_pd(d0, d1);
}

static double raddstoreexp_avx2(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return y ? raddexp_impl(n, x, y, m, c, 1) : raddexp_impl(n, x, NULL, m, c, 0);
}

static double raddexpstoresub_avx2(size_t n, const float *x, float *y, float m, const smx_expc *c) {
  return raddexp_impl(n, x, y, m, c, 2);
}

SMX_INLINE void vscale_impl(size_t n, const float *x, float *y, float s, int stream) {
  const __m256 vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 v0 = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
    __m256 v1 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8), vs);
    __m256 v2 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 16), vs);
    __m256 v3 = _mm256_mul_ps(_mm256_loadu_ps(x + i + 24), vs);
    store_out(stream, y + i, v0);
    store_out(stream, y + i + 8, v1);
    store_out(stream, y + i + 16, v2);
    store_out(stream, y + i + 24, v3);
  }
  for (; i + 8 <= n; i += 8) store_out(stream, y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
  if (i < n) {
    __m256i k = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, k, _mm256_mul_ps(_mm256_maskload_ps(x + i, k), vs));
  }
}

static void vscale_avx2(size_t n, const float *x, float *y, float s, int stream) {
  /* streaming needs y 4-byte aligned to reach a vector boundary */
  if (!stream || ((uintptr_t)y & 3)) { vscale_impl(n, x, y, s, 0); return; }
  size_t h = stream_head(y, n);
  vscale_impl(h, x, y, s, 0);
  vscale_impl(n - h, x + h, y + h, s, 1);
  _mm_sfence();
}

SMX_INLINE void vscaleexp_impl(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  const expv cv = expv_load(c);
  const __m256 vm = _mm256_set1_ps(m), amin = _mm256_set1_ps(c->amin), vs = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 e0 = exp_neg(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), cv, amin);
    __m256 e1 = exp_neg(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm), cv, amin);
    store_out(stream, y + i, _mm256_mul_ps(e0, vs));
    store_out(stream, y + i + 8, _mm256_mul_ps(e1, vs));
  }
  for (; i < n; i += 8) {
    __m256i k = tail_mask(n - i >= 8 ? 8 : n - i);
    __m256 e = exp_neg(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), vm), cv, amin);
    _mm256_maskstore_ps(y + i, k, _mm256_mul_ps(e, vs));
  }
}

static void vscaleexp_avx2(size_t n, const float *x, float *y, float m, const smx_expc *c, float s, int stream) {
  if (!stream || ((uintptr_t)y & 3)) { vscaleexp_impl(n, x, y, m, c, s, 0); return; }
  size_t h = stream_head(y, n);
  vscaleexp_impl(h, x, y, m, c, s, 0);
  vscaleexp_impl(n - h, x + h, y + h, m, c, s, 1);
  _mm_sfence();
}

SMX_INLINE __m256d lo_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
SMX_INLINE __m256d hi_pd(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

/* 2^z in double for z <= 0 (NaN kept, z < -1022 gives 2^-1022): the online
 * kernels rescale a running sum by this once per block, hundreds of times per
 * row, so a float factor's rounding would compound (math/exp2_poly.h). */
SMX_INLINE __m256d exp2_pd_neg(__m256d z) {
  z = _mm256_max_pd(_mm256_set1_pd(-1022.0), z);
  __m256d n = _mm256_round_pd(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_sub_pd(z, n);
  __m256d p = _mm256_set1_pd(SMX_EXP2D_C10);
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C9));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C8));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C7));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C6));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C5));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C4));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C3));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C2));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(SMX_EXP2D_C1));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  /* 2^n for integer n in [-1022, 0], built in the exponent field */
  __m256i e = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n)), _mm256_set1_epi64x(1023));
  return _mm256_mul_pd(p, _mm256_castsi256_pd(_mm256_slli_epi64(e, 52)));
}

static smx_online_state ronline_avx2(size_t n, const float *x, const smx_expc *c) {
  const expv cv = expv_load(c);
  const __m256 amin = _mm256_set1_ps(c->amin), ninf = _mm256_set1_ps(-INFINITY);
  __m256 vm = _mm256_set1_ps(-FLT_MAX);
  __m256d d0 = _mm256_setzero_pd(), d1 = _mm256_setzero_pd();
  for (size_t i = 0; i < n; i += SMX_FLUSH) {
    size_t nb = n - i < SMX_FLUSH ? n - i : SMX_FLUSH;
    const float *xb = x + i;
    size_t full = nb & ~(size_t)7;
    size_t rem = nb - full;
    __m256i kt = tail_mask(rem);
    __m256 bm0 = ninf, bm1 = ninf;
    size_t j = 0;
    for (; j + 16 <= full; j += 16) {
      bm0 = _mm256_max_ps(_mm256_loadu_ps(xb + j), bm0);
      bm1 = _mm256_max_ps(_mm256_loadu_ps(xb + j + 8), bm1);
    }
    if (j < full) bm0 = _mm256_max_ps(_mm256_loadu_ps(xb + j), bm0);
    __m256 xt = ninf;
    if (rem) {
      xt = load_or(ninf, kt, xb + full);
      bm1 = _mm256_max_ps(xt, bm1);
    }
    __m256 nm = _mm256_max_ps(_mm256_max_ps(bm0, bm1), vm);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    j = 0;
    for (; j + 32 <= full; j += 32) {
      a0 = _mm256_add_ps(a0, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(xb + j), nm), cv, amin));
      a1 = _mm256_add_ps(a1, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(xb + j + 8), nm), cv, amin));
      a2 = _mm256_add_ps(a2, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(xb + j + 16), nm), cv, amin));
      a3 = _mm256_add_ps(a3, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(xb + j + 24), nm), cv, amin));
    }
    for (; j < full; j += 8)
      a0 = _mm256_add_ps(a0, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(xb + j), nm), cv, amin));
    if (rem) a1 = _mm256_add_ps(a1, exp_neg(_mm256_sub_ps(xt, nm), cv, amin));
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    /* rescale the lane sums to the new lane maxima, in double */
    __m256d cd = _mm256_set1_pd(c->c);
    d0 = _mm256_fmadd_pd(d0, exp2_pd_neg(_mm256_mul_pd(_mm256_sub_pd(lo_pd(vm), lo_pd(nm)), cd)), lo_pd(s));
    d1 = _mm256_fmadd_pd(d1, exp2_pd_neg(_mm256_mul_pd(_mm256_sub_pd(hi_pd(vm), hi_pd(nm)), cd)), hi_pd(s));
    vm = nm;
  }
  float lm[8];
  double ld[8];
  _mm256_storeu_ps(lm, vm);
  _mm256_storeu_pd(ld, d0);
  _mm256_storeu_pd(ld + 4, d1);
  smx_online_state st = smx_online_identity();
  for (int l = 0; l < 8; l++) {
    smx_online_state ls = { lm[l], ld[l] };
    st = smx_online_merge(st, ls, c->c);
  }
  if (st.d == 0.0) st.m = -FLT_MAX;
  return st;
}

SMX_INLINE void ext_add(__m256 *v, __m256 *e, __m256 p, __m256 n) {
  __m256 me = _mm256_max_ps(*e, n);
  *v = _mm256_fmadd_ps(p, pow2_neg(_mm256_sub_ps(n, me)), _mm256_mul_ps(*v, pow2_neg(_mm256_sub_ps(*e, me))));
  *e = me;
}

SMX_INLINE __m256 ext_term(__m256 x, expv cv, __m256 xmin, __m256 *n) {
  x = _mm256_max_ps(xmin, x);
  return exp2_poly(split(x, cv, n));
}

/* 2^d in double for integer-valued float d <= 0 (d < -1022 gives 2^-1022: negligible next to any live sum) */
SMX_INLINE __m256d pow2_pd(__m128 d) {
  d = _mm_max_ps(_mm_set1_ps(-1022.0f), d);
  __m256i b = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm_cvtps_epi32(d)), _mm256_set1_epi64x(1023));
  return _mm256_castsi256_pd(_mm256_slli_epi64(b, 52));
}

static smx_ext_state raddextexp_avx2(size_t n, const float *x, const smx_expc *c) {
  const expv cv = expv_load(c);
  const __m256 xmin = _mm256_set1_ps(-c->xlim), ninf = _mm256_set1_ps(-INFINITY);
  const __m256 lowest = _mm256_set1_ps(-FLT_MAX);
  __m256d vd0 = _mm256_setzero_pd(), vd1 = _mm256_setzero_pd();
  __m256 ed = lowest;
  size_t i = 0;
  while (i < n) {
    size_t end = n - i >= SMX_FLUSH ? i + SMX_FLUSH : n;
    __m256 v0 = _mm256_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
    __m256 e0 = lowest, e1 = lowest, e2 = lowest, e3 = lowest;
    __m256 n0, n1, n2, n3;
    for (; i + 32 <= end; i += 32) {
      __m256 p0 = ext_term(_mm256_loadu_ps(x + i), cv, xmin, &n0);
      __m256 p1 = ext_term(_mm256_loadu_ps(x + i + 8), cv, xmin, &n1);
      __m256 p2 = ext_term(_mm256_loadu_ps(x + i + 16), cv, xmin, &n2);
      __m256 p3 = ext_term(_mm256_loadu_ps(x + i + 24), cv, xmin, &n3);
      ext_add(&v0, &e0, p0, n0);
      ext_add(&v1, &e1, p1, n1);
      ext_add(&v2, &e2, p2, n2);
      ext_add(&v3, &e3, p3, n3);
    }
    for (; i < end; i += 8) {
      __m256i k = tail_mask(end - i >= 8 ? 8 : end - i);
      __m256 p = ext_term(load_or(ninf, k, x + i), cv, xmin, &n0);
      p = _mm256_and_ps(p, _mm256_castsi256_ps(k));
      ext_add(&v0, &e0, p, n0);
    }
    __m256 em = _mm256_max_ps(_mm256_max_ps(e0, e1), _mm256_max_ps(e2, e3));
    __m256 vb = _mm256_add_ps(
        _mm256_add_ps(_mm256_mul_ps(v0, pow2_neg(_mm256_sub_ps(e0, em))), _mm256_mul_ps(v1, pow2_neg(_mm256_sub_ps(e1, em)))),
        _mm256_add_ps(_mm256_mul_ps(v2, pow2_neg(_mm256_sub_ps(e2, em))), _mm256_mul_ps(v3, pow2_neg(_mm256_sub_ps(e3, em)))));
    __m256 en = _mm256_max_ps(ed, em);
    __m256 sa = _mm256_sub_ps(ed, en), sb = _mm256_sub_ps(em, en);
    vd0 = _mm256_fmadd_pd(vd0, pow2_pd(_mm256_castps256_ps128(sa)), _mm256_mul_pd(lo_pd(vb), pow2_pd(_mm256_castps256_ps128(sb))));
    vd1 = _mm256_fmadd_pd(vd1, pow2_pd(_mm256_extractf128_ps(sa, 1)), _mm256_mul_pd(hi_pd(vb), pow2_pd(_mm256_extractf128_ps(sb, 1))));
    ed = en;
  }
  float le[8];
  double lv[8];
  _mm256_storeu_ps(le, ed);
  _mm256_storeu_pd(lv, vd0);
  _mm256_storeu_pd(lv + 4, vd1);
  smx_ext_state st = smx_ext_identity();
  for (int l = 0; l < 8; l++) {
    /* an exponent that is not finite means |x c| overflowed float (|x/T| >
     * 2.3e38, or +inf): pow2_neg of inf - inf is not NaN here, so say so
     * explicitly; the caller then takes the three-pass path */
    if (lv[l] != lv[l] || !(le[l] <= FLT_MAX)) { st.v = NAN; break; }
    smx_ext_state ls = { lv[l], le[l] };
    st = smx_ext_merge(st, ls);
  }
  return st;
}

SMX_INLINE void vscaleextexp_impl(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e, int stream) {
  const expv cv = expv_load(c);
  const __m256 xmin = _mm256_set1_ps(-c->xlim), vinv = _mm256_set1_ps(inv_v), vne = _mm256_set1_ps(neg_e);
  size_t i = 0;
  __m256 n0, n1;
  for (; i + 16 <= n; i += 16) {
    __m256 p0 = ext_term(_mm256_loadu_ps(x + i), cv, xmin, &n0);
    __m256 p1 = ext_term(_mm256_loadu_ps(x + i + 8), cv, xmin, &n1);
    store_out(stream, y + i, _mm256_mul_ps(_mm256_mul_ps(p0, vinv), pow2_neg(_mm256_add_ps(n0, vne))));
    store_out(stream, y + i + 8, _mm256_mul_ps(_mm256_mul_ps(p1, vinv), pow2_neg(_mm256_add_ps(n1, vne))));
  }
  for (; i < n; i += 8) {
    __m256i k = tail_mask(n - i >= 8 ? 8 : n - i);
    __m256 p = ext_term(_mm256_maskload_ps(x + i, k), cv, xmin, &n0);
    _mm256_maskstore_ps(y + i, k, _mm256_mul_ps(_mm256_mul_ps(p, vinv), pow2_neg(_mm256_add_ps(n0, vne))));
  }
}

static void vscaleextexp_avx2(size_t n, const float *x, float *y, const smx_expc *c, float inv_v, float neg_e, int stream) {
  if (!stream || ((uintptr_t)y & 3)) { vscaleextexp_impl(n, x, y, c, inv_v, neg_e, 0); return; }
  size_t h = stream_head(y, n);
  vscaleextexp_impl(h, x, y, c, inv_v, neg_e, 0);
  vscaleextexp_impl(n - h, x + h, y + h, c, inv_v, neg_e, 1);
  _mm_sfence();
}

/* Lanes where x - m overflowed to -inf although x is finite (a row spanning
 * more than FLT_MAX, T > 1) are redone in double; never taken on ordinary rows.
 * Per vector, before the store, so that in-place rows still have their x. */
static __attribute__((noinline)) __m256 logsub_overflow(__m256 x, __m256 v, int o, float m, float s, float off) {
  float xs[8], ys[8];
  _mm256_storeu_ps(xs, x);
  _mm256_storeu_ps(ys, v);
  for (int l = 0; l < 8; l++)
    if ((o >> l) & 1) ys[l] = (float)(((double)xs[l] - (double)m) * s - (double)off);
  return _mm256_loadu_ps(ys);
}

typedef struct logsub_c { __m256 vm, vs, voff; float m, s, off; } logsub_c;

SMX_INLINE __m256 logsub(__m256 x, const logsub_c *c, int check) {
  __m256 d = _mm256_sub_ps(x, c->vm);
  __m256 v = _mm256_fmsub_ps(d, c->vs, c->voff);
  if (!check) return v;
  __m256 ninf = _mm256_set1_ps(-INFINITY);
  int o = _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(d, ninf, _CMP_EQ_OQ), _mm256_cmp_ps(x, ninf, _CMP_NEQ_UQ)));
  if (__builtin_expect(o != 0, 0)) v = logsub_overflow(x, v, o, c->m, c->s, c->off);
  return v;
}

SMX_INLINE void vlogsub_impl(size_t n, const float *x, float *y, float m, float s, float off, int stream, int check) {
  const logsub_c c = { _mm256_set1_ps(m), _mm256_set1_ps(s), _mm256_set1_ps(off), m, s, off };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    store_out(stream, y + i, logsub(_mm256_loadu_ps(x + i), &c, check));
    store_out(stream, y + i + 8, logsub(_mm256_loadu_ps(x + i + 8), &c, check));
  }
  for (; i < n; i += 8) {
    __m256i k = tail_mask(n - i >= 8 ? 8 : n - i);
    _mm256_maskstore_ps(y + i, k, logsub(load_or(_mm256_set1_ps(-INFINITY), k, x + i), &c, check));
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

static void vlogsub_avx2(size_t n, const float *x, float *y, float m, double sd, float off, int stream) {
  float s = (float)sd;   /* vector kernels run only while 1/T fits a float (src/api/softmax_api.c) */
  /* x - m can overflow only for m >= 2^103, and the -inf it gives is wrong only for T > 1:
   * the check is compiled out of the common case */
  if (m >= 0x1p103f && s < 1.0f) vlogsub_run(n, x, y, m, s, off, stream, 1);
  else vlogsub_run(n, x, y, m, s, off, stream, 0);
}

const smx_f32_ukernels smx_f32_ukernels_avx2 = {
  "avx2",
  rmax_avx2,
  raddstoreexp_avx2,
  raddexpstoresub_avx2,
  vscale_avx2,
  vscaleexp_avx2,
  ronline_avx2,
  raddextexp_avx2,
  vscaleextexp_avx2,
  vlogsub_avx2,
};
