/*
 * The attention micro-kernels (f32): the two tile products and the online
 * softmax step of a FlashAttention-2 style forward pass (src/attention/).
 * One body over the vector layer (body.h, instantiated by avx2.c, avx512.c
 * and neon.c) and a portable scalar form (scalar.c).
 *
 * A task holds nr query rows (nr a multiple of SMX_ATTN_ROW_PAD, padded rows
 * zero) packed transposed, Qt[d][r]; the scores of a key tile are kept
 * key-major, St[c][r], so that every per-row reduction of the online softmax
 * is a vertical vector operation and the query rows fill the vector lanes.
 *  - qk: St[c][r] = sum_d Qt[d][r] K[c][d] for c < nk, r < nr. K rows are read
 *    in place (row stride ldk) and broadcast: no transposed copy of K.
 *  - online: for each row r, with m_t = max_c St[c][r], m' = max(m_r, m_t):
 *    alpha_r = e^{m_r - m'}, St[c][r] = e^{St[c][r] - m'} (in place),
 *    l_r = alpha_r l_r + sum_c St[c][r], m_r = m'. A row whose m' is -inf gets
 *    alpha 0 and P 0 (never NaN). Returns 0 when every row's tile maximum is
 *    -inf (the tile adds nothing and P V may be skipped).
 *    BLASST (thr < 0; -inf: off): a row whose m_t < m_r + thr (m_r finite) is
 *    left unchanged (P 0, alpha -1: pv leaves the row alone at no cost); the
 *    exponentials of a vector of rows are saved only when all of them skip;
 *    the return value then counts only rows
 *    that took part. cnt (may be NULL) += { rows < nreal with a visible key,
 *    of those the ones skipped }.
 *  - pv: O[r][:] = alpha_r O[r][:] + sum_c Pt[c][r] V[c][:] for r < nr (rows
 *    with alpha_r < 0 are left as they are and cost nothing: the others are
 *    compacted into register blocks; each row's sum is the same either way), over
 *    dv columns (any dv), V rows in place with row stride ldv.
 * Decoding (a task of at most SMX_ATTN_DEC_ROWS rows, e.g. the G query heads of one KV head) uses a fused
 * pair instead, on row-major scores S[r][c] (row stride lds >= nk rounded up to the vector width):
 *  - dec_qk: S[r][c] = sum_d Q[r][d] K[c][d], vectors along d and one accumulator per key: the partial
 *    sums of a vector's worth of keys are reduced together by one transpose-add tree (no horizontal sum
 *    per key), each block of K rows read once from memory for all the rows; and asks for the K rows of pf
 *    (raw storage, a distance ahead) into L2, one per key.
 *  - dec_pv: the online softmax of `online` for each row, vectors along the keys (m, l, alpha as there;
 *    S becomes P in place), then O[r][:] = alpha_r O[r][:] + sum_c P[r][c] V[c][:] with the rows' O
 *    strips in registers, asking for the V rows of pf as it goes. Returns 0 when no row saw a key (O
 *    untouched then, and nothing asked for).
 * Kernels never allocate and touch exactly the ranges above.
 */
#ifndef SMX_KERNELS_F32_ATTENTION_UKERNELS_H
#define SMX_KERNELS_F32_ATTENTION_UKERNELS_H

#include <stddef.h>
#include <stdint.h>

/* rows of a task are padded to a multiple of this (the widest vector) */
#define SMX_ATTN_ROW_PAD 16
/* tasks of at most this many rows take the decode kernels (dec_qk, dec_pv) */
#define SMX_ATTN_DEC_ROWS 8
/* storage of the K / V rows the decode kernels read */
enum smx_attn_kv { SMX_ATTN_KV_F32 = 0, SMX_ATTN_KV_F16 = 1, SMX_ATTN_KV_BF16 = 2 };

/* Rows to prefetch (raw storage, a distance ahead): row c < n of K at k + c ldk bytes (bytes_k long) during
 * dec_qk, of V at v + c ldv bytes (elements of es_v bytes) during dec_pv; k, v = 0: none. */
typedef struct smx_attn_pf {
  uintptr_t k, v;
  size_t ldk, ldv, bytes_k, es_v, n;
} smx_attn_pf;

