/*
 * The steps of the attention backward pass (backward.h) that belong to one variant: the RMSNorm backward of
 * QK-norm (softpick's dS is a micro-kernel of kernels/f32-attention-bwd), and differential attention's two maps per tile and its first pass (the
 * second map's lse and each map's D). backward_tile.c calls them from its tile and task loops.
 */
#include <math.h>
#include <string.h>

#include "attention/backward.h"

/* QK-norm's backward on one row (RMSNorm, x^ = x r w, r = 1 / sqrt(mean x^2 + eps) as the forward forms it):
 * g = dLoss/dx^ in place becomes dLoss/dx = r (dy - y mean(dy y)), y = x r, dy = g w; acc (the weights'
 * gradient, or NULL) += g y. A row whose g is all 0 (no query row sees the key) keeps 0 and adds nothing,
 * whatever x holds: a hidden key adds exactly 0, as without QK-norm. */
void smx_attn_bwd_rms_norm_vjp(float *g, const float *x, size_t n, float eps, const float *wt, float *acc) {
  int any = 0;
  for (size_t t = 0; t < n; t++) any |= g[t] != 0.0f;
  if (!any) return;
  double ss = 0.0, dot = 0.0;
  for (size_t t = 0; t < n; t++) ss += (double)x[t] * x[t];
  float r = (float)(1.0 / sqrt(ss / (double)n + eps));
  for (size_t t = 0; t < n; t++) {
    float y = x[t] * r;
    dot += (double)(g[t] * (wt ? wt[t] : 1.0f)) * y;
    if (acc) acc[t] += g[t] * y;
  }
  float c = (float)(dot / (double)n);
  for (size_t t = 0; t < n; t++) g[t] = r * (g[t] * (wt ? wt[t] : 1.0f) - x[t] * r * c);
}

/* Differential attention, O = softmax(z1) V - lambda softmax(z2) V (z1, z2 from the halves of the Q and K
 * dimensions, the same options on both): each map's scores S1 (w->f.st) and S2 (w->st2) with the per-score
 * options (raw scores kept for softcap), P1 = e^{S1 - lse1} (w->p), P2 = e^{S2 - lse2} (w->p2) and dP = dO V^T
 * (both maps share V). With grads: dS1 = P1 (dP - D1) (w->dp), dS2 = -lambda P2 (dP - D2) (w->dp2), D_m =
 * dO . O_m, and w->p = P1 - lambda P2, the weights of dV. */
void smx_attn_bwd_diff_tile(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk, int inside,
                      int grads) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const struct smx_attn_bwd_ukernels *bk = bw->bk;
  size_t nr = p->rows, dq = p->d.dim_qk, dv = p->d.dim_v, dqe = dq / 2, BK = SMX_ATTN_BK;
  for (int m = 0; m < 2; m++) {
    float *st = m ? w->st2 : w->f.st;
    bk->gemm(nr, nk, dqe, w->f.qr + (size_t)m * dqe, dq, 1, w->kt + (size_t)m * dqe * BK, BK, st, BK, 0);
    if (p->softcap > 0)
      for (size_t r = 0; r < nr; r++) memcpy((m ? w->raw2 : w->raw) + r * BK, st + r * BK, nk * sizeof(float));
    if (!inside || p->elementwise) {
      smx_attn_slice f = w->f;
      f.st = st;
      smx_attn_transform(run, &f, b, g, t, j0, nk, BK, 1);
    }
    bk->probs(nr, nk, st, BK, m ? w->lse2 : w->lse, m ? w->p2 : w->p, BK);
  }
  bk->gemm(nr, nk, dv, w->f.o, dv, 1, w->vt, BK, w->dp, BK, 0);
  if (!grads) return;
  for (size_t r = 0; r < nr; r++) memcpy(w->dp2 + r * BK, w->dp + r * BK, nk * sizeof(float));
  bk->dscores(nr, nk, w->f.st, BK, w->p, BK, w->dp, BK, w->dvec);
  bk->dscores(nr, nk, w->st2, BK, w->p2, BK, w->dp2, BK, w->dvec2);
  float lam = p->diff_lambda;
  for (size_t r = 0; r < nr; r++)
    for (size_t c = 0; c < nk; c++) {
      w->dp2[r * BK + c] *= -lam;
      w->p[r * BK + c] -= lam * w->p2[r * BK + c];
    }
}

