/*
 * One task of the fused attention (attention.h): pack the task's query rows
 * transposed, stream its key tiles through the micro-kernels
 * (kernels/f32-attention: S = Q K^T, online softmax, O = alpha O + P V), with
 * the per-score options (scores.c) between the product and the softmax. Tiles
 * outside every row's causal / window range are never visited. The row
 * helpers that the finishers, NSA and screening share with it are in rows.c.
 * FlashAttention-2: Dao 2023, arXiv 2307.08691, Algorithm 1.
 */
#include <math.h>
#include <string.h>

#include "attention/attention.h"
#include "kernels/f32-attention/ukernels.h"


/* Asks for rows [j0, j0 + nk) of a K or V tile ahead of use (decoding streams them from memory). */
static void prefetch_rows(const struct smx_attention_plan *p, const void *base, const size_t *s, size_t dim, size_t b,
                          size_t g, size_t j0, size_t nk, int far) {
  const char *at = (const char *)base + (b * s[0] + g * s[1] + j0 * s[2]) * p->elem_size;
  size_t bytes = dim * p->elem_size;
  for (size_t c = 0; c < nk; c++)
    for (size_t x = 0; x < bytes; x += 64) {
      if (far)
        __builtin_prefetch(at + c * s[2] * p->elem_size + x, 0, 2);   /* into L2 */
      else
        __builtin_prefetch(at + c * s[2] * p->elem_size + x);
    }
}

/* One key tile of a decode task: S = Q K^T (row-major, row stride SMX_ATTN_BK), the per-score options,
 * then the online softmax fused with P V. The next tile's K rows are asked for into L2 while Q K^T runs, its
 * V rows while P V runs, one row per key, so that the loads overlap the arithmetic all along. */
#define SMX_ATTN_PF_KEYS SMX_ATTN_BK
static void decode_tile(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t qoff, size_t dqe,
                        int64_t j0, size_t nk, int64_t hi_u, int inside) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t ldk, ldv, dv = d->dim_v, kes = d->k_int8 ? 1 : p->elem_size, es = p->elem_size;
  smx_attn_pf pf = { 0, 0, 0, 0, 0, 0, 0 };
  int64_t jp = j0 + SMX_ATTN_PF_KEYS;
  if (jp < hi_u) {
    pf.n = (size_t)(hi_u - jp) < nk ? (size_t)(hi_u - jp) : nk;
    pf.k = (uintptr_t)a->k + (b * d->k_stride[0] + g * d->k_stride[1] + (size_t)jp * d->k_stride[2] + qoff) * kes;
    pf.v = (uintptr_t)a->v + (b * d->v_stride[0] + g * d->v_stride[1] + (size_t)jp * d->v_stride[2]) * es;
    pf.ldk = d->k_stride[2] * kes;
    pf.ldv = d->v_stride[2] * es;
    pf.bytes_k = dqe * kes;
    pf.es_v = es;
  }
  /* K and V are read in their storage (f16 / bf16 converted in the kernels' loads), except K rows that need
   * a pass of their own: int8, QK-norm, the norms of L2-distance attention */
  int kv = p->elem == SMX_ELEM_F16 ? SMX_ATTN_KV_F16 : p->elem == SMX_ELEM_BF16 ? SMX_ATTN_KV_BF16 : SMX_ATTN_KV_F32;
  int own = d->k_int8 || d->qk_norm || d->l2_distance, kst = own ? SMX_ATTN_KV_F32 : kv;
  const void *kp;
  if (!own) {
    kp = (const char *)a->k + (b * d->k_stride[0] + g * d->k_stride[1] + (size_t)j0 * d->k_stride[2] + qoff) * es;
    ldk = d->k_stride[2];
  } else {
    const float *kf = smx_attn_load_k(run, qoff, dqe, b, g, (size_t)j0, nk, w->kbuf, &ldk);
    if (d->l2_distance)
      for (size_t c = 0; c < nk; c++) {
        double sq = 0.0;
        for (size_t x = 0; x < dqe; x++) sq += (double)kf[c * ldk + x] * kf[c * ldk + x];
        w->knorm[c] = (float)(sq * p->scale);
      }
    kp = kf;
  }
  if (run->dec16)   /* bf16 rows as stored (p->dec16: no own pass over K), the scale on the sums */
    run->dec16->dec_qk(nk, p->rows, dqe, (const uint16_t *)(const void *)w->qp, dqe, (const uint16_t *)kp, ldk, w->st,
                       SMX_ATTN_BK, p->scale, &pf);
  else
    run->uk->dec_qk[kst](nk, p->rows, dqe, w->qr, dqe, kp, ldk, w->st, SMX_ATTN_BK, &pf);
  if (p->elementwise || !inside) smx_attn_transform(run, w, b, g, t, (size_t)j0, nk, SMX_ATTN_BK, 1);
  const void *vp = (const char *)a->v + (b * d->v_stride[0] + g * d->v_stride[1] + (size_t)j0 * d->v_stride[2]) * es;
  ldv = d->v_stride[2];
  if (run->dec16) {   /* P rounded to bf16 by pairs of keys against the V rows as stored */
    if (run->uk->dec_online(nk, p->rows, w->st, SMX_ATTN_BK, w->m, w->l, w->alpha))
      run->dec16->dec_pv(nk, p->rows, dv, w->st, SMX_ATTN_BK, (const uint16_t *)vp, ldv, w->o, dv, w->alpha, &pf);
  } else {
    run->uk->dec_pv[kv](nk, p->rows, dv, w->st, SMX_ATTN_BK, vp, ldv, w->o, dv, w->m, w->l, w->alpha, &pf);
  }
}

