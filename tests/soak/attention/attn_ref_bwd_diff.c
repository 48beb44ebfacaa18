/*
 * The long-double reference backward of differential attention (diff_lambda != 0), from the composed form
 * O = g (O1 - lambda O2), O_m = softmax(z_m) V, z1 and z2 from the two halves of the Q / K dimensions with the
 * same options. Everything but the gate is linear in the two maps: the gradients are those of map 1 on the
 * first halves with dO_in = dO sigmoid(gate) plus those of map 2 on the second halves with -lambda dO_in, each
 * from attn_reference_backward on a one-map case; dgate needs O_in = O1 - lambda O2, from attn_reference.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_soak.h"

typedef long double ld;

static ld sig(ld x) { return 1 / (1 + expl(-x)); }

/* the one-map case of map m: Q and K restricted to their half m, no gate, no lambda */
static attn_case half_case(const attn_case *c, int m, ld *qh, ld *kh) {
  const smx_attention_desc *d = &c->d;
  size_t D = d->dim_qk, De = D / 2, nq = d->batch * d->heads_q * d->len_q, nk = d->batch * d->heads_kv * d->len_k;
  for (size_t r = 0; r < nq; r++) memcpy(qh + r * De, c->q + r * D + (size_t)m * De, De * sizeof(ld));
  for (size_t r = 0; r < nk; r++) memcpy(kh + r * De, c->k + r * D + (size_t)m * De, De * sizeof(ld));
  attn_case h = *c;
  h.d.dim_qk = De;
  h.d.diff_lambda = 0;
  h.d.gate = 0;
  /* the default scale is 1 / sqrt(Dqk / 2) for both: as the half case's own default */
  h.q = qh, h.k = kh;
  return h;
}

static ld *zeros(size_t n) { return calloc(n + 1, sizeof(ld)); }

