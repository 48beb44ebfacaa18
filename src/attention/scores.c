/*
 * Between Q K^T and P V (tile.c): every per-score option of a plan on a tile of
 * key-major scores.
 */
#include <math.h>
#include <string.h>

#include "attention/attention.h"

float smx_attn_ssmax_factor(smx_attn_run *run, size_t b, size_t h, size_t i) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  int64_t lo, hi, pos = smx_attn_pos(p, i);
  smx_attn_key_range(p, i, &lo, &hi);
  /* every key of the row, not only this task's split: n_i is the row's */
  const unsigned char *mrow = NULL;
  if (d->mask_kind != SMX_ATTN_MASK_NONE) {
    size_t es = d->mask_kind == SMX_ATTN_MASK_BOOL ? 1 : sizeof(float);
    mrow = (const unsigned char *)run->a->mask + (b * d->mask_stride[0] + h * d->mask_stride[1] + i * d->mask_stride[2]) * es;
  }
  int64_t n = 0;
  if (!mrow && !d->radial_frame) {
    n = hi - lo;
  } else {
    for (int64_t j = lo; j < hi; j++) {
      if (d->radial_frame && !smx_attn_radial_visible(d->radial_frame, pos, j)) continue;
      if (d->mask_kind == SMX_ATTN_MASK_BOOL && !mrow[(size_t)j * d->mask_stride[3]]) continue;
      if (d->mask_kind == SMX_ATTN_MASK_BIAS) {
        float bias;
        memcpy(&bias, mrow + (size_t)j * d->mask_stride[3] * sizeof(float), sizeof bias);
        if (bias == -INFINITY) continue;
      }
      n++;
    }
  }
  return n > 0 ? p->ssmax_s * (float)log((double)n) : 1.0f;
}

/* Every per-score option, on the scores of keys j0.. at st[r rs + c cs] (masked: -inf). */
void smx_attn_transform(smx_attn_run *run, smx_attn_slice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk,
                        size_t rs, size_t cs) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t rp = p->rows_pad;
  for (size_t r = 0; r < rp; r++) {
    size_t h = 0, i = 0;
    float *col = w->st + r * rs;
    if (!smx_attn_row_of(p, g, t, r, &h, &i)) {
      for (size_t c = 0; c < nk; c++) col[c * cs] = -INFINITY;
      continue;
    }
    int64_t pos = smx_attn_pos(p, i), lo = w->lo[r], hi = w->hi[r];
    float fac = p->ssmax_s != 0 ? w->fac[r] : 1.0f;
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
      for (size_t c = 0; c < nk; c++) col[c * cs] = -INFINITY;
      continue;
    }
    for (size_t c = 0; c < nk; c++) {
      int64_t j = (int64_t)(j0 + c);
      float x = col[c * cs];
      if (j < lo || j >= hi || (d->radial_frame && !smx_attn_radial_visible(d->radial_frame, pos, j))) {
        col[c * cs] = -INFINITY;
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
      col[c * cs] = x;
    }
  }
}