/* Decoding, software-pipelined (tasks whose K is read as stored: no int8, QK-norm, L2 distance or NSA): while
 * P V runs over a tile, Q K^T of the next tile runs in between, SMX_ATTN_DEC_STEP keys at a time, into the
 * other of two score buffers, so that the reads of K and V alternate in small steps instead of 64-key bursts
 * of each (f16 / bf16 on the shared Zen 5: about 48 -> 58 % of the read roof per CPU second; f32 unchanged).
 * Every piece computes what the whole-tile kernels compute (P V's O strips are stored and reloaded between
 * pieces, alpha applied at the first, the pieces' key blocks fall where the tile's do): the same bits as
 * decode_tile. */
#define SMX_ATTN_DEC_STEP 16
static smx_attn_pf dec_pf(smx_attn_run *run, size_t b, size_t g, size_t qoff, size_t dqe, int64_t jp, size_t n,
                          int64_t hi_u) {
  const smx_attention_desc *d = &run->p->d;
  size_t es = run->p->elem_size;
  smx_attn_pf pf = { 0, 0, 0, 0, 0, 0, 0 };
  if (jp >= hi_u) return pf;
  pf.n = (size_t)(hi_u - jp) < n ? (size_t)(hi_u - jp) : n;
  pf.k = (uintptr_t)run->a->k + (b * d->k_stride[0] + g * d->k_stride[1] + (size_t)jp * d->k_stride[2] + qoff) * es;
  pf.v = (uintptr_t)run->a->v + (b * d->v_stride[0] + g * d->v_stride[1] + (size_t)jp * d->v_stride[2]) * es;
  pf.ldk = d->k_stride[2] * es;
  pf.ldv = d->v_stride[2] * es;
  pf.bytes_k = dqe * es;
  pf.es_v = es;
  return pf;
}

/* Q K^T of keys [j, j + n) into s (row stride SMX_ATTN_BK), asking for the K rows of pf */
static void dec_qk_piece(smx_attn_run *run, smx_attn_slice *w, size_t dqe, const char *kb, size_t j, size_t n, float *s,
                         const smx_attn_pf *pf) {
  const struct smx_attention_plan *p = run->p;
  size_t ldk = p->d.k_stride[2], es = p->elem_size;
  const void *k = kb + j * ldk * es;
  if (run->dec16)
    run->dec16->dec_qk(n, p->rows, dqe, (const uint16_t *)(const void *)w->qp, dqe, (const uint16_t *)k, ldk, s,
                       SMX_ATTN_BK, p->scale, pf);
  else
    run->uk->dec_qk[run->kv](n, p->rows, dqe, w->qr, dqe, k, ldk, s, SMX_ATTN_BK, pf);
}

