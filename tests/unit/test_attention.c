/*
 * Fused attention (include/smx/smx_attention.h) against a naive long-double
 * reference (materialised scores, three-pass softmax), for every mask and
 * variant, at every ISA from scalar up to the CPU's best, with 1..4 threads
 * bitwise equal. Also: a single key gives V, GQA equals MHA with repeated
 * heads, two merged KV halves equal the whole, fully masked rows, bad
 * descriptors.
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"
#include "smx/smx_attention.h"

typedef struct tcase {
  const char *name;
  smx_attention_desc d;
  int layout_bthd;      /* Q/K/V/O stored (B, L, H, D) */
  double qmul;          /* spread of the logits */
  int mask_rows;        /* bool mask: some rows fully masked */
  int screen_heads;     /* screening: r and window per head at run time (some windows 0 or inf) */
} tcase;

typedef struct tdata {
  float *q, *k, *v, *mask, *slopes, *sinks, *fox, *gate, *qw, *kw, *kscales, *sr, *sw;
  unsigned char *bmask;
  void *qs, *ks, *vs;   /* storage copies (f32 / f16 / bf16) */
} tdata;

static size_t elems(const smx_attention_desc *d, int which) {
  size_t b = d->batch;
  switch (which) {
    case 0: return b * d->heads_q * d->len_q * d->dim_qk;
    case 1: return b * d->heads_kv * d->len_k * d->dim_qk;
    case 2: return b * d->heads_kv * d->len_k * d->dim_v;
    default: return b * d->heads_q * d->len_q * d->dim_v;
  }
}

/* element offset of (b, h, i, x) in the test's layout */
static size_t at(const tcase *c, size_t H, size_t L, size_t D, size_t b, size_t h, size_t i, size_t x) {
  if (c->layout_bthd) return ((b * L + i) * H + h) * D + x;
  return ((b * H + h) * L + i) * D + x;
}

static void set_strides(const tcase *c, size_t *s, size_t H, size_t L, size_t D) {
  if (!c->layout_bthd) { s[0] = s[1] = s[2] = 0; return; }
  s[0] = L * H * D; s[1] = D; s[2] = H * D;
}

static float round_to(smx_attn_dtype t, float x) {
  if (t == SMX_ATTN_F16) return smx_f16_to_f32(smx_f32_to_f16(x));
  if (t == SMX_ATTN_BF16) return smx_bf16_to_f32(smx_f32_to_bf16(x));
  return x;
}

static void *store(smx_attn_dtype t, float *x, size_t n) {
  if (t == SMX_ATTN_F32) return x;
  uint16_t *h = malloc(n * 2 + 2);
  for (size_t i = 0; i < n; i++) h[i] = t == SMX_ATTN_F16 ? smx_f32_to_f16(x[i]) : smx_f32_to_bf16(x[i]);
  return h;
}

