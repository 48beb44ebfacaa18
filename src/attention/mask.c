/* Positional masks of the fused attention: causal, sliding window, radial (smx_attention.h). */
#include "attention/attention.h"

int64_t smx_attn_pos(const struct smx_attention_plan *p, size_t i) {
  if (p->d.causal == SMX_ATTN_CAUSAL_TOP_LEFT) return (int64_t)i;
  return (int64_t)i + (int64_t)p->d.len_k - (int64_t)p->d.len_q;
}

void smx_attn_key_range(const struct smx_attention_plan *p, size_t i, int64_t *lo, int64_t *hi) {
  int64_t n = (int64_t)p->d.len_k, q = smx_attn_pos(p, i), a = 0, b = n;
  if (p->d.causal != SMX_ATTN_CAUSAL_NONE && q + 1 < b) b = q + 1;
  if (p->d.window) {
    if (p->d.window_left >= 0 && q - p->d.window_left > a) a = q - p->d.window_left;
    if (p->d.window_right >= 0 && q + p->d.window_right + 1 < b) b = q + p->d.window_right + 1;
  }
  if (b < a) b = a;
  if (a > n) a = b = n;
  if (b < 0) a = b = 0;
  *lo = a;
  *hi = b;
}

static int bit_length(uint64_t x) {
  int n = 0;
  while (x) {
    n++;
    x >>= 1;
  }
  return n;
}

/*
 * Radial attention (Li et al. 2025, arXiv 2506.19852): tokens are laid out
 * frame by frame, `frame` tokens each. Frames d = |f_q - f_k| apart attend
 * within a band |q - k| <= w (token distance) that halves with each doubling
 * of d: w = frame for d <= 1, else 2^bitlen(frame) / 2^bitlen(d).
 * (The reference builds the same band at 128-token block granularity and
 * thins far frame pairs; this is the token-level form.)
 */
int smx_attn_radial_visible(size_t frame, int64_t qi, int64_t j) {
  if (qi < 0 || j < 0) return 0;
  int64_t fq = qi / (int64_t)frame, fk = j / (int64_t)frame;
  uint64_t dist = (uint64_t)(fq > fk ? fq - fk : fk - fq);
  int64_t w = dist <= 1 ? (int64_t)frame : (int64_t)(((uint64_t)1 << bit_length(frame)) >> bit_length(dist));
  int64_t tq = qi % (int64_t)frame, tk = j % (int64_t)frame;   /* position inside the frame */
  int64_t diff = tq > tk ? tq - tk : tk - tq;
  return diff <= w;
}