/* Differential attention's first pass, per query block: the second map's lse (the forward keeps the first's
 * only), by a running maximum over the key tiles the rows see, and each map's D_m = dO . O_m = sum_j P_m dP
 * (the stored O is O1 - lambda O2, which does not give them apart), summed in double in key order. A NaN in
 * either map makes both lse NaN: the row's gradients are NaN, as a NaN in O makes them without the split. */
void smx_attn_bwd_diff_task(smx_attn_bwd *bw, size_t task, unsigned char *slice) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  smx_attn_bslice w = smx_attn_bwd_carve(p, slice);
  size_t t = task % p->n_qt, bg = task / p->n_qt, g = bg % d->heads_kv, b = bg / d->heads_kv;
  size_t nr = p->rows, BK = SMX_ATTN_BK, lk = d->len_k;
  int64_t lo_u, hi_u, lo_i, hi_i;
  int full = smx_attn_bwd_block_ranges(p, &w, g, t, &lo_u, &hi_u, &lo_i, &hi_i);
  smx_attn_bwd_load_block(bw, &w, b, g, t, 0);
  double *acc = (double *)(void *)w.dp2;   /* per row: l2, sum e^{S2 - m2} dP, D1 (dS2 is not formed here) */
  float *m2 = w.rsum;
  for (size_t r = 0; r < nr; r++) {
    acc[3 * r] = acc[3 * r + 1] = acc[3 * r + 2] = 0.0;
    m2[r] = -INFINITY;
    w.lse2[r] = INFINITY;   /* P2 is not formed here: probs of map 2 give 0 */
  }
  if (hi_u > lo_u)
    for (size_t j0 = (size_t)lo_u / BK * BK; j0 < (size_t)hi_u; j0 += BK) {
      size_t nk = lk - j0 < BK ? lk - j0 : BK, ldk;
      smx_attn_bwd_load_tile(bw, &w, b, g, j0, nk, &ldk);
      int inside = full && lo_i <= (int64_t)j0 && (int64_t)(j0 + nk) <= hi_i;
      smx_attn_bwd_diff_tile(bw, &w, b, g, t, j0, nk, inside, 0);
      for (size_t r = 0; r < nr; r++) {
        const float *s2 = w.st2 + r * BK, *p1 = w.p + r * BK, *dpr = w.dp + r * BK;
        double d1 = 0.0;
        float mt = -INFINITY;
        int nan = 0;
        for (size_t c = 0; c < nk; c++) {
          d1 += (double)p1[c] * dpr[c];
          nan |= s2[c] != s2[c];
          mt = s2[c] > mt ? s2[c] : mt;
        }
        acc[3 * r + 2] += d1;
        if (nan) acc[3 * r] = NAN;
        if (mt == -INFINITY) continue;   /* no key of the tile for this row */
        float mn = mt > m2[r] ? mt : m2[r];
        double sc = m2[r] == -INFINITY ? 0.0 : exp((double)m2[r] - mn), l = 0.0, a = 0.0;
        for (size_t c = 0; c < nk; c++) {
          if (s2[c] == -INFINITY) continue;
          double e = exp((double)s2[c] - mn);
          l += e;
          a += e * dpr[c];
        }
        acc[3 * r] = acc[3 * r] * sc + l;
        acc[3 * r + 1] = acc[3 * r + 1] * sc + a;
        m2[r] = mn;
      }
    }
  for (size_t r = 0; r < nr; r++) {
    size_t h, i;
    if (!smx_attn_row_of(p, g, t, r, &h, &i)) continue;
    float *dr = bw->diffrow + ((b * d->heads_q + h) * d->len_q + i) * 4;
    double l2 = acc[3 * r];
    float lse1 = w.lse[r], lse2 = l2 > 0.0 ? m2[r] + (float)log(l2) : l2 == 0.0 ? -INFINITY : NAN;
    int nan = lse1 != lse1 || lse2 != lse2;
    dr[0] = nan ? NAN : lse1;
    dr[1] = nan ? NAN : lse2;
    dr[2] = nan ? NAN : (float)acc[3 * r + 2];
    dr[3] = nan ? NAN : l2 > 0.0 ? (float)(acc[3 * r + 1] / l2) : 0.0f;
  }
}
