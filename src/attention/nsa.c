/* NSA-style key block selection of the fused attention (smx_attention.h, nsa_topk). */
#include <math.h>

#include "attention/attention.h"

/*
 * NSA-style block selection (Yuan et al. 2025, arXiv 2502.11089, simplified): per row, the blocks its
 * causal / window range holds whole are scored by <q, mean of the block's keys> (q already scaled);
 * the nsa_topk best (ties: lower block) and the block of the row's last visible key are marked 1, all
 * others 0. Returns whether any row selected block `blk` is then a lookup.
 */
void smx_attn_nsa_select(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t dqe, size_t qoff) {
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
    const float *kp = smx_attn_load_k(run, qoff, dqe, b, g, j0, nk, w->kbuf, &ldk);
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
    int valid = smx_attn_row_of(p, g, t, r, &h, &i);
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

int smx_attn_nsa_any(const struct smx_attention_plan *p, const smx_attn_slice *w, size_t blk) {
  for (size_t r = 0; r < p->rows; r++)
    if (w->nsa[r * p->nsa_blocks + blk] != 0.0f) return 1;
  return 0;
}