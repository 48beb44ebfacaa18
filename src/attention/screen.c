/*
 * Screening (Multiscreen: K. M. Nakanishi 2026, "Screening Is Enough", arXiv
 * 2604.01178), the weights step between Q K^T and P V of a tile (tile.c) and
 * the end of a row. Q and K arrive unit-normalised (Q in the task's packed
 * rows, K through the tile's 1 / |k_j|), so s_ij = q^.k^ and
 *   a_ij = max(1 - (1 - s_ij) / r, 0)^2                 (Trim)
 *   m_ij = (cos(pi (j - p_i) / w) + 1) / 2, -w < j - p_i <= 0   (Softmask)
 * with no normalisation across keys: each tile adds sum_j a_ij m_ij v^_j to
 * the row, in key order, so the sum is the same on any thread. Trim runs in
 * the micro-kernel (kernels/f32-attention: screen). The Softmask's range
 * (p_i - w, p_i] is already in the row's key range (tile.c), so only its
 * cosine is applied here, and only to keys that Trim kept.
 */
#include <float.h>
#include <math.h>

#include "attention/attention.h"
#include "kernels/f32-attention/ukernels.h"

void smx_attn_screen_params(const smx_attn_run *run, size_t h, float *rinv, float *win) {
  const smx_attention_desc *d = &run->p->d;
  double r = run->a->screen_r ? (double)run->a->screen_r[h] : d->screen_r;
  double w = run->a->screen_window ? (double)run->a->screen_window[h] : d->screen_window;
  /* both within float range (the conversion of a larger double is undefined); a window of FLT_MAX keeps
   * the Softmask's causality with m = 1, 1 / r = FLT_MAX keeps only s = 1 */
  *rinv = (float)fmin(1.0 / r, (double)FLT_MAX);
  *win = w == INFINITY ? 0.0f : (float)fmin(w, (double)FLT_MAX);
}

int smx_attn_screen_check(const struct smx_attention_plan *p, const smx_attention_args *a) {
  for (size_t h = 0; h < p->d.heads_q; h++) {
    double r = a->screen_r ? (double)a->screen_r[h] : p->d.screen_r;
    double w = a->screen_window ? (double)a->screen_window[h] : p->d.screen_window;
    if (!(r > 0 && r <= 1) || !(w >= 0)) return 0;   /* NaN fails both */
  }
  return 1;
}

int smx_attn_screen_weights(smx_attn_run *run, smx_attn_slice *w, size_t g, size_t t, size_t j0, size_t nk,
                            uint64_t *cnt) {
  const struct smx_attention_plan *p = run->p;
  size_t rp = p->rows_pad, nr = p->rows;
  int any = run->uk->screen(nk, rp, nr, w->st, rp, w->knorm, w->sr, w->alpha, cnt);
  if (!any) return 0;
  /* the Softmask: a cosine for each key that Trim kept, on rows with a window */
  const float pi = 3.14159265358979323846f;
  for (size_t r = 0; r < nr; r++) {
    size_t h, i;
    if (w->alpha[r] < 0.0f || w->sw[r] <= 0.0f || !smx_attn_row_of(p, g, t, r, &h, &i)) continue;
    int64_t pos = smx_attn_pos(p, i);
    float win = w->sw[r];
    for (size_t c = 0; c < nk; c++) {
      float *x = w->st + c * rp + r;
      if (*x > 0.0f) *x *= 0.5f * (cosf(pi * (float)((int64_t)(j0 + c) - pos) / win) + 1.0f);
    }
  }
  for (size_t r = 0; r < rp; r++) w->nz[r] = 0.0f;   /* padding rows too: pv_sparse reads them */
  for (size_t c = 0; c < nk; c++)   /* in key order: the same sums on any thread; and the kept keys per row */
    for (size_t r = 0; r < nr; r++) {
      float x = w->st[c * rp + r];
      w->l[r] += x;
      w->nz[r] += x > 0.0f ? 1.0f : 0.0f;
    }
  return 1;
}

void smx_attn_tanh_norm(const struct smx_attention_plan *p, float *o) {
  if (p->d.screen_flags & SMX_ATTN_SCREEN_NO_TANHNORM) return;
  size_t dv = p->d.dim_v;
  double ss = 0.0;
  for (size_t x = 0; x < dv; x++) ss += (double)o[x] * o[x];
  double n = sqrt(ss);
  if (n != n) {   /* a NaN in h: the norm, and so every element, is NaN */
    for (size_t x = 0; x < dv; x++) o[x] = NAN;
    return;
  }
  if (!(n > 0.0)) return;   /* h = 0: TanhNorm's limit is h itself */
  float f = (float)(tanh(n) / n);
  for (size_t x = 0; x < dv; x++) o[x] *= f;
}
