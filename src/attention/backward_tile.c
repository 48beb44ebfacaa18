/*
 * The tasks of the attention backward pass (backward.h). For a query block
 * (the forward's task rows) against a key tile: S = (scale Q) K^T, the
 * forward's per-score options (scores.c), P = e^{S - lse}, dP = dO V^T,
 * dS = P (dP - D) (kernels/f32-attention-bwd), then the option's derivative.
 * Pass 1 (a key tile) sums dV += P^T dO and dK += dS^T (scale Q) over every
 * query block of its KV head; pass 2 (a query block) sums dQ += dS K over every
 * key tile its rows see. FlashAttention-2: Dao 2023, arXiv 2307.08691, Alg. 2.
 * The variants' own steps (softpick, QK-norm, differential) are in
 * backward_variants.c.
 */
#include <math.h>
#include <string.h>

#include "attention/backward.h"

static size_t lines(size_t floats) { return (floats + 15) / 16 * 64; }

static float *take(unsigned char **at, size_t floats) { return smx_attn_take(at, floats); }

size_t smx_attn_bwd_slice_bytes(const struct smx_attention_plan *p) {
  size_t r = p->rows_pad, dq = p->d.dim_qk, dv = p->d.dim_v, bk = SMX_ATTN_BK, diff = p->diff_lambda != 0.0f;
  return p->ws_worker + 3 * lines(r * bk) + lines(dq * bk) + lines(dv * bk) + lines(bk * dq) + lines(bk * dv) +
         lines(r * dq) + 3 * lines(r) + lines(p->group * bk) + lines(r * dq) + lines(bk * dq) +
         (diff ? 4 * lines(r * bk) + 2 * lines(r) : 0);
}

smx_attn_bslice smx_attn_bwd_carve(const struct smx_attention_plan *p, unsigned char *at) {
  size_t r = p->rows_pad, dq = p->d.dim_qk, dv = p->d.dim_v, bk = SMX_ATTN_BK;
  smx_attn_bslice w;
  w.f = smx_attn_carve(p, at);
  at += p->ws_worker;
  w.p = take(&at, r * bk);
  w.dp = take(&at, r * bk);
  w.raw = take(&at, r * bk);
  w.kt = take(&at, dq * bk);
  w.vt = take(&at, dv * bk);
  w.dka = take(&at, bk * dq);
  w.dva = take(&at, bk * dv);
  w.dqa = take(&at, r * dq);
  w.dvec = take(&at, r);
  w.lse = take(&at, r);
  w.rsum = take(&at, r);
  w.csum = take(&at, p->group * bk);
  w.qg = take(&at, r * dq);
  w.kg = take(&at, bk * dq);
  w.qbad = w.kbad = 0;
  w.st2 = w.p2 = w.dp2 = w.raw2 = w.lse2 = w.dvec2 = NULL;
  if (p->diff_lambda != 0.0f) {
    w.st2 = take(&at, r * bk);
    w.p2 = take(&at, r * bk);
    w.dp2 = take(&at, r * bk);
    w.raw2 = take(&at, r * bk);
    w.lse2 = take(&at, r);
    w.dvec2 = take(&at, r);
  }
  return w;
}

/* Rows [j0, j0 + nk) of V (or of any (b, g) tensor of dim columns with strides s) as f32 rows. */
static const float *load_rows_kv(const smx_attn_run *run, const void *base, const size_t *s, size_t dim, size_t b,
                                 size_t g, size_t j0, size_t nk, float *buf, size_t *ld) {
  const struct smx_attention_plan *p = run->p;
  const unsigned char *at = (const unsigned char *)base + (b * s[0] + g * s[1] + j0 * s[2]) * p->elem_size;
  if (p->elem == SMX_ELEM_F32) {
    *ld = s[2];
    return (const float *)(const void *)at;
  }
  for (size_t c = 0; c < nk; c++) run->io.load(dim, at + c * s[2] * p->elem_size, buf + c * dim);
  *ld = dim;
  return buf;
}

