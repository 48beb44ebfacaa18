/* Portable attention backward micro-kernels: the contract of ukernels.h in plain C (no contraction). */
#include <math.h>

#include "kernels/f32-attention-bwd/ukernels.h"

static void gemm_scalar(size_t m, size_t n, size_t k, const float *a, size_t ars, size_t acs, const float *b,
                        size_t ldb, float *c, size_t ldc, int acc) {
  for (size_t i = 0; i < m; i++) {
    float *ci = c + i * ldc;
    if (!acc)
      for (size_t j = 0; j < n; j++) ci[j] = 0.0f;
    for (size_t t = 0; t < k; t++) {
      float s = a[i * ars + t * acs];
      const float *bt = b + t * ldb;
      for (size_t j = 0; j < n; j++) ci[j] += s * bt[j];
    }
  }
}

static void probs_scalar(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, float *p, size_t ldp) {
  for (size_t r = 0; r < nr; r++)
    for (size_t c = 0; c < nk; c++) {
      float x = s[r * lds + c], z = x - lse[r];
      /* z is at most a rounding above 0: taken as 0 (a NaN stays NaN) */
      p[r * ldp + c] = x == -INFINITY ? 0.0f : expf(z > 0.0f ? 0.0f : z);
    }
}

static void dscores_scalar(size_t nr, size_t nk, const float *s, size_t lds, const float *p, size_t ldp, float *dp,
                           size_t lddp, const float *dvec) {
  for (size_t r = 0; r < nr; r++)
    for (size_t c = 0; c < nk; c++) {
      float *x = dp + r * lddp + c;
      *x = s[r * lds + c] == -INFINITY ? 0.0f : p[r * ldp + c] * (*x - dvec[r]);
    }
}

static void softpick_scalar(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, const float *dvec,
                            float *p, size_t ldp, float *dp, size_t lddp) {
  for (size_t r = 0; r < nr; r++) {
    float el = expf(-lse[r]), d = dvec[r];
    for (size_t c = 0; c < nk; c++) {
      float z = s[r * lds + c], *ds = dp + r * lddp + c;
      if (z == -INFINITY) {
        p[r * ldp + c] = 0.0f;
        *ds = 0.0f;
        continue;
      }
      float e = expf(z - lse[r]);
      p[r * ldp + c] = z > 0.0f ? e - el : 0.0f * el;
      *ds = e * (z > 0.0f ? *ds - d : z < 0.0f ? d : 0.0f);
    }
  }
}

const smx_attn_bwd_ukernels smx_attn_bwd_ukernels_scalar = { "scalar", gemm_scalar, probs_scalar, dscores_scalar,
                                                             softpick_scalar };
