/* Portable attention micro-kernels: the contract of ukernels.h in plain C (no contraction: -ffp-contract=off). */
#include <math.h>

#include "kernels/f32-attention/ukernels.h"
#include "math/half_scalar.h"

static void qk_scalar(size_t nk, size_t nr, size_t d, const float *qt, size_t ldqt, const float *k, size_t ldk,
                      float *st, size_t ldst) {
  for (size_t c = 0; c < nk; c++) {
    float *s = st + c * ldst;
    for (size_t r = 0; r < nr; r++) s[r] = 0.0f;
    for (size_t t = 0; t < d; t++) {
      float b = k[c * ldk + t];
      const float *q = qt + t * ldqt;
      for (size_t r = 0; r < nr; r++) s[r] += b * q[r];
    }
  }
}

static void qk_rows_scalar(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const float *k, size_t ldk,
                           float *st, size_t ldst) {
  for (size_t c = 0; c < nk; c++)
    for (size_t r = 0; r < nr; r++) {
      float s = 0.0f;
      for (size_t t = 0; t < d; t++) s += q[r * ldq + t] * k[c * ldk + t];
      st[c * ldst + r] = s;
    }
}

static int online_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                         float *alpha, float thr, uint64_t *cnt) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float mt = -INFINITY;
    int nan = 0;
    for (size_t c = 0; c < nk; c++) {
      mt = fmaxf(mt, st[c * ldst + r]);
      nan |= st[c * ldst + r] != st[c * ldst + r];
    }
    if (nan) mt = NAN;   /* never skipped; P and l become NaN (fmaxf alone drops NaN) */
    int vis = mt != -INFINITY, skip = vis && m[r] != -INFINITY && mt - m[r] < thr;
    if (r < nreal) {
      any |= vis && !skip;
      if (cnt) {
        cnt[0] += (uint64_t)vis;
        cnt[1] += (uint64_t)skip;
      }
    }
    if (skip) {
      for (size_t c = 0; c < nk; c++) st[c * ldst + r] = 0.0f;
      alpha[r] = -1.0f;
      continue;
    }
    float mn = fmaxf(m[r], mt), mu = mn == -INFINITY ? 0.0f : mn;
    float a = expf(m[r] - mu), s = 0.0f;
    for (size_t c = 0; c < nk; c++) {
      float p = expf(st[c * ldst + r] - mu);
      st[c * ldst + r] = p;
      s += p;
    }
    l[r] = a * l[r] + s;
    m[r] = mn;
    alpha[r] = a;
  }
  return any;
}

static int online_sigmoid_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                                 float *alpha, float bias) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float sum = 0.0f, mt = -INFINITY;
    for (size_t c = 0; c < nk; c++) mt = fmaxf(mt, st[c * ldst + r]);
    /* l = sum sigmoid(y) e^{-u}, u = min(m, 0): the sum of weights far below 0 would underflow */
    float mn = fmaxf(m[r], mt + bias), uo = fminf(m[r], 0.0f), un = mn == -INFINITY ? 0.0f : fminf(mn, 0.0f);
    float eu = expf(un);
    for (size_t c = 0; c < nk; c++) {
      float x = st[c * ldst + r];
      if (x != -INFINITY && r < nreal) any = 1;
      float y = x + bias, q = expf(-fabsf(y - un));   /* e^{y - u} (y <= 0), e^{-y} (y > 0, u = 0) */
      float ps = x == -INFINITY ? 0.0f : (y > 0.0f ? 1.0f : q) / (1.0f + q * eu);
      st[c * ldst + r] = ps * eu;
      sum += ps;
    }
    l[r] = expf(uo - un) * l[r] + sum;
    m[r] = mn;
    alpha[r] = 1.0f;
  }
  return any;
}

