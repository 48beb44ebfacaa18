/*
 * The attention micro-kernels, written once over the vector layer. Included
 * (once) by each per-ISA file, which first includes its src/simd/<isa>.h and
 * defines SMX_ATTN_TABLE (the table's name) and the register block
 * SMX_ATTN_MR x SMX_ATTN_NV: MR broadcast operands against NV vectors, MR*NV
 * accumulators (24 of the 32 AVX-512 / NEON registers, 12 of AVX2's 16), and
 * the dot-product block of qk_rows, SMX_ATTN_DR rows x SMX_ATTN_DK keys.
 *
 * qk: the vectors run over query rows (Qt is row-contiguous per d), the
 * broadcasts over keys, read from K rows in place; pv: the vectors run over
 * the columns of V, the broadcasts over the rows of Pt. Both are BLIS-style
 * outer-product updates, d (resp. the key) being the reduction index.
 * The exponential is math/vexp_f32.h's degree-6 one (1.18 ulp).
 */
#include <string.h>

#include "math/vexp_f32.h"

#if SMX_VF_SCALE2_SATURATES
#define SMX_ATTN_AMIN (-138.0f)   /* a log2(e) >= -200: vscalef rounds to +0 below */
#else
#define SMX_ATTN_AMIN (-87.9f)    /* a log2(e) > -127: the exponent field is exact */
#endif

/* ---- St[c0 + i][j0 + v VF_W + lane] for i < mr, v < nv ------------------- */
SMX_INLINE void qk_block(size_t mr, size_t nv, size_t d, const float *qt, size_t ldqt, const float *k, size_t ldk,
                         float *st, size_t ldst) {
  vf_t acc[SMX_ATTN_MR][SMX_ATTN_NV];
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) acc[i][v] = vf_zero();
  for (size_t t = 0; t < d; t++) {
    vf_t q[SMX_ATTN_NV];
    for (size_t v = 0; v < nv; v++) q[v] = vf_ld(qt + t * ldqt + v * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vf_t b = vf_set1(k[i * ldk + t]);
      for (size_t v = 0; v < nv; v++) acc[i][v] = vf_fmadd(b, q[v], acc[i][v]);
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t v = 0; v < nv; v++) vf_st(st + i * ldst + v * VF_W, acc[i][v]);
}

