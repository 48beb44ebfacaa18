/*
 * The bf16 attention tile products (ukernels.h), written once over the
 * vector layer's bf16 pairs (src/simd/avx512bf16.h). Included once by each
 * per-ISA file, which first includes its simd header and defines
 * SMX_ATTN16_TABLE and the register block SMX_ATTN16_MR x SMX_ATTN16_NV
 * (MR broadcast pairs against NV vectors of pairs, as the f32 body's qk / pv).
 *
 * qk: the vectors run over query rows, each lane a pair of dimensions of its
 * row; the broadcasts are pairs of dimensions of K rows read in place. pv:
 * the vectors run over columns of V, each lane a pair of keys; the broadcasts
 * are pairs of keys of P. Both reduce over pairs with vdpbf16ps.
 */
#include <string.h>

/* ---- St[c0 + i][rows of v] = scale sum_t Q K, for i < mr, v < nv -------- */
SMX_INLINE void qk16_block(size_t mr, size_t nv, size_t d, const uint32_t *qp, size_t ldqp, const uint16_t *k,
                           size_t ldk, float *st, size_t ldst, vf_t sc) {
  vf_t acc[SMX_ATTN16_MR][SMX_ATTN16_NV];
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) acc[i][v] = vf_zero();
  size_t np = d / 2;
  for (size_t t = 0; t < np; t++) {
    vbp_t q[SMX_ATTN16_NV];
    for (size_t v = 0; v < nv; v++) q[v] = vbp_ld(qp + t * ldqp + v * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vbp_t b = vbp_bcast(k + i * ldk + 2 * t);
      for (size_t v = 0; v < nv; v++) acc[i][v] = vf_dp_bf16(acc[i][v], b, q[v]);
    }
  }
  if (d & 1) {   /* the last dimension alone: (k, 0), never reading past the row */
    vbp_t q[SMX_ATTN16_NV];
    for (size_t v = 0; v < nv; v++) q[v] = vbp_ld(qp + np * ldqp + v * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vbp_t b = vbp_bcast_lo(k + i * ldk + d - 1);
      for (size_t v = 0; v < nv; v++) acc[i][v] = vf_dp_bf16(acc[i][v], b, q[v]);
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) vf_st(st + i * ldst + v * VF_W, vf_mul(acc[i][v], sc));
}