/* dst[x * SMX_ATTN_BK + c] = src[c * ld + x] */
static void transpose(size_t nk, size_t dim, const float *src, size_t ld, float *dst) {
  for (size_t c = 0; c < nk; c++)
    for (size_t x = 0; x < dim; x++) dst[x * SMX_ATTN_BK + c] = src[c * ld + x];
}

/* Key tile [j0, j0 + nk) of (b, g): K rows as f32 (returned, row stride *ldk), K and V transposed. */
/* Non-finite rows of x (n rows of dim, row stride ld) set to 0 in a copy (row stride dim): returns the copy,
 * or x itself when every row is finite. */
static const float *finite_rows(size_t n, size_t dim, const float *x, size_t ld, float *copy, size_t *ldo, int *bad) {
  size_t first = n;
  for (size_t c = 0; c < n && first == n; c++)
    for (size_t t = 0; t < dim; t++)
      if (!isfinite(x[c * ld + t])) {
        first = c;
        break;
      }
  *bad = first < n;
  if (!*bad) {
    *ldo = ld;
    return x;
  }
  for (size_t c = 0; c < n; c++) {
    int ok = 1;
    for (size_t t = 0; t < dim; t++) ok &= isfinite(x[c * ld + t]) != 0;
    for (size_t t = 0; t < dim; t++) copy[c * dim + t] = ok ? x[c * ld + t] : 0.0f;
  }
  *ldo = dim;
  return copy;
}

const float *smx_attn_bwd_load_tile(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t j0, size_t nk, size_t *ldk) {
  smx_attn_run *run = &bw->run;
  const smx_attention_desc *d = &run->p->d;
  size_t ldv;
  const float *kf = smx_attn_load_k(run, 0, d->dim_qk, b, g, j0, nk, w->f.kbuf, ldk);
  const float *vf = load_rows_kv(run, run->a->v, d->v_stride, d->dim_v, b, g, j0, nk, w->f.vbuf, &ldv);
  transpose(nk, d->dim_qk, kf, *ldk, w->kt);
  transpose(nk, d->dim_v, vf, ldv, w->vt);
  return finite_rows(nk, d->dim_qk, kf, *ldk, w->kg, ldk, &w->kbad);   /* for dQ += dS K */
}

/* The key ranges of query block (g, t) into w->f.lo / hi; their union [lo_u, hi_u) and intersection
 * [lo_i, hi_i); whether every row of the block is a real one. */
int smx_attn_bwd_block_ranges(const struct smx_attention_plan *p, smx_attn_bslice *w, size_t g, size_t t, int64_t *lo_u,
                        int64_t *hi_u, int64_t *lo_i, int64_t *hi_i) {
  int full = 1;
  *lo_u = (int64_t)p->d.len_k;
  *hi_u = 0;
  *lo_i = 0;
  *hi_i = (int64_t)p->d.len_k;
  for (size_t r = 0; r < p->rows; r++) {
    size_t h, i;
    int64_t lo = 0, hi = 0;
    if (smx_attn_row_of(p, g, t, r, &h, &i))
      smx_attn_key_range(p, i, &lo, &hi);
    else
      full = 0;
    w->f.lo[r] = lo;
    w->f.hi[r] = hi;
    if (hi > lo) {
      *lo_u = lo < *lo_u ? lo : *lo_u;
      *hi_u = hi > *hi_u ? hi : *hi_u;
    }
    *lo_i = lo > *lo_i ? lo : *lo_i;
    *hi_i = hi < *hi_i ? hi : *hi_i;
  }
  return full;
}

static float sigmoid(float g) { return 1.0f / (1.0f + expf(-g)); }

/* The rows of query block (g, t) of batch b: scale Q, dO (times the gate's sigmoid), D = dO . O (O as stored:
 * with a gate, dO_in . O_in = dO . O), lse, the SSMax factor; padding rows get zeros and lse = +inf (P = 0).
 * Pass 2 also writes dgate. */
