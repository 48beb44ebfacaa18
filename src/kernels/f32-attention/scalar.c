/* Portable attention micro-kernels: the contract of ukernels.h in plain C (no contraction: -ffp-contract=off). */
#include <math.h>

#include "kernels/f32-attention/ukernels.h"

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
    for (size_t c = 0; c < nk; c++) mt = fmaxf(mt, st[c * ldst + r]);
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

static int online_sigmoid_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *l, float *alpha,
                                 float bias) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float sum = 0.0f;
    for (size_t c = 0; c < nk; c++) {
      float x = st[c * ldst + r];
      if (x != -INFINITY && r < nreal) any = 1;
      float y = x == -INFINITY ? 0.0f : 1.0f / (1.0f + expf(-(x + bias)));
      st[c * ldst + r] = y;
      sum += y;
    }
    l[r] += sum;
    alpha[r] = 1.0f;
  }
  return any;
}

static int online_softpick_scalar(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                                  float *alpha) {
  int any = 0;
  for (size_t r = 0; r < nr; r++) {
    float mt = -INFINITY, sum = 0.0f;
    for (size_t c = 0; c < nk; c++) mt = fmaxf(mt, st[c * ldst + r]);
    if (mt == -INFINITY) {   /* nothing visible in this tile: the row is unchanged */
      for (size_t c = 0; c < nk; c++) st[c * ldst + r] = 0.0f;
      alpha[r] = 1.0f;
      continue;
    }
    if (r < nreal) any = 1;
    float mn = fmaxf(m[r], mt), al = expf(m[r] - mn), em = expf(-mn);   /* e^{x-m} - e^{-m} = e^{-m}(e^x - 1) */
    for (size_t c = 0; c < nk; c++) {
      float x = st[c * ldst + r];
      float y = x == -INFINITY ? 0.0f : expf(x - mn) - em;
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
    out[c] = 1.0f / (nrm > eps ? nrm : eps);
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
      float a = fmaxf(1.0f - (1.0f - x * kinv[c]) * rinv[r], 0.0f);
      st[c * ldst + r] = a * a;
      kept |= a * a > 0.0f;
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
      if (!(p > 0.0f)) continue;
      for (size_t x = 0; x < dv; x++) orow[x] += p * v[c * ldv + x];
    }
    alpha[r] = -1.0f;
  }
}

const smx_attn_ukernels smx_attn_ukernels_scalar = { "scalar", qk_scalar, qk_rows_scalar, online_scalar, online_sigmoid_scalar,
                                                  online_softpick_scalar, pv_scalar, rnorm_scalar, screen_scalar,
                                                  pv_sparse_scalar };