static uint64_t decode_run(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t qoff,
                           size_t dqe, int64_t j0, int64_t k1, int64_t hi_u, int64_t lo_i, int64_t hi_i) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  size_t es = p->elem_size, ldv = d->v_stride[2], dv = d->dim_v;
  const char *kb = (const char *)run->a->k + (b * d->k_stride[0] + g * d->k_stride[1] + qoff) * es;
  const char *vb = (const char *)run->a->v + (b * d->v_stride[0] + g * d->v_stride[1]) * es;
  float *sb[2] = { w->st, w->st2 };
  const float one[SMX_ATTN_DEC_ROWS] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  uint64_t visited = 0;
  int cur = 0;
  size_t nk = (size_t)(k1 - j0 < SMX_ATTN_BK ? k1 - j0 : SMX_ATTN_BK);
  smx_attn_pf pf = dec_pf(run, b, g, qoff, dqe, j0 + SMX_ATTN_BK, nk, hi_u);
  pf.v = 0;
  dec_qk_piece(run, w, dqe, kb, (size_t)j0, nk, sb[cur], &pf);
  for (; j0 < hi_u; j0 += SMX_ATTN_BK, cur ^= 1) {
    nk = (size_t)(k1 - j0 < SMX_ATTN_BK ? k1 - j0 : SMX_ATTN_BK);
    visited++;
    int inside = lo_i <= j0 && j0 + (int64_t)nk <= hi_i;
    w->st = sb[cur];
    if (p->elementwise || !inside) smx_attn_transform(run, w, b, g, t, (size_t)j0, nk, SMX_ATTN_BK, 1);
    int any = run->uk->dec_online(nk, p->rows, sb[cur], SMX_ATTN_BK, w->m, w->l, w->alpha);
    int64_t jn = j0 + SMX_ATTN_BK;   /* the next tile, whose Q K^T runs between the pieces of this P V */
    size_t nn = jn < hi_u ? (size_t)(k1 - jn < SMX_ATTN_BK ? k1 - jn : SMX_ATTN_BK) : 0;
    for (size_t c = 0; c < nk || c < nn; c += SMX_ATTN_DEC_STEP) {
      if (any && c < nk) {   /* V rows of the next tile asked for as the same rows of this one are used */
        size_t n = nk - c < SMX_ATTN_DEC_STEP ? nk - c : SMX_ATTN_DEC_STEP;
        smx_attn_pf pv = dec_pf(run, b, g, qoff, dqe, jn + (int64_t)c, n, hi_u);
        const void *v = vb + ((size_t)j0 + c) * ldv * es;
        const float *al = c ? one : w->alpha;
        pv.k = 0;
        if (run->dec16)
          run->dec16->dec_pv(n, p->rows, dv, sb[cur] + c, SMX_ATTN_BK, (const uint16_t *)v, ldv, w->o, dv, al, &pv);
        else
          run->uk->dec_pvo[run->kv](n, p->rows, dv, sb[cur] + c, SMX_ATTN_BK, v, ldv, w->o, dv, al, &pv);
      }
      if (c < nn) {   /* K rows of the tile after next */
        size_t n = nn - c < SMX_ATTN_DEC_STEP ? nn - c : SMX_ATTN_DEC_STEP;
        smx_attn_pf pk = dec_pf(run, b, g, qoff, dqe, jn + SMX_ATTN_BK + (int64_t)c, n, hi_u);
        pk.v = 0;
        dec_qk_piece(run, w, dqe, kb, (size_t)jn + c, n, sb[cur ^ 1] + c, &pk);
      }
    }
  }
  w->st = sb[0];
  return visited;
}

