/*
 * One task of the fused attention (attention.h): pack the task's query rows
 * transposed, stream its key tiles through the micro-kernels
 * (kernels/f32-attention: S = Q K^T, online softmax, O = alpha O + P V), and
 * apply every per-score option between the product and the softmax. Tiles
 * outside every row's causal / window range are never visited.
 * FlashAttention-2: Dao 2023, arXiv 2307.08691, Algorithm 1.
 */
#include <math.h>
#include <string.h>

#include "attention/attention.h"
#include "kernels/f32-attention/ukernels.h"

typedef struct slice {
  float *qr;   /* Q rows row-major (tasks of few rows) */
  float *qt, *st, *o, *m, *l, *alpha, *kbuf, *vbuf, *tmp;
  float *o1, *lse1;   /* differential attention: the first map's normalised rows */
  float *knorm, *qnorm;   /* L2-distance attention: scale |k|^2 of the tile's keys, scale |q|^2 of the rows */
  float *nsa;             /* NSA: per row and key block, the coarse score, then 1 = selected */
  float *qsq;             /* int8 K with the Jensen correction: |q'|^2 of the rows (q' = scale q) */
  int64_t *lo, *hi;
} slice;

static float *take(unsigned char **at, size_t floats) {
  float *p = (float *)(void *)*at;
  *at += (floats + 15) / 16 * 64;
  return p;
}

static slice carve(const struct smx_attention_plan *p, unsigned char *at) {
  size_t r = p->rows_pad, dq = p->d.dim_qk, dv = p->d.dim_v;
  slice s;
  s.qr = take(&at, dq * r);
  s.qt = take(&at, dq * r);
  s.st = take(&at, SMX_ATTN_BK * r);
  s.o = take(&at, r * dv);
  s.m = take(&at, r);
  s.l = take(&at, r);
  s.alpha = take(&at, r);
  s.kbuf = take(&at, SMX_ATTN_BK * dq);
  s.vbuf = take(&at, SMX_ATTN_BK * dv);
  s.tmp = take(&at, dq > dv ? dq : dv);
  s.o1 = take(&at, r * dv);
  s.lse1 = take(&at, r);
  s.knorm = take(&at, SMX_ATTN_BK);
  s.qnorm = take(&at, r);
  s.lo = (int64_t *)(void *)take(&at, 4 * r);
  s.hi = s.lo + r;
  s.nsa = take(&at, p->nsa_blocks ? r * p->nsa_blocks : 1);
  s.qsq = take(&at, r);
  return s;
}