static int online_softpick_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                                  float *alpha) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float mt = -INFINITY, sum = 0.0f;
    int nan = 0;
    for (size_t c = 0; c < nk; c++) {
      mt = fmaxf(mt, st[c * ldst + r]);
      nan |= st[c * ldst + r] != st[c * ldst + r];
    }
    if (nan) mt = NAN;   /* a NaN score is visible: m, alpha and l become NaN */
    if (mt == -INFINITY) {   /* nothing visible in this tile: the row is unchanged */
      for (size_t c = 0; c < nk; c++) st[c * ldst + r] = 0.0f;
      alpha[r] = 1.0f;
      continue;
    }
    if (r < nreal) any = 1;
    /* e^{x-u} - e^{-u} = e^{-u}(e^x - 1) with the shift u = max(m, 0): e^{-m} would overflow below -88.7 */
    float mn = fmaxf(m[r], mt), u = fmaxf(mn, 0.0f), al = expf(fmaxf(m[r], 0.0f) - u), em = expf(-u);
    for (size_t c = 0; c < nk; c++) {
      float x = st[c * ldst + r];
      float y = x == -INFINITY ? 0.0f : expf(x - u) - em;
      st[c * ldst + r] = y > 0.0f ? y : 0.0f;
      sum += fabsf(y);
    }
    l[r] = al * l[r] + sum;
    m[r] = mn;
    alpha[r] = al;
  }
  return any;
}

static void pv_scalar(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v, size_t ldv,
                      float *o, size_t ldo, const float *alpha) {
  for (size_t r = 0; r < nr; r++) {
    float *orow = o + r * ldo;
    if (alpha[r] < 0.0f) continue;   /* skipped by BLASST: P is 0 and O stays */
    for (size_t x = 0; x < dv; x++) orow[x] *= alpha[r];
    for (size_t c = 0; c < nk; c++) {
      float p = pt[c * ldpt + r];
      const float *vr = v + c * ldv;
      for (size_t x = 0; x < dv; x++) orow[x] += p * vr[x];
    }
  }
}

static void rnorm_scalar(size_t n, size_t d, const float *x, size_t ldx, float eps, float *out) {
  for (size_t c = 0; c < n; c++) {
    float s = 0.0f;
    for (size_t t = 0; t < d; t++) s += x[c * ldx + t] * x[c * ldx + t];
    float nrm = sqrtf(s);
    out[c] = 1.0f / (nrm > eps || nrm != nrm ? nrm : eps);   /* a NaN norm stays NaN */
  }
}

static int screen_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, const float *kinv,
                         const float *rinv, float *alpha, uint64_t *cnt) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    int vis = 0, kept = 0;
    for (size_t c = 0; c < nk; c++) {
      float x = st[c * ldst + r];
      vis |= x != -INFINITY;
      float a = 1.0f - (1.0f - x * kinv[c]) * rinv[r];
      a = (a > 0.0f || a != a) && x != -INFINITY ? a : 0.0f;   /* NaN is kept, and counts as a weight; masked: 0 */
      st[c * ldst + r] = a * a;
      kept |= a * a > 0.0f || a != a;
    }
    alpha[r] = kept ? 1.0f : -1.0f;
    if (r < nreal) {
      any |= kept;
      if (cnt) {
        cnt[0] += (uint64_t)vis;
        cnt[1] += (uint64_t)(vis && !kept);
      }
    }
  }
  return any;
}

static void pv_sparse_scalar(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v,
                             size_t ldv, float *o, size_t ldo, float *alpha, float *nz, float maxnz) {
  for (size_t r = 0; r < nr; r++) {
    if (alpha[r] != 1.0f || nz[r] > maxnz) continue;
    float *orow = o + r * ldo;
    for (size_t c = 0; c < nk; c++) {
      float p = pt[c * ldpt + r];
      if (!(p > 0.0f) && p == p) continue;   /* a NaN weight is added (it makes the row NaN) */
      for (size_t x = 0; x < dv; x++) orow[x] += p * v[c * ldv + x];
    }
    alpha[r] = -1.0f;
  }
}