void smx_attn_bwd_load_block(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t t, int pass2) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const smx_attention_args *a = run->a;
  size_t dq = d->dim_qk, dv = d->dim_v, es = p->elem_size;
  int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
  for (size_t r = 0; r < p->rows; r++) {
    size_t h, i;
    float *qr = w->f.qr + r * dq, *dor = w->f.o + r * dv;
    if (!smx_attn_row_of(p, g, t, r, &h, &i)) {
      memset(qr, 0, dq * sizeof(float));
      memset(dor, 0, dv * sizeof(float));
      w->dvec[r] = 0.0f;
      w->lse[r] = INFINITY;
      if (w->lse2) w->lse2[r] = INFINITY, w->dvec2[r] = 0.0f;
      continue;
    }
    run->io.load(dq, (const unsigned char *)a->q + (b * d->q_stride[0] + h * d->q_stride[1] + i * d->q_stride[2]) * es,
                 w->f.tmp);
    if (d->qk_norm) smx_attn_rms_norm(w->f.tmp, dq, p->qk_eps, a->q_norm_w);   /* as the forward packs it */
    for (size_t x = 0; x < dq; x++) qr[x] = w->f.tmp[x] * p->scale;
    size_t off = (b * d->o_stride[0] + h * d->o_stride[1] + i * d->o_stride[2]) * es;
    run->io.load(dv, (const unsigned char *)a->o + off, w->f.tmp);
    run->io.load(dv, (const unsigned char *)bw->d_o + off, dor);
    double s = 0.0;
    for (size_t x = 0; x < dv; x++) s += (double)dor[x] * w->f.tmp[x];
    size_t row = (b * d->heads_q + h) * d->len_q + i;
    w->dvec[r] = (float)s;
    w->lse[r] = a->lse[row];
    if (d->gate) {   /* O = sigmoid(g) O_in: dO_in = sigmoid(g) dO, dg = dO O_in sig (1 - sig) = dO O (1 - sig) */
      const float *gt = a->gate + row * (ew ? dv : 1);
      float *dg = pass2 && bw->g->dgate ? bw->g->dgate + row * (ew ? dv : 1) : NULL;
      /* 1 - sigmoid(g) as sigmoid(-g): the subtraction loses its relative accuracy where sigmoid(g) is near 1 */
      if (dg && !ew) *dg = w->dvec[r] * sigmoid(-gt[0]);
      for (size_t x = 0; x < dv; x++) {
        float sg = sigmoid(gt[ew ? x : 0]);
        if (dg && ew) dg[x] = dor[x] * w->f.tmp[x] * sigmoid(-gt[x]);
        dor[x] *= sg;
      }
    }
    if (p->ssmax_s != 0) w->f.fac[r] = smx_attn_ssmax_factor(run, b, h, i);
    if (w->lse2 && bw->diff_ready) {   /* differential: each map's lse and D from the first pass (diff_task) */
      const float *dr = bw->diffrow + row * 4;
      w->lse[r] = dr[0], w->lse2[r] = dr[1], w->dvec[r] = dr[2], w->dvec2[r] = dr[3];
    }
  }
  size_t ldq;
  finite_rows(p->rows, dq, w->f.qr, dq, w->qg, &ldq, &w->qbad);   /* for dK += dS^T Q */
}