/* one instantiation per (mr, nv): the loops unroll into registers */
static void qk_strip(size_t mr, size_t nv, size_t d, const float *qt, size_t ldqt, const float *k, size_t ldk,
                     float *st, size_t ldst) {
  if (nv == SMX_ATTN_NV) {
    switch (mr) {
      case 1: qk_block(1, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
      case 2: qk_block(2, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
      case 3: qk_block(3, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
      case 4: qk_block(4, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
      case 5: qk_block(5, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
      default: qk_block(SMX_ATTN_MR, SMX_ATTN_NV, d, qt, ldqt, k, ldk, st, ldst); break;
    }
    return;
  }
  for (size_t v = 0; v < nv; v++) {
    const float *q = qt + v * VF_W;
    float *s = st + v * VF_W;
    switch (mr) {
      case 1: qk_block(1, 1, d, q, ldqt, k, ldk, s, ldst); break;
      case 2: qk_block(2, 1, d, q, ldqt, k, ldk, s, ldst); break;
      case 3: qk_block(3, 1, d, q, ldqt, k, ldk, s, ldst); break;
      case 4: qk_block(4, 1, d, q, ldqt, k, ldk, s, ldst); break;
      case 5: qk_block(5, 1, d, q, ldqt, k, ldk, s, ldst); break;
      default: qk_block(SMX_ATTN_MR, 1, d, q, ldqt, k, ldk, s, ldst); break;
    }
  }
}

static void qk_k(size_t nk, size_t nr, size_t d, const float *qt, size_t ldqt, const float *k, size_t ldk, float *st,
                 size_t ldst) {
  for (size_t j = 0; j < nr;) {
    size_t nv = (nr - j) / VF_W;
    if (nv > SMX_ATTN_NV) nv = SMX_ATTN_NV;
    /* the strip of Qt (d x nv VF_W) stays in L1 while the keys stream past */
    for (size_t c = 0; c < nk; c += SMX_ATTN_MR) {
      size_t mr = nk - c < SMX_ATTN_MR ? nk - c : SMX_ATTN_MR;
      qk_strip(mr, nv, d, qt + j, ldqt, k + c * ldk, ldk, st + c * ldst + j, ldst);
    }
    j += nv * VF_W;
  }
}

/* ---- few rows (decoding): St[c][r] = <Q[r], K[c]>, vectors over d ------- */
SMX_INLINE void qkd_block(size_t nrb, size_t nkb, size_t d, const float *q, size_t ldq, const float *k, size_t ldk,
                          float *st, size_t ldst) {
  vf_t acc[SMX_ATTN_DR][SMX_ATTN_DK];
  for (size_t r = 0; r < nrb; r++)
    for (size_t c = 0; c < nkb; c++) acc[r][c] = vf_zero();
  size_t t = 0;
  for (; t + VF_W <= d; t += VF_W) {
    vf_t kv[SMX_ATTN_DK];
    for (size_t c = 0; c < nkb; c++) kv[c] = vf_ld(k + c * ldk + t);
    for (size_t r = 0; r < nrb; r++) {
      vf_t qv = vf_ld(q + r * ldq + t);
      for (size_t c = 0; c < nkb; c++) acc[r][c] = vf_fmadd(qv, kv[c], acc[r][c]);
    }
  }
  if (t < d) {
    kf_t km = kf_tail(d - t);
    vf_t kv[SMX_ATTN_DK];
    for (size_t c = 0; c < nkb; c++) kv[c] = vf_ldz_k(k + c * ldk + t, km);
    for (size_t r = 0; r < nrb; r++) {
      vf_t qv = vf_ldz_k(q + r * ldq + t, km);
      for (size_t c = 0; c < nkb; c++) acc[r][c] = vf_fmadd(qv, kv[c], acc[r][c]);
    }
  }
  for (size_t r = 0; r < nrb; r++) {
    if (nkb == 4) {   /* four keys of a row in one reduction tree */
      float s4[4];
      vf_reduce_add4(acc[r][0 % SMX_ATTN_DK], acc[r][1 % SMX_ATTN_DK], acc[r][2 % SMX_ATTN_DK], acc[r][3 % SMX_ATTN_DK], s4);
      for (size_t c = 0; c < 4; c++) st[c * ldst + r] = s4[c];
    } else {
      for (size_t c = 0; c < nkb; c++) st[c * ldst + r] = vf_reduce_add(acc[r][c]);
    }
  }
}

/* a full block of keys, or the last keys one at a time */
#define SMX_ATTN_QKD(nrb)                                                                 \
  if (nkb == SMX_ATTN_DK) {                                                              \
    qkd_block(nrb, SMX_ATTN_DK, d, qq, ldq, kk, ldk, ss, ldst);                          \
  } else {                                                                               \
    for (size_t c1 = 0; c1 < nkb; c1++)                                                  \
      qkd_block(nrb, 1, d, qq, ldq, kk + c1 * ldk, ldk, ss + c1 * ldst, ldst);           \
  }

static void qk_rows_k(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const float *k, size_t ldk,
                      float *st, size_t ldst) {
  for (size_t c = 0; c < nk; c += SMX_ATTN_DK) {
    size_t nkb = nk - c < SMX_ATTN_DK ? nk - c : SMX_ATTN_DK;
    const float *kk = k + c * ldk;
    for (size_t r = 0; r < nr; r += SMX_ATTN_DR) {
      size_t nrb = nr - r < SMX_ATTN_DR ? nr - r : SMX_ATTN_DR;
      const float *qq = q + r * ldq;
      float *ss = st + c * ldst + r;
      switch (nrb) {
        case 1: SMX_ATTN_QKD(1) break;
        case 2: SMX_ATTN_QKD(2) break;
        case 3: SMX_ATTN_QKD(3) break;
        default: SMX_ATTN_QKD(SMX_ATTN_DR) break;
      }
    }
  }
}

/* ---- online softmax step over the rows, VF_W rows at a time ------------- */
static int online_k(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l, float *alpha,
                    float thr, uint64_t *cnt) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_AMIN), ninf = vf_set1(-__builtin_inff()), pinf = vf_set1(__builtin_inff());
  const vf_t zero = vf_zero(), one = vf_set1(1.0f), vthr = vf_set1(thr);
  int any = 0;
  for (size_t j = 0; j < nr; j += VF_W) {
    vf_t mt = ninf;
    mf_t nan = mf_none();
    for (size_t i = 0; i < nk; i++) {
      vf_t x = vf_ld(st + i * ldst + j);
      mt = vf_max(mt, x);
      nan = mf_or(nan, vf_unord(x, x));
    }
    /* a NaN score makes the tile maximum NaN (vf_max alone may drop it): the row is then never skipped, and
     * its m, alpha, P and l become NaN, which the end of the row reports (smx_attn_normalize) */
    mt = vf_sel(nan, vf_set1(__builtin_nanf("")), mt);
    vf_t mo = vf_ld(m + j);
    /* BLASST: a row whose tile maximum lies below its running maximum by more than |thr| takes no
     * part (never its first visible tile: mo is -inf there) */
    mf_t vis = vf_neq(mt, ninf), skip = mf_and(mf_and(vis, vf_neq(mo, ninf)), vf_gt(vthr, vf_sub(mt, mo)));
    vf_t mn = vf_sel(skip, mo, vf_max(mo, mt));
    /* a row with nothing visible yet shifts by 0: exp(-inf - 0) = 0, never NaN; a skipped one by +inf: P = 0 */
    vf_t mu = vf_sel(skip, pinf, vf_sel(vf_eq(mn, ninf), zero, mn));
    /* a skipped row gets alpha = -1: pv leaves it alone (and leaves it out of its register blocks) */
    vf_t a = vf_sel(skip, vf_set1(-1.0f), vexpf_neg(vf_sub(mo, vf_sel(skip, mo, mu)), c, amin));
    unsigned real = nreal >= j + VF_W ? (unsigned)((1ull << VF_W) - 1) : nreal > j ? (1u << (nreal - j)) - 1u : 0u;
    unsigned bv = mf_bits(vis) & real, bs = mf_bits(skip) & real;
    any |= (bv & ~bs) != 0;
    if (cnt) {
      cnt[0] += (uint64_t)__builtin_popcount(bv);
      cnt[1] += (uint64_t)__builtin_popcount(bs);
    }
    if (mf_bits(skip) == (unsigned)((1ull << VF_W) - 1)) {   /* every row here skips the tile: no exponential */
      for (size_t i = 0; i < nk; i++) vf_st(st + i * ldst + j, zero);
      vf_st(alpha + j, a);
      continue;
    }
    vf_t s0 = zero, s1 = zero;
    size_t i = 0;
    for (; i + 2 <= nk; i += 2) {
      vf_t p0 = vexpf_neg(vf_sub(vf_ld(st + i * ldst + j), mu), c, amin);
      vf_t p1 = vexpf_neg(vf_sub(vf_ld(st + (i + 1) * ldst + j), mu), c, amin);
      vf_st(st + i * ldst + j, p0);
      vf_st(st + (i + 1) * ldst + j, p1);
      s0 = vf_add(s0, p0);
      s1 = vf_add(s1, p1);
    }
    if (i < nk) {
      vf_t p0 = vexpf_neg(vf_sub(vf_ld(st + i * ldst + j), mu), c, amin);
      vf_st(st + i * ldst + j, p0);
      s0 = vf_add(s0, p0);
    }
    vf_st(l + j, vf_fmadd(vf_sel(skip, one, a), vf_ld(l + j), vf_add(s0, s1)));
    vf_st(m + j, mn);
    vf_st(alpha + j, a);
  }
  return any;
}

/* ---- sigmoid attention: P = sigmoid(S + bias), l = sum P e^{-u} (u = min(m, 0)), alpha = 1 ---- */
static int online_sigmoid_k(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                            float *alpha, float bias) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_AMIN), ninf = vf_set1(-__builtin_inff()), zero = vf_zero(), one = vf_set1(1.0f);
  const vf_t vb = vf_set1(bias);
  int any = 0;
  for (size_t j = 0; j < nr; j += VF_W) {
    vf_t mt = ninf;
    for (size_t i = 0; i < nk; i++) mt = vf_max(mt, vf_ld(st + i * ldst + j));
    /* the row sum is kept shifted by u = min(m, 0), m the largest y = S + bias so far: weights e^y of
     * scores far below 0 underflow float, and their sum with them (lse -inf); the weights P themselves are
     * the plain sigmoid (O is not normalised). A row without a key yet shifts by 0, and its empty sum by
     * e^{-inf} = 0, never inf - inf. */
    vf_t mo = vf_ld(m + j), mn = vf_max(mo, vf_add(mt, vb));
    vf_t uo = vf_min(mo, zero), un = vf_sel(vf_eq(mn, ninf), zero, vf_min(mn, zero));
    vf_t a = vexpf_neg(vf_sub(uo, un), c, amin), eu = vexpf_neg(un, c, amin), sum = zero;
    for (size_t i = 0; i < nk; i++) {
      vf_t y = vf_add(vf_ld(st + i * ldst + j), vb);
      /* r = e^{-|y - u|}: e^{y - u} <= 1 where y <= 0, e^{-y} where y > 0 (u = 0 there, so e^u = 1); the
       * scaled weight sigmoid(y) e^{-u} is sel(y > 0, 1, r) / (1 + r e^u) and P = that e^u (the same
       * arithmetic as before when u = 0); a masked score (-inf) gives r = 0 and P = 0 */
      vf_t r = vexpf_neg(vf_sub(zero, vf_abs(vf_sub(y, un))), c, amin);
      vf_t ps = vf_div(vf_sel(vf_gt(y, zero), one, r), vf_add(one, vf_mul(r, eu)));
      vf_st(st + i * ldst + j, vf_mul(ps, eu));
      sum = vf_add(sum, ps);
    }
    unsigned real = nreal >= j + VF_W ? (unsigned)((1ull << VF_W) - 1) : nreal > j ? (1u << (nreal - j)) - 1u : 0u;
    any |= (mf_bits(vf_neq(mt, ninf)) & real) != 0;
    vf_st(l + j, vf_fmadd(a, vf_ld(l + j), sum));
    vf_st(m + j, mn);
    vf_st(alpha + j, one);
  }
  return any;
}

/* ---- softpick: P = relu(e^{S-u} - e^{-u}), l = alpha l + sum |e^{S-u} - e^{-u}| over visible keys, u =
 * max(m, 0) ---- */
static int online_softpick_k(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                             float *alpha) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_AMIN), ninf = vf_set1(-__builtin_inff()), zero = vf_zero(), one = vf_set1(1.0f);
  int any = 0;
  for (size_t j = 0; j < nr; j += VF_W) {
    vf_t mt = ninf;
    mf_t nan = mf_none();
    for (size_t i = 0; i < nk; i++) {
      vf_t x = vf_ld(st + i * ldst + j);
      mt = vf_max(mt, x);
      nan = mf_or(nan, vf_unord(x, x));
    }
    /* a NaN score counts as visible and makes m, alpha and l NaN (reported at the end of the row) */
    mt = vf_sel(nan, vf_set1(__builtin_nanf("")), mt);
    vf_t mo = vf_ld(m + j), mn = vf_max(mo, mt);
    mf_t vis = vf_neq(mt, ninf);
    /* the shift is max(m, 0), not m: e^{-m} overflows float once m < -88.7 (every score far below 0), and
     * a later tile's rescale by e^{m_old - m} then met inf (NaN); with this shift e^{-shift} <= 1.
     * smx_attn_normalize scales the epsilon by e^{m - shift} to match the reference's form. vf_max(zero, .)
     * keeps a NaN maximum (its second operand). */
    vf_t so = vf_max(zero, mo), mu = vf_max(zero, mn);
    vf_t a = vexpf_neg(vf_sub(so, mu), c, amin);
    vf_t em = vexpf_neg(vf_sub(zero, mu), c, amin), sum = zero;
    for (size_t i = 0; i < nk; i++) {
      vf_t x = vf_ld(st + i * ldst + j);
      mf_t live = vf_neq(x, ninf);   /* masked keys take no part in the denominator either */
      vf_t y = vf_sel(live, vf_sub(vexpf_neg(vf_sub(x, mu), c, amin), em), zero);
      vf_st(st + i * ldst + j, vf_sel(vis, vf_max(y, zero), zero));
      sum = vf_add(sum, vf_abs(y));
    }
    unsigned real = nreal >= j + VF_W ? (unsigned)((1ull << VF_W) - 1) : nreal > j ? (1u << (nreal - j)) - 1u : 0u;
    any |= (mf_bits(vis) & real) != 0;
    /* a row with no visible key in the tile is left as it was */
    vf_st(l + j, vf_sel(vis, vf_fmadd(a, vf_ld(l + j), sum), vf_ld(l + j)));
    vf_st(m + j, vf_sel(vis, mn, mo));
    vf_st(alpha + j, vf_sel(vis, a, one));
  }
  return any;
}

