/* One row of fused softmax + top-k; see topk_row.h. */
#include <math.h>

#include "ops/softmax_policy.h"
#include "ops/topk_row.h"

/* elements filtered against one reading of the threshold */
#define SMX_TOPK_PIECE 256

const float *smx_topk_block(const smx_topk_cfg *cfg, const void *x, size_t off, size_t len, float *buf) {
  if (cfg->io.elem == SMX_ELEM_F32) return (const float *)x + off;
  cfg->io.load(len, (const uint16_t *)x + off, buf);
  return buf;
}

smx_topk_part smx_topk_part_identity(void) {
  smx_topk_part p = { smx_online_identity(), 0 };
  return p;
}

void smx_topk_part_merge(const smx_topk_cfg *cfg, smx_topk_part *a, const smx_topk_part *b) {
  a->st = smx_online_merge(a->st, b->st, cfg->c.c);
  a->has_nan |= b->has_nan;
}

void smx_topk_scan(const smx_topk_cfg *cfg, const void *x, size_t off, size_t len, smx_topk_heap *h,
                   smx_topk_part *part) {
  float buf[SMX_TOPK_BLOCK];
  uint32_t pos[SMX_TOPK_BLOCK];
  smx_topk_part mine = smx_topk_part_identity();
  int nan = 0;
  for (size_t b = 0; b < len; b += SMX_TOPK_BLOCK) {
    size_t bl = len - b < SMX_TOPK_BLOCK ? len - b : SMX_TOPK_BLOCK;
    int64_t base = (int64_t)(off + b);
    const float *blk = smx_topk_block(cfg, x, off + b, bl, buf);
    if (cfg->op != SMX_TOPK_RAW) {
      /* the block's max, then its exponential sum (the block is in L1 now):
       * measured faster than the per-vector rescale of the online kernel
       * (out of cache, ns/element: AVX-512 0.33 vs 0.8, AVX2 0.59 vs 1.1) and
       * than the (v, e) sums on AVX-512 (0.38). A block of only -inf or NaN
       * adds nothing (NaN is caught by the filter). */
      float bm = cfg->k->rmax(bl, blk);
      if (bm > -INFINITY) {
        smx_online_state bs = { bm, cfg->k->raddstoreexp(bl, blk, NULL, bm, &cfg->c) };
        mine.st = smx_online_merge(mine.st, bs, cfg->c.c);
      }
    }
    size_t j = 0;
    /* until k entries are kept, everything but NaN enters (-inf included) */
    for (; j < bl && !smx_topk_heap_full(h); j++) {
      float v = blk[j];
      if (v != v) nan = 1;
      else smx_topk_heap_push(h, v, base + (int64_t)j);
    }
    if (j == bl) continue;
    /* Later elements have higher indices, so one equal to the k-th value
     * loses: only x > threshold can enter. The threshold is read at the start
     * of each piece of SMX_TOPK_PIECE elements (the push re-checks the current
     * one): short pieces keep it fresh while it still rises fast, at the
     * start of a row (k = 50 on 128000 columns: 2x faster than whole blocks). */
    for (; j < bl; j += SMX_TOPK_PIECE) {
      size_t pl = bl - j < SMX_TOPK_PIECE ? bl - j : SMX_TOPK_PIECE;
      size_t cnt = cfg->tk->filter_gt(pl, blk + j, h->v[0], pos, &nan);
      for (size_t q = 0; q < cnt; q++) {
        size_t at = j + pos[q];
        smx_topk_heap_push(h, blk[at], base + (int64_t)at);
      }
    }
  }
  mine.has_nan = nan;
  smx_topk_part_merge(cfg, part, &mine);
}

/* The summary the special-value policy needs (a second read of the row). */
static void scan_policy(const smx_topk_cfg *cfg, const void *x, size_t n, smx_row_summary *s) {
  float buf[SMX_TOPK_BLOCK];
  for (size_t b = 0; b < n; b += SMX_TOPK_BLOCK) {
    size_t bl = n - b < SMX_TOPK_BLOCK ? n - b : SMX_TOPK_BLOCK;
    smx_policy_scan(smx_topk_block(cfg, x, b, bl, buf), bl, s);
  }
}

void smx_topk_finish(const smx_topk_cfg *cfg, const void *x, size_t n, smx_topk_heap *h, const smx_topk_part *part,
                     float *values, int64_t *indices) {
  size_t k = cfg->kk;
  if (part->has_nan) {
    for (size_t j = 0; j < k; j++) {
      values[j] = NAN;
      indices[j] = -1;
    }
    return;
  }
  smx_topk_heap_sort(h);
  for (size_t j = 0; j < k; j++) indices[j] = h->i[j];
  if (cfg->op == SMX_TOPK_RAW) {
    for (size_t j = 0; j < k; j++) values[j] = h->v[j];
    return;
  }
  smx_online_state st = part->st;
  if (st.d > 0.0 && st.d < INFINITY && st.m > -INFINITY && st.m < INFINITY) {
    /* k exponentials in double: the error is that of the normaliser d */
    if (cfg->op == SMX_TOPK_SOFTMAX) {
      double inv_d = 1.0 / st.d;
      for (size_t j = 0; j < k; j++) values[j] = (float)(exp2(((double)h->v[j] - st.m) * cfg->c.c) * inv_d);
    } else {
      double ld = log(st.d);
      for (size_t j = 0; j < k; j++) values[j] = (float)(((double)h->v[j] - st.m) * cfg->inv_t - ld);
    }
    return;
  }
  /* +inf entries or no entry above -inf: the policy of smx.h decides */
  smx_row_summary s = { 0, 0, 0 };
  scan_policy(cfg, x, n, &s);
  if (!smx_policy_is_special(&s)) s.has_nan = 1;   /* unreachable: a bad state comes from a special row */
  const smx_policy *pol = cfg->op == SMX_TOPK_SOFTMAX ? &smx_policy_softmax : &smx_policy_log_softmax;
  for (size_t j = 0; j < k; j++) values[j] = (float)pol->value(&s, cfg->flags, h->v[j]);
  if (s.has_nan)
    for (size_t j = 0; j < k; j++) indices[j] = -1;
}

void smx_topk_row(const smx_topk_cfg *cfg, const void *x, size_t n, smx_topk_heap *h, float *values,
                  int64_t *indices) {
  h->size = 0;
  smx_topk_part row = smx_topk_part_identity();
  for (size_t off = 0; off < n; off += SMX_CHUNK) {
    smx_topk_part part = smx_topk_part_identity();
    size_t len = n - off < SMX_CHUNK ? n - off : SMX_CHUNK;
    smx_topk_scan(cfg, x, off, len, h, &part);
    smx_topk_part_merge(cfg, &row, &part);
  }
  smx_topk_finish(cfg, x, n, h, &row, values, indices);
}
