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

/* ---- decoding: S[r][c] = scale <Q[r], K[c]> for a block of rb rows x kb keys ---- */
/* as the f32 dqk_block: rb kb = VF_W accumulators, each a vector of pair sums along d, reduced by one
 * transpose-add tree; rows past nrb and keys past nkb repeat the last real one (computed, never stored).
 * Each K row is read once for the rb rows, as stored: no conversion, half the products of f32. */
SMX_INLINE void dqk16_block(size_t rb, size_t kb, size_t nrb, size_t nkb, size_t d, const uint16_t *q, size_t ldq,
                            const uint16_t *k, size_t ldk, float *s, size_t lds, vf_t sc) {
  vf_t acc[VF_W];
  const uint16_t *qp[VF_W], *kp[VF_W];
  for (size_t r = 0; r < rb; r++) qp[r] = q + (r < nrb ? r : nrb - 1) * ldq;
  for (size_t c = 0; c < kb; c++) kp[c] = k + (c < nkb ? c : nkb - 1) * ldk;
  for (size_t i = 0; i < VF_W; i++) acc[i] = vf_zero();
  size_t t = 0;
  for (; t + 2 * VF_W <= d; t += 2 * VF_W) {
    vbp_t kv[VF_W];
    for (size_t c = 0; c < kb; c++) kv[c] = vbp_ldh(kp[c] + t);
    for (size_t r = 0; r < rb; r++) {
      vbp_t qv = vbp_ldh(qp[r] + t);
      for (size_t c = 0; c < kb; c++) acc[r * kb + c] = vf_dp_bf16(acc[r * kb + c], qv, kv[c]);
    }
  }
  if (t < d) {   /* the last d - t < 32 dimensions, zero past them on both sides */
    vbp_t kv[VF_W];
    for (size_t c = 0; c < kb; c++) kv[c] = vbp_ldh_n(kp[c] + t, d - t);
    for (size_t r = 0; r < rb; r++) {
      vbp_t qv = vbp_ldh_n(qp[r] + t, d - t);
      for (size_t c = 0; c < kb; c++) acc[r * kb + c] = vf_dp_bf16(acc[r * kb + c], qv, kv[c]);
    }
  }
  float sum[VF_W];
  vf_st(sum, vf_mul(vf_reduce_add_w(acc), sc));
  if (nkb == kb)
    for (size_t r = 0; r < nrb; r++) memcpy(s + r * lds, sum + r * kb, kb * sizeof(float));
  else
    for (size_t r = 0; r < nrb; r++)
      for (size_t c = 0; c < nkb; c++) s[r * lds + c] = sum[r * kb + c];
}

/* rows per block: 4 (VF_W / 4 keys) when 4 rows are left, else 2 or 1; the K rows of pf (the next tile)
 * are asked for into L2 during the first block of rows, one row per key, spread over the arithmetic */
#define SMX_ATTN16_DQK(rb)                                                                                  \
  for (size_t c = 0; c < nk; c += VF_W / (rb)) {                                                           \
    size_t nkb = nk - c < VF_W / (rb) ? nk - c : VF_W / (rb);                                              \
    if (r == 0)                                                                                            \
      for (size_t i = c; i < c + nkb && i < pf->n; i++)                                                    \
        for (size_t x = 0; x < pf->bytes_k; x += 64) smx_prefetch_l2(pf->k + i * pf->ldk + x);             \
    dqk16_block(rb, VF_W / (rb), nrb, nkb, d, q + r * ldq, ldq, k + c * ldk, ldk, s + r * lds + c, lds, sc); \
  }

static void dec_qk16_k(size_t nk, size_t nr, size_t d, const uint16_t *q, size_t ldq, const uint16_t *k, size_t ldk,
                       float *s, size_t lds, float scale, const smx_attn_pf *pf) {
  const vf_t sc = vf_set1(scale);
  for (size_t r = 0; r < nr;) {
    size_t left = nr - r, nrb;
    if (left >= 4) {
      nrb = 4;
      SMX_ATTN16_DQK(4)
    } else if (left >= 2) {
      nrb = 2;
      SMX_ATTN16_DQK(2)
    } else {
      nrb = 1;
      SMX_ATTN16_DQK(1)
    }
    r += nrb;
  }
}

/* ---- decoding: O[i][cols] = alpha O + sum over pairs of keys of bf16(P) V, i < rb ---- */
/* nv chunks of 32 columns (2 vectors of pairs each); the last chunk holds tn < 32 columns when tn > 0.
 * pp: P of the rb rows by pairs of keys (row stride ldpp pairs); V rows bf16 as stored, paired in
 * registers (the pair of an odd last key is (V, 0), its P (p, 0)); pf: rows whose same columns are asked
 * for into L2 as these are used (0: none). */