void attn_reference_backward_diff(const attn_case *c, const long double *dO, attn_grad_ref *g) {
  const smx_attention_desc *d = &c->d;
  size_t B = d->batch, Hq = d->heads_q, Hkv = d->heads_kv, Lq = d->len_q, Lk = d->len_k, D = d->dim_qk,
         Dv = d->dim_v, De = D / 2, rows = B * Hq * Lq, keysn = B * Hkv * Lk;
  int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
  ld lam = (ld)(float)d->diff_lambda;
  size_t ng = rows * (ew ? Dv : 1), nm = rows * Lk, nf = B * Hq * Lk;
  ld *qh = zeros(rows * De), *kh = zeros(keysn * De), *doin = zeros(rows * Dv), *sgm = zeros(rows * Dv);
  for (size_t r = 0; r < rows; r++)
    for (size_t t = 0; t < Dv; t++) {
      sgm[r * Dv + t] = d->gate ? sig(c->gate[r * (ew ? Dv : 1) + (ew ? t : 0)]) : 1;
      doin[r * Dv + t] = dO[r * Dv + t] * sgm[r * Dv + t];
    }
  memset(g->dq, 0, rows * D * sizeof(ld)), memset(g->mq, 0, rows * D * sizeof(ld));
  memset(g->dk, 0, keysn * D * sizeof(ld)), memset(g->mk, 0, keysn * D * sizeof(ld));
  memset(g->dv, 0, keysn * Dv * sizeof(ld)), memset(g->mv, 0, keysn * Dv * sizeof(ld));
  if (g->dbias) memset(g->dbias, 0, nm * sizeof(ld)), memset(g->mbias, 0, nm * sizeof(ld));
  if (g->dfox) memset(g->dfox, 0, nf * sizeof(ld)), memset(g->mfox, 0, nf * sizeof(ld));
  ld *o[2], omax = 0;
  for (int m = 0; m < 2; m++) {
    attn_case h = half_case(c, m, qh, kh);
    /* map m's gradients with dO_in (map 1) or -lambda dO_in (map 2) */
    ld *dom = zeros(rows * Dv);
    for (size_t e = 0; e < rows * Dv; e++) dom[e] = m ? -lam * doin[e] : doin[e];
    attn_grad_ref gh = { zeros(rows * De), zeros(rows * De), zeros(keysn * De), zeros(keysn * De), zeros(keysn * Dv),
                         zeros(keysn * Dv), g->dbias ? zeros(nm) : NULL, zeros(nm), NULL, NULL,
                         g->dfox ? zeros(nf) : NULL, zeros(nf), NULL, NULL, g->rowz, g->zmax, NULL, NULL, NULL, NULL };
    ld *zm = m ? zeros(rows) : NULL;
    if (m) gh.zmax = zm;
    attn_reference_backward(&h, dom, &gh);
    for (size_t r = 0; r < rows; r++)
      for (size_t t = 0; t < De; t++) {
        g->dq[r * D + (size_t)m * De + t] = gh.dq[r * De + t];
        g->mq[r * D + (size_t)m * De + t] = gh.mq[r * De + t];
      }
    for (size_t r = 0; r < keysn; r++)
      for (size_t t = 0; t < De; t++) {
        g->dk[r * D + (size_t)m * De + t] = gh.dk[r * De + t];
        g->mk[r * D + (size_t)m * De + t] = gh.mk[r * De + t];
      }
    for (size_t e = 0; e < keysn * Dv; e++) g->dv[e] += gh.dv[e], g->mv[e] += gh.mv[e];
    if (g->dbias)
      for (size_t e = 0; e < nm; e++) g->dbias[e] += gh.dbias[e], g->mbias[e] += gh.mbias[e];
    if (g->dfox)
      for (size_t e = 0; e < nf; e++) g->dfox[e] += gh.dfox[e], g->mfox[e] += gh.mfox[e];
    if (m)
      for (size_t r = 0; r < rows; r++) g->zmax[r] = zm[r] > g->zmax[r] ? zm[r] : g->zmax[r];
    free(zm), free(dom);
    free(gh.dq), free(gh.mq), free(gh.dk), free(gh.mk), free(gh.dv), free(gh.mv), free(gh.dbias), free(gh.mbias);
    free(gh.dfox), free(gh.mfox);
    /* the map's own output, for the gate */
    attn_expect e;
    e.o = o[m] = zeros(rows * Dv), e.lse = zeros(rows), e.o_cls = calloc(rows * Dv + 1, 1), e.l_cls = calloc(rows + 1, 1);
    e.o_extra = zeros(rows), e.l_extra = zeros(rows);
    attn_reference(&h, &e);
    free(e.lse), free(e.o_cls), free(e.l_cls), free(e.o_extra), free(e.l_extra);
  }
  /* dgate = dO O_in sigmoid'(g), O_in = O1 - lambda O2; its magnitude is relative to the maps' |O1| + |lambda|
   * |O2| (O_in may cancel), with the logits' rounding (1 + Z / 32), as the one-map reference does */
  for (size_t e = 0; e < rows * Dv; e++) {
    ld a = fabsl(o[0][e]) + fabsl(lam) * fabsl(o[1][e]);
    omax = a > omax ? a : omax;
  }
  if (g->dgate) {
    memset(g->dgate, 0, ng * sizeof(ld)), memset(g->mgate, 0, ng * sizeof(ld));
    ld hsub = d->dtype == SMX_ATTN_F16 ? 0x1p-25L : d->dtype == SMX_ATTN_BF16 ? 0x1p-134L : 0;
    for (size_t r = 0; r < rows; r++)
      for (size_t t = 0; t < Dv; t++) {
        ld s = sgm[r * Dv + t], oin = o[0][r * Dv + t] - lam * o[1][r * Dv + t], dr = dO[r * Dv + t];
        size_t at = ew ? r * Dv + t : r;
        g->dgate[at] += dr * oin * s * (1 - s);
        g->mgate[at] += fabsl(dr) * (1 + g->zmax[r] / 32) * s * (1 - s) * omax + fabsl(dr) * (1 - s) * hsub * 0x1p16L;
      }
  }
  free(o[0]), free(o[1]), free(qh), free(kh), free(doin), free(sgm);
}
