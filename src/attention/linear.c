/*
 * Linear attention kinds (smx_attention.h): w_ij = f(q_i) . f(k_j) with no
 * softmax, so O_i = sum_j w_ij v_j / sum_j w_ij comes from running sums
 * S = sum_j f(k_j) v_j^T (F x Dv) and z = sum_j f(k_j), in O(L F Dv):
 *  - linear (Katharopoulos et al. 2020, arXiv 2006.16236): f = elu + 1;
 *  - cosFormer (Qin et al. 2022, arXiv 2202.08791): f = relu, and the weight
 *    cos(pi/2 (p_i - j) / Lk) split as cos a cos b + sin a sin b into features
 *    [f(x) cos(pi/2 t / Lk), f(x) sin(pi/2 t / Lk)] (t the position);
 *  - MALA (Fan et al. 2025, arXiv 2507.00698): f = elu + 1, a_ij = scale f(q_i).f(k_j),
 *    z_i = mean_j a_ij, w_ij = ((1 + 1/(z_i + 1e-6)) a_ij - z_i) / n_i, from S, z and the
 *    running sum of v.
 * One task per (batch, query head), keys in order: the sums are formed in a
 * fixed order whatever the thread count. Causal: query i reads the sums once
 * they hold keys 0 .. p_i.
 */
#include <math.h>
#include <string.h>

#include "attention/attention.h"

/* the features of a row x (dim values) at position t into f (F values) */
static size_t features(const struct smx_attention_plan *p, const float *x, size_t dim, int64_t t, float *f) {
  if (p->d.kind != SMX_ATTN_COSFORMER) {
    for (size_t i = 0; i < dim; i++) f[i] = x[i] > 0.0f ? x[i] + 1.0f : expf(x[i]);   /* elu(x) + 1 */
    return dim;
  }
  double a = 1.5707963267948966 * (double)t / (double)(p->d.len_k ? p->d.len_k : 1);
  float c = (float)cos(a), s = (float)sin(a);
  for (size_t i = 0; i < dim; i++) {
    float r = x[i] > 0.0f || x[i] != x[i] ? x[i] : 0.0f;   /* relu, keeping NaN */
    f[i] = r * c;
    f[dim + i] = r * s;
  }
  return 2 * dim;
}

void smx_attn_linear_task(smx_attn_run *run, size_t task, unsigned char *at) {
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t dq = d->dim_qk, dv = d->dim_v, h = task % d->heads_q, b = task / d->heads_q, g = h / p->group;
  size_t dmax = dq > dv ? dq : dv;
  float *S = smx_attn_take(&at, 2 * dq * dv), *z = smx_attn_take(&at, 2 * dq), *fk = smx_attn_take(&at, 2 * dq), *fq = smx_attn_take(&at, 2 * dq);
  float *row = smx_attn_take(&at, dmax);
  float *o = smx_attn_take(&at, dv), *vsum = smx_attn_take(&at, dv);
  size_t F = d->kind == SMX_ATTN_COSFORMER ? 2 * dq : dq;
  int mala = d->kind == SMX_ATTN_MALA;
  memset(vsum, 0, dv * sizeof(float));
  memset(S, 0, F * dv * sizeof(float));
  memset(z, 0, F * sizeof(float));
  const unsigned char *kb = (const unsigned char *)a->k + (b * d->k_stride[0] + g * d->k_stride[1]) * p->elem_size;
  const unsigned char *vb = (const unsigned char *)a->v + (b * d->v_stride[0] + g * d->v_stride[1]) * p->elem_size;
  const unsigned char *qb = (const unsigned char *)a->q + (b * d->q_stride[0] + h * d->q_stride[1]) * p->elem_size;
  size_t next = 0;   /* keys [0, next) are in S and z */
  /* non-causal: every key first; causal: keys are added as the queries advance */
  for (size_t i = 0; i < d->len_q; i++) {
    int64_t pos = smx_attn_pos(p, i);
    int64_t upto = d->causal ? pos + 1 : (int64_t)d->len_k;
    if (upto > (int64_t)d->len_k) upto = (int64_t)d->len_k;
    for (; (int64_t)next < upto; next++) {
      run->io.load(dq, kb + next * d->k_stride[2] * p->elem_size, row);
      features(p, row, dq, (int64_t)next, fk);
      run->io.load(dv, vb + next * d->v_stride[2] * p->elem_size, o);
      for (size_t x = 0; x < F; x++) {
        float kx = fk[x];
        float *srow = S + x * dv;
        for (size_t y = 0; y < dv; y++) srow[y] += kx * o[y];
        z[x] += kx;
      }
      for (size_t y = 0; y < dv; y++) vsum[y] += o[y];
    }
    run->io.load(dq, qb + i * d->q_stride[2] * p->elem_size, row);
    features(p, row, dq, pos, fq);
    float den = 0.0f;
    for (size_t y = 0; y < dv; y++) o[y] = 0.0f;
    for (size_t x = 0; x < F; x++) {
      float qx = fq[x];
      const float *srow = S + x * dv;
      for (size_t y = 0; y < dv; y++) o[y] += qx * srow[y];
      den += qx * z[x];
    }
    if (mala) {   /* O = (1 + 1/(z + 1e-6)) A / n - z vsum / n, A = scale f(q) S, z = scale f(q).sum f(k) / n */
      if (next == 0) {
        smx_attn_finish_row(run, b, h, i, -INFINITY, 0.0f, o, NULL, 0.0f);
        continue;
      }
      float n = (float)next, zz = p->scale * den / n, beta = 1.0f + 1.0f / (zz + 1e-6f);
      for (size_t y = 0; y < dv; y++) o[y] = (beta * p->scale * o[y] - zz * vsum[y]) / n;
      /* already normalised (the weights sum to z / (z + 1e-6), about 1): finished as (m, l) = (0, 1), lse 0 */
      smx_attn_finish_row(run, b, h, i, 0.0f, 1.0f, o, NULL, 0.0f);
      continue;
    }
    /* den = 0 (no key, or cosFormer's relu features orthogonal): m = -inf makes the output 0 */
    smx_attn_finish_row(run, b, h, i, den > 0.0f ? 0.0f : -INFINITY, den, o, NULL, 0.0f);
  }
}
