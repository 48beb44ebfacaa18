/*
 * The attention backward micro-kernels (ukernels.h), written once over the
 * vector layer. Included (once) by each per-ISA file, which first includes
 * its src/simd/<isa>.h and defines SMX_ATTN_BWD_TABLE and the register block
 * SMX_ATTN_BWD_MR x SMX_ATTN_BWD_NV (MR broadcast elements of A against NV
 * vectors of B: MR*NV accumulators). gemm is a BLIS-style outer-product
 * update; the exponential is math/vexp_f32.h's degree-6 one (1.18 ulp).
 */
#include <math.h>

#include "math/vexp_f32.h"

#if SMX_VF_SCALE2_SATURATES
#define SMX_ATTN_BWD_AMIN (-138.0f)
#else
#define SMX_ATTN_BWD_AMIN (-87.9f)
#endif

/* C[i][v VF_W + lane] for i < mr, v < nv (full vectors) */
SMX_INLINE void gemm_block(size_t mr, size_t nv, size_t k, const float *a, size_t ars, size_t acs, const float *b,
                           size_t ldb, float *c, size_t ldc, int acc) {
  vf_t x[SMX_ATTN_BWD_MR][SMX_ATTN_BWD_NV];
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) x[i][v] = acc ? vf_ld(c + i * ldc + v * VF_W) : vf_zero();
  for (size_t t = 0; t < k; t++) {
    vf_t bv[SMX_ATTN_BWD_NV];
    for (size_t v = 0; v < nv; v++) bv[v] = vf_ld(b + t * ldb + v * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vf_t s = vf_set1(a[i * ars + t * acs]);
      for (size_t v = 0; v < nv; v++) x[i][v] = vf_fmadd(s, bv[v], x[i][v]);
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) vf_st(c + i * ldc + v * VF_W, x[i][v]);
}

/* the last n < VF_W columns */
SMX_INLINE void gemm_tail(size_t mr, size_t n, size_t k, const float *a, size_t ars, size_t acs, const float *b,
                          size_t ldb, float *c, size_t ldc, int acc) {
  kf_t km = kf_tail(n);
  vf_t x[SMX_ATTN_BWD_MR];
  for (size_t i = 0; i < mr; i++) x[i] = acc ? vf_ldz_k(c + i * ldc, km) : vf_zero();
  for (size_t t = 0; t < k; t++) {
    vf_t bv = vf_ldz_k(b + t * ldb, km);
    for (size_t i = 0; i < mr; i++) x[i] = vf_fmadd(vf_set1(a[i * ars + t * acs]), bv, x[i]);
  }
  for (size_t i = 0; i < mr; i++) vf_st_k(c + i * ldc, km, x[i]);
}

/* one instantiation per mr: the loops unroll into registers */
static void gemm_strip(size_t mr, size_t nv, size_t k, const float *a, size_t ars, size_t acs, const float *b,
                       size_t ldb, float *c, size_t ldc, int acc) {
#define SMX_ATTN_BWD_CASE(M)                                                                                        \
  case M:                                                                                                          \
    if (nv == SMX_ATTN_BWD_NV)                                                                                     \
      gemm_block(M, SMX_ATTN_BWD_NV, k, a, ars, acs, b, ldb, c, ldc, acc);                                          \
    else                                                                                                           \
      for (size_t v = 0; v < nv; v++) gemm_block(M, 1, k, a, ars, acs, b + v * VF_W, ldb, c + v * VF_W, ldc, acc); \
    break;
  switch (mr) {
    SMX_ATTN_BWD_CASE(1)
    SMX_ATTN_BWD_CASE(2)
    SMX_ATTN_BWD_CASE(3)
    SMX_ATTN_BWD_CASE(4)
    SMX_ATTN_BWD_CASE(5)
    default:
      if (nv == SMX_ATTN_BWD_NV)
        gemm_block(SMX_ATTN_BWD_MR, SMX_ATTN_BWD_NV, k, a, ars, acs, b, ldb, c, ldc, acc);
      else
        for (size_t v = 0; v < nv; v++)
          gemm_block(SMX_ATTN_BWD_MR, 1, k, a, ars, acs, b + v * VF_W, ldb, c + v * VF_W, ldc, acc);
      break;
  }
#undef SMX_ATTN_BWD_CASE
}

static void gemm_k(size_t m, size_t n, size_t k, const float *a, size_t ars, size_t acs, const float *b, size_t ldb,
                   float *c, size_t ldc, int acc) {
  size_t full = n / VF_W * VF_W;
  for (size_t j = 0; j < full;) {
    size_t nv = (full - j) / VF_W;
    if (nv > SMX_ATTN_BWD_NV) nv = SMX_ATTN_BWD_NV;
    /* the strip of B (k x nv VF_W) stays in L1 while the rows of A pass */
    for (size_t i = 0; i < m; i += SMX_ATTN_BWD_MR) {
      size_t mr = m - i < SMX_ATTN_BWD_MR ? m - i : SMX_ATTN_BWD_MR;
      gemm_strip(mr, nv, k, a + i * ars, ars, acs, b + j, ldb, c + i * ldc + j, ldc, acc);
    }
    j += nv * VF_W;
  }
  if (full < n)
    for (size_t i = 0; i < m; i += SMX_ATTN_BWD_MR) {
      size_t mr = m - i < SMX_ATTN_BWD_MR ? m - i : SMX_ATTN_BWD_MR;
      switch (mr) {
        case 1: gemm_tail(1, n - full, k, a + i * ars, ars, acs, b + full, ldb, c + i * ldc + full, ldc, acc); break;
        case 2: gemm_tail(2, n - full, k, a + i * ars, ars, acs, b + full, ldb, c + i * ldc + full, ldc, acc); break;
        case 3: gemm_tail(3, n - full, k, a + i * ars, ars, acs, b + full, ldb, c + i * ldc + full, ldc, acc); break;
        default:
          for (size_t q = 0; q < mr; q += 3) {
            size_t mm = mr - q < 3 ? mr - q : 3;
            if (mm == 3)
              gemm_tail(3, n - full, k, a + (i + q) * ars, ars, acs, b + full, ldb, c + (i + q) * ldc + full, ldc, acc);
            else
              for (size_t u = 0; u < mm; u++)
                gemm_tail(1, n - full, k, a + (i + q + u) * ars, ars, acs, b + full, ldb,
                          c + (i + q + u) * ldc + full, ldc, acc);
          }
          break;
      }
    }
}