/* x * rsqrt(mean(x^2) + eps) * w (RMSNorm, computed in double) */
static void rms_norm(float *x, size_t n, float eps, const float *w) {
  double ss = 0.0;
  for (size_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
  float r = (float)(1.0 / sqrt(ss / (double)n + eps));
  for (size_t i = 0; i < n; i++) x[i] = x[i] * r * (w ? w[i] : 1.0f);
}

/* Row r of a task: query head and query index; 0 when r is padding. */
static int row_of(const struct smx_attention_plan *p, size_t g, size_t t, size_t r, size_t *h, size_t *i) {
  if (r >= p->rows) return 0;
  *h = g * p->group + r / p->bq;
  *i = t * p->bq + r % p->bq;
  return *i < p->d.len_q;
}

/* Key rows [j0, j0 + nk) of KV head (b, g) as f32 rows (in place when possible). */
static const float *load_keys(smx_attn_run *run, const void *base, const size_t *s, size_t dim, size_t b, size_t g,
                              size_t j0, size_t nk, float *buf, int norm, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const unsigned char *at = (const unsigned char *)base + (b * s[0] + g * s[1] + j0 * s[2]) * p->elem_size;
  if (p->elem == SMX_ELEM_F32 && !norm) {
    *ld = s[2];
    return (const float *)(const void *)at;
  }
  for (size_t c = 0; c < nk; c++) {
    run->io.load(dim, at + c * s[2] * p->elem_size, buf + c * dim);
    if (norm) rms_norm(buf + c * dim, dim, p->qk_eps, run->a->k_norm_w);
  }
  *ld = dim;
  return buf;
}

/* Dimensions [qoff, qoff + dim) of key rows [j0, j0 + nk) (j0 a multiple of SMX_ATTN_BK) as f32 rows:
 * int8 keys times their block's scale, RMS-normalised with qk_norm. */
static const float *load_k(smx_attn_run *run, size_t qoff, size_t dim, size_t b, size_t g, size_t j0, size_t nk,
                           float *buf, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  if (!d->k_int8) {
    const unsigned char *base = (const unsigned char *)run->a->k + qoff * p->elem_size;
    return load_keys(run, base, d->k_stride, dim, b, g, j0, nk, buf, d->qk_norm, ld);
  }
  const int8_t *at = (const int8_t *)run->a->k + b * d->k_stride[0] + g * d->k_stride[1] + j0 * d->k_stride[2] + qoff;
  size_t nblk = (d->len_k + SMX_ATTN_BK - 1) / SMX_ATTN_BK;
  float sc = run->a->k_scales[(b * d->heads_kv + g) * nblk + j0 / SMX_ATTN_BK];
  for (size_t c = 0; c < nk; c++) {
    for (size_t x = 0; x < dim; x++) buf[c * dim + x] = (float)at[c * d->k_stride[2] + x] * sc;
    if (d->qk_norm) rms_norm(buf + c * dim, dim, p->qk_eps, run->a->k_norm_w);
  }
  *ld = dim;
  return buf;
}

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

/* Every per-score option, on key-major scores st[c][r] of keys j0.. (masked: -inf). */
static void transform(smx_attn_run *run, slice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t rp = p->rows_pad;
  for (size_t r = 0; r < rp; r++) {
    size_t h = 0, i = 0;
    float *col = w->st + r;
    if (!row_of(p, g, t, r, &h, &i)) {
      for (size_t c = 0; c < nk; c++) col[c * rp] = -INFINITY;
      continue;
    }
    int64_t pos = smx_attn_pos(p, i), lo = w->lo[r], hi = w->hi[r];
    float fac = 1.0f;
    if (p->ssmax_s != 0) {
      int64_t flo, fhi;
      smx_attn_key_range(p, i, &flo, &fhi);
      fac = fhi > flo ? p->ssmax_s * (float)log((double)(fhi - flo)) : 1.0f;
    }
    const unsigned char *mrow = NULL;
    if (d->mask_kind != SMX_ATTN_MASK_NONE) {
      size_t es = d->mask_kind == SMX_ATTN_MASK_BOOL ? 1 : sizeof(float);
      mrow = (const unsigned char *)a->mask + (b * d->mask_stride[0] + h * d->mask_stride[1] + i * d->mask_stride[2]) * es;
    }
    float slope = d->alibi ? a->alibi_slopes[h] : 0.0f;
    const float *fox = d->fox ? a->fox + (b * d->heads_q + h) * d->len_k : NULL;
    /* int8 K: rounding each key element (step D, uniform error) adds noise of variance |q'|^2 D^2 / 12 to the
     * logit, and E[e^{z + noise}] = e^{z + var / 2}: subtracting var / 2 removes that bias (Jensen) */
    float jensen = 0.0f;
    if (d->k_int8 && d->k_int8_jensen) {
      size_t nblk = (d->len_k + SMX_ATTN_BK - 1) / SMX_ATTN_BK;
      float sc = a->k_scales[(b * d->heads_kv + g) * nblk + j0 / SMX_ATTN_BK];
      jensen = w->qsq[r] * sc * sc * (1.0f / 24.0f);
    }
    if (p->nsa_blocks && w->nsa[r * p->nsa_blocks + j0 / SMX_ATTN_BK] == 0.0f) {   /* block not selected */
      for (size_t c = 0; c < nk; c++) col[c * rp] = -INFINITY;
      continue;
    }
    for (size_t c = 0; c < nk; c++) {
      int64_t j = (int64_t)(j0 + c);
      float x = col[c * rp];
      if (j < lo || j >= hi || (d->radial_frame && !smx_attn_radial_visible(d->radial_frame, pos, j))) {
        col[c * rp] = -INFINITY;
        continue;
      }
      if (d->l2_distance) x = 2.0f * x - w->qnorm[r] - w->knorm[c];   /* -scale |q - k|^2 */
      x -= jensen;
      if (p->softcap > 0) x = p->softcap * tanhf(x / p->softcap);
      x *= fac;
      if (d->mask_kind == SMX_ATTN_MASK_BOOL) {
        if (!mrow[(size_t)j * d->mask_stride[3]]) x = -INFINITY;
      } else if (d->mask_kind == SMX_ATTN_MASK_BIAS) {
        float bias;
        memcpy(&bias, mrow + (size_t)j * d->mask_stride[3] * sizeof(float), sizeof bias);
        x += bias;
      }
      if (d->alibi) x -= slope * (float)(pos > j ? pos - j : j - pos);
      if (fox) x += fox[pos] - fox[j];
      col[c * rp] = x;
    }
  }
}

/* The online step of the variants (sigmoid, softpick), one row at a time. */
static int online_variant(smx_attn_run *run, slice *w, size_t nk) {
  const struct smx_attention_plan *p = run->p;
  size_t rp = p->rows_pad;
  int any = 0;
  for (size_t r = 0; r < p->rows; r++) {
    float *col = w->st + r, mt = -INFINITY, sum = 0.0f, m = w->m[r];
    for (size_t c = 0; c < nk; c++) mt = fmaxf(mt, col[c * rp]);
    if (mt == -INFINITY) {   /* nothing visible in this tile: the row is unchanged */
      for (size_t c = 0; c < nk; c++) col[c * rp] = 0.0f;
      w->alpha[r] = 1.0f;
      continue;
    }
    any = 1;
    if (p->d.kind == SMX_ATTN_SIGMOID) {
      for (size_t c = 0; c < nk; c++) {
        float x = col[c * rp];
        float y = x == -INFINITY ? 0.0f : 1.0f / (1.0f + expf(-(x + p->sigmoid_bias)));
        col[c * rp] = y;
        sum += y;
      }
      w->alpha[r] = 1.0f;
      w->l[r] += sum;
      continue;
    }
    float mn = fmaxf(m, mt), al = expf(m - mn);
    if (p->d.kind == SMX_ATTN_SOFTPICK) {
      float em = expf(-mn);   /* e^{x - m} - e^{-m} = e^{-m} (e^x - 1) */
      for (size_t c = 0; c < nk; c++) {
        float x = col[c * rp];
        float y = x == -INFINITY ? 0.0f : expf(x - mn) - em;
        col[c * rp] = y > 0.0f ? y : 0.0f;
        sum += fabsf(y);
      }
    } else {
      for (size_t c = 0; c < nk; c++) {
        float y = expf(col[c * rp] - mn);
        col[c * rp] = y;
        sum += y;
      }
    }
    w->l[r] = al * w->l[r] + sum;
    w->m[r] = mn;
    w->alpha[r] = al;
  }
  /* padding rows take no part */
  for (size_t r = p->rows; r < rp; r++) w->alpha[r] = 1.0f;
  return any;
}

/*
 * NSA-style block selection (Yuan et al. 2025, arXiv 2502.11089, simplified): per row, the blocks its
 * causal / window range holds whole are scored by <q, mean of the block's keys> (q already scaled);
 * the nsa_topk best (ties: lower block) and the block of the row's last visible key are marked 1, all
 * others 0. Returns whether any row selected block `blk` is then a lookup.
 */
static void nsa_select(smx_attn_run *run, slice *w, size_t b, size_t g, size_t t, size_t dqe, size_t qoff) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  size_t nb = p->nsa_blocks;
  for (size_t r = 0; r < p->rows; r++)
    for (size_t blk = 0; blk < nb; blk++) w->nsa[r * nb + blk] = -INFINITY;
  for (size_t blk = 0; blk < nb; blk++) {
    size_t j0 = blk * SMX_ATTN_BK, nk = d->len_k - j0 < SMX_ATTN_BK ? d->len_k - j0 : SMX_ATTN_BK, ldk;
    int wanted = 0;
    for (size_t r = 0; r < p->rows; r++) wanted |= w->lo[r] <= (int64_t)j0 && (int64_t)(j0 + nk) <= w->hi[r];
    if (!wanted) continue;
    const float *kp = load_k(run, qoff, dqe, b, g, j0, nk, w->kbuf, &ldk);
    for (size_t x = 0; x < dqe; x++) {
      double sum = 0.0;
      for (size_t c = 0; c < nk; c++) sum += kp[c * ldk + x];
      w->tmp[x] = (float)(sum / (double)nk);
    }
    for (size_t r = 0; r < p->rows; r++) {
      if (!(w->lo[r] <= (int64_t)j0 && (int64_t)(j0 + nk) <= w->hi[r])) continue;
      double sc = 0.0;
      for (size_t x = 0; x < dqe; x++) sc += (double)w->qr[r * dqe + x] * w->tmp[x];
      w->nsa[r * nb + blk] = (float)sc;
    }
  }
  for (size_t r = 0; r < p->rows; r++) {
    float *row = w->nsa + r * nb;
    size_t h, i;
    int valid = row_of(p, g, t, r, &h, &i);
    /* the k best, marked +inf as they are taken (scores are finite), then every mark becomes 1 */
    for (size_t k = 0; valid && k < d->nsa_topk; k++) {
      size_t best = nb;
      for (size_t blk = 0; blk < nb; blk++)
        if (row[blk] != -INFINITY && row[blk] != INFINITY && (best == nb || row[blk] > row[best])) best = blk;
      if (best == nb) break;
      row[best] = INFINITY;
    }
    for (size_t blk = 0; blk < nb; blk++) row[blk] = row[blk] == INFINITY ? 1.0f : 0.0f;
    if (valid && w->hi[r] > w->lo[r]) row[(size_t)(w->hi[r] - 1) / SMX_ATTN_BK] = 1.0f;   /* the local block */
  }
}