/* bf16 tile products: K rows [j0, j0 + nk) as bf16 rows, in place for bf16 storage, else rounded into kb */
static const uint16_t *keys_bf16(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t qoff, size_t dim,
                                 int64_t j0, size_t nk, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const size_t *s = p->d.k_stride;
  const char *at = (const char *)run->a->k + (b * s[0] + g * s[1] + (size_t)j0 * s[2] + qoff) * p->elem_size;
  if (p->elem == SMX_ELEM_BF16) {
    *ld = s[2];
    return (const uint16_t *)(const void *)at;
  }
  for (size_t c = 0; c < nk; c++)
    run->uk16->to_bf16(dim, (const float *)(const void *)(at + c * s[2] * p->elem_size), w->kb + c * dim);
  *ld = dim;
  return w->kb;
}

/* bf16 tile products: O = alpha O + bf16(P) V over the tile's V rows, packed by pairs of keys */
static void pv_bf16(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, int64_t j0, size_t nk) {
  const struct smx_attention_plan *p = run->p;
  const size_t *s = p->d.v_stride;
  const char *at = (const char *)run->a->v + (b * s[0] + g * s[1] + (size_t)j0 * s[2]) * p->elem_size;
  run->uk16->pack_v(nk, p->d.dim_v, at, s[2], p->elem == SMX_ELEM_F32, w->vp, p->ldvp);
  run->uk16->pv(nk, p->rows, p->d.dim_v, w->st, p->rows_pad, w->pp, w->vp, p->ldvp, w->o, p->d.dim_v, w->alpha);
}