/* ---- K / V rows in their storage (decoding converts them as it loads) --- */
/* st: SMX_ATTN_KV_F32, _F16 or _BF16; p an element of that storage */
SMX_INLINE size_t kv_size(int st) { return st == SMX_ATTN_KV_F32 ? sizeof(float) : sizeof(uint16_t); }
SMX_INLINE vf_t kv_ld(int st, const void *p) {
  if (st == SMX_ATTN_KV_F32) return vf_ld((const float *)p);
  if (st == SMX_ATTN_KV_F16) return vf_ld_f16((const uint16_t *)p);
  return vf_ld_bf16((const uint16_t *)p);
}
/* the first n < VF_W elements (km: their f32 mask), the other lanes +0 */
SMX_INLINE vf_t kv_ldz(int st, const void *p, size_t n, kf_t km) {
  if (st == SMX_ATTN_KV_F32) return vf_ldz_k((const float *)p, km);
  uint16_t h[VF_W] = { 0 };
  memcpy(h, p, n * sizeof(uint16_t));
  return st == SMX_ATTN_KV_F16 ? vf_ld_f16(h) : vf_ld_bf16(h);
}

/* ---- O[r0 + i][cols] = alpha O + sum_c Pt[c][r0 + i] V[c][cols] ---------- */
/* V rows in storage st (ldv elements apart); tail: the last tn < VF_W columns (mask km) */
SMX_INLINE void pv_block(size_t mr, size_t nv, int tail, kf_t km, size_t tn, size_t nk, const float *pt, size_t ldpt,
                         size_t rs, int st, const void *v, size_t ldv, float *o, size_t ldo, const float *alpha,
                         uintptr_t pf, size_t pf_ld, size_t pf_bytes, size_t pf_n) {
  const char *vb = (const char *)v;
  size_t es = kv_size(st);
  vf_t acc[SMX_ATTN_MR][SMX_ATTN_NV];
  for (size_t i = 0; i < mr; i++) {
    vf_t a = vf_set1(alpha[i] < 0.0f ? 1.0f : alpha[i]);   /* < 0: a row BLASST skipped (its P is 0) */
    for (size_t w = 0; w < nv; w++)
      acc[i][w] = vf_mul(a, tail ? vf_ldz_k(o + i * ldo + w * VF_W, km) : vf_ld(o + i * ldo + w * VF_W));
  }
  for (size_t c = 0; c < nk; c++) {
    if (pf && c < pf_n)   /* decoding: the same columns of a row ahead, into L2 */
      for (size_t b = 0; b < pf_bytes; b += 64) smx_prefetch_l2(pf + c * pf_ld + b);
    vf_t x[SMX_ATTN_NV];
    for (size_t w = 0; w < nv; w++) {
      const char *at = vb + (c * ldv + w * VF_W) * es;
      x[w] = tail ? kv_ldz(st, at, tn, km) : kv_ld(st, at);
    }
    for (size_t i = 0; i < mr; i++) {
      vf_t b = vf_set1(pt[c * ldpt + i * rs]);
      for (size_t w = 0; w < nv; w++) acc[i][w] = vf_fmadd(b, x[w], acc[i][w]);
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

#define SMX_ATTN_PV(nv, tail)                                                                 \
  switch (mr) {                                                                               \
    case 1: pv_block(1, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;             \
    case 2: pv_block(2, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;             \
    case 3: pv_block(3, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;             \
    case 4: pv_block(4, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;             \
    case 5: pv_block(5, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;             \
    default: pv_block(SMX_ATTN_MR, nv, tail, km, tn, nk, p, ldpt, rs, st, vv, ldv, oo, ldo, al, pfc, pf_ld, pfb, pf_n); break;  \
  }

/* ---- the same over the rows idx[0..mr) (BLASST: the rows that take part, compacted) ---- */
SMX_INLINE void pv_block_idx(size_t mr, size_t nv, int tail, kf_t km, size_t nk, const float *pt, size_t ldpt,
                             const float *v, size_t ldv, float *o, size_t ldo, const float *alpha,
                             const uint16_t *idx) {
  vf_t acc[SMX_ATTN_MR][SMX_ATTN_NV];
  for (size_t i = 0; i < mr; i++) {
    vf_t a = vf_set1(alpha[idx[i]]);
    for (size_t w = 0; w < nv; w++)
      acc[i][w] = vf_mul(a, tail ? vf_ldz_k(o + idx[i] * ldo + w * VF_W, km) : vf_ld(o + idx[i] * ldo + w * VF_W));
  }
  for (size_t c = 0; c < nk; c++) {
    vf_t x[SMX_ATTN_NV];
    for (size_t w = 0; w < nv; w++) x[w] = tail ? vf_ldz_k(v + c * ldv + w * VF_W, km) : vf_ld(v + c * ldv + w * VF_W);
    for (size_t i = 0; i < mr; i++) {
      vf_t b = vf_set1(pt[c * ldpt + idx[i]]);
      for (size_t w = 0; w < nv; w++) acc[i][w] = vf_fmadd(b, x[w], acc[i][w]);
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t w = 0; w < nv; w++) {
      if (tail)
        vf_st_k(o + idx[i] * ldo + w * VF_W, km, acc[i][w]);
      else
        vf_st(o + idx[i] * ldo + w * VF_W, acc[i][w]);
    }
}

#define SMX_ATTN_PVI(nv, tail)                                                                      \
  switch (mr) {                                                                                     \
    case 1: pv_block_idx(1, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break;        \
    case 2: pv_block_idx(2, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break;        \
    case 3: pv_block_idx(3, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break;        \
    case 4: pv_block_idx(4, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break;        \
    case 5: pv_block_idx(5, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break;        \
    default: pv_block_idx(SMX_ATTN_MR, nv, tail, km, nk, pt, ldpt, vv, ldv, oo, ldo, alpha, ix); break; \
  }

/* P V over the n rows idx[] only, MR at a time: rows that skip a tile cost nothing */
static void pv_rows(size_t n, const uint16_t *idx, size_t nk, size_t dv, const float *pt, size_t ldpt, const float *v,
                    size_t ldv, float *o, size_t ldo, const float *alpha) {
  const size_t step = SMX_ATTN_NV * VF_W;
  for (size_t r = 0; r < n; r += SMX_ATTN_MR) {
    size_t mr = n - r < SMX_ATTN_MR ? n - r : SMX_ATTN_MR;
    const uint16_t *ix = idx + r;
    size_t col = 0;
    kf_t km = kf_tail(1);
    for (; col + step <= dv; col += step) {
      const float *vv = v + col;
      float *oo = o + col;
      SMX_ATTN_PVI(SMX_ATTN_NV, 0)
    }
    for (; col + VF_W <= dv; col += VF_W) {
      const float *vv = v + col;
      float *oo = o + col;
      SMX_ATTN_PVI(1, 0)
    }
    if (col < dv) {
      const float *vv = v + col;
      float *oo = o + col;
      km = kf_tail(dv - col);
      SMX_ATTN_PVI(1, 1)
    }
  }
}

/* P[c][r] at pt[c ldpt + r rs]: key-major (rs = 1) or row-major (ldpt = 1) */
/* pf (0: none): rows of raw storage (pf_ld bytes apart, pf_es bytes an element) whose columns are asked for
 * into L2 as the same columns of V are used, pf_n of them */
SMX_INLINE void pv_any(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, size_t rs, int st,
                       const void *v, size_t ldv, float *o, size_t ldo, const float *alpha, uintptr_t pf, size_t pf_ld,
                       size_t pf_es, size_t pf_n) {
  const size_t step = SMX_ATTN_NV * VF_W, es = kv_size(st);
  size_t tn = 0;
  for (size_t r = 0; r < nr; r += SMX_ATTN_MR) {
    size_t mr = nr - r < SMX_ATTN_MR ? nr - r : SMX_ATTN_MR;
    const float *p = pt + r * rs, *al = alpha + r;
    int live = 0;
    for (size_t i = 0; i < mr; i++) live |= al[i] >= 0.0f;
    if (!live) continue;   /* every row of the block skipped this tile (BLASST) */
    size_t col = 0;
    kf_t km = kf_tail(1);
    uintptr_t pf0 = r == 0 ? pf : 0;   /* the first block of rows asks for them */
    for (; col + step <= dv; col += step) {
      const char *vv = (const char *)v + col * es;
      float *oo = o + r * ldo + col;
      uintptr_t pfc = pf0 ? pf0 + col * pf_es : 0;
      size_t pfb = step * pf_es;
      SMX_ATTN_PV(SMX_ATTN_NV, 0)
    }
    for (; col + VF_W <= dv; col += VF_W) {
      const char *vv = (const char *)v + col * es;
      float *oo = o + r * ldo + col;
      uintptr_t pfc = pf0 ? pf0 + col * pf_es : 0;
      size_t pfb = VF_W * pf_es;
      SMX_ATTN_PV(1, 0)
    }
    if (col < dv) {
      const char *vv = (const char *)v + col * es;
      float *oo = o + r * ldo + col;
      uintptr_t pfc = pf0 ? pf0 + col * pf_es : 0;
      size_t pfb = (dv - col) * pf_es;
      km = kf_tail(dv - col);
      tn = dv - col;
      SMX_ATTN_PV(1, 1)
    }
  }
}

static void pv_k(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v, size_t ldv,
                 float *o, size_t ldo, const float *alpha) {
  /* some rows skip the tile (BLASST, screening): P V over the others only, compacted into blocks of MR */
  uint16_t idx[256];
  size_t n = 0;
  if (nr <= 256) {
    for (size_t r = 0; r < nr; r++)
      if (alpha[r] >= 0.0f) idx[n++] = (uint16_t)r;
    if (n < nr) {
      pv_rows(n, idx, nk, dv, pt, ldpt, v, ldv, o, ldo, alpha);
      return;
    }
  }
  pv_any(nk, nr, dv, pt, ldpt, 1, SMX_ATTN_KV_F32, v, ldv, o, ldo, alpha, 0, 0, 0, 0);
}

/* ---- decoding: S[r][c] = <Q[r], K[c]> for a block of rb rows x kb keys --- */
/* rb kb = VF_W accumulators, one per (row, key), each a vector of partial sums along d; one transpose-add
 * tree gives all VF_W sums at once. Rows past nrb and keys past nkb repeat the last real one (computed,
 * never stored). */
SMX_INLINE void dqk_block(size_t rb, size_t kb, size_t nrb, size_t nkb, size_t d, const float *q, size_t ldq, int st,
                          const char *k, size_t ldk, float *s, size_t lds) {
  vf_t acc[VF_W];
  const float *qp[VF_W];
  const char *kp[VF_W];
  size_t es = kv_size(st);
  for (size_t r = 0; r < rb; r++) qp[r] = q + (r < nrb ? r : nrb - 1) * ldq;
  for (size_t c = 0; c < kb; c++) kp[c] = k + (c < nkb ? c : nkb - 1) * ldk * es;
  for (size_t i = 0; i < VF_W; i++) acc[i] = vf_zero();
  size_t t = 0;
  for (; t + VF_W <= d; t += VF_W) {
    vf_t kv[VF_W];
    for (size_t c = 0; c < kb; c++) kv[c] = kv_ld(st, kp[c] + t * es);
    for (size_t r = 0; r < rb; r++) {
      vf_t qv = vf_ld(qp[r] + t);
      for (size_t c = 0; c < kb; c++) acc[r * kb + c] = vf_fmadd(qv, kv[c], acc[r * kb + c]);
    }
  }
  if (t < d) {
    kf_t km = kf_tail(d - t);
    vf_t kv[VF_W];
    for (size_t c = 0; c < kb; c++) kv[c] = kv_ldz(st, kp[c] + t * es, d - t, km);
    for (size_t r = 0; r < rb; r++) {
      vf_t qv = vf_ldz_k(qp[r] + t, km);
      for (size_t c = 0; c < kb; c++) acc[r * kb + c] = vf_fmadd(qv, kv[c], acc[r * kb + c]);
    }
  }
  float sum[VF_W];
  vf_st(sum, vf_reduce_add_w(acc));
  if (nkb == kb)   /* one copy of kb floats per row */
    for (size_t r = 0; r < nrb; r++) memcpy(s + r * lds, sum + r * kb, kb * sizeof(float));
  else
    for (size_t r = 0; r < nrb; r++)
      for (size_t c = 0; c < nkb; c++) s[r * lds + c] = sum[r * kb + c];
}

/* the K rows of keys [c0, c1) of pf into L2: spread over the blocks, so that the requests stay in flight
 * while the arithmetic runs instead of filling the miss queues at once (dec_pv asks for the V rows) */
SMX_INLINE void prefetch_keys(const smx_attn_pf *pf, size_t c0, size_t c1) {
  for (size_t i = c0; i < c1 && i < pf->n; i++) {
    for (size_t x = 0; x < pf->bytes_k; x += 64) smx_prefetch_l2(pf->k + i * pf->ldk + x);
  }
}

/* rows per block: 4 (VF_W / 4 keys) when there are 4 rows left, else 2 or 1 (more keys per block) */
#define SMX_ATTN_DQK(rb)                                                                              \
  for (size_t c = 0; c < nk; c += VF_W / (rb)) {                                                     \
    size_t nkb = nk - c < VF_W / (rb) ? nk - c : VF_W / (rb);                                        \
    if (r == 0) prefetch_keys(pf, c, c + nkb);                                                       \
    dqk_block(rb, VF_W / (rb), nrb, nkb, d, q + r * ldq, ldq, st, kbase + c * ldk * es, ldk, s + r * lds + c, lds); \
  }

SMX_INLINE void dec_qk_any(int st, size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const void *k,
                           size_t ldk, float *s, size_t lds, const smx_attn_pf *pf) {
  const char *kbase = (const char *)k;
  size_t es = kv_size(st);
  for (size_t r = 0; r < nr;) {
    size_t left = nr - r, nrb;
    if (VF_W >= 4 && left >= 4) {
      nrb = 4;
      SMX_ATTN_DQK(4)
    } else if (left >= 2) {
      nrb = 2;
      SMX_ATTN_DQK(2)
    } else {
      nrb = 1;
      SMX_ATTN_DQK(1)
    }
    r += nrb;
  }
}

/* ---- decoding: online softmax along the keys of each row, then P V ------ */
SMX_INLINE int dec_online_any(size_t nk, size_t nr, float *s, size_t lds, float *m, float *l, float *alpha) {
  const vexpf_c c = vexpf_c_set((float)SMX_LOG2E_D, (float)(SMX_LOG2E_D - (double)(float)SMX_LOG2E_D));
  const vf_t amin = vf_set1(SMX_ATTN_AMIN), ninf = vf_set1(-__builtin_inff()), zero = vf_zero();
  int any = 0;
  size_t nb = (nk + VF_W - 1) / VF_W;
  kf_t kt = kf_tail(nk - (nb - 1) * VF_W);
  for (size_t r = 0; r < nr; r++) {
    float *sr = s + r * lds;
    vf_t mt = ninf;
    for (size_t b = 0; b + 1 < nb; b++) mt = vf_max(mt, vf_ld(sr + b * VF_W));
    vf_t last = vf_ld_k(sr + (nb - 1) * VF_W, kt, ninf);   /* keys past nk: -inf, so P = 0 there */
    mt = vf_max(mt, last);
    /* the tile maximum in every lane, then the row's update as online_k does it lane-wise */
    float mts = vf_reduce_max(mt);
    any |= mts != -__builtin_inff();
    vf_t mo = vf_set1(m[r]), mn = vf_max(mo, vf_set1(mts));
    vf_t mu = vf_sel(vf_eq(mn, ninf), zero, mn);
    vf_t a = vexpf_neg(vf_sub(mo, mu), c, amin);
    vf_t s0 = zero, s1 = zero;
    size_t b = 0;
    for (; b + 2 < nb; b += 2) {
      vf_t p0 = vexpf_neg(vf_sub(vf_ld(sr + b * VF_W), mu), c, amin);
      vf_t p1 = vexpf_neg(vf_sub(vf_ld(sr + (b + 1) * VF_W), mu), c, amin);
      vf_st(sr + b * VF_W, p0);
      vf_st(sr + (b + 1) * VF_W, p1);
      s0 = vf_add(s0, p0);
      s1 = vf_add(s1, p1);
    }
    for (; b + 1 < nb; b++) {
      vf_t p0 = vexpf_neg(vf_sub(vf_ld(sr + b * VF_W), mu), c, amin);
      vf_st(sr + b * VF_W, p0);
      s0 = vf_add(s0, p0);
    }
    vf_t pl = vexpf_neg(vf_sub(last, mu), c, amin);
    vf_st_k(sr + b * VF_W, kt, pl);
    s1 = vf_add(s1, pl);
    float al[VF_W], mnl[VF_W];
    vf_st(al, a);
    vf_st(mnl, mn);
    l[r] = al[0] * l[r] + vf_reduce_add(vf_add(s0, s1));
    m[r] = mnl[0];
    alpha[r] = al[0];
  }
  return any;
}

static int dec_online_k(size_t nk, size_t nr, float *s, size_t lds, float *m, float *l, float *alpha) {
  return dec_online_any(nk, nr, s, lds, m, l, alpha);
}

SMX_INLINE int dec_pv_any(int st, size_t nk, size_t nr, size_t dv, float *s, size_t lds, const void *v, size_t ldv,
                          float *o, size_t ldo, float *m, float *l, float *alpha, const smx_attn_pf *pf) {
  if (!dec_online_any(nk, nr, s, lds, m, l, alpha)) return 0;
  pv_any(nk, nr, dv, s, 1, lds, st, v, ldv, o, ldo, alpha, pf->v, pf->ldv, pf->es_v, pf->n);
  return 1;
}

/* one instance per storage of K and V */
#define SMX_ATTN_DEC(name, st)                                                                                      \
  static void dec_qk_##name(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const void *k, size_t ldk,   \
                            float *s, size_t lds, const smx_attn_pf *pf) {                                          \
    dec_qk_any(st, nk, nr, d, q, ldq, k, ldk, s, lds, pf);                                                          \
  }                                                                                                                  \
  static int dec_pv_##name(size_t nk, size_t nr, size_t dv, float *s, size_t lds, const void *v, size_t ldv, float *o, \
                           size_t ldo, float *m, float *l, float *alpha, const smx_attn_pf *pf) {                   \
    return dec_pv_any(st, nk, nr, dv, s, lds, v, ldv, o, ldo, m, l, alpha, pf);                                     \
  }                                                                                                                  \
  static void dec_pvo_##name(size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const void *v, size_t ldv, \
                             float *o, size_t ldo, const float *alpha, const smx_attn_pf *pf) {                     \
    pv_any(nk, nr, dv, s, 1, lds, st, v, ldv, o, ldo, alpha, pf->v, pf->ldv, pf->es_v, pf->n);                       \
  }
SMX_ATTN_DEC(f32, SMX_ATTN_KV_F32)
SMX_ATTN_DEC(f16, SMX_ATTN_KV_F16)
SMX_ATTN_DEC(bf16, SMX_ATTN_KV_BF16)

/* ---- screening: 1 / max(|x_c|, eps) of rows, and Trim over VF_W rows at a time ---- */
static void rnorm_k(size_t n, size_t d, const float *x, size_t ldx, float eps, float *out) {
  for (size_t c = 0; c < n; c++) {
    const float *row = x + c * ldx;
    vf_t a0 = vf_zero(), a1 = vf_zero();
    size_t t = 0;
    for (; t + 2 * VF_W <= d; t += 2 * VF_W) {
      vf_t x0 = vf_ld(row + t), x1 = vf_ld(row + t + VF_W);
      a0 = vf_fmadd(x0, x0, a0);
      a1 = vf_fmadd(x1, x1, a1);
    }
    for (; t + VF_W <= d; t += VF_W) {
      vf_t x0 = vf_ld(row + t);
      a0 = vf_fmadd(x0, x0, a0);
    }
    if (t < d) {
      vf_t x0 = vf_ldz_k(row + t, kf_tail(d - t));
      a1 = vf_fmadd(x0, x0, a1);
    }
    float nrm = __builtin_sqrtf(vf_reduce_add(vf_add(a0, a1)));
    out[c] = 1.0f / (nrm > eps || nrm != nrm ? nrm : eps);   /* a NaN norm stays NaN */
  }
}

static int screen_k(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, const float *kinv, const float *rinv,
                    float *alpha, uint64_t *cnt) {
  const vf_t ninf = vf_set1(-__builtin_inff()), zero = vf_zero(), one = vf_set1(1.0f);
  int any = 0;
  for (size_t j = 0; j < nr; j += VF_W) {
    vf_t ri = vf_ld(rinv + j), mx = zero, seen = ninf;
    mf_t nan = mf_none();
    for (size_t i = 0; i < nk; i++) {
      vf_t x = vf_ld(st + i * ldst + j);
      seen = vf_max(seen, x);
      /* -inf (masked) gives 1 - inf < 0, so 0; NaN is kept (vf_max returns its second operand for NaN) */
      vf_t a = vf_max(zero, vf_sub(one, vf_mul(vf_sub(one, vf_mul(x, vf_set1(kinv[i]))), ri)));
      a = vf_sel(vf_eq(x, ninf), zero, vf_mul(a, a));   /* masked: 0 even when 1 / |k| is NaN */
      vf_st(st + i * ldst + j, a);
      mx = vf_max(mx, a);
      nan = mf_or(nan, vf_unord(a, a));
    }
    /* a NaN weight counts as kept: P V and the row sum carry it to the end of the row */
    mf_t kept = mf_or(vf_gt(mx, zero), nan);
    unsigned real = nreal >= j + VF_W ? (unsigned)((1ull << VF_W) - 1) : nreal > j ? (1u << (nreal - j)) - 1u : 0u;
    unsigned bv = mf_bits(vf_neq(seen, ninf)) & real, bk = mf_bits(kept) & real;
    any |= bk != 0;
    if (cnt) {
      cnt[0] += (uint64_t)__builtin_popcount(bv);
      cnt[1] += (uint64_t)__builtin_popcount(bv & ~bk);
    }
    vf_st(alpha + j, vf_sel(kept, one, vf_set1(-1.0f)));
  }
  return any;
}

static void pv_sparse_k(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v, size_t ldv,
                        float *o, size_t ldo, float *alpha, float *nz, float maxnz) {
  int some = 0;
  for (size_t r = 0; r < nr; r++) {   /* nz becomes 1 on the rows taken here, else 0 */
    int sel = alpha[r] == 1.0f && nz[r] <= maxnz;
    nz[r] = sel ? 1.0f : 0.0f;
    if (sel) alpha[r] = -1.0f;
    some |= sel;
  }
  if (!some) return;
  const vf_t zero = vf_zero();
  /* keys outermost: each row still adds its keys in order; the vectors find the nonzero weights of taken rows */
  for (size_t c = 0; c < nk; c++) {
    const float *prow = pt + c * ldpt, *vr = v + c * ldv;
    for (size_t j = 0; j < nr; j += VF_W) {
      vf_t pw = vf_ld(prow + j);   /* positive weights, and NaN ones (they make the row NaN) */
      unsigned bits = mf_bits(mf_or(vf_gt(pw, zero), vf_unord(pw, pw))) & mf_bits(vf_gt(vf_ld(nz + j), zero));
      while (bits) {
        size_t r = j + (size_t)__builtin_ctz(bits);
        bits &= bits - 1;
        float *orow = o + r * ldo;
        const vf_t b = vf_set1(prow[r]);
        size_t x = 0;
        for (; x + VF_W <= dv; x += VF_W) vf_st(orow + x, vf_fmadd(b, vf_ld(vr + x), vf_ld(orow + x)));
        if (x < dv) {
          kf_t km = kf_tail(dv - x);
          vf_st_k(orow + x, km, vf_fmadd(b, vf_ldz_k(vr + x, km), vf_ldz_k(orow + x, km)));
        }
      }
    }
  }
}

const smx_attn_ukernels SMX_ATTN_TABLE = { SMX_SIMD_ISA, qk_k,     qk_rows_k, online_k, online_sigmoid_k,
                                           online_softpick_k, pv_k, rnorm_k, screen_k, pv_sparse_k,
                                           { dec_qk_f32, dec_qk_f16, dec_qk_bf16 },
                                           { dec_pv_f32, dec_pv_f16, dec_pv_bf16 }, dec_online_k,
                                           { dec_pvo_f32, dec_pvo_f16, dec_pvo_bf16 } };