static float load(smx_attn_dtype t, const void *p, size_t i) {
  if (t == SMX_ATTN_F16) return smx_f16_to_f32(((const uint16_t *)p)[i]);
  if (t == SMX_ATTN_BF16) return smx_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

static int bitlen(uint64_t x) { int n = 0; while (x) { n++; x >>= 1; } return n; }

static int radial_ok(size_t T, long long qi, long long j) {
  if (qi < 0) return 0;
  long long fq = qi / (long long)T, fk = j / (long long)T, dist = fq > fk ? fq - fk : fk - fq;
  long long w = dist <= 1 ? (long long)T : (long long)((1ull << bitlen(T)) >> bitlen((uint64_t)dist));
  long long a = qi % (long long)T, bb = j % (long long)T;
  return (a > bb ? a - bb : bb - a) <= w;
}

/* Key element (b, g, j, x): int8 K times its block's scale, or the stored value. */
static long double kval(const tcase *c, const tdata *t, size_t b, size_t g, size_t j, size_t x) {
  const smx_attention_desc *d = &c->d;
  size_t i = at(c, d->heads_kv, d->len_k, d->dim_qk, b, g, j, x);
  if (!d->k_int8) return load(d->dtype, t->ks, i);
  size_t nblk = (d->len_k + 63) / 64;
  return (long double)((const int8_t *)t->ks)[i] * t->kscales[(b * d->heads_kv + g) * nblk + j / 64];
}

/* x / max(|x|, eps) in place */
static void unit(long double *x, size_t n, long double eps) {
  long double ss = 0;
  for (size_t i = 0; i < n; i++) ss += x[i] * x[i];
  long double nr = sqrtl(ss) > eps ? sqrtl(ss) : eps;
  for (size_t i = 0; i < n; i++) x[i] /= nr;
}

/* Screening (Multiscreen) of one row: materialised Trim and Softmask weights, TanhNorm. */
static void reference_screen(const tcase *c, const tdata *t, size_t b, size_t h, size_t i, long long pos, long long lo,
                             long long hi, long double *out, long double *lse) {
  const smx_attention_desc *d = &c->d;
  size_t G = d->heads_q / d->heads_kv, g = h / G, Dq = d->dim_qk, Dv = d->dim_v, Lk = d->len_k;
  long double eps = d->screen_eps ? d->screen_eps : 1e-12L;
  long double r = c->screen_heads ? t->sr[h] : d->screen_r, w = c->screen_heads ? t->sw[h] : d->screen_window;
  long double *qn = malloc(Dq * sizeof *qn), *kn = malloc(Dq * sizeof *kn), *vn = malloc(Dv * sizeof *vn), den = 0;
  for (size_t x = 0; x < Dq; x++) qn[x] = load(d->dtype, t->qs, at(c, d->heads_q, d->len_q, Dq, b, h, i, x));
  unit(qn, Dq, eps);
  for (size_t x = 0; x < Dv; x++) out[x] = 0;
  for (size_t j = 0; j < Lk; j++) {
    if ((long long)j < lo || (long long)j >= hi) continue;
    if (d->radial_frame && !radial_ok(d->radial_frame, pos, (long long)j)) continue;
    if (d->mask_kind == SMX_ATTN_MASK_BOOL && !t->bmask[((b % 2) * d->len_q + i) * Lk + j]) continue;
    long double sim = 0, m = 1;
    for (size_t x = 0; x < Dq; x++) kn[x] = kval(c, t, b, g, j, x);
    unit(kn, Dq, eps);
    for (size_t x = 0; x < Dq; x++) sim += qn[x] * kn[x];
    long double a = 1 - (1 - sim) / r;
    a = a > 0 ? a * a : 0;
    if (w > 0 && w != INFINITY) {
      long double dist = (long double)((long long)j - pos);
      m = dist > 0 || dist <= -w ? 0 : 0.5L * (cosl(3.14159265358979323846264L * dist / w) + 1);
    }
    for (size_t x = 0; x < Dv; x++) vn[x] = load(d->dtype, t->vs, at(c, d->heads_kv, Lk, Dv, b, g, j, x));
    if (!(d->screen_flags & SMX_ATTN_SCREEN_NO_VNORM)) unit(vn, Dv, eps);
    den += a * m;
    for (size_t x = 0; x < Dv; x++) out[x] += a * m * vn[x];
  }
  *lse = den > 0 ? logl(den) : -INFINITY;
  long double ss = 0;
  for (size_t x = 0; x < Dv; x++) ss += out[x] * out[x];
  if (!(d->screen_flags & SMX_ATTN_SCREEN_NO_TANHNORM) && ss > 0)
    for (size_t x = 0; x < Dv; x++) out[x] *= tanhl(sqrtl(ss)) / sqrtl(ss);
  free(qn); free(kn); free(vn);
}

/* The reference: O (packed (B, Hq, Lq, Dv)) and lse, in long double. */
static void reference(const tcase *c, const tdata *t, long double *o, long double *lse) {
  const smx_attention_desc *d = &c->d;
  size_t G = d->heads_q / d->heads_kv, Dq = d->dim_qk, Dv = d->dim_v, Lk = d->len_k;
  int diff = d->diff_lambda != 0;
  size_t dqe = diff ? Dq / 2 : Dq;
  long double scale = d->scale != 0 ? d->scale : 1.0L / sqrtl((long double)dqe);
  long double *first = malloc((Dv + 1) * sizeof *first), first_lse = 0;
  long double *z = malloc((Lk + 1) * sizeof *z), *qn = malloc(Dq * sizeof *qn), *kn = malloc(Dq * sizeof *kn);
  for (size_t b = 0; b < d->batch; b++)
    for (size_t h = 0; h < d->heads_q; h++)
      for (size_t i = 0; i < d->len_q; i++) {
        size_t g = h / G, row = (b * d->heads_q + h) * d->len_q + i;
        long long pos = d->causal == SMX_ATTN_CAUSAL_TOP_LEFT ? (long long)i : (long long)i + (long long)Lk - (long long)d->len_q;
        long long lo = 0, hi = (long long)Lk;
        if (d->causal && pos + 1 < hi) hi = pos + 1;
        if (d->window && d->window_left >= 0 && pos - d->window_left > lo) lo = pos - d->window_left;
        if (d->window && d->window_right >= 0 && pos + d->window_right + 1 < hi) hi = pos + d->window_right + 1;
        long double ss = 0;
        for (size_t x = 0; x < Dq; x++) {
          qn[x] = load(d->dtype, t->qs, at(c, d->heads_q, d->len_q, Dq, b, h, i, x));
          ss += qn[x] * qn[x];
        }
        if (d->qk_norm) {
          long double eps = d->qk_norm_eps ? d->qk_norm_eps : 1e-6;
          for (size_t x = 0; x < Dq; x++) qn[x] = qn[x] / sqrtl(ss / Dq + eps) * (t->qw ? t->qw[x] : 1);
        }
        /* NSA: blocks of 64 keys held whole by [lo, hi) scored by scale <q, mean k>; top-k + the local block */
        size_t nb = (Lk + 63) / 64;
        unsigned char *sel = calloc(nb + 1, 1);
        if (d->nsa_topk) {
          long double *bs = malloc((nb + 1) * sizeof *bs);
          for (size_t blk = 0; blk < nb; blk++) {
            size_t j0 = blk * 64, nk = Lk - j0 < 64 ? Lk - j0 : 64;
            bs[blk] = -INFINITY;
            if (!((long long)j0 >= lo && (long long)(j0 + nk) <= hi)) continue;
            long double sc = 0;
            for (size_t x = 0; x < Dq; x++) {
              long double mean = 0;
              for (size_t j = j0; j < j0 + nk; j++) mean += kval(c, t, b, g, j, x);
              sc += qn[x] * (mean / nk);
            }
            bs[blk] = sc * scale;
          }
          for (size_t kk = 0; kk < d->nsa_topk; kk++) {
            size_t best = nb;
            for (size_t blk = 0; blk < nb; blk++)
              if (!sel[blk] && bs[blk] != -INFINITY && (best == nb || bs[blk] > bs[best])) best = blk;
            if (best == nb) break;
            sel[best] = 1;
          }
          if (hi > lo) sel[(size_t)(hi - 1) / 64] = 1;
          free(bs);
        }
        long double *out = o + row * Dv;
        /* SSMax: n = the keys that take part (positional, radial, mask tensor) */
        long long n_vis = 0;
        for (long long j = lo; j < hi; j++) {
          if (d->radial_frame && !radial_ok(d->radial_frame, pos, j)) continue;
          if (d->mask_kind == SMX_ATTN_MASK_BOOL && !t->bmask[((b % 2) * d->len_q + i) * Lk + (size_t)j]) continue;
          if (d->mask_kind == SMX_ATTN_MASK_BIAS && t->mask[(h * d->len_q + i) * Lk + (size_t)j] == -INFINITY) continue;
          n_vis++;
        }
        for (int pass = 0; pass < (diff ? 2 : 1); pass++) {
          if (d->kind == SMX_ATTN_SCREEN) {
            reference_screen(c, t, b, h, i, pos, lo, hi, out, &lse[row]);
            continue;
          }
          size_t qoff = (size_t)pass * dqe;
          long double m = -INFINITY;
          for (size_t j = 0; j < Lk; j++) {
            z[j] = -INFINITY;
            if ((long long)j < lo || (long long)j >= hi) continue;
            if (d->radial_frame && !radial_ok(d->radial_frame, pos, (long long)j)) continue;
          if (d->nsa_topk && !sel[j / 64]) continue;
            long double ks = 0, dot = 0;
            for (size_t x = 0; x < Dq; x++) {
              kn[x] = kval(c, t, b, g, j, x);
              ks += kn[x] * kn[x];
            }
            for (size_t x = qoff; x < qoff + dqe; x++) {
              long double kv = d->qk_norm ? kn[x] / sqrtl(ks / Dq + (d->qk_norm_eps ? d->qk_norm_eps : 1e-6)) * (t->kw ? t->kw[x] : 1) : kn[x];
              dot += qn[x] * kv;
            }
            long double s = dot * scale;
          if (d->k_int8_jensen) {
            long double qq = 0, sc = t->kscales[(b * d->heads_kv + g) * ((Lk + 63) / 64) + j / 64];
            for (size_t x = qoff; x < qoff + dqe; x++) qq += qn[x] * qn[x] * scale * scale;
            s -= qq * sc * sc / 24;
          }
          if (d->l2_distance) {
            long double dd = 0;
            for (size_t x = qoff; x < qoff + dqe; x++) dd += (qn[x] - kn[x]) * (qn[x] - kn[x]);
            s = -scale * dd;
          }
            if (d->softcap > 0) s = d->softcap * tanhl(s / d->softcap);
            if (d->ssmax_s != 0 && n_vis > 0) s *= d->ssmax_s * logl((long double)n_vis);
            if (d->mask_kind == SMX_ATTN_MASK_BOOL && !t->bmask[((b % 2) * d->len_q + i) * Lk + j]) continue;
            if (d->mask_kind == SMX_ATTN_MASK_BIAS) s += t->mask[(h * d->len_q + i) * Lk + j];
            if (d->alibi) s -= t->slopes[h] * (long double)(pos > (long long)j ? pos - (long long)j : (long long)j - pos);
            if (d->fox) s += (long double)t->fox[(b * d->heads_q + h) * Lk + (size_t)pos] - t->fox[(b * d->heads_q + h) * Lk + j];
            z[j] = s;
            if (s > m) m = s;
          }
          long double den = 0;
          for (size_t x = 0; x < Dv; x++) out[x] = 0;
          if (d->kind == SMX_ATTN_MALA) {   /* w = ((1 + 1/(z + 1e-6)) a - z) / n, a = scale phi(q).phi(k), z = mean a */
            long double *aw = malloc((Lk + 1) * sizeof *aw), zs = 0;
            size_t n = 0;
            for (size_t j = 0; j < Lk; j++) {
              aw[j] = 0;
              if ((long long)j < lo || (long long)j >= hi) continue;
              for (size_t x = 0; x < Dq; x++) {
                long double qv = qn[x], kv = kval(c, t, b, g, j, x);
                aw[j] += (qv > 0 ? qv + 1 : expl(qv)) * (kv > 0 ? kv + 1 : expl(kv));
              }
              aw[j] *= scale;
              zs += aw[j];
              n++;
            }
            long double zm = n ? zs / n : 0, beta = 1 + 1 / (zm + 1e-6L);
            for (size_t j = 0; j < Lk && n; j++) {
              if ((long long)j < lo || (long long)j >= hi) continue;
              long double w = (beta * aw[j] - zm) / n;
              for (size_t x = 0; x < Dv; x++) out[x] += w * load(d->dtype, t->vs, at(c, d->heads_kv, Lk, Dv, b, g, j, x));
            }
            lse[row] = n ? 0 : -INFINITY;
            free(aw);
          } else if (d->kind == SMX_ATTN_LINEAR || d->kind == SMX_ATTN_COSFORMER) {
            for (size_t j = 0; j < Lk; j++) {
              if ((long long)j < lo || (long long)j >= hi) continue;
              long double w = 0;
              for (size_t x = 0; x < Dq; x++) {
                long double qv = qn[x], kv = kval(c, t, b, g, j, x);
                if (d->kind == SMX_ATTN_LINEAR) w += (qv > 0 ? qv + 1 : expl(qv)) * (kv > 0 ? kv + 1 : expl(kv));
                else w += (qv > 0 ? qv : 0) * (kv > 0 ? kv : 0);
              }
              if (d->kind == SMX_ATTN_COSFORMER) w *= cosl(1.5707963267948966L * (long double)(pos - (long long)j) / Lk);
              den += w;
              for (size_t x = 0; x < Dv; x++) out[x] += w * load(d->dtype, t->vs, at(c, d->heads_kv, Lk, Dv, b, g, j, x));
            }
            for (size_t x = 0; x < Dv; x++) out[x] = den > 0 ? out[x] / den : 0;
            lse[row] = den > 0 ? logl(den) : -INFINITY;
          } else if (d->kind == SMX_ATTN_SIGMOID) {
            for (size_t j = 0; j < Lk; j++) {
              if (z[j] == -INFINITY) continue;
              long double w = 1.0L / (1.0L + expl(-(z[j] + d->sigmoid_bias)));
              den += w;
              for (size_t x = 0; x < Dv; x++) out[x] += w * load(d->dtype, t->vs, at(c, d->heads_kv, Lk, Dv, b, g, j, x));
            }
            lse[row] = den > 0 ? logl(den) : -INFINITY;
          } else {
            if (d->sinks && t->sinks[h] > m) m = t->sinks[h];
            for (size_t j = 0; j < Lk && m != -INFINITY; j++) {
              if (z[j] == -INFINITY) continue;
              long double w = expl(z[j] - m);
              if (d->kind == SMX_ATTN_SOFTPICK) {
                long double a = w - expl(-m);
                den += fabsl(a);
                w = a > 0 ? a : 0;
              } else {
                den += w;
              }
              for (size_t x = 0; x < Dv; x++) out[x] += w * load(d->dtype, t->vs, at(c, d->heads_kv, Lk, Dv, b, g, j, x));
            }
            if (d->sinks) den += expl(t->sinks[h] - m);
            if (d->kind == SMX_ATTN_SOFTPICK) den += 1e-8L;
            for (size_t x = 0; x < Dv; x++) out[x] = m == -INFINITY ? 0 : out[x] / den;
            lse[row] = m == -INFINITY ? -INFINITY : m + logl(den);
          }
          if (diff && pass == 0) {
            memcpy(first, out, Dv * sizeof *first);
            first_lse = lse[row];
          } else if (diff) {
            for (size_t x = 0; x < Dv; x++) out[x] = first[x] - (long double)d->diff_lambda * out[x];
            lse[row] = first_lse;
          }
        }
        free(sel);
        if (d->gate)
          for (size_t x = 0; x < Dv; x++) {
            int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
            out[x] *= 1.0L / (1.0L + expl(-(long double)t->gate[row * (ew ? Dv : 1) + (ew ? x : 0)]));
          }
      }
  free(z);
  free(qn);
  free(kn);
  free(first);
}

static void make_data(const tcase *c, tdata *t, tu_rng *r) {
  const smx_attention_desc *d = &c->d;
  memset(t, 0, sizeof *t);
  size_t nq = elems(d, 0), nk = elems(d, 1), nv = elems(d, 2);
  t->q = malloc((nq + 1) * 4); t->k = malloc((nk + 1) * 4); t->v = malloc((nv + 1) * 4);
  for (size_t i = 0; i < nq; i++) t->q[i] = round_to(d->dtype, tu_normal(r) * (float)(c->qmul ? c->qmul : 1));
  for (size_t i = 0; i < nk; i++) t->k[i] = round_to(d->dtype, tu_normal(r));
  for (size_t i = 0; i < nv; i++) t->v[i] = round_to(d->dtype, tu_normal(r));
  t->qs = store(d->dtype, t->q, nq); t->ks = store(d->dtype, t->k, nk); t->vs = store(d->dtype, t->v, nv);
  if (d->k_int8) {   /* per (b, g, 64-key block): scale max|k| / 127, values rounded */
    size_t nblk = (d->len_k + 63) / 64;
    if (d->dtype != SMX_ATTN_F32) free(t->ks);
    int8_t *k8 = malloc(nk + 1);
    t->kscales = malloc((d->batch * d->heads_kv * nblk + 1) * 4);
    for (size_t b = 0; b < d->batch; b++)
      for (size_t g = 0; g < d->heads_kv; g++)
        for (size_t blk = 0; blk < nblk; blk++) {
          size_t j1 = blk * 64 + 64 < d->len_k ? blk * 64 + 64 : d->len_k;
          float mx = 0;
          for (size_t j = blk * 64; j < j1; j++)
            for (size_t x = 0; x < d->dim_qk; x++) mx = fmaxf(mx, fabsf(t->k[at(c, d->heads_kv, d->len_k, d->dim_qk, b, g, j, x)]));
          float sc = mx > 0 ? mx / 127 : 1;
          t->kscales[(b * d->heads_kv + g) * nblk + blk] = sc;
          for (size_t j = blk * 64; j < j1; j++)
            for (size_t x = 0; x < d->dim_qk; x++) {
              size_t i = at(c, d->heads_kv, d->len_k, d->dim_qk, b, g, j, x);
              k8[i] = (int8_t)lrintf(t->k[i] / sc);
            }
        }
    t->ks = k8;
  }
  size_t Lq = d->len_q, Lk = d->len_k, H = d->heads_q;
  if (d->mask_kind == SMX_ATTN_MASK_BOOL) {   /* (2 or 1, 1, Lq, Lk): varies over batch, broadcast over heads */
    t->bmask = malloc(2 * Lq * Lk + 1);
    for (size_t i = 0; i < 2 * Lq * Lk; i++) t->bmask[i] = tu_uniform(r) < 0.7;
    if (c->mask_rows) for (size_t i = 0; i < Lq; i += 3) memset(t->bmask + i * Lk, 0, Lk);
  }
  if (d->mask_kind == SMX_ATTN_MASK_BIAS) {   /* (1, H, Lq, Lk): broadcast over batch, some -inf */
    t->mask = malloc((H * Lq * Lk + 1) * 4);
    for (size_t i = 0; i < H * Lq * Lk; i++) t->mask[i] = tu_uniform(r) < 0.1 ? -INFINITY : tu_uniform_f(r, -3, 3);
  }
  t->slopes = malloc(H * 4); t->sinks = malloc(H * 4);
  for (size_t h = 0; h < H; h++) { t->slopes[h] = exp2f(-(float)(h + 1)); t->sinks[h] = tu_uniform_f(r, -1, 3); }
  t->fox = malloc((d->batch * H * Lk + 1) * 4);
  for (size_t bh = 0; bh < d->batch * H; bh++) {
    float acc = 0;
    for (size_t j = 0; j < Lk; j++) {   /* cumulative logsigmoid of U(0, 5) gate logits */
      acc += -log1pf(expf(-tu_uniform_f(r, 0, 5)));
      t->fox[bh * Lk + j] = acc;
    }
  }
  t->gate = malloc((d->batch * H * Lq * d->dim_v + 1) * 4);
  for (size_t i = 0; i < d->batch * H * Lq * d->dim_v; i++) t->gate[i] = tu_normal(r);
  t->sr = malloc(H * 4); t->sw = malloc(H * 4);
  for (size_t h = 0; h < H; h++) {   /* widths over (0.3, 1]; windows: none (0, inf) or a few to many keys */
    t->sr[h] = h % 4 == 3 ? 1.0f : tu_uniform_f(r, 0.3f, 0.9f);
    t->sw[h] = h % 3 == 0 ? (h % 2 ? INFINITY : 0.0f) : tu_uniform_f(r, 2.0f, (float)Lk);
  }
  if (d->kind == SMX_ATTN_SCREEN) {   /* zero rows: q^ = 0 sees nothing, k^ = 0 and v^ = 0 add nothing */
    for (size_t x = 0; x + d->dim_qk <= nq; x += d->dim_qk) if (x / d->dim_qk % 7 == 3) memset(t->q + x, 0, d->dim_qk * 4);
    for (size_t x = 0; x + d->dim_qk <= nk; x += d->dim_qk) if (x / d->dim_qk % 11 == 5) memset(t->k + x, 0, d->dim_qk * 4);
    for (size_t x = 0; x + d->dim_v <= nv; x += d->dim_v) if (x / d->dim_v % 13 == 2) memset(t->v + x, 0, d->dim_v * 4);
    if (d->dtype != SMX_ATTN_F32) { free(t->qs); free(t->ks); free(t->vs); }
    t->qs = store(d->dtype, t->q, nq); t->ks = store(d->dtype, t->k, nk); t->vs = store(d->dtype, t->v, nv);
  }
  t->qw = malloc(d->dim_qk * 4); t->kw = malloc(d->dim_qk * 4);
  for (size_t x = 0; x < d->dim_qk; x++) { t->qw[x] = tu_uniform_f(r, 0.5f, 1.5f); t->kw[x] = tu_uniform_f(r, 0.5f, 1.5f); }
}

static void free_data(const tcase *c, tdata *t) {
  if (c->d.dtype != SMX_ATTN_F32) { free(t->qs); free(t->vs); }
  if (c->d.dtype != SMX_ATTN_F32 || c->d.k_int8) free(t->ks);
  free(t->kscales);
  free(t->q); free(t->k); free(t->v); free(t->mask); free(t->bmask); free(t->slopes); free(t->sinks);
  free(t->fox); free(t->gate); free(t->qw); free(t->kw); free(t->sr); free(t->sw);
}

static smx_attention_args make_args(const tcase *c, const tdata *t, void *o, float *lse) {
  smx_attention_args a = { 0 };
  a.q = t->qs; a.k = t->ks; a.v = t->vs; a.o = o; a.lse = lse;
  a.mask = c->d.mask_kind == SMX_ATTN_MASK_BOOL ? (const void *)t->bmask : (const void *)t->mask;
  a.alibi_slopes = t->slopes; a.sinks = t->sinks; a.fox = t->fox; a.gate = t->gate;
  a.q_norm_w = t->qw; a.k_norm_w = t->kw; a.k_scales = t->kscales;
  if (c->screen_heads) { a.screen_r = t->sr; a.screen_window = t->sw; }
  return a;
}

static smx_status run_once(const tcase *c, const tdata *t, int threads, void *o, float *lse, smx_attention_stats *st) {
  smx_attention_desc d = c->d;
  d.threads = threads;
  set_strides(c, d.q_stride, d.heads_q, d.len_q, d.dim_qk);
  set_strides(c, d.k_stride, d.heads_kv, d.len_k, d.dim_qk);
  set_strides(c, d.v_stride, d.heads_kv, d.len_k, d.dim_v);
  set_strides(c, d.o_stride, d.heads_q, d.len_q, d.dim_v);
  if (d.mask_kind == SMX_ATTN_MASK_BOOL) {
    d.mask_stride[0] = d.batch > 1 ? d.len_q * d.len_k : 0; d.mask_stride[1] = 0;
    d.mask_stride[2] = d.len_k; d.mask_stride[3] = 1;
  } else if (d.mask_kind == SMX_ATTN_MASK_BIAS) {
    d.mask_stride[0] = 0; d.mask_stride[1] = d.len_q * d.len_k; d.mask_stride[2] = d.len_k; d.mask_stride[3] = 1;
  }
  smx_attention_plan *p;
  smx_status s = smx_attention_plan_create(&d, &p);
  if (s != SMX_OK) return s;
  smx_attention_args a = make_args(c, t, o, lse);
  size_t ws;
  smx_attention_plan_workspace_size(p, &ws);
  void *w = malloc(ws);
  s = smx_attention_run(p, &a, w, ws, st);
  free(w);
  smx_attention_plan_destroy(p);
  return s;
}

/* Runs one case at every ISA and 1..4 threads; returns the max error relative to max|ref|. */
static double check_case(const tcase *c, uint64_t seed) {
  const smx_attention_desc *d = &c->d;
  tu_rng r = { seed };
  tdata t;
  make_data(c, &t, &r);
  size_t no = elems(d, 3), rows = d->batch * d->heads_q * d->len_q, es = d->dtype == SMX_ATTN_F32 ? 4 : 2;
  long double *ro = malloc((no + 1) * sizeof *ro), *rl = malloc((rows + 1) * sizeof *rl);
  reference(c, &t, ro, rl);
  long double scale = 0;
  for (size_t i = 0; i < no; i++) if (fabsl(ro[i]) > scale) scale = fabsl(ro[i]);
  if (scale == 0) scale = 1;
  double tol = d->dtype == SMX_ATTN_F32 ? 1e-5 : d->dtype == SMX_ATTN_F16 ? 1.5e-3 : 1e-2;
  double worst = 0;
  unsigned char *o1 = malloc(no * es + 1), *o2 = malloc(no * es + 1);
  float *l1 = malloc(rows * 4 + 4), *l2 = malloc(rows * 4 + 4);
  {
    const int isa = tu_isa_at;
    for (int th = 1; th <= 4; th++) {
      unsigned char *o = th == 1 ? o1 : o2;
      float *l = th == 1 ? l1 : l2;
      memset(o, 0xff, no * es);
      smx_status s = run_once(c, &t, th, o, l, NULL);
      CHECK(s == SMX_OK, "%s: status %d", c->name, (int)s);
      if (s != SMX_OK) break;
      if (th > 1) {
        CHECK(!memcmp(o1, o2, no * es) && !memcmp(l1, l2, rows * 4), "%s %s: %d threads differ from 1",
              c->name, tu_isa_names[isa], th);
        continue;
      }
      double err = 0;
      long nan = 0;
      for (size_t b = 0; b < d->batch; b++)
        for (size_t h = 0; h < d->heads_q; h++)
          for (size_t i = 0; i < d->len_q; i++)
            for (size_t x = 0; x < d->dim_v; x++) {
              size_t row = (b * d->heads_q + h) * d->len_q + i;
              float y = load(d->dtype, o, at(c, d->heads_q, d->len_q, d->dim_v, b, h, i, x));
              if (y != y) nan++;
              double e = (double)(fabsl((long double)y - ro[row * d->dim_v + x]) / scale);
              if (e > err) err = e;
            }
      long bad_lse = 0;
      for (size_t i = 0; i < rows; i++) {
        if (rl[i] == -INFINITY) { if (l1[i] != -INFINITY) bad_lse++; continue; }
        if (fabsl((long double)l1[i] - rl[i]) > 1e-5L * fmaxl(1, fabsl(rl[i])) * (d->dtype == SMX_ATTN_F32 ? 1 : 100)) bad_lse++;
      }
      CHECK(nan == 0 && err <= tol, "%s %s: error %.3g (tol %.1g), %ld NaN", c->name, tu_isa_names[isa], err, tol, nan);
      CHECK(bad_lse == 0, "%s %s: %ld lse values off", c->name, tu_isa_names[isa], bad_lse);
      if (err > worst) worst = err;
    }
  }
  printf("  %-28s max error %.2e of max|O|\n", c->name, worst);
  free(o1); free(o2); free(l1); free(l2); free(ro); free(rl);
  free_data(c, &t);
  return worst;
}

#define DESC(B, HQ, HKV, LQ, LK, DQ, DV) \
  .batch = B, .heads_q = HQ, .heads_kv = HKV, .len_q = LQ, .len_k = LK, .dim_qk = DQ, .dim_v = DV

static const tcase cases[] = {
  { "plain", { DESC(2, 3, 3, 37, 53, 40, 24) }, 0, 0, 0, 0 },
  { "d128 moderate", { DESC(1, 2, 2, 130, 150, 128, 128) }, 0, 0, 0, 0 },
  { "causal bottom-right", { DESC(1, 2, 2, 20, 90, 33, 17), .causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT }, 0, 0, 0, 0 },
  { "causal Lq > Lk (masked rows)", { DESC(1, 2, 2, 80, 50, 16, 16), .causal = SMX_ATTN_CAUSAL_BOTTOM_RIGHT }, 0, 0, 0, 0 },
  { "causal top-left", { DESC(2, 1, 1, 70, 100, 24, 20), .causal = SMX_ATTN_CAUSAL_TOP_LEFT }, 0, 0, 0, 0 },
  { "window 7/3", { DESC(1, 2, 2, 100, 100, 16, 16), .window = 1, .window_left = 7, .window_right = 3 }, 0, 0, 0, 0 },
  { "causal window 20", { DESC(1, 2, 2, 150, 150, 16, 8), .causal = 1, .window = 1, .window_left = 20, .window_right = -1 }, 0, 0, 0, 0 },
  { "GQA 8/2 causal", { DESC(1, 8, 2, 40, 70, 32, 32), .causal = 1 }, 0, 0, 0, 0 },
  { "decode odd dims", { DESC(2, 6, 3, 2, 300, 41, 23), .causal = 1 }, 0, 0, 0, 0 },
  { "MQA decode split", { DESC(1, 8, 1, 1, 4500, 64, 64) }, 0, 0, 0, 0 },
  { "GQA decode split causal", { DESC(2, 4, 2, 3, 4200, 32, 40), .causal = 1 }, 0, 0, 0, 0 },
  { "bool mask + masked rows", { DESC(2, 2, 1, 30, 70, 24, 24), .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 1, 0 },
  { "bias mask", { DESC(2, 2, 2, 30, 70, 24, 24), .mask_kind = SMX_ATTN_MASK_BIAS, .causal = 1 }, 0, 0, 0, 0 },
  { "alibi causal", { DESC(1, 4, 4, 50, 50, 16, 16), .alibi = 1, .causal = 1 }, 0, 0, 0, 0 },
  { "radial", { DESC(1, 2, 2, 96, 96, 16, 16), .radial_frame = 8 }, 0, 0, 0, 0 },
  { "softcap", { DESC(1, 2, 2, 30, 70, 32, 16), .softcap = 5.0 }, 0, 3.0, 0, 0 },
  { "ssmax causal", { DESC(1, 2, 2, 60, 60, 16, 16), .ssmax_s = 0.4, .causal = 1 }, 0, 0, 0, 0 },
  { "sinks + masked rows", { DESC(2, 3, 3, 30, 40, 16, 16), .sinks = 1, .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 1, 0 },
  { "fox", { DESC(1, 2, 2, 50, 80, 16, 16), .fox = 1, .causal = 1 }, 0, 0, 0, 0 },
  { "sigmoid", { DESC(1, 2, 2, 30, 70, 16, 16), .kind = SMX_ATTN_SIGMOID, .sigmoid_bias = -2.0, .causal = 1 }, 0, 0, 0, 0 },
  { "sigmoid GQA decode split", { DESC(1, 8, 2, 1, 4300, 32, 16), .kind = SMX_ATTN_SIGMOID, .sigmoid_bias = -8.0 }, 0, 0, 0, 0 },
  { "softpick bias mask", { DESC(2, 2, 1, 30, 90, 16, 16), .kind = SMX_ATTN_SOFTPICK, .mask_kind = SMX_ATTN_MASK_BIAS }, 0, 0, 0, 0 },
  { "softpick decode masked rows", { DESC(2, 4, 2, 3, 300, 16, 16), .kind = SMX_ATTN_SOFTPICK, .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 1, 0 },
  { "softpick causal", { DESC(1, 2, 2, 40, 70, 16, 16), .kind = SMX_ATTN_SOFTPICK, .causal = 1 }, 0, 0, 0, 0 },
  { "gate headwise", { DESC(1, 2, 2, 20, 30, 16, 16), .gate = 1 }, 0, 0, 0, 0 },
  { "gate elementwise", { DESC(1, 2, 2, 20, 30, 16, 20), .gate = 1, .gate_flags = SMX_ATTN_GATE_ELEMENTWISE }, 0, 0, 0, 0 },
  { "differential", { DESC(2, 2, 2, 30, 70, 32, 24), .diff_lambda = 0.6, .causal = 1 }, 0, 0, 0, 0 },
  { "differential GQA window", { DESC(1, 4, 2, 40, 40, 16, 16), .diff_lambda = 0.3, .window = 1, .window_left = 9, .window_right = 2 }, 0, 0, 0, 0 },
  { "l2 distance causal", { DESC(1, 2, 2, 40, 70, 24, 16), .l2_distance = 1, .causal = 1 }, 0, 0, 0, 0 },
  { "l2 distance decode split", { DESC(1, 4, 2, 1, 4500, 32, 16), .l2_distance = 1 }, 0, 0, 0, 0 },
  { "differential decode", { DESC(1, 8, 2, 2, 300, 32, 16), .diff_lambda = 0.5 }, 0, 0, 0, 0 },
  { "nsa top-2 causal", { DESC(1, 2, 2, 100, 600, 16, 16), .nsa_topk = 2, .causal = 1 }, 0, 0, 0, 0 },
  { "nsa top-3 GQA decode", { DESC(1, 4, 1, 1, 1000, 24, 16), .nsa_topk = 3 }, 0, 0, 0, 0 },
  { "nsa top-4 f16 window", { DESC(1, 2, 2, 70, 700, 32, 16), .nsa_topk = 4, .dtype = SMX_ATTN_F16, .window = 1, .window_left = 400, .window_right = 0 }, 0, 0, 0, 0 },
  { "linear causal GQA", { DESC(2, 4, 2, 30, 50, 16, 12), .kind = SMX_ATTN_LINEAR, .causal = 1 }, 0, 0, 0, 0 },
  { "linear", { DESC(1, 2, 2, 20, 40, 8, 8), .kind = SMX_ATTN_LINEAR, .gate = 1 }, 0, 0, 0, 0 },
  { "cosformer causal", { DESC(1, 2, 2, 40, 60, 16, 16), .kind = SMX_ATTN_COSFORMER, .causal = 1 }, 0, 0, 0, 0 },
  { "cosformer f16", { DESC(1, 2, 1, 30, 30, 16, 16), .kind = SMX_ATTN_COSFORMER, .dtype = SMX_ATTN_F16 }, 0, 0, 0, 0 },
  { "int8 K", { DESC(2, 4, 2, 30, 150, 32, 16), .k_int8 = 1, .causal = 1 }, 0, 0, 0, 0 },
  { "int8 K jensen decode", { DESC(1, 8, 2, 1, 4500, 64, 32), .k_int8 = 1, .k_int8_jensen = 1 }, 0, 3.0, 0, 0 },
  { "int8 K jensen f16 nsa", { DESC(1, 2, 2, 40, 300, 32, 16), .k_int8 = 1, .k_int8_jensen = 1, .dtype = SMX_ATTN_F16, .nsa_topk = 2, .causal = 1 }, 0, 0, 0, 0 },
  { "mala", { DESC(2, 2, 1, 20, 40, 16, 12), .kind = SMX_ATTN_MALA }, 0, 0, 0, 0 },
  { "mala causal", { DESC(1, 2, 2, 30, 30, 16, 16), .kind = SMX_ATTN_MALA, .causal = 1 }, 0, 0, 0, 0 },
  { "qk-norm", { DESC(1, 2, 2, 20, 70, 24, 16), .qk_norm = 1 }, 0, 0, 0, 0 },
  { "strided (B,L,H,D)", { DESC(2, 4, 2, 33, 47, 16, 24), .causal = 1 }, 1, 0, 0, 0 },
  { "f16", { DESC(1, 2, 2, 40, 70, 32, 32), .dtype = SMX_ATTN_F16, .causal = 1 }, 0, 0, 0, 0 },
  { "bf16", { DESC(1, 2, 1, 40, 70, 32, 32), .dtype = SMX_ATTN_BF16 }, 0, 0, 0, 0 },
  { "f16 decode split", { DESC(1, 4, 1, 1, 4200, 32, 32), .dtype = SMX_ATTN_F16 }, 0, 0, 0, 0 },
  { "blasst -30 peaked", { DESC(1, 2, 2, 64, 512, 32, 32), .blasst_log_threshold = -30.0 }, 0, 6.0, 0, 0 },
  { "no keys", { DESC(1, 2, 2, 5, 0, 8, 8) }, 0, 0, 0, 0 },
  { "ssmax bool mask + masked rows", { DESC(2, 2, 1, 30, 70, 16, 16), .ssmax_s = 0.5, .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 1, 0 },
  { "ssmax bias mask causal", { DESC(2, 2, 2, 30, 70, 16, 16), .ssmax_s = 0.5, .mask_kind = SMX_ATTN_MASK_BIAS, .causal = 1 }, 0, 0, 0, 0 },
  { "ssmax decode split bool mask", { DESC(2, 4, 2, 1, 4300, 16, 16), .ssmax_s = 0.3, .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 0, 0 },
  { "ssmax radial window", { DESC(1, 2, 2, 96, 96, 16, 16), .ssmax_s = 0.4, .radial_frame = 8, .window = 1, .window_left = 40, .window_right = 5 }, 0, 0, 0, 0 },
  { "screen r 0.5", { DESC(2, 2, 2, 37, 53, 6, 10), .kind = SMX_ATTN_SCREEN, .screen_r = 0.5 }, 0, 0, 0, 0 },
  { "screen r 1 d64", { DESC(1, 2, 2, 70, 150, 64, 32), .kind = SMX_ATTN_SCREEN, .screen_r = 1.0 }, 0, 0, 0, 0 },
  { "screen causal window 9.5", { DESC(1, 2, 2, 80, 100, 8, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 0.6, .screen_window = 9.5, .causal = 1 }, 0, 0, 0, 0 },
  { "screen softmask decode", { DESC(2, 4, 2, 3, 300, 8, 16), .kind = SMX_ATTN_SCREEN, .screen_r = 0.7, .screen_window = 120 }, 0, 0, 0, 0 },
  { "screen per head GQA causal", { DESC(2, 12, 3, 40, 200, 8, 8), .kind = SMX_ATTN_SCREEN, .causal = 1 }, 0, 0, 0, 1 },
  { "screen per head decode split", { DESC(1, 6, 2, 1, 4400, 8, 8), .kind = SMX_ATTN_SCREEN }, 0, 0, 0, 1 },
  { "screen bool mask + window", { DESC(2, 2, 1, 30, 90, 6, 12), .kind = SMX_ATTN_SCREEN, .screen_r = 0.5, .mask_kind = SMX_ATTN_MASK_BOOL, .window = 1, .window_left = 30, .window_right = 4 }, 0, 0, 1, 0 },
  { "screen radial no vnorm", { DESC(1, 2, 2, 64, 64, 6, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 0.8, .radial_frame = 8, .screen_flags = SMX_ATTN_SCREEN_NO_VNORM }, 0, 0, 0, 0 },
  { "screen no tanhnorm top-left", { DESC(1, 2, 2, 50, 70, 6, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 0.6, .screen_window = 30, .causal = SMX_ATTN_CAUSAL_TOP_LEFT, .screen_flags = SMX_ATTN_SCREEN_NO_TANHNORM }, 0, 0, 0, 0 },
  { "screen Lq > Lk window (masked rows)", { DESC(1, 2, 2, 80, 50, 6, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 0.5, .screen_window = 20 }, 0, 0, 0, 0 },
  { "screen tiny r", { DESC(1, 2, 2, 30, 70, 8, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 1e-6 }, 0, 0, 0, 0 },
  { "screen f16 strided", { DESC(2, 4, 2, 33, 47, 6, 24), .kind = SMX_ATTN_SCREEN, .screen_r = 0.5, .dtype = SMX_ATTN_F16, .causal = 1 }, 1, 0, 0, 0 },
  { "screen bf16 int8 K gate", { DESC(1, 2, 2, 30, 140, 8, 8), .kind = SMX_ATTN_SCREEN, .screen_r = 0.6, .dtype = SMX_ATTN_BF16, .k_int8 = 1, .gate = 1 }, 0, 0, 0, 0 },
  /* the decode kernels (dec_qk, dec_pv): tasks of at most 8 rows (G query heads x query indices), softmax kind */
  { "dec G=1 D=64", { DESC(1, 3, 3, 1, 777, 64, 64) }, 0, 0, 0, 0 },
  { "dec G=2 D=80 split", { DESC(1, 4, 2, 1, 4200, 80, 80) }, 0, 0, 0, 0 },
  { "dec G=4 D=128 split", { DESC(1, 8, 2, 1, 4500, 128, 128) }, 0, 0, 0, 0 },
  { "dec G=8 D=72", { DESC(1, 8, 1, 1, 1000, 72, 72) }, 0, 0, 0, 0 },
  { "dec G=3 D=1", { DESC(2, 6, 2, 1, 150, 1, 1) }, 0, 0, 0, 0 },
  { "dec G=5 Dv=9", { DESC(1, 5, 1, 1, 201, 24, 9) }, 0, 2.0, 0, 0 },
  { "dec G=4 Lq=2 causal", { DESC(1, 4, 1, 2, 333, 40, 24), .causal = 1 }, 0, 0, 0, 0 },
  { "dec G=2 Lq=3 bool masked rows", { DESC(2, 4, 2, 3, 300, 32, 32), .mask_kind = SMX_ATTN_MASK_BOOL }, 0, 0, 1, 0 },
  { "dec G=2 Lq>Lk masked rows", { DESC(1, 2, 1, 3, 2, 16, 16), .causal = 1 }, 0, 0, 0, 0 },
  { "dec G=4 bias alibi softcap sink", { DESC(1, 8, 2, 1, 500, 64, 64), .mask_kind = SMX_ATTN_MASK_BIAS, .alibi = 1, .softcap = 8.0, .sinks = 1 }, 0, 2.0, 0, 0 },
  { "dec G=4 window 100 split", { DESC(1, 4, 1, 1, 5000, 64, 64), .causal = 1, .window = 1, .window_left = 100, .window_right = -1 }, 0, 0, 0, 0 },
  { "dec G=4 strided", { DESC(2, 8, 2, 1, 300, 48, 48) }, 1, 0, 0, 0 },
  { "dec G=4 f16 D=128 split", { DESC(1, 8, 2, 1, 4200, 128, 128), .dtype = SMX_ATTN_F16 }, 0, 0, 0, 0 },
  { "dec G=2 bf16 D=72", { DESC(1, 4, 2, 1, 700, 72, 72), .dtype = SMX_ATTN_BF16 }, 0, 0, 0, 0 },
  { "dec G=2 f16 D=20 qk-norm", { DESC(1, 4, 2, 1, 300, 20, 20), .dtype = SMX_ATTN_F16, .qk_norm = 1 }, 0, 0, 0, 0 },
  { "dec G=8 bf16 Dv=9 split", { DESC(1, 8, 1, 1, 4200, 24, 9), .dtype = SMX_ATTN_BF16 }, 0, 0, 0, 0 },
  { "dec G=4 qk-norm fox", { DESC(1, 4, 1, 1, 300, 32, 32), .qk_norm = 1, .fox = 1 }, 0, 0, 0, 0 },
};

static void test_single_key(void) {
  float q[8], k[8], v[6], o[6];
  for (int i = 0; i < 8; i++) { q[i] = (float)i - 3.5f; k[i] = 0.25f * (float)i; }
  for (int i = 0; i < 6; i++) v[i] = 1.5f * (float)i - 2.0f;
  smx_attention_desc d = { DESC(1, 1, 1, 1, 1, 8, 6) };
  smx_attention_plan *p;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "single key plan");
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o };
  float lse = 0;
  a.lse = &lse;
  CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "single key run");
  for (int i = 0; i < 6; i++) CHECK(o[i] == v[i], "single key: o[%d] = %g, v = %g", i, o[i], v[i]);
  smx_attention_plan_destroy(p);
}

/* GQA equals MHA with each KV head repeated for its query heads (bitwise: each row's arithmetic is the same). */
static void test_gqa_mha(void) {
  enum { B = 1, HQ = 6, HKV = 2, L = 45, D = 24 };
  tu_rng r = { 7 };
  size_t nq = B * HQ * L * D, nk = B * HKV * L * D;
  float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *k2 = malloc(nq * 4), *v2 = malloc(nq * 4);
  float *o1 = malloc(nq * 4), *o2 = malloc(nq * 4);
  for (size_t i = 0; i < nq; i++) q[i] = tu_normal(&r);
  for (size_t i = 0; i < nk; i++) { k[i] = tu_normal(&r); v[i] = tu_normal(&r); }
  for (size_t h = 0; h < HQ; h++) {
    memcpy(k2 + h * L * D, k + (h / 3) * L * D, L * D * 4);
    memcpy(v2 + h * L * D, v + (h / 3) * L * D, L * D * 4);
  }
  smx_attention_desc d = { DESC(B, HQ, HKV, L, L, D, D), .causal = 1 };
  smx_attention_plan *p;
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o1 };
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "gqa");
  smx_attention_plan_destroy(p);
  d.heads_kv = HQ;
  a.k = k2; a.v = v2; a.o = o2;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "mha");
  smx_attention_plan_destroy(p);
  double err = 0;
  for (size_t i = 0; i < nq; i++) {   /* (an fmax reduction here crashes aarch64 gcc 12's vectoriser) */
    double e = fabs((double)o1[i] - o2[i]);
    if (e > err) err = e;
  }
  CHECK(err <= 1e-6, "GQA vs MHA: max difference %g", err);
  free(q); free(k); free(v); free(k2); free(v2); free(o1); free(o2);
}

/* Two KV halves, each with its lse, merged == the whole. */
static void test_merge(void) {
  enum { H = 3, LQ = 17, LK = 90, D = 20 };
  tu_rng r = { 11 };
  float *q = malloc(H * LQ * D * 4), *k = malloc(H * LK * D * 4), *v = malloc(H * LK * D * 4);
  float *ow = malloc(H * LQ * D * 4), *oa = malloc(H * LQ * D * 4), *ob = malloc(H * LQ * D * 4);
  float lw[H * LQ], la[H * LQ], lb[H * LQ], lm[H * LQ];
  for (size_t i = 0; i < H * LQ * D; i++) q[i] = tu_normal(&r);
  for (size_t i = 0; i < H * LK * D; i++) { k[i] = tu_normal(&r); v[i] = tu_normal(&r); }
  smx_attention_desc d = { DESC(1, H, H, LQ, LK, D, D) };
  smx_attention_plan *p;
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = ow, .lse = lw };
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "whole");
  smx_attention_plan_destroy(p);
  /* halves: keys [0, 40) and [40, 90), as strided views of the same K and V */
  size_t kv_s[3] = { H * LK * D, LK * D, D };
  d.len_k = 40;
  memcpy(d.k_stride, kv_s, sizeof kv_s);
  memcpy(d.v_stride, kv_s, sizeof kv_s);
  a.o = oa; a.lse = la;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "half a");
  smx_attention_plan_destroy(p);
  d.len_k = 50;
  a.k = k + 40 * D; a.v = v + 40 * D; a.o = ob; a.lse = lb;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "half b");
  smx_attention_plan_destroy(p);
  const float *parts[2] = { oa, ob }, *lses[2] = { la, lb };
  CHECK(smx_attention_merge(2, parts, lses, H * LQ, D, D, oa, D, lm) == SMX_OK, "merge");
  double err = 0, scale = 0;
  for (size_t i = 0; i < H * LQ * D; i++) {
    double e = fabs((double)oa[i] - ow[i]), a1 = fabs(ow[i]);
    if (e > err) err = e;
    if (a1 > scale) scale = a1;
  }
  CHECK(err <= 1e-5 * scale, "merge vs whole: %g", err / scale);
  for (size_t i = 0; i < H * LQ; i++) CHECK(fabsf(lm[i] - lw[i]) <= 1e-5f * fmaxf(1, fabsf(lw[i])), "merged lse %zu", i);
  free(q); free(k); free(v); free(ow); free(oa); free(ob);
}

/* BLASST on peaked scores: tiles are skipped, the result stays close, and an unreachable threshold changes nothing. */
static void test_blasst(void) {
  tcase c = { "blasst", { DESC(1, 2, 2, 64, 1024, 32, 32), .causal = 1 }, 0, 8.0, 0, 0 };
  tu_rng r = { 99 };
  tdata t;
  make_data(&c, &t, &r);
  size_t no = elems(&c.d, 3);
  float *o0 = malloc(no * 4), *o1 = malloc(no * 4), *o2 = malloc(no * 4);
  smx_attention_stats st0, st1, st2;
  CHECK(run_once(&c, &t, 1, o0, NULL, &st0) == SMX_OK, "blasst off");
  c.d.blasst_log_threshold = -1e30;
  CHECK(run_once(&c, &t, 2, o1, NULL, &st1) == SMX_OK, "blasst unreachable");
  CHECK(!memcmp(o0, o1, no * 4) && st1.row_tiles_skipped == 0 && st1.row_tiles > 0, "unreachable threshold changed O");
  c.d.blasst_log_threshold = -9.0;
  CHECK(run_once(&c, &t, 3, o2, NULL, &st2) == SMX_OK, "blasst -9");
  double err = 0, mx = 0;
  for (size_t i = 0; i < no; i++) {
    double e = fabs((double)o2[i] - o0[i]), a = fabs(o0[i]);
    if (e > err) err = e;
    if (a > mx) mx = a;
  }
  CHECK(st2.row_tiles_skipped > 0 && st2.row_tiles == st1.row_tiles, "blasst -9 skipped %llu of %llu",
        (unsigned long long)st2.row_tiles_skipped, (unsigned long long)st2.row_tiles);
  /* each skipped tile drops under 64 e^-9 of the row's mass (relative to its largest weight) */
  CHECK(err <= 64 * exp(-9.0) * 4 * mx, "blasst -9 error %g of max|O|", err / mx);
  printf("  blasst -9: skipped %llu of %llu row tiles, error %.2e of max|O|\n",
         (unsigned long long)st2.row_tiles_skipped, (unsigned long long)st2.row_tiles, err / mx);
  free(o0); free(o1); free(o2);
  free_data(&c, &t);
}

/* Screening: a key equal to the query gives tanh(1) v^ (s = 1, a = 1 for any r); far keys (s <= 1 - r) add
 * nothing, and their tiles count as skipped; a zero query gives 0 and lse -inf. */
static void test_screen(void) {
  enum { D = 8, DV = 6, LK = 200 };
  float q[2 * D], k[LK * D], v[LK * DV], o[2 * DV], lse[2];
  for (int x = 0; x < D; x++) { q[x] = 0.5f * (float)x - 1.0f; q[D + x] = 0.0f; }
  for (int j = 0; j < LK; j++)
    for (int x = 0; x < D; x++) k[j * D + x] = x == 0 ? 1.0f : 0.0f;   /* s = q^_0, 0.48 here: below 1 - r */
  memcpy(k + 130 * D, q, sizeof(float) * D);                             /* key 130 equals query 0 */
  for (int i = 0; i < LK * DV; i++) v[i] = (float)(i % 7) - 2.5f;
  smx_attention_desc d = { DESC(1, 1, 1, 2, LK, D, DV), .kind = SMX_ATTN_SCREEN, .screen_r = 0.4 };
  smx_attention_plan *p;
  smx_attention_stats st;
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .lse = lse };
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, &st) == SMX_OK, "screen run");
  smx_attention_plan_destroy(p);
  double vn = 0;
  for (int x = 0; x < DV; x++) vn += (double)v[130 * DV + x] * v[130 * DV + x];
  vn = sqrt(vn);
  for (int x = 0; x < DV; x++) {
    double want = tanh(1.0) * v[130 * DV + x] / vn;
    CHECK(fabs(o[x] - want) <= 1e-6, "screen key = query: o[%d] = %g, want %g", x, o[x], want);
    CHECK(o[DV + x] == 0.0f, "screen zero query: o[%d] = %g", x, o[DV + x]);
  }
  CHECK(fabsf(lse[0]) <= 1e-6f && lse[1] == -INFINITY, "screen lse %g %g", lse[0], lse[1]);
  /* 2 rows x 4 tiles; only query 0's tile of key 130 has a weight */
  CHECK(st.row_tiles == 8 && st.row_tiles_skipped == 7, "screen stats %llu of %llu skipped",
        (unsigned long long)st.row_tiles_skipped, (unsigned long long)st.row_tiles);
  /* extremes past float range: a width of 1e-300 keeps only s = 1 (key 130 for query 0), a window of 1e300
   * is causal with m = 1, an eps of 1e300 makes every unit vector about 0: never NaN */
  double ext[3][3] = { { 1e-300, 0, 0 }, { 0.4, 1e300, 0 }, { 0.4, 0, 1e300 } };
  for (int e = 0; e < 3; e++) {
    d.screen_r = ext[e][0]; d.screen_window = ext[e][1]; d.screen_eps = ext[e][2];
    CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK, "screen extreme %d", e);
    smx_attention_plan_destroy(p);
    for (int x = 0; x < 2 * DV; x++) CHECK(o[x] == o[x], "screen extreme %d: NaN at %d", e, x);
  }
  CHECK(fabs(o[0]) < 1e-30, "screen eps 1e300: o[0] = %g", o[0]);
}