static int nsa_any(const struct smx_attention_plan *p, const slice *w, size_t blk) {
  for (size_t r = 0; r < p->rows; r++)
    if (w->nsa[r * p->nsa_blocks + blk] != 0.0f) return 1;
  return 0;
}

void smx_attn_task(smx_attn_run *run, size_t task, unsigned char *at) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  slice w = carve(p, at);
  size_t rp = p->rows_pad, dq = d->dim_qk, dv = d->dim_v;
  size_t s = task % p->n_split, rest = task / p->n_split;
  size_t t = rest % p->n_qt, bg = rest / p->n_qt, g = bg % d->heads_kv, b = bg / d->heads_kv;
  int64_t k0 = (int64_t)(s * SMX_ATTN_SPLIT_K), k1 = (int64_t)d->len_k;
  if (p->n_split > 1 && k0 + SMX_ATTN_SPLIT_K < k1) k1 = k0 + SMX_ATTN_SPLIT_K;
  int variant = d->kind != SMX_ATTN_SOFTMAX;
  float thr = p->blasst < 0 ? p->blasst : -INFINITY;
  uint64_t cnt[2] = { 0, 0 };
  float m0 = d->kind == SMX_ATTN_SIGMOID ? 0.0f : -INFINITY;

  /* differential attention: two passes over the keys, on each half of the Q K dimensions */
  int diff = p->diff_lambda != 0.0f;
  size_t dqe = diff ? dq / 2 : dq;
  uint64_t row_tiles = 0, skipped = 0, visited = 0;
  for (int pass = 0; pass < (diff ? 2 : 1); pass++) {
    size_t qoff = (size_t)pass * dqe;
    /* Q rows, transposed and scaled; the rows' key ranges */
    int64_t lo_u = k1, hi_u = k0, lo_i = k0, hi_i = k1;
    for (size_t r = 0; r < rp; r++) {
      size_t h = 0, i = 0;
      w.m[r] = m0;
      w.l[r] = 0.0f;
      if (!row_of(p, g, t, r, &h, &i)) {
        for (size_t x = 0; x < dqe; x++) w.qt[x * rp + r] = 0.0f;
        w.lo[r] = w.hi[r] = 0;
        continue;
      }
      const unsigned char *qr = (const unsigned char *)a->q + (b * d->q_stride[0] + h * d->q_stride[1] + i * d->q_stride[2]) * p->elem_size;
      run->io.load(dq, qr, w.tmp);
      if (d->qk_norm) rms_norm(w.tmp, dq, p->qk_eps, a->q_norm_w);
      for (size_t x = 0; x < dqe; x++) w.qt[x * rp + r] = w.qr[r * dqe + x] = w.tmp[qoff + x] * p->scale;
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
    if (p->nsa_blocks) nsa_select(run, &w, b, g, t, dqe, qoff);
    /* few rows: the scores come from the dot-product kernel, which leaves the padding rows of St alone */
    int few = p->rows <= SMX_ATTN_SPLIT_ROWS;
    if (few) memset(w.st, 0, SMX_ATTN_BK * rp * sizeof(float));

    size_t ldk, ldv;
    if (hi_u > lo_u) {
      int64_t j0 = k0 + (lo_u - k0) / SMX_ATTN_BK * SMX_ATTN_BK;
      for (; j0 < hi_u; j0 += SMX_ATTN_BK) {
        size_t nk = (size_t)(k1 - j0 < SMX_ATTN_BK ? k1 - j0 : SMX_ATTN_BK);
        if (p->nsa_blocks && !nsa_any(p, &w, (size_t)j0 / SMX_ATTN_BK)) continue;   /* no row selected it */
        visited += pass == 0;
        const float *kp = load_k(run, qoff, dqe, b, g, (size_t)j0, nk, w.kbuf, &ldk);
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
        int inside = lo_i <= j0 && j0 + (int64_t)nk <= hi_i;
        if (p->elementwise || !inside) transform(run, &w, b, g, t, (size_t)j0, nk);
        int any = variant ? online_variant(run, &w, nk)
                          : run->uk->online(nk, rp, p->rows, w.st, rp, w.m, w.l, w.alpha, thr, p->blasst < 0 ? cnt : NULL);
        if (!any) continue;
        const float *vp = load_keys(run, a->v, d->v_stride, dv, b, g, (size_t)j0, nk, w.vbuf, 0, &ldv);
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
    if (row_of(p, g, t, r, &h, &i))
      smx_attn_finish_row(run, b, h, i, w.m[r], w.l[r], w.o + r * dv, diff ? w.o1 + r * dv : NULL, diff ? w.lse1[r] : 0);
  }
}

void smx_attn_fold(smx_attn_run *run, size_t tile, unsigned char *at) {
  const struct smx_attention_plan *p = run->p;
  slice w = carve(p, at);
  size_t rp = p->rows_pad, dv = p->d.dim_v;
  size_t t = tile % p->n_qt, bg = tile / p->n_qt, g = bg % p->d.heads_kv, b = bg / p->d.heads_kv;
  for (size_t r = 0; r < p->rows; r++) {
    size_t h, i;
    if (!row_of(p, g, t, r, &h, &i)) continue;
    float m = p->d.kind == SMX_ATTN_SIGMOID ? 0.0f : -INFINITY, l = 0.0f, *o = w.o;
    memset(o, 0, dv * sizeof(float));
    for (size_t s = 0; s < p->n_split; s++) {
      const float *q = run->partials + ((tile * p->n_split + s) * rp + r) * (dv + 2);
      if (q[0] == -INFINITY) continue;   /* the piece saw no key */
      float mn = fmaxf(m, q[0]), ea = expf(m - mn), eb = expf(q[0] - mn);
      for (size_t x = 0; x < dv; x++) o[x] = ea * o[x] + eb * q[2 + x];
      l = ea * l + eb * q[1];
      m = mn;
    }
    smx_attn_finish_row(run, b, h, i, m, l, o, NULL, 0.0f);
  }
}

float smx_attn_normalize(smx_attn_run *run, size_t h, float m, float l, float *o) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  size_t dv = d->dim_v;
  if (d->kind == SMX_ATTN_SIGMOID) return l > 0.0f ? logf(l) : -INFINITY;
  if (d->sinks) {   /* e^{sink} joins the denominator only (gpt-oss) */
    float sk = run->a->sinks[h], mn = fmaxf(m, sk), ea = m == -INFINITY ? 0.0f : expf(m - mn);
    for (size_t x = 0; x < dv; x++) o[x] *= ea;
    l = ea * l + expf(sk - mn);
    m = mn;
  }
  if (d->kind == SMX_ATTN_SOFTPICK && m != -INFINITY) l += 1e-8f;
  if (l > 0.0f && m != -INFINITY) {
    for (size_t x = 0; x < dv; x++) o[x] /= l;
    return m + logf(l);
  }
  for (size_t x = 0; x < dv; x++) o[x] = 0.0f;
  return -INFINITY;
}

void smx_attn_finish_row(smx_attn_run *run, size_t b, size_t h, size_t i, float m, float l, float *o, const float *first,
                         float first_lse) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t dv = d->dim_v;
  float lse = smx_attn_normalize(run, h, m, l, o);
  if (first) {   /* differential attention: softmax_1 V - lambda softmax_2 V; lse is the first map's */
    for (size_t x = 0; x < dv; x++) o[x] = first[x] - p->diff_lambda * o[x];
    lse = first_lse;
  }
  size_t row = (b * d->heads_q + h) * d->len_q + i;
  if (d->gate) {
    int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
    const float *gt = a->gate + row * (ew ? dv : 1);
    for (size_t x = 0; x < dv; x++) o[x] *= 1.0f / (1.0f + expf(-gt[ew ? x : 0]));
  }
  unsigned char *dst = (unsigned char *)a->o + (b * d->o_stride[0] + h * d->o_stride[1] + i * d->o_stride[2]) * p->elem_size;
  run->io.store(dv, o, dst);
  if (a->lse) a->lse[row] = lse;
}