/* element i of a K / V row in storage st */
static float kv_at(int st, const void *p, size_t i) {
  if (st == SMX_ATTN_KV_F16) return smx_f16_to_f32(((const uint16_t *)p)[i]);
  if (st == SMX_ATTN_KV_BF16) return smx_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

static void dec_qk_any(int st, size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const void *k, size_t ldk,
                       float *s, size_t lds) {
  for (size_t r = 0; r < nr; r++)
    for (size_t c = 0; c < nk; c++) {
      float x = 0.0f;
      for (size_t t = 0; t < d; t++) x += q[r * ldq + t] * kv_at(st, k, c * ldk + t);
      s[r * lds + c] = x;
    }
}

static int dec_online_scalar(size_t nk, size_t nr, float *s, size_t lds, float *m, float *l, float *alpha) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float *sr = s + r * lds, mt = -INFINITY, sum = 0.0f;
    for (size_t c = 0; c < nk; c++) mt = fmaxf(mt, sr[c]);
    any |= mt != -INFINITY;
    float mn = fmaxf(m[r], mt), mu = mn == -INFINITY ? 0.0f : mn, a = expf(m[r] - mu);
    for (size_t c = 0; c < nk; c++) {
      sr[c] = expf(sr[c] - mu);
      sum += sr[c];
    }
    l[r] = a * l[r] + sum;
    m[r] = mn;
    alpha[r] = a;
  }
  return any;
}

static void dec_pvo_any(int st, size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const void *v,
                        size_t ldv, float *o, size_t ldo, const float *alpha) {
  for (size_t r = 0; r < nr; r++) {
    float *orow = o + r * ldo;
    for (size_t x = 0; x < dv; x++) orow[x] *= alpha[r];
    for (size_t c = 0; c < nk; c++)
      for (size_t x = 0; x < dv; x++) orow[x] += s[r * lds + c] * kv_at(st, v, c * ldv + x);
  }
}

static int dec_pv_any(int st, size_t nk, size_t nr, size_t dv, float *s, size_t lds, const void *v, size_t ldv,
                      float *o, size_t ldo, float *m, float *l, float *alpha) {
  if (!dec_online_scalar(nk, nr, s, lds, m, l, alpha)) return 0;
  dec_pvo_any(st, nk, nr, dv, s, lds, v, ldv, o, ldo, alpha);
  return 1;
}

#define SMX_ATTN_DEC(name, st)                                                                                      \
  static void dec_qk_##name(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const void *k, size_t ldk,   \
                            float *s, size_t lds, const smx_attn_pf *pf) {                                          \
    (void)pf;                                                                                                        \
    dec_qk_any(st, nk, nr, d, q, ldq, k, ldk, s, lds);                                                              \
  }                                                                                                                  \
  static int dec_pv_##name(size_t nk, size_t nr, size_t dv, float *s, size_t lds, const void *v, size_t ldv, float *o, \
                           size_t ldo, float *m, float *l, float *alpha, const smx_attn_pf *pf) {                   \
    (void)pf;                                                                                                        \
    return dec_pv_any(st, nk, nr, dv, s, lds, v, ldv, o, ldo, m, l, alpha);                                         \
  }                                                                                                                  \
  static void dec_pvo_##name(size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const void *v, size_t ldv, \
                             float *o, size_t ldo, const float *alpha, const smx_attn_pf *pf) {                     \
    (void)pf;                                                                                                        \
    dec_pvo_any(st, nk, nr, dv, s, lds, v, ldv, o, ldo, alpha);                                                     \
  }
SMX_ATTN_DEC(f32, SMX_ATTN_KV_F32)
SMX_ATTN_DEC(f16, SMX_ATTN_KV_F16)
SMX_ATTN_DEC(bf16, SMX_ATTN_KV_BF16)

const smx_attn_ukernels smx_attn_ukernels_scalar = { "scalar",      qk_scalar,     qk_rows_scalar, online_scalar,
                                                     online_sigmoid_scalar, online_softpick_scalar, pv_scalar,
                                                     rnorm_scalar, screen_scalar, pv_sparse_scalar,
                                                     { dec_qk_f32, dec_qk_f16, dec_qk_bf16 },
                                                     { dec_pv_f32, dec_pv_f16, dec_pv_bf16 }, dec_online_scalar,
                                                     { dec_pvo_f32, dec_pvo_f16, dec_pvo_bf16 } };