typedef struct smx_attn_ukernels {
  const char *isa;
  void (*qk)(size_t nk, size_t nr, size_t d, const float *qt, size_t ldqt, const float *k, size_t ldk, float *st,
             size_t ldst);
  /* the same product from row-major Q (q[r][d], row stride ldq), for tasks of few rows (decoding): the
   * vectors run over d, so no lane is spent on padding rows; rows >= nr of St are not written */
  void (*qk_rows)(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const float *k, size_t ldk, float *st,
                  size_t ldst);
  int (*online)(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l, float *alpha,
                float thr, uint64_t *cnt);
  /* sigmoid attention: St = sigmoid(St + bias) in place, m = max(m, max_c St + bias), l = the sum of
   * the weights so far times e^{-min(m, 0)} (rescaled as m grows: weights far below 0 underflow float, their
   * scaled sum does not), alpha = 1 (O is a plain sum); returns whether a row below nreal saw a key (masked
   * scores, -inf, give 0). m starts at -inf. */
  int (*online_sigmoid)(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                        float *alpha, float bias);
  /* softpick: with m' = max(m, max_c St) and the shifts u = max(m, 0), u' = max(m', 0) (e^{-u'} <= 1:
   * no overflow when every score is far below 0), St = relu(e^{St-u'} - e^{-u'}) in place, l = alpha l +
   * sum over unmasked keys of |e^{St-u'} - e^{-u'}|, alpha = e^{u - u'}, m = m'; a row with no visible
   * key in the tile is left unchanged (alpha 1, P 0) */
  int (*online_softpick)(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, float *m, float *l,
                         float *alpha);
  void (*pv)(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v, size_t ldv, float *o,
             size_t ldo, const float *alpha);
  /* screening (Multiscreen): out[c] = 1 / max(sqrt(sum_t x[c][t]^2), eps) for c < n (row stride ldx) */
  void (*rnorm)(size_t n, size_t d, const float *x, size_t ldx, float eps, float *out);
  /* screening's Trim in place: St[c][r] = max(1 - (1 - St[c][r] kinv[c]) rinv[r], 0)^2 (a masked score, -inf,
   * gives 0); alpha_r = 1 when a weight of row r is nonzero, else -1 (pv leaves the row alone). cnt (may be
   * NULL) += { rows < nreal with a visible key, of those the ones whose weights are all 0 }. Returns whether
   * a row below nreal has a nonzero weight. */
  int (*screen)(size_t nk, size_t nr, size_t nreal, float *st, size_t ldst, const float *kinv, const float *rinv,
                float *alpha, uint64_t *cnt);
  /* sparse P V for rows that keep few keys: each row r < nr with alpha_r = 1 (no rescale) and nz_r <= maxnz
   * gets O[r][:] += Pt[c][r] V[c][:] for its positive Pt[c][r], in key order, and alpha_r = -1 (pv then
   * leaves it alone); nz is overwritten. nr is a multiple of SMX_ATTN_ROW_PAD (rows past the task's
   * have alpha -1). */
  void (*pv_sparse)(size_t nk, size_t nr, size_t dv, const float *pt, size_t ldpt, const float *v, size_t ldv,
                    float *o, size_t ldo, float *alpha, float *nz, float maxnz);
  /* indexed by the storage of K and V rows (smx_attn_kv, ldk / ldv in elements), converted as loaded */
  void (*dec_qk[3])(size_t nk, size_t nr, size_t d, const float *q, size_t ldq, const void *k, size_t ldk, float *s,
                    size_t lds, const smx_attn_pf *pf);
  int (*dec_pv[3])(size_t nk, size_t nr, size_t dv, float *s, size_t lds, const void *v, size_t ldv, float *o,
                   size_t ldo, float *m, float *l, float *alpha, const smx_attn_pf *pf);
  /* dec_pv's online softmax alone (S becomes P in place; m, l, alpha as there), for the bf16 P V of
   * kernels/bf16-attention; returns whether a row saw a key */
  int (*dec_online)(size_t nk, size_t nr, float *s, size_t lds, float *m, float *l, float *alpha);
  /* dec_pv's P V alone, after dec_online (indexed by the storage of V) */
  void (*dec_pvo[3])(size_t nk, size_t nr, size_t dv, const float *s, size_t lds, const void *v, size_t ldv, float *o,
                     size_t ldo, const float *alpha, const smx_attn_pf *pf);
} smx_attn_ukernels;

extern const smx_attn_ukernels smx_attn_ukernels_scalar;
extern const smx_attn_ukernels smx_attn_ukernels_avx2;
extern const smx_attn_ukernels smx_attn_ukernels_avx512;
extern const smx_attn_ukernels smx_attn_ukernels_neon;

#endif