void smx_attn_task(smx_attn_run *run, size_t task, unsigned char *at) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  smx_attn_slice w = smx_attn_carve(p, at);
  const smx_attn_bf16_ukernels *u16 = run->uk16;   /* bf16 tile products, or NULL */
  size_t rp = p->rows_pad, dq = d->dim_qk, dv = d->dim_v;
  size_t s = task % p->n_split, rest = task / p->n_split;
  size_t t = rest % p->n_qt, bg = rest / p->n_qt, g = bg % d->heads_kv, b = bg / d->heads_kv;
  int64_t k0 = (int64_t)(s * SMX_ATTN_SPLIT_K), k1 = (int64_t)d->len_k;
  if (p->n_split > 1 && k0 + SMX_ATTN_SPLIT_K < k1) k1 = k0 + SMX_ATTN_SPLIT_K;
  float thr = p->blasst < 0 ? p->blasst : -INFINITY;
  uint64_t cnt[2] = { 0, 0 };
  float m0 = p->screen ? 0.0f : -INFINITY;

  /* differential attention: two passes over the keys, on each half of the Q K dimensions */
  int diff = p->diff_lambda != 0.0f;
  size_t dqe = diff ? dq / 2 : dq;
  uint64_t row_tiles = 0, skipped = 0, visited = 0;
  for (int pass = 0; pass < (diff ? 2 : 1); pass++) {
    size_t qoff = (size_t)pass * dqe;
    /* Q rows, transposed and scaled; the rows' key ranges */
    int64_t lo_u = k1, hi_u = k0, lo_i = k0, hi_i = k1;
    if (u16) memset(w.qp, 0, (dqe + 1) / 2 * rp * sizeof(uint32_t));   /* padding rows, an odd last half */
    for (size_t r = 0; r < rp; r++) {
      size_t h = 0, i = 0;
      w.m[r] = m0;
      w.l[r] = 0.0f;
      w.sr[r] = 1.0f;
      w.sw[r] = 0.0f;
      if (!smx_attn_row_of(p, g, t, r, &h, &i)) {
        if (!p->decode)   /* the decode kernels read the rows row-major (qr), never Qt */
          for (size_t x = 0; x < dqe; x++) w.qt[x * rp + r] = 0.0f;
        w.lo[r] = w.hi[r] = 0;
        continue;
      }
      const unsigned char *qr = (const unsigned char *)a->q + (b * d->q_stride[0] + h * d->q_stride[1] + i * d->q_stride[2]) * p->elem_size;
      run->io.load(dq, qr, w.tmp);
      if (d->qk_norm) smx_attn_rms_norm(w.tmp, dq, p->qk_eps, a->q_norm_w);
      float qs = p->scale;
      if (p->screen) {   /* screening: q / max(|q|, eps), no scale */
        double sq = 0.0;
        for (size_t x = 0; x < dq; x++) sq += (double)w.tmp[x] * w.tmp[x];
        qs = (float)(1.0 / fmax(sqrt(sq), (double)p->screen_eps));
      }
      if (p->decode)
        for (size_t x = 0; x < dqe; x++) w.qr[r * dqe + x] = w.tmp[qoff + x] * qs;
      else
        for (size_t x = 0; x < dqe; x++) w.qt[x * rp + r] = w.qr[r * dqe + x] = w.tmp[qoff + x] * qs;
      if (run->dec16)   /* decoding: the row unscaled in bf16 (bf16 storage: exact), row-major */
        run->dec16->to_bf16(dqe, w.tmp + qoff, (uint16_t *)(void *)w.qp + r * dqe);
      if (u16) {   /* the row unscaled, in bf16 by pairs of dimensions (the scale multiplies the f32 scores) */
        u16->to_bf16(dqe, w.tmp + qoff, w.kb);
        uint16_t *q16 = (uint16_t *)(void *)w.qp;
        for (size_t x = 0; x < dqe; x++) q16[((x / 2) * rp + r) * 2 + (x & 1)] = w.kb[x];
      }
      if (p->ssmax_s != 0) w.fac[r] = smx_attn_ssmax_factor(run, b, h, i);
      if (d->k_int8) {
        double sq = 0.0;
        for (size_t x = 0; x < dqe; x++) sq += (double)w.qr[r * dqe + x] * w.qr[r * dqe + x];
        w.qsq[r] = (float)sq;
      }
      if (d->l2_distance) {
        double sq = 0.0;
        for (size_t x = 0; x < dqe; x++) sq += (double)w.tmp[qoff + x] * w.tmp[qoff + x];
        w.qnorm[r] = (float)(sq * p->scale);
      }
      int64_t lo, hi;
      smx_attn_key_range(p, i, &lo, &hi);
      if (p->screen) {   /* the Softmask's range (p_i - w, p_i] (w = 0: none) */
        smx_attn_screen_params(run, h, &w.sr[r], &w.sw[r]);
        if (w.sw[r] > 0.0f) {
          int64_t pos = smx_attn_pos(p, i);
          double first = floor((double)pos - (double)w.sw[r]) + 1.0;
          if (first > (double)lo) lo = (int64_t)first;
          if (pos + 1 < hi) hi = pos + 1;
        }
      }
      lo = lo > k0 ? lo : k0;
      hi = hi < k1 ? hi : k1;
      if (hi < lo) hi = lo;
      w.lo[r] = lo;
      w.hi[r] = hi;
      if (hi > lo) {
        lo_u = lo < lo_u ? lo : lo_u;
        hi_u = hi > hi_u ? hi : hi_u;
      }
      lo_i = lo > lo_i ? lo : lo_i;
      hi_i = hi < hi_i ? hi : hi_i;
    }
    memset(w.o, 0, p->rows * dv * sizeof(float));
    if (p->nsa_blocks) smx_attn_nsa_select(run, &w, b, g, t, dqe, qoff);
    /* few rows: the scores come from the dot-product kernel, which leaves the padding rows of St alone */
    int few = p->rows <= SMX_ATTN_SPLIT_ROWS;
    if (few) memset(w.st, 0, SMX_ATTN_BK * rp * sizeof(float));

    size_t ldk, ldv;
    if (hi_u > lo_u) {
      int64_t j0 = k0 + (lo_u - k0) / SMX_ATTN_BK * SMX_ATTN_BK;
      /* f16 / bf16 decoding: the pipelined loop (f32 measured alike either way, and 15 % slower in L2) */
      if (p->decode && p->elem_size == 2 && !p->nsa_blocks && !d->k_int8 && !d->qk_norm && !d->l2_distance) {
        uint64_t vis = decode_run(run, &w, b, g, t, qoff, dqe, j0, k1, hi_u, lo_i, hi_i);
        if (pass == 0) visited += vis;
        j0 = hi_u;
      }
      for (; j0 < hi_u; j0 += SMX_ATTN_BK) {
        size_t nk = (size_t)(k1 - j0 < SMX_ATTN_BK ? k1 - j0 : SMX_ATTN_BK);
        if (p->nsa_blocks && !smx_attn_nsa_any(p, &w, (size_t)j0 / SMX_ATTN_BK)) continue;   /* no row selected it */
        visited += pass == 0;
        int inside = lo_i <= j0 && j0 + (int64_t)nk <= hi_i;
        if (p->decode) {   /* few rows: the fused decode kernels on row-major scores */
          decode_tile(run, &w, b, g, t, qoff, dqe, j0, nk, hi_u, inside);
          continue;
        }
        if (u16) {
          const uint16_t *k16 = keys_bf16(run, &w, b, g, qoff, dqe, j0, nk, &ldk);
          prefetch_rows(p, a->v, d->v_stride, dv, b, g, (size_t)j0, nk, 1);   /* V, packed after the softmax */
          u16->qk(nk, rp, dqe, w.qp, rp, k16, ldk, w.st, rp, p->scale);
        } else {
          const float *kp = smx_attn_load_k(run, qoff, dqe, b, g, (size_t)j0, nk, w.kbuf, &ldk);
          if (p->screen) run->uk->rnorm(nk, dqe, kp, ldk, p->screen_eps, w.knorm);   /* s = q^ . k / max(|k|, eps) */
          if (d->l2_distance)
            for (size_t c = 0; c < nk; c++) {
              double sq = 0.0;
              for (size_t x = 0; x < dqe; x++) sq += (double)kp[c * ldk + x] * kp[c * ldk + x];
              w.knorm[c] = (float)(sq * p->scale);
            }
          /* decoding streams K and V from memory: V of this tile is asked for while Q K^T runs, and K and V of
           * the next two tiles into L2, each tile twice (measured on a shared Zen 5, 4 interleaved runs: 1.2x
           * to 2.4x the rate without the L2 requests; one tile ahead, or only two ahead, gained little) */
          if (few) {
            prefetch_rows(p, a->v, d->v_stride, dv, b, g, (size_t)j0, nk, 0);
            for (int64_t ahead = 1; ahead <= 2; ahead++) {
              int64_t jn = j0 + ahead * SMX_ATTN_BK;
              if (jn >= hi_u) break;
              size_t nn = (size_t)(hi_u - jn < SMX_ATTN_BK ? hi_u - jn : SMX_ATTN_BK);
              prefetch_rows(p, a->v, d->v_stride, dv, b, g, (size_t)jn, nn, 1);
              if (!d->k_int8) prefetch_rows(p, a->k, d->k_stride, dq, b, g, (size_t)jn, nn, 1);
            }
          }
          if (few)
            run->uk->qk_rows(nk, p->rows, dqe, w.qr, dqe, kp, ldk, w.st, rp);
          else
            run->uk->qk(nk, rp, dqe, w.qt, rp, kp, ldk, w.st, rp);
          if (p->screen)   /* a non-finite K row: its score is NaN on every row (the masks below set -inf) */
            for (size_t c = 0; c < nk; c++) {
              if (w.knorm[c] > 0.0f) continue;   /* 1 / |k|: 0 for an infinite |k|, NaN for a NaN one */
              int bad = 0;
              for (size_t x = 0; x < dqe; x++) bad |= !isfinite(kp[c * ldk + x]);
              /* q.k of an infinite k may be -inf, which would read as masked, or +inf; either way s = q^.k^
               * takes inf / inf, NaN, which reaches the rows that see the key */
              if (bad)
                for (size_t r = 0; r < p->rows; r++) w.st[c * rp + r] = NAN;
            }
        }
        if (p->elementwise || !inside) smx_attn_transform(run, &w, b, g, t, (size_t)j0, nk, 1, rp);
        int any;
        if (p->screen)
          any = smx_attn_screen_weights(run, &w, g, t, (size_t)j0, nk, cnt);
        else if (d->kind == SMX_ATTN_SIGMOID)
          any = run->uk->online_sigmoid(nk, rp, p->rows, w.st, rp, w.m, w.l, w.alpha, p->sigmoid_bias);
        else if (d->kind == SMX_ATTN_SOFTPICK)
          any = run->uk->online_softpick(nk, rp, p->rows, w.st, rp, w.m, w.l, w.alpha);
        else
          any = run->uk->online(nk, rp, p->rows, w.st, rp, w.m, w.l, w.alpha, thr, p->blasst < 0 ? cnt : NULL);
        if (!any) continue;
        if (u16) {
          pv_bf16(run, &w, b, g, j0, nk);
          continue;
        }
        const float *vp = smx_attn_load_rows(run, a->v, d->v_stride, dv, b, g, (size_t)j0, nk, w.vbuf, 0, &ldv);
        if (p->screen && !(d->screen_flags & SMX_ATTN_SCREEN_NO_VNORM)) {   /* weights times 1 / max(|v|, eps) */
          run->uk->rnorm(nk, dv, vp, ldv, p->screen_eps, w.knorm);
          for (size_t c = 0; c < nk; c++) {
            /* an infinity in v: 1 / |v| = 0 would drop the key; v / |v| is NaN in that column (inf / inf),
             * which TanhNorm spreads over the row: the weight becomes NaN, the whole row as for a NaN in v */
            if (!(w.knorm[c] > 0.0f)) {
              int bad = 0;
              for (size_t x = 0; x < dv; x++) bad |= !isfinite(vp[c * ldv + x]);
              if (bad) w.knorm[c] = NAN;
            }
            for (size_t r = 0; r < p->rows; r++)   /* zero weights stay 0: a NaN |v| reaches only the rows that use v */
              if (w.st[c * rp + r] != 0.0f) w.st[c * rp + r] *= w.knorm[c];
          }
        }
        /* screening keeps few keys: a row with at most 8 of them in the tile adds those V rows alone (a
         * dense row costs the tile's 64) */
        if (p->screen) run->uk->pv_sparse(nk, rp, dv, w.st, rp, vp, ldv, w.o, dv, w.alpha, w.nz, 8.0f);
        run->uk->pv(nk, p->rows, dv, w.st, rp, vp, ldv, w.o, dv, w.alpha);
      }
    }
    if (diff && pass == 0)   /* keep the first map, normalised, for the second pass */
      for (size_t r = 0; r < p->rows; r++) {
        memcpy(w.o1 + r * dv, w.o + r * dv, dv * sizeof(float));
        w.lse1[r] = smx_attn_normalize(run, 0, w.m[r], w.l[r], w.o1 + r * dv);
      }
  }
  size_t tiles = (size_t)((k1 - k0 + SMX_ATTN_BK - 1) / SMX_ATTN_BK);
  row_tiles += cnt[0];
  skipped += cnt[1];
  if (row_tiles) atomic_fetch_add_explicit(&run->row_tiles, row_tiles, memory_order_relaxed);
  if (skipped) atomic_fetch_add_explicit(&run->skipped, skipped, memory_order_relaxed);
  if (tiles > visited) atomic_fetch_add_explicit(&run->masked, tiles - visited, memory_order_relaxed);

  if (p->n_split > 1) {   /* a partial: (m, l, O) per row, folded later in split order */
    float *part = run->partials + task * rp * (dv + 2);
    for (size_t r = 0; r < p->rows; r++) {
      float *q = part + r * (dv + 2);
      q[0] = w.m[r];
      q[1] = w.l[r];
      memcpy(q + 2, w.o + r * dv, dv * sizeof(float));
    }
    return;
  }
  for (size_t r = 0; r < p->rows; r++) {
    size_t h, i;
    if (smx_attn_row_of(p, g, t, r, &h, &i))
      smx_attn_finish_row(run, b, h, i, w.m[r], w.l[r], w.o + r * dv, diff ? w.o1 + r * dv : NULL, diff ? w.lse1[r] : 0);
  }
}