/* P and dS = dLoss/dz of the block's rows against the key tile in w->kt / w->vt (S kept in w->f.st). */
static void tile_ds(smx_attn_bwd *bw, smx_attn_bslice *w, size_t b, size_t g, size_t t, size_t j0, size_t nk, int inside) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const struct smx_attn_bwd_ukernels *bk = bw->bk;
  size_t nr = p->rows, dq = p->d.dim_qk, dv = p->d.dim_v, BK = SMX_ATTN_BK;
  if (w->st2) {
    smx_attn_bwd_diff_tile(bw, w, b, g, t, j0, nk, inside, 1);
    return;
  }
  bk->gemm(nr, nk, dq, w->f.qr, dq, 1, w->kt, BK, w->f.st, BK, 0);
  if (p->softcap > 0)
    for (size_t r = 0; r < nr; r++) memcpy(w->raw + r * BK, w->f.st + r * BK, nk * sizeof(float));
  if (!inside || p->elementwise) smx_attn_transform(run, &w->f, b, g, t, j0, nk, BK, 1);
  if (p->d.kind == SMX_ATTN_SIGMOID) {   /* w = sigmoid(z + b), no normalisation: dz = w (1 - w) dP */
    for (size_t r = 0; r < nr; r++)
      for (size_t c = 0; c < nk; c++) {
        float z = w->f.st[r * BK + c];
        w->p[r * BK + c] = z == -INFINITY ? 0.0f : sigmoid(z + p->sigmoid_bias);
      }
    bk->gemm(nr, nk, dv, w->f.o, dv, 1, w->vt, BK, w->dp, BK, 0);
    for (size_t r = 0; r < nr; r++)
      for (size_t c = 0; c < nk; c++) {
        float z = w->f.st[r * BK + c], *ds = w->dp + r * BK + c;
        /* 1 - w as sigmoid(-(z + b)): no cancellation where w is near 1 */
        *ds = z == -INFINITY ? 0.0f : w->p[r * BK + c] * sigmoid(-(z + p->sigmoid_bias)) * *ds;
      }
    return;
  }
  if (p->d.kind == SMX_ATTN_SOFTPICK) {
    bk->gemm(nr, nk, dv, w->f.o, dv, 1, w->vt, BK, w->dp, BK, 0);
    bk->softpick(nr, nk, w->f.st, BK, w->lse, w->dvec, w->p, BK, w->dp, BK);
    return;
  }
  bk->probs(nr, nk, w->f.st, BK, w->lse, w->p, BK);
  bk->gemm(nr, nk, dv, w->f.o, dv, 1, w->vt, BK, w->dp, BK, 0);
  bk->dscores(nr, nk, w->f.st, BK, w->p, BK, w->dp, BK, w->dvec);
}

/* dS = dLoss/dz into dLoss/d(scale q.k): softcap's 1 - tanh^2 and SSMax's factor (the bias, ALiBi and FoX
 * are added after both). Zeros (hidden keys) stay 0 whatever the raw score was. */
static void tile_chain(const struct smx_attention_plan *p, smx_attn_bslice *w, size_t nk) {
  if (!(p->softcap > 0) && p->ssmax_s == 0) return;
  for (int m = 0; m < (w->st2 ? 2 : 1); m++) {   /* differential attention: each map on its own raw scores */
    float *dsm = m ? w->dp2 : w->dp, *raw = m ? w->raw2 : w->raw;
    for (size_t r = 0; r < p->rows; r++) {
      float fac = p->ssmax_s != 0 ? w->f.fac[r] : 1.0f;
      for (size_t c = 0; c < nk; c++) {
        float *ds = dsm + r * SMX_ATTN_BK + c;
        if (*ds == 0.0f) continue;
        float dz = fac;
        if (p->softcap > 0) {
          /* 1 - tanh^2(y) as 4 a / (1 + a)^2, a = e^{-2|y|}: 1 - th^2 cancels where the cap saturates (|y| of
           * a few), relatively 2^-24 / (1 - th^2) (soak case 0x6ac7c9872951ce92: dq 2x its bound) */
          float a = expf(-2.0f * fabsf(raw[r * SMX_ATTN_BK + c] / p->softcap));
          dz *= 4.0f * a / ((1.0f + a) * (1.0f + a));
        }
        *ds *= dz;
      }
    }
  }
}