/* e^{s - lse}, exactly 0 for s = -inf; s - lse is at most a rounding above 0, taken as 0 */
SMX_INLINE vf_t probs_vec(vf_t s, vf_t lse, vexpf_c c, vf_t amin) {
  vf_t e = vexpf_neg(vf_min(vf_zero(), vf_sub(s, lse)), c, amin);   /* vf_min returns its second operand for NaN */
  return vf_sel(vf_eq(s, vf_set1(-__builtin_inff())), vf_zero(), e);
}

static void probs_k(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, float *p, size_t ldp) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_BWD_AMIN);
  size_t full = nk / VF_W * VF_W;
  for (size_t r = 0; r < nr; r++) {
    vf_t l = vf_set1(lse[r]);
    size_t x = 0;
    for (; x < full; x += VF_W) vf_st(p + r * ldp + x, probs_vec(vf_ld(s + r * lds + x), l, c, amin));
    if (x < nk) {
      kf_t km = kf_tail(nk - x);
      vf_st_k(p + r * ldp + x, km, probs_vec(vf_ldz_k(s + r * lds + x, km), l, c, amin));
    }
  }
}

SMX_INLINE vf_t dscores_vec(vf_t s, vf_t p, vf_t dp, vf_t d) {
  return vf_sel(vf_eq(s, vf_set1(-__builtin_inff())), vf_zero(), vf_mul(p, vf_sub(dp, d)));
}

static void dscores_k(size_t nr, size_t nk, const float *s, size_t lds, const float *p, size_t ldp, float *dp,
                      size_t lddp, const float *dvec) {
  size_t full = nk / VF_W * VF_W;
  for (size_t r = 0; r < nr; r++) {
    vf_t d = vf_set1(dvec[r]);
    size_t x = 0;
    for (; x < full; x += VF_W)
      vf_st(dp + r * lddp + x,
            dscores_vec(vf_ld(s + r * lds + x), vf_ld(p + r * ldp + x), vf_ld(dp + r * lddp + x), d));
    if (x < nk) {
      kf_t km = kf_tail(nk - x);
      vf_st_k(dp + r * lddp + x, km,
              dscores_vec(vf_ldz_k(s + r * lds + x, km), vf_ldz_k(p + r * ldp + x, km),
                          vf_ldz_k(dp + r * lddp + x, km), d));
    }
  }
}

/* softpick: E = e^{x}, x = s - lse <= about 19, through the negative-argument exponential as e^{x - 19} e^{19}
 * where x > 0; P and dS as ukernels.h states */
SMX_INLINE void softpick_vec(vf_t s, vf_t lse, vf_t el, vf_t d, vf_t dpv, vexpf_c c, vf_t amin, vf_t *p, vf_t *ds) {
  const vf_t zero = vf_zero(), ninf = vf_set1(-__builtin_inff());
  vf_t x = vf_sub(s, lse);
  mf_t big = vf_gt(x, zero);
  vf_t e = vexpf_neg(vf_sel(big, vf_sub(x, vf_set1(19.0f)), x), c, amin);
  e = vf_mul(e, vf_sel(big, vf_set1(178482300.963187f), vf_set1(1.0f)));   /* e^19 */
  mf_t pos = vf_gt(s, zero), neg = vf_gt(zero, s), live = vf_neq(s, ninf);
  *p = vf_sel(live, vf_sel(pos, vf_sub(e, el), vf_mul(zero, el)), zero);
  *ds = vf_sel(live, vf_mul(e, vf_sel(pos, vf_sub(dpv, d), vf_sel(neg, d, zero))), zero);
}

static void softpick_k(size_t nr, size_t nk, const float *s, size_t lds, const float *lse, const float *dvec, float *p,
                       size_t ldp, float *dp, size_t lddp) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_BWD_AMIN);
  size_t full = nk / VF_W * VF_W;
  for (size_t r = 0; r < nr; r++) {
    vf_t l = vf_set1(lse[r]), el = vf_set1(expf(-lse[r])), d = vf_set1(dvec[r]), pv, dv;
    size_t x = 0;
    for (; x < full; x += VF_W) {
      softpick_vec(vf_ld(s + r * lds + x), l, el, d, vf_ld(dp + r * lddp + x), c, amin, &pv, &dv);
      vf_st(p + r * ldp + x, pv);
      vf_st(dp + r * lddp + x, dv);
    }
    if (x < nk) {
      kf_t km = kf_tail(nk - x);
      softpick_vec(vf_ldz_k(s + r * lds + x, km), l, el, d, vf_ldz_k(dp + r * lddp + x, km), c, amin, &pv, &dv);
      vf_st_k(p + r * ldp + x, km, pv);
      vf_st_k(dp + r * lddp + x, km, dv);
    }
  }
}

const smx_attn_bwd_ukernels SMX_ATTN_BWD_TABLE = { SMX_SIMD_ISA, gemm_k, probs_k, dscores_k, softpick_k };