SMX_INLINE void dpv16_block(size_t rb, size_t nv, size_t tn, size_t nk, const uint32_t *pp, size_t ldpp,
                            const uint16_t *v, size_t ldv, float *o, size_t ldo, const float *alpha, uintptr_t pf,
                            size_t pf_ld, size_t pf_n) {
  vf_t acc[4][4];
  for (size_t i = 0; i < rb; i++) {
    vf_t a = vf_set1(alpha[i] < 0.0f ? 1.0f : alpha[i]);
    for (size_t w = 0; w < 2 * nv; w++) {
      size_t left = tn && w >= 2 * nv - 2 ? (w == 2 * nv - 2 ? (tn < VF_W ? tn : VF_W) : (tn > VF_W ? tn - VF_W : 0)) : VF_W;
      acc[i][w] = vf_mul(a, left == VF_W ? vf_ld(o + i * ldo + w * VF_W) : vf_ldz_k(o + i * ldo + w * VF_W, kf_tail(left)));
    }
  }
  size_t np = (nk + 1) / 2;
  for (size_t c = 0; c < np; c++) {
    const uint16_t *v0 = v + 2 * c * ldv;
    int two = 2 * c + 1 < nk;
    vbp_t x[4];
    for (size_t w = 0; w < nv; w++) {
      int last = tn && w == nv - 1;
      vbp_t a = last ? vbp_ldh_n(v0 + w * 2 * VF_W, tn) : vbp_ldh(v0 + w * 2 * VF_W);
      vbp_t b = !two ? vbp_zero() : last ? vbp_ldh_n(v0 + ldv + w * 2 * VF_W, tn) : vbp_ldh(v0 + ldv + w * 2 * VF_W);
      vbp_pairs_h(a, b, &x[2 * w], &x[2 * w + 1]);
    }
    if (pf)
      for (size_t e = 2 * c; e < 2 * c + 2 && e < pf_n; e++)
        for (size_t bt = 0; bt < nv * 2 * VF_W * sizeof(uint16_t); bt += 64) smx_prefetch_l2(pf + e * pf_ld + bt);
    for (size_t i = 0; i < rb; i++) {
      vbp_t b = vbp_bcast32(pp[i * ldpp + c]);
      for (size_t w = 0; w < 2 * nv; w++) acc[i][w] = vf_dp_bf16(acc[i][w], b, x[w]);
    }
  }
  for (size_t i = 0; i < rb; i++)
    for (size_t w = 0; w < 2 * nv; w++) {
      size_t left = tn && w >= 2 * nv - 2 ? (w == 2 * nv - 2 ? (tn < VF_W ? tn : VF_W) : (tn > VF_W ? tn - VF_W : 0)) : VF_W;
      if (left == VF_W)
        vf_st(o + i * ldo + w * VF_W, acc[i][w]);
      else if (left)
        vf_st_k(o + i * ldo + w * VF_W, kf_tail(left), acc[i][w]);
    }
}

#define SMX_ATTN16_DPV(nv, tn)                                                                                  \
  switch (rb) {                                                                                                  \
    case 1: dpv16_block(1, nv, tn, nk, p, ldpp, vv, ldv, oo, ldo, al, pfc, pf->ldv, pf->n); break;               \
    case 2: dpv16_block(2, nv, tn, nk, p, ldpp, vv, ldv, oo, ldo, al, pfc, pf->ldv, pf->n); break;               \
    case 3: dpv16_block(3, nv, tn, nk, p, ldpp, vv, ldv, oo, ldo, al, pfc, pf->ldv, pf->n); break;               \
    default: dpv16_block(4, nv, tn, nk, p, ldpp, vv, ldv, oo, ldo, al, pfc, pf->ldv, pf->n); break;              \
  }

/* pairs of keys per block of P (the tile is processed in blocks of 64 keys: O is rescaled once, at the first) */
#define SMX_ATTN16_DEC_KB 64
static void dec_pv16_k(size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const uint16_t *v, size_t ldv,
                       float *o, size_t ldo, const float *alpha, const smx_attn_pf *pf) {
  uint32_t pbuf[4 * SMX_ATTN16_DEC_KB / 2];
  const size_t ldpp = SMX_ATTN16_DEC_KB / 2;
  const float one[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
  for (size_t k0 = 0; k0 < nk; k0 += SMX_ATTN16_DEC_KB) {
    size_t kn = nk - k0 < SMX_ATTN16_DEC_KB ? nk - k0 : SMX_ATTN16_DEC_KB;
    for (size_t r = 0; r < nr; r += 4) {
      size_t rb = nr - r < 4 ? nr - r : 4;
      for (size_t i = 0; i < rb; i++)   /* P of the block rounded to bf16, by pairs of keys (past kn: 0) */
        for (size_t c = 0; c < kn; c += VF_W) {
          vbh_t h = vbh_from_f32_n(s + (r + i) * lds + k0 + c, kn - c < VF_W ? kn - c : VF_W);
          memcpy(pbuf + i * ldpp + c / 2, &h, sizeof h);
        }
      const uint32_t *p = pbuf;
      const float *al = k0 == 0 ? alpha + r : one;
      /* the first rows ask for the next tile's V rows, each strip of columns as the same strip is used */
      uintptr_t pf0 = r == 0 && k0 == 0 && pf->v ? pf->v : 0;
      const uint16_t *vb = v + k0 * ldv;
      size_t col = 0;
      for (; col + 4 * VF_W <= dv; col += 4 * VF_W) {
        const uint16_t *vv = vb + col;
        float *oo = o + r * ldo + col;
        uintptr_t pfc = pf0 ? pf0 + col * sizeof(uint16_t) : 0;
        SMX_ATTN16_DPV(2, 0)
      }
      for (; col + 2 * VF_W <= dv; col += 2 * VF_W) {
        const uint16_t *vv = vb + col;
        float *oo = o + r * ldo + col;
        uintptr_t pfc = pf0 ? pf0 + col * sizeof(uint16_t) : 0;
        SMX_ATTN16_DPV(1, 0)
      }
      if (col < dv) {
        const uint16_t *vv = vb + col;
        float *oo = o + r * ldo + col;
        uintptr_t pfc = pf0 ? pf0 + col * sizeof(uint16_t) : 0;
        SMX_ATTN16_DPV(1, dv - col)
      }
    }
  }
}

const smx_attn_bf16_ukernels SMX_ATTN16_TABLE = { SMX_SIMD_ISA, to_bf16_k, qk16_k, pack_v16_k, pv16_k, dec_qk16_k,
                                                  dec_pv16_k };
