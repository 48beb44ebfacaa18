/*
 * The row helpers of the fused attention (attention.h), shared by the tile
 * loop (tile.c), the finishers (finish.c), NSA selection (nsa.c), the score
 * options (scores.c) and screening (screen.c): a worker's workspace slice,
 * the map from a task's rows to (head, query index), and the loads of K / V
 * rows as f32. A leaf: it calls nothing else in src/attention, so the
 * include and call graph of the directory has no circle (issue 23).
 */
#include <math.h>

#include "attention/attention.h"

float *smx_attn_take(unsigned char **at, size_t floats) {
  float *p = (float *)(void *)*at;
  *at += (floats + 15) / 16 * 64;
  return p;
}

smx_attn_slice smx_attn_carve(const struct smx_attention_plan *p, unsigned char *at) {
  size_t r = p->rows_pad, dq = p->d.dim_qk, dv = p->d.dim_v;
  smx_attn_slice s;
  s.qr = smx_attn_take(&at, dq * r);
  s.qt = smx_attn_take(&at, dq * r);
  s.st = smx_attn_take(&at, SMX_ATTN_BK * r);
  s.o = smx_attn_take(&at, r * dv);
  s.m = smx_attn_take(&at, r);
  s.l = smx_attn_take(&at, r);
  s.alpha = smx_attn_take(&at, r);
  s.kbuf = smx_attn_take(&at, SMX_ATTN_BK * dq);
  s.vbuf = smx_attn_take(&at, SMX_ATTN_BK * dv);
  s.tmp = smx_attn_take(&at, dq > dv ? dq : dv);
  s.o1 = smx_attn_take(&at, r * dv);
  s.lse1 = smx_attn_take(&at, r);
  s.knorm = smx_attn_take(&at, SMX_ATTN_BK);
  s.qnorm = smx_attn_take(&at, r);
  s.lo = (int64_t *)(void *)smx_attn_take(&at, 4 * r);
  s.hi = s.lo + r;
  s.nsa = smx_attn_take(&at, p->nsa_blocks ? r * p->nsa_blocks : 1);
  s.qsq = smx_attn_take(&at, r);
  s.fac = smx_attn_take(&at, r);
  s.sr = smx_attn_take(&at, r);
  s.sw = smx_attn_take(&at, r);
  s.nz = smx_attn_take(&at, r);
  s.qp = (uint32_t *)(void *)smx_attn_take(&at, p->bf16 || p->dec16 ? (dq + 1) / 2 * r : 1);
  s.vp = (uint32_t *)(void *)smx_attn_take(&at, p->bf16 ? SMX_ATTN_BK / 2 * p->ldvp : 1);
  s.pp = (uint32_t *)(void *)smx_attn_take(&at, p->bf16 ? SMX_ATTN_BK / 2 * r : 1);
  s.kb = (uint16_t *)(void *)smx_attn_take(&at, p->bf16 ? SMX_ATTN_BK * (dq + 1) / 2 + 1 : 1);
  s.st2 = smx_attn_take(&at, p->decode && p->elem_size == 2 ? SMX_ATTN_BK * r : 1);
  return s;
}

/* x * rsqrt(mean(x^2) + eps) * w (RMSNorm, computed in double) */
void smx_attn_rms_norm(float *x, size_t n, float eps, const float *w) {
  double ss = 0.0;
  for (size_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
  float r = (float)(1.0 / sqrt(ss / (double)n + eps));
  for (size_t i = 0; i < n; i++) x[i] = x[i] * r * (w ? w[i] : 1.0f);
}

/* Row r of a task: query head and query index; 0 when r is padding. */
int smx_attn_row_of(const struct smx_attention_plan *p, size_t g, size_t t, size_t r, size_t *h, size_t *i) {
  if (r >= p->rows) return 0;
  *h = g * p->group + r / p->bq;
  *i = t * p->bq + r % p->bq;
  return *i < p->d.len_q;
}

/* Key rows [j0, j0 + nk) of KV head (b, g) as f32 rows (in place when possible). */
const float *smx_attn_load_rows(smx_attn_run *run, const void *base, const size_t *s, size_t dim, size_t b, size_t g,
                                size_t j0, size_t nk, float *buf, int norm, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const unsigned char *at = (const unsigned char *)base + (b * s[0] + g * s[1] + j0 * s[2]) * p->elem_size;
  if (p->elem == SMX_ELEM_F32 && !norm) {
    *ld = s[2];
    return (const float *)(const void *)at;
  }
  for (size_t c = 0; c < nk; c++) {
    run->io.load(dim, at + c * s[2] * p->elem_size, buf + c * dim);
    if (norm) smx_attn_rms_norm(buf + c * dim, dim, p->qk_eps, run->a->k_norm_w);
  }
  *ld = dim;
  return buf;
}

/* Dimensions [qoff, qoff + dim) of key rows [j0, j0 + nk) (j0 a multiple of SMX_ATTN_BK) as f32 rows:
 * int8 keys times their block's scale, RMS-normalised with qk_norm. */
const float *smx_attn_load_k(smx_attn_run *run, size_t qoff, size_t dim, size_t b, size_t g, size_t j0, size_t nk,
                           float *buf, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  if (!d->k_int8) {
    const unsigned char *base = (const unsigned char *)run->a->k + qoff * p->elem_size;
    return smx_attn_load_rows(run, base, d->k_stride, dim, b, g, j0, nk, buf, d->qk_norm, ld);
  }
  const int8_t *at = (const int8_t *)run->a->k + b * d->k_stride[0] + g * d->k_stride[1] + j0 * d->k_stride[2] + qoff;
  size_t nblk = (d->len_k + SMX_ATTN_BK - 1) / SMX_ATTN_BK;
  float sc = run->a->k_scales[(b * d->heads_kv + g) * nblk + j0 / SMX_ATTN_BK];
  for (size_t c = 0; c < nk; c++) {
    for (size_t x = 0; x < dim; x++) buf[c * dim + x] = (float)at[c * d->k_stride[2] + x] * sc;
    if (d->qk_norm) smx_attn_rms_norm(buf + c * dim, dim, p->qk_eps, run->a->k_norm_w);
  }
  *ld = dim;
  return buf;
}