static void test_bad(void) {
  smx_attention_plan *p = NULL;
  smx_attention_desc ok = { DESC(1, 4, 2, 8, 8, 16, 16) }, d;
  CHECK(smx_attention_plan_create(&ok, &p) == SMX_OK, "good desc");
  float buf[1024] = { 0 };
  smx_attention_args a = { .q = buf, .k = buf + 600, .v = buf + 800, .o = buf + 100 };
  CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_E_INVALID_ARG, "O overlaps Q");
  a.o = NULL;
  CHECK(smx_attention_run(p, &a, NULL, 0, NULL) == SMX_E_INVALID_ARG, "NULL O");
  float o[4 * 8 * 16];
  a.o = o;
  CHECK(smx_attention_run(p, &a, buf, 16, NULL) == SMX_E_WORKSPACE_TOO_SMALL, "small workspace");
  smx_attention_plan_destroy(p);
  CHECK(smx_attention_plan_create(NULL, &p) == SMX_E_INVALID_ARG, "NULL desc");
  CHECK(smx_attention_plan_create(&ok, NULL) == SMX_E_INVALID_ARG, "NULL plan");
#define BAD(field, value)                                                                    \
  d = ok;                                                                                    \
  d.field = value;                                                                           \
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "%s = %s accepted", #field, #value);
  BAD(heads_kv, 3)
  BAD(heads_kv, 0)
  BAD(dim_qk, 0)
  BAD(dim_v, 0)
  BAD(scale, INFINITY)
  BAD(scale, NAN)
  BAD(softcap, -1.0)
  BAD(dtype, (smx_attn_dtype)7)
  BAD(causal, (smx_attn_causal)5)
  BAD(mask_kind, (smx_attn_mask_kind)9)
  BAD(kind, (smx_attn_kind)7)
  BAD(screen_r, 1.5)
  BAD(screen_r, -0.5)
  BAD(screen_window, -1.0)
  BAD(screen_window, INFINITY)
  BAD(screen_eps, NAN)
  BAD(screen_flags, 4u)
  BAD(threads, -1)
  BAD(blasst_log_threshold, 1.0)
  BAD(q_stride[2], 3)
  BAD(gate_flags, 2u)
  d = ok; d.fox = 1; d.len_q = 9;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "fox with Lq > Lk accepted");
  d = ok; d.window = 1; d.window_left = -5;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "window -5 accepted");
  d = ok; d.diff_lambda = 0.5; d.dim_qk = 15;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "differential with odd Dqk accepted");
  d = ok; d.kind = SMX_ATTN_LINEAR; d.window = 1; d.window_left = 3;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "linear with a window accepted");
  d = ok; d.kind = SMX_ATTN_SIGMOID; d.sinks = 1;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "sigmoid + sinks accepted");
  d = ok; d.kind = SMX_ATTN_SCREEN; d.screen_r = 0.5; d.mask_kind = SMX_ATTN_MASK_BIAS;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "screen + bias mask accepted");
  d.mask_kind = SMX_ATTN_MASK_NONE; d.alibi = 1;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "screen + alibi accepted");
  d.alibi = 0; d.screen_r = 0;   /* no width at all: refused at run time */
  CHECK(smx_attention_plan_create(&d, &p) == SMX_OK, "screen plan without r");
  float o2[4 * 8 * 16], wr[4] = { 0.5f, 0.5f, 1.5f, 0.5f };
  smx_attention_args a2 = { .q = buf, .k = buf + 600, .v = buf + 800, .o = o2 };
  CHECK(smx_attention_run(p, &a2, NULL, 0, NULL) == SMX_E_INVALID_ARG, "screen run without r");
  a2.screen_r = wr;
  CHECK(smx_attention_run(p, &a2, NULL, 0, NULL) == SMX_E_INVALID_ARG, "screen run with r 1.5");
  wr[2] = 1.0f;
  CHECK(smx_attention_run(p, &a2, NULL, 0, NULL) == SMX_OK, "screen run with good r");
  smx_attention_plan_destroy(p);
  d = ok; d.batch = (size_t)1 << 62; d.heads_q = d.heads_kv = 1 << 20;
  CHECK(smx_attention_plan_create(&d, &p) == SMX_E_INVALID_ARG, "overflowing sizes accepted");
  const float *po[1] = { buf };
  CHECK(smx_attention_merge(1, po, po, 4, 8, 4, o, 8, NULL) == SMX_E_INVALID_ARG, "merge ldo < dv");
}

int main(void) {
  tu_isa_start(3);
  if (tu_isa_once) {
    test_bad();
    test_single_key();
    test_gqa_mha();
    test_merge();
    test_blasst();
    test_screen();
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], 1000 + i);
  return tu_finish("test_attention");
}