void smx_attn_bwd_kv_task(smx_attn_bwd *bw, size_t task, unsigned char *slice) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const struct smx_attn_bwd_ukernels *bk = bw->bk;
  smx_attn_bslice w = smx_attn_bwd_carve(p, slice);
  size_t kt = task % bw->n_kt, bg = task / bw->n_kt, g = bg % d->heads_kv, b = bg / d->heads_kv;
  size_t j0 = kt * SMX_ATTN_BK, nk = d->len_k - j0 < SMX_ATTN_BK ? d->len_k - j0 : SMX_ATTN_BK;
  size_t dq = d->dim_qk, dv = d->dim_v, nr = p->rows, BK = SMX_ATTN_BK;
  int fox = d->fox && bw->g->dfox && d->heads_q;
  memset(w.dka, 0, nk * dq * sizeof(float));
  memset(w.dva, 0, nk * dv * sizeof(float));
  if (fox) memset(w.csum, 0, p->group * BK * sizeof(float));
  int loaded = 0;
  for (size_t t = 0; t < p->n_qt; t++) {
    int64_t lo_u, hi_u, lo_i, hi_i;
    int full = smx_attn_bwd_block_ranges(p, &w, g, t, &lo_u, &hi_u, &lo_i, &hi_i);
    if (hi_u <= (int64_t)j0 || lo_u >= (int64_t)(j0 + nk)) continue;   /* no row of the block sees the tile */
    if (!loaded) {
      size_t ldk;
      smx_attn_bwd_load_tile(bw, &w, b, g, j0, nk, &ldk);
      loaded = 1;
    }
    smx_attn_bwd_load_block(bw, &w, b, g, t, 0);
    int inside = full && lo_i <= (int64_t)j0 && (int64_t)(j0 + nk) <= hi_i;
    tile_ds(bw, &w, b, g, t, j0, nk, inside);
    bk->gemm(nk, dv, nr, w.p, 1, BK, w.f.o, dv, w.dva, dv, 1);   /* dV += P^T dO */
    if (fox)
      for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nk; c++)
          w.csum[(r / p->bq) * BK + c] += w.st2 ? w.dp[r * BK + c] + w.dp2[r * BK + c] : w.dp[r * BK + c];
    tile_chain(p, &w, nk);
    const float *qs = w.qbad ? w.qg : w.f.qr;
    if (w.st2) {   /* differential: each map's dS into its half of dK */
      bk->gemm(nk, dq / 2, nr, w.dp, 1, BK, qs, dq, w.dka, dq, 1);
      bk->gemm(nk, dq / 2, nr, w.dp2, 1, BK, qs + dq / 2, dq, w.dka + dq / 2, dq, 1);
    } else {
      bk->gemm(nk, dq, nr, w.dp, 1, BK, qs, dq, w.dka, dq, 1);   /* dK += dS^T (scale Q) */
    }
  }
  size_t es = p->elem_size, base = (b * d->heads_kv + g) * d->len_k + j0;
  if (d->qk_norm) {   /* dK^ of the normalised keys into dK through the RMSNorm, and this tile's part of dk_norm_w */
    float *acc = bw->wpart + task * dq;
    size_t ldk;
    const float *kraw = load_rows_kv(run, run->a->k, d->k_stride, dq, b, g, j0, nk, w.f.kbuf, &ldk);
    memset(acc, 0, dq * sizeof(float));
    for (size_t c = 0; c < nk; c++) smx_attn_bwd_rms_norm_vjp(w.dka + c * dq, kraw + c * ldk, dq, p->qk_eps, run->a->k_norm_w, acc);
  }
  for (size_t c = 0; c < nk; c++) {
    run->io.store(dq, w.dka + c * dq, (unsigned char *)bw->g->dk + (base + c) * dq * es);
    run->io.store(dv, w.dva + c * dv, (unsigned char *)bw->g->dv + (base + c) * dv * es);
  }
  if (fox)   /* z_ij += F[p_i] - F[j]: the keys' part, -sum_i dS_ij; pass 2 adds the queries' part */
    for (size_t hh = 0; hh < p->group; hh++) {
      float *df = bw->g->dfox + (b * d->heads_q + g * p->group + hh) * d->len_k + j0;
      for (size_t c = 0; c < nk; c++) df[c] = 0.0f - w.csum[hh * BK + c];
    }
}

