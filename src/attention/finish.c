/*
 * The end of a query row of the fused attention: split partials folded by
 * log-sum-exp in split order, normalisation (sink, softpick's epsilon),
 * differential subtraction, output gate, store and lse.
 */
#include <math.h>
#include <string.h>

#include "attention/attention.h"


void smx_attn_fold(smx_attn_run *run, size_t tile, unsigned char *at) {
  const struct smx_attention_plan *p = run->p;
  smx_attn_slice w = smx_attn_carve(p, at);
  size_t rp = p->rows_pad, dv = p->d.dim_v;
  size_t t = tile % p->n_qt, bg = tile / p->n_qt, g = bg % p->d.heads_kv, b = bg / p->d.heads_kv;
  for (size_t r = 0; r < p->rows; r++) {
    size_t h, i;
    if (!smx_attn_row_of(p, g, t, r, &h, &i)) continue;
    float m = p->screen ? 0.0f : -INFINITY, l = 0.0f, *o = w.o;
    int sig = p->d.kind == SMX_ATTN_SIGMOID, pick = p->d.kind == SMX_ATTN_SOFTPICK;
    int nan = 0;
    memset(o, 0, dv * sizeof(float));
    for (size_t s = 0; s < p->n_split; s++) {
      const float *q = run->partials + ((tile * p->n_split + s) * rp + r) * (dv + 2);
      /* a NaN score marks the piece's sum NaN, whatever its maximum (which may have skipped the NaN) */
      nan |= q[1] != q[1];
      if (q[0] == -INFINITY) continue;   /* the piece saw no key */
      /* each piece's l (and O, but for sigmoid's plain sum) is shifted by its own u(m): m (softmax),
       * max(m, 0) (softpick), min(m, 0) (sigmoid's l), 0 (screening: m stays 0) */
      float mn = fmaxf(m, q[0]);
      float uo = sig ? fminf(m, 0.0f) : pick ? fmaxf(m, 0.0f) : m;
      float ub = sig ? fminf(q[0], 0.0f) : pick ? fmaxf(q[0], 0.0f) : q[0];
      float un = sig ? fminf(mn, 0.0f) : pick ? fmaxf(mn, 0.0f) : mn;
      float ea = expf(uo - un), eb = expf(ub - un);
      for (size_t x = 0; x < dv; x++) o[x] = sig ? o[x] + q[2 + x] : ea * o[x] + eb * q[2 + x];
      l = ea * l + eb * q[1];
      m = mn;
    }
    smx_attn_finish_row(run, b, h, i, m, nan ? NAN : l, o, NULL, 0.0f);
  }
}

float smx_attn_normalize(smx_attn_run *run, size_t h, float m, float l, float *o) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  size_t dv = d->dim_v;
  /* a NaN score among the keys the row sees leaves its sum NaN (the kernels keep NaN in l): the whole row is
   * NaN, as in a softmax with a NaN input, rather than a sum that fails "l > 0" and reads as no key */
  if (l != l || m != m) {
    for (size_t x = 0; x < dv; x++) o[x] = NAN;
    return NAN;
  }
  if (d->kind == SMX_ATTN_SIGMOID || p->screen) {
    /* no weight (no key seen, or every weight 0): O = 0, set rather than left as P V made it, where
     * 0 x a NaN of V in a shared tile may have reached it */
    if (!(l > 0.0f)) {
      for (size_t x = 0; x < dv; x++) o[x] = 0.0f;
      return -INFINITY;
    }
    if (p->screen) smx_attn_tanh_norm(p, o);   /* h = sum a m v^ is the row as it stands: TanhNorm only */
    /* sigmoid: l is the sum of the weights times e^{-min(m, 0)} (the kernels' form); screening: m = 0 */
    return fminf(m, 0.0f) + logf(l);
  }
  if (d->sinks) {   /* e^{sink} joins the denominator only (gpt-oss) */
    float sk = run->a->sinks[h], mn = fmaxf(m, sk), ea = m == -INFINITY ? 0.0f : expf(m - mn);
    /* no key seen: O is 0 by definition (set, not scaled: 0 x a NaN of V that P V added with weight 0) */
    for (size_t x = 0; x < dv; x++) o[x] = m == -INFINITY ? 0.0f : o[x] * ea;
    l = ea * l + expf(sk - mn);
    m = mn;
  }
  if (d->kind == SMX_ATTN_SOFTPICK && m != -INFINITY) {
    /* l and O are shifted by u = max(m, 0) (the kernels' form); the reference adds eps = 1e-8 after the
     * shift by m itself, which is eps e^{m - u} here */
    float u = fmaxf(m, 0.0f);
    l += 1e-8f * expf(m - u);
    if (l > 0.0f) {
      for (size_t x = 0; x < dv; x++) o[x] /= l;
      return u + logf(l);
    }
  }
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