/* one instantiation per (mr, nv): the loops unroll into registers */
#define SMX_ATTN16_QK(nv)                                                                   \
  switch (mr) {                                                                             \
    case 1: qk16_block(1, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;                     \
    case 2: qk16_block(2, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;                     \
    case 3: qk16_block(3, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;                     \
    case 4: qk16_block(4, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;                     \
    case 5: qk16_block(5, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;                     \
    default: qk16_block(SMX_ATTN16_MR, nv, d, q, ldqp, kk, ldk, s, ldst, sc); break;        \
  }

static void qk16_k(size_t nk, size_t nr, size_t d, const uint32_t *qp, size_t ldqp, const uint16_t *k, size_t ldk,
                   float *st, size_t ldst, float scale) {
  const vf_t sc = vf_set1(scale);
  for (size_t j = 0; j < nr;) {
    size_t nv = (nr - j) / VF_W;
    if (nv > SMX_ATTN16_NV) nv = SMX_ATTN16_NV;
    const uint32_t *q = qp + j;
    /* the strip of Qp (d / 2 x nv VF_W pairs) stays in L1 while the keys stream past */
    for (size_t c = 0; c < nk; c += SMX_ATTN16_MR) {
      size_t mr = nk - c < SMX_ATTN16_MR ? nk - c : SMX_ATTN16_MR;
      const uint16_t *kk = k + c * ldk;
      float *s = st + c * ldst + j;
      if (nv == SMX_ATTN16_NV) {
        SMX_ATTN16_QK(SMX_ATTN16_NV)
      } else {
        for (size_t v = 0; v < nv; v++, q += VF_W, s += VF_W) SMX_ATTN16_QK(1)
        q -= nv * VF_W;
      }
    }
    j += nv * VF_W;
  }
}

/* ---- V rows packed by pairs of keys --------------------------------------- */
static void pack_v16_k(size_t nk, size_t dv, const void *v, size_t ldv, int f32, uint32_t *vp, size_t ldvp) {
  for (size_t c = 0; c < nk; c += 2) {
    int two = c + 1 < nk;   /* an odd last key pairs with 0 (never NaN x 0 from a stale row) */
    uint32_t *out = vp + (c / 2) * ldvp;
    for (size_t x = 0; x < ldvp; x += VF_W) {
      size_t n = x < dv ? (dv - x < VF_W ? dv - x : VF_W) : 0;
      kf_t km = kf_tail(n);
      vbp_t pr;
      if (f32) {
        const float *a = (const float *)v + c * ldv + x;
        pr = vbp_pair(vf_ldz_k(a, km), two ? vf_ldz_k(a + ldv, km) : vf_zero());
      } else {
        const uint16_t *a = (const uint16_t *)v + c * ldv + x;
        pr = vbp_pair_bf16(vbh_ldz_k(a, km), two ? vbh_ldz_k(a + ldv, km) : vbh_zero());
      }
      vbp_st(out + x, pr);
    }
  }
}

/* ---- O[i][cols] = alpha O + sum over pairs of keys of Pp V, i < mr ---------- */
SMX_INLINE void pv16_block(size_t mr, size_t nv, int tail, kf_t km, size_t np, const uint32_t *pp, size_t ldpp,
                           const uint32_t *vp, size_t ldvp, float *o, size_t ldo, const float *alpha) {
  vf_t acc[SMX_ATTN16_MR][SMX_ATTN16_NV];
  for (size_t i = 0; i < mr; i++) {
    vf_t a = vf_set1(alpha[i] < 0.0f ? 1.0f : alpha[i]);   /* < 0: a row BLASST skipped (its P is 0) */
    for (size_t w = 0; w < nv; w++)
      acc[i][w] = vf_mul(a, tail ? vf_ldz_k(o + i * ldo + w * VF_W, km) : vf_ld(o + i * ldo + w * VF_W));
  }
  for (size_t c = 0; c < np; c++) {
    vbp_t x[SMX_ATTN16_NV];
    for (size_t w = 0; w < nv; w++) x[w] = vbp_ld(vp + c * ldvp + w * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vbp_t b = vbp_bcast32(pp[c * ldpp + i]);
      for (size_t w = 0; w < nv; w++) acc[i][w] = vf_dp_bf16(acc[i][w], b, x[w]);
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t w = 0; w < nv; w++) {
      if (tail)
        vf_st_k(o + i * ldo + w * VF_W, km, acc[i][w]);
      else
        vf_st(o + i * ldo + w * VF_W, acc[i][w]);
    }
}

#define SMX_ATTN16_PV(nv, tail)                                                                      \
  switch (mr) {                                                                                      \
    case 1: pv16_block(1, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;                    \
    case 2: pv16_block(2, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;                    \
    case 3: pv16_block(3, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;                    \
    case 4: pv16_block(4, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;                    \
    case 5: pv16_block(5, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;                    \
    default: pv16_block(SMX_ATTN16_MR, nv, tail, km, np, p, ldpp, vv, ldvp, oo, ldo, al); break;       \
  }

static void pv16_k(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, uint32_t *pp, const uint32_t *vp,
                   size_t ldvp, float *o, size_t ldo, const float *alpha) {
  size_t np = (nk + 1) / 2, ldpp = (nr + VF_W - 1) / VF_W * VF_W;
  /* P rounded to bf16, by pairs of keys (the odd last key pairs with 0) */
  for (size_t c = 0; c < np; c++) {
    const float *a = pt + 2 * c * ldpt;
    int two = 2 * c + 1 < nk;
    for (size_t r = 0; r < ldpp; r += VF_W)
      vbp_st(pp + c * ldpp + r, vbp_pair(vf_ld(a + r), two ? vf_ld(a + ldpt + r) : vf_zero()));
  }
  const size_t step = SMX_ATTN16_NV * VF_W;
  for (size_t r = 0; r < nr; r += SMX_ATTN16_MR) {
    size_t mr = nr - r < SMX_ATTN16_MR ? nr - r : SMX_ATTN16_MR;
    const uint32_t *p = pp + r;
    const float *al = alpha + r;
    kf_t km = kf_tail(1);
    size_t col = 0;
    for (; col + step <= dv; col += step) {
      const uint32_t *vv = vp + col;
      float *oo = o + r * ldo + col;
      SMX_ATTN16_PV(SMX_ATTN16_NV, 0)
    }
    for (; col + VF_W <= dv; col += VF_W) {
      const uint32_t *vv = vp + col;
      float *oo = o + r * ldo + col;
      SMX_ATTN16_PV(1, 0)
    }
    if (col < dv) {
      const uint32_t *vv = vp + col;
      float *oo = o + r * ldo + col;
      km = kf_tail(dv - col);
      SMX_ATTN16_PV(1, 1)
    }
  }
}

static void to_bf16_k(size_t n, const float *x, uint16_t *y) {
  for (size_t i = 0; i < n; i += VF_W) {
    kf_t km = kf_tail(n - i < VF_W ? n - i : VF_W);
    vbh_st_k(y + i, km, vf_to_bf16(vf_ldz_k(x + i, km)));
  }
}

const smx_attn_bf16_ukernels SMX_ATTN16_TABLE = { SMX_SIMD_ISA, to_bf16_k, qk16_k, pack_v16_k, pv16_k };