void smx_attn_bwd_q_task(smx_attn_bwd *bw, size_t task, unsigned char *slice) {
  smx_attn_run *run = &bw->run;
  const struct smx_attention_plan *p = run->p;
  const smx_attention_desc *d = &p->d;
  const struct smx_attn_bwd_ukernels *bk = bw->bk;
  smx_attn_bslice w = smx_attn_bwd_carve(p, slice);
  size_t t = task % p->n_qt, bg = task / p->n_qt, g = bg % d->heads_kv, b = bg / d->heads_kv;
  size_t dq = d->dim_qk, nr = p->rows, BK = SMX_ATTN_BK, lk = d->len_k;
  float *dbias = d->mask_kind == SMX_ATTN_MASK_BIAS ? bw->g->dbias : NULL;
  int fox = d->fox && bw->g->dfox;
  int64_t lo_u, hi_u, lo_i, hi_i;
  int full = smx_attn_bwd_block_ranges(p, &w, g, t, &lo_u, &hi_u, &lo_i, &hi_i);
  smx_attn_bwd_load_block(bw, &w, b, g, t, 1);
  memset(w.dqa, 0, nr * dq * sizeof(float));
  memset(w.rsum, 0, nr * sizeof(float));
  if (dbias)   /* every entry of the rows: tiles no row sees are 0 */
    for (size_t r = 0; r < nr; r++) {
      size_t h, i;
      if (smx_attn_row_of(p, g, t, r, &h, &i)) memset(dbias + ((b * d->heads_q + h) * d->len_q + i) * lk, 0, lk * sizeof(float));
    }
  if (hi_u > lo_u)
    for (size_t j0 = (size_t)lo_u / BK * BK; j0 < (size_t)hi_u; j0 += BK) {
      size_t nk = lk - j0 < BK ? lk - j0 : BK, ldk;
      const float *kf = smx_attn_bwd_load_tile(bw, &w, b, g, j0, nk, &ldk);
      int inside = full && lo_i <= (int64_t)j0 && (int64_t)(j0 + nk) <= hi_i;
      tile_ds(bw, &w, b, g, t, j0, nk, inside);
      for (size_t r = 0; r < nr; r++) {
        size_t h, i;
        if (!smx_attn_row_of(p, g, t, r, &h, &i)) continue;
        const float *ds = w.dp + r * BK;
        if (w.st2 && (dbias || fox)) {   /* differential: the bias and FoX terms are in both maps' logits, dS1 + dS2
                                          * (into p2, which pass 2 no longer reads) */
          float *sum = w.p2 + r * BK;
          for (size_t c = 0; c < nk; c++) sum[c] = w.dp[r * BK + c] + w.dp2[r * BK + c];
          ds = sum;
        }
        if (dbias) memcpy(dbias + ((b * d->heads_q + h) * d->len_q + i) * lk + j0, ds, nk * sizeof(float));
        if (fox) {
          float s = w.rsum[r];
          for (size_t c = 0; c < nk; c++) s += ds[c];
          w.rsum[r] = s;
        }
      }
      tile_chain(p, &w, nk);
      if (w.st2) {   /* differential: each map's dS against its half of K */
        bk->gemm(nr, dq / 2, nk, w.dp, BK, 1, kf, ldk, w.dqa, dq, 1);
        bk->gemm(nr, dq / 2, nk, w.dp2, BK, 1, kf + dq / 2, ldk, w.dqa + dq / 2, dq, 1);
      } else {
        bk->gemm(nr, dq, nk, w.dp, BK, 1, kf, ldk, w.dqa, dq, 1);   /* dQ += dS K */
      }
    }
  size_t es = p->elem_size;
  float *acc = d->qk_norm ? bw->wpart + (bw->tasks1 + task) * dq : NULL;
  if (acc) memset(acc, 0, dq * sizeof(float));
  for (size_t r = 0; r < nr; r++) {
    size_t h, i;
    if (!smx_attn_row_of(p, g, t, r, &h, &i)) continue;
    size_t row = (b * d->heads_q + h) * d->len_q + i;
    for (size_t x = 0; x < dq; x++) w.f.tmp[x] = w.dqa[r * dq + x] * p->scale;
    if (acc) {   /* dQ^ of the normalised row into dQ through the RMSNorm; this block's part of dq_norm_w */
      run->io.load(dq, (const unsigned char *)run->a->q + (b * d->q_stride[0] + h * d->q_stride[1] + i * d->q_stride[2]) * es,
                   w.f.qt);
      smx_attn_bwd_rms_norm_vjp(w.f.tmp, w.f.qt, dq, p->qk_eps, run->a->q_norm_w, acc);
    }
    run->io.store(dq, w.f.tmp, (unsigned char *)bw->g->dq + row * dq * es);
    if (fox) bw->g->dfox[(b * d->heads_q + h) * lk + (size_t)smx_attn_pos(p, i)] += w.rsum[r];
  }
}
