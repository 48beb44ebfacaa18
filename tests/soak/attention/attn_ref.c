/*
 * The long-double reference of the attention soak: the formulas of
 * include/smx/smx_attention.h applied to materialised scores, one query row
 * at a time, with IEEE semantics for NaN and infinities, plus the class of
 * each output (attn_soak.h): what the header's policy asks of it.
 *
 * The special-value policy it applies (the header's, and where the header is
 * silent, issue 24's "a NaN must reach the rows that see it"):
 *  - a row that sees no key (every mask hides every key, or every visible
 *    score is -inf) gives O = 0 exactly and lse = -inf (with a sink: the sink);
 *  - a NaN among the visible scores (a NaN in q_i, or in a visible key's K)
 *    makes the whole row NaN, O and lse; so does a +inf score of a normalised
 *    kind (the softmax of a row holding +inf is inf / inf); sigmoid weighs it 1;
 *  - a NaN or infinity in a visible key's V reaches that column of O (NaN or
 *    an infinity: the sign depends on the others), not the other columns;
 *  - keys that a mask removes do not count. What their non-finite values do
 *    is not documented (0 * inf is NaN in any P V product), so a column that
 *    such a V entry could reach is left unchecked (EXP_ANY), as is a row where
 *    a bias of -inf meets a non-finite raw score (NaN + -inf).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_soak.h"

/* BLASST (softmax) drops a tile whose largest logit is more than |threshold| below the running max (at most
 * the row's max mm): a key with z <= mm + threshold may sit in one, one above it never does */
static int blasst_may_drop(const smx_attention_desc *d, long double z, long double mm) {
  return d->blasst_log_threshold < 0 && d->kind == SMX_ATTN_SOFTMAX && z <= mm + (long double)d->blasst_log_threshold;
}

#define PI_L 3.14159265358979323846264338327950288L

typedef long double ld;

static int bitlen(unsigned long long x) {
  int n = 0;
  while (x) { n++; x >>= 1; }
  return n;
}

int attn_ref_radial_ok(size_t frame, long long qi, long long j) {
  if (qi < 0) return 0;
  long long T = (long long)frame, fq = qi / T, fk = j / T, dist = fq > fk ? fq - fk : fk - fq;
  long long w = dist <= 1 ? T : (long long)((1ull << bitlen((unsigned long long)T)) >> bitlen((unsigned long long)dist));
  long long a = qi % T, b = j % T;
  return (a > b ? a - b : b - a) <= w;
}

void attn_ref_range(const smx_attention_desc *d, size_t i, long long *pos, long long *lo, long long *hi) {
  long long p = d->causal == SMX_ATTN_CAUSAL_TOP_LEFT ? (long long)i : (long long)i + (long long)d->len_k - (long long)d->len_q;
  long long l = 0, h = (long long)d->len_k;
  if (d->causal && p + 1 < h) h = p + 1;
  if (d->window && d->window_left >= 0 && p - d->window_left > l) l = p - d->window_left;
  if (d->window && d->window_right >= 0 && p + d->window_right + 1 < h) h = p + d->window_right + 1;
  if (h < l) h = l;
  *pos = p;
  *lo = l;
  *hi = h;
}

static int fin(ld x) { return isfinite(x); }

typedef struct rowctx {
  const attn_case *c;
  size_t b, h, i, g, row;
  long long pos, lo, hi;
  ld *qn;              /* q_i, RMS-normalised with qk_norm */
  unsigned char *vis;  /* key takes part: range, radial, bool mask, bias != -inf, NSA selection */
  unsigned char *inr;  /* the positional, radial and bool masks leave it (before bias and NSA) */
  const unsigned char *sel;   /* NSA: the selected key blocks */
  unsigned char *colbad;      /* screening: the columns of h a non-finite V entry reached */
  size_t n_vis;        /* SSMax's n_i */
} rowctx;

static ld qv(const attn_case *c, size_t b, size_t h, size_t i, size_t x) {
  const smx_attention_desc *d = &c->d;
  return c->q[((b * d->heads_q + h) * d->len_q + i) * d->dim_qk + x];
}
static ld kv(const attn_case *c, size_t b, size_t g, size_t j, size_t x) {
  const smx_attention_desc *d = &c->d;
  return c->k[((b * d->heads_kv + g) * d->len_k + j) * d->dim_qk + x];
}
static ld vv(const attn_case *c, size_t b, size_t g, size_t j, size_t x) {
  const smx_attention_desc *d = &c->d;
  return c->v[((b * d->heads_kv + g) * d->len_k + j) * d->dim_v + x];
}
static size_t mask_at(const attn_case *c, size_t b, size_t h, size_t i, size_t j) {
  const smx_attention_desc *d = &c->d;
  return ((b * d->heads_q + h) * d->len_q + i) * d->len_k + j;
}

/* key j's row, RMS-normalised with qk_norm, into kn */
static void key_row(const rowctx *r, size_t j, ld *kn) {
  const attn_case *c = r->c;
  const smx_attention_desc *d = &c->d;
  size_t D = d->dim_qk;
  ld ss = 0;
  for (size_t x = 0; x < D; x++) {
    kn[x] = kv(c, r->b, r->g, j, x);
    ss += kn[x] * kn[x];
  }
  if (d->qk_norm) {
    ld eps = d->qk_norm_eps != 0 ? (ld)d->qk_norm_eps : 1e-6L, inv = sqrtl(ss / (ld)D + eps);
    for (size_t x = 0; x < D; x++) kn[x] = kn[x] / inv * (c->kw ? c->kw[x] : 1);
  }
}

/* One map of a score kind (softmax, sigmoid, softpick) over q's dims [qoff, qoff + dqe): into o / ocls, *lse / *lcls. */
/* The conditioning of a row of scores: every score is rounded to f32 from terms as large as zmag (the
 * products of q and k, |q|^2 and |k|^2 of L2 distance, the bias, ALiBi and FoX terms), an absolute error
 * of a few 2^-24 zmag, however small z itself is; the weights move by that much relatively. The header's
 * 1e-5 max|O| cannot hold once zmag passes about 40: the bound the soak applies adds 2^-22 zmag for lse
 * and 2^-21 zmag max|v| for O (sigmoid: times the keys / 4, its weights are not normalised). */
static ld min_rowmax, max_rowmax, min_score;
static void score_map(const rowctx *r, size_t qoff, size_t dqe, ld scale, ld *o, unsigned char *ocls, ld *lse,
                      unsigned char *lcls, ld *kn, ld *z, ld *oext, ld *lext) {
  const attn_case *c = r->c;
  const smx_attention_desc *d = &c->d;
  size_t Lk = d->len_k, Dv = d->dim_v;
  int any_row = 0;
  ld zmag = 0, vmax = 0;
  size_t nkeys = 0;
  for (size_t j = 0; j < Lk; j++) {
    z[j] = -INFINITY;
    if (!r->inr[j]) continue;
    if (d->nsa_topk && !r->sel[j / 64]) continue;   /* a block NSA left out */
    key_row(r, j, kn);
    ld dot = 0, mag = 0, s;
    for (size_t x = qoff; x < qoff + dqe; x++) {
      dot += r->qn[x] * kn[x];
      mag += fabsl(r->qn[x] * kn[x]);
    }
    if (d->l2_distance) {
      /* the header's form: scale (2 q.k - |q|^2 - |k|^2) */
      ld qq = 0, kk = 0;
      for (size_t x = qoff; x < qoff + dqe; x++) { qq += r->qn[x] * r->qn[x]; kk += kn[x] * kn[x]; }
      s = scale * (2 * dot - qq - kk);
      mag = fabsl(scale) * (2 * mag + qq + kk);
    } else {
      s = dot * scale;
      mag *= fabsl(scale);
    }
    if (d->k_int8 && d->k_int8_jensen) {
      ld qq = 0, sc = c->kscale[(r->b * d->heads_kv + r->g) * ((Lk + 63) / 64) + j / 64];
      for (size_t x = qoff; x < qoff + dqe; x++) qq += (scale * r->qn[x]) * (scale * r->qn[x]);
      s -= qq * sc * sc / 24;
      mag += qq * sc * sc / 24;
    }
    if (d->softcap > 0) s = (ld)d->softcap * tanhl(s / (ld)d->softcap);
    if (d->ssmax_s != 0 && r->n_vis > 0) {
      s *= (ld)d->ssmax_s * logl((ld)r->n_vis);
      mag *= fabsl((ld)d->ssmax_s * logl((ld)r->n_vis));
    }
    if (d->mask_kind == SMX_ATTN_MASK_BIAS) {
      ld bias = c->bias[mask_at(c, r->b, r->h, r->i, j)];
      if (bias == -INFINITY) {
        if (!fin(s)) any_row = 1;   /* NaN + -inf, inf + -inf: no rule */
        continue;
      }
      s += bias;
      mag += fabsl(bias);
    }
    if (d->alibi) {
      ld t = c->slopes[r->h] * (ld)(r->pos > (long long)j ? r->pos - (long long)j : (long long)j - r->pos);
      s -= t;
      mag += fabsl(t);
    }
    if (d->fox) {
      const ld *F = c->fox + (r->b * d->heads_q + r->h) * Lk;
      s += F[r->pos] - F[j];
      mag += fabsl(F[r->pos]) + fabsl(F[j]);
    }
    z[j] = s;
    if (s == -INFINITY) continue;
    if (fin(s) && s < min_score) min_score = s;
    nkeys++;
    if (fin(mag) && mag > zmag) zmag = mag;
    for (size_t x = 0; x < Dv; x++) {
      ld a = fabsl(vv(c, r->b, r->g, j, x));
      if (fin(a) && a > vmax) vmax = a;
    }
  }
  *lext = 0x1p-22L * zmag;
  *oext = 0x1p-21L * zmag * vmax * (d->kind == SMX_ATTN_SIGMOID ? (ld)(nkeys + 3) / 4 : 1);
  *lcls = EXP_BOUND;
  int nan_row = 0;
  ld m = -INFINITY;
  for (size_t j = 0; j < Lk; j++) {
    if (z[j] != z[j] || (z[j] == INFINITY && d->kind != SMX_ATTN_SIGMOID)) nan_row = 1;
    else if (z[j] > m) m = z[j];
  }
  if (fin(m) && m < min_rowmax) min_rowmax = m;
  if (fin(m) && m > max_rowmax) max_rowmax = m;
  if (any_row) {
    for (size_t x = 0; x < Dv; x++) { o[x] = 0; ocls[x] = EXP_ANY; }
    *lse = 0;
    *lcls = EXP_ANY;
    return;
  }
  if (nan_row) {
    for (size_t x = 0; x < Dv; x++) { o[x] = NAN; ocls[x] = EXP_NAN; }
    *lse = NAN;
    *lcls = EXP_NAN;
    return;
  }
  ld sink = d->sinks ? c->sinks[r->h] : -INFINITY;
  if (m == -INFINITY) {   /* no key: O = 0, lse -inf or the sink */
    for (size_t x = 0; x < Dv; x++) { o[x] = 0; ocls[x] = EXP_ZERO; }
    *lse = sink;
    *lcls = d->sinks ? EXP_BOUND : EXP_ZERO;
  } else {
    ld mm = d->kind == SMX_ATTN_SOFTMAX && sink > m ? sink : m, den = 0;
    /* sigmoid's lse: the sum shifted by u = min(m + bias, 0), as the library keeps it, so that it holds
     * rows whose sum is below even long double's range (l2 distance of large q: z near -12000) */
    ld su = d->kind == SMX_ATTN_SIGMOID ? fminl(m + (ld)d->sigmoid_bias, 0) : 0, dsig = 0;
    for (size_t x = 0; x < Dv; x++) { o[x] = 0; ocls[x] = EXP_BOUND; }
    for (size_t j = 0; j < Lk; j++) {
      if (z[j] == -INFINITY) continue;
      ld w;
      if (d->kind == SMX_ATTN_SIGMOID) {
        w = 1 / (1 + expl(-(z[j] + (ld)d->sigmoid_bias)));
        den += w;
        ld y = z[j] + (ld)d->sigmoid_bias;
        dsig += y > 0 ? expl(-su) / (1 + expl(-y)) : expl(y - su) / (1 + expl(y));
      } else if (d->kind == SMX_ATTN_SOFTPICK) {
        ld a = expl(z[j] - mm) - expl(-mm);
        den += fabsl(a);
        w = a > 0 ? a : 0;
      } else {
        w = expl(z[j] - mm);
        den += w;
      }
      for (size_t x = 0; x < Dv; x++) o[x] += w * vv(c, r->b, r->g, j, x);
    }
    if (d->sinks) den += expl(sink - mm);
    if (d->kind == SMX_ATTN_SOFTPICK) {
      /* |e^{z-m} - e^{-m}| cancels for z near 0: f32 carries the exp kernel's error (up to 2 ulp, 2^-22) plus
       * the subtraction's rounding (2^-24), about 2^-21 (e^{z-m} + e^{-m}) absolutely, into each term, which a
       * small sum makes large relatively (a single key with z = 1e-4: den 1e-4, lse off by 4e-4); 2^-22 was
       * exceeded by case 0xab54deb1431ec783 (softpick, int8 K / V, a row of two keys near z = 0) */
      ld mag = 1e-8L;
      for (size_t j = 0; j < Lk; j++)
        if (z[j] != -INFINITY) mag += expl(z[j] - mm) + expl(-mm);
      den += 1e-8L;
      ld rel = 0x1p-21L * mag / den;
      if (fin(rel)) {
        *lext += rel;
        ld om = 0;
        for (size_t x = 0; x < Dv; x++) if (fin(o[x] / den) && fabsl(o[x] / den) > om) om = fabsl(o[x] / den);
        *oext += rel * (om + vmax);
      }
    }
    if (d->kind != SMX_ATTN_SIGMOID)
      for (size_t x = 0; x < Dv; x++) o[x] /= den;
    if (d->kind == SMX_ATTN_SIGMOID) *lse = dsig > 0 ? su + logl(dsig) : -INFINITY;
    else *lse = mm + logl(den);
    if (*lse == -INFINITY) *lcls = EXP_ZERO;
    /* non-finite V: visible keys with a weight that is surely not 0 in float reach the column (unless BLASST
     * may drop the key's tile: the soak found a V infinity in a dropped tile, which reaches nothing) */
    for (size_t j = 0; j < Lk; j++) {
      if (z[j] == -INFINITY) continue;
      ld rel = d->kind == SMX_ATTN_SIGMOID ? 1 / (1 + expl(-(z[j] + (ld)d->sigmoid_bias))) : expl(z[j] - mm);
      for (size_t x = 0; x < Dv; x++)
        if (!fin(vv(c, r->b, r->g, j, x)) && ocls[x] != EXP_NONFINITE)
          ocls[x] = rel > 1e-30L && !(d->kind == SMX_ATTN_SOFTPICK && z[j] <= mm - 60) && !blasst_may_drop(d, z[j], mm)
                        ? EXP_NONFINITE : EXP_ANY;
    }
  }
  /* masked keys with non-finite V: 0 * inf in the product, no documented rule */
  for (size_t j = 0; j < Lk; j++) {
    if (z[j] != -INFINITY) continue;
    for (size_t x = 0; x < Dv; x++)
      if (!fin(vv(c, r->b, r->g, j, x)) && ocls[x] != EXP_NONFINITE) ocls[x] = EXP_ANY;
  }
}

/* phi of the linear kinds; NaN stays NaN (relu(NaN) is NaN, so that it reaches the row) */
static ld phi(int kind, ld x) {
  if (x != x) return x;
  if (kind == SMX_ATTN_COSFORMER) return x > 0 ? x : 0;
  return x > 0 ? x + 1 : expl(x);
}

/* The linear kinds sum weights of both signs (cosFormer with Lq > Lk: cos < 0; MALA: a_ij - z_i) in f32
 * running sums: O's error is relative to the sum of the magnitudes of its terms, sum_j |w_ij| |v_j| /
 * |sum_j w_ij| (MALA: sum_j (|beta a_ij| + |z_i|) |v_j| / n), not to max|O|; the bound the soak applies is
 * 1e-5 times that on top of the header's (and 1e-5 sum |w| / |sum w| for lse). */
static void linear_row(const rowctx *r, ld *o, unsigned char *ocls, ld *lse, unsigned char *lcls, ld *aw, ld *oext,
                       ld *lext) {
  const attn_case *c = r->c;
  const smx_attention_desc *d = &c->d;
  size_t Lk = d->len_k, Dq = d->dim_qk, Dv = d->dim_v;
  ld scale = d->scale != 0 ? (ld)(float)d->scale : 1 / sqrtl((ld)Dq);   /* used as a float (the header) */
  size_t n = 0;
  ld den = 0, zs = 0, sabs = 0;
  for (size_t x = 0; x < Dv; x++) o[x] = 0;
  for (size_t j = 0; j < Lk; j++) {
    aw[j] = 0;
    if ((long long)j < r->lo || (long long)j >= r->hi) continue;
    ld w = 0;
    for (size_t x = 0; x < Dq; x++) w += phi((int)d->kind, qv(c, r->b, r->h, r->i, x)) * phi((int)d->kind, kv(c, r->b, r->g, j, x));
    if (d->kind == SMX_ATTN_COSFORMER) w *= cosl(PI_L / 2 * (ld)(r->pos - (long long)j) / (ld)Lk);
    if (d->kind == SMX_ATTN_MALA) w *= scale;
    aw[j] = w;
    den += w;
    sabs += fabsl(w);
    n++;
  }
  int nonfinite = 0;
  if (d->kind == SMX_ATTN_MALA) {
    zs = n ? den / (ld)n : 0;
    ld beta = 1 + 1 / (zs + 1e-6L);
    for (size_t j = 0; j < Lk && n; j++) {
      if ((long long)j < r->lo || (long long)j >= r->hi) continue;
      ld w = (beta * aw[j] - zs) / (ld)n;
      for (size_t x = 0; x < Dv; x++) o[x] += w * vv(c, r->b, r->g, j, x);
    }
    *lse = n ? 0 : -INFINITY;
    ld mag = 0;
    for (size_t j = 0; j < Lk && n; j++) {
      if ((long long)j < r->lo || (long long)j >= r->hi) continue;
      ld vm = 0;
      for (size_t x = 0; x < Dv; x++) if (fin(vv(c, r->b, r->g, j, x)) && fabsl(vv(c, r->b, r->g, j, x)) > vm) vm = fabsl(vv(c, r->b, r->g, j, x));
      mag += (fabsl(beta * aw[j]) + fabsl(zs)) * vm / (ld)n;
    }
    *oext = fin(mag) ? 1e-5L * mag : 0;
    *lext = 0;
    for (size_t x = 0; x < Dv; x++) ocls[x] = n ? EXP_BOUND : EXP_ZERO;
    *lcls = n ? EXP_BOUND : EXP_ZERO;
  } else {
    for (size_t j = 0; j < Lk; j++) {
      if ((long long)j < r->lo || (long long)j >= r->hi) continue;
      for (size_t x = 0; x < Dv; x++) o[x] += aw[j] * vv(c, r->b, r->g, j, x);
    }
    int pos = den > 0;
    for (size_t x = 0; x < Dv; x++) {
      o[x] = pos ? o[x] / den : den == den ? 0 : o[x] / den;
      ocls[x] = pos ? EXP_BOUND : den == den ? EXP_ZERO : EXP_BOUND;
    }
    *lse = pos ? logl(den) : den == den ? -INFINITY : den;
    *lcls = pos ? EXP_BOUND : den == den ? EXP_ZERO : EXP_BOUND;
    ld mag = 0, sabs2 = 0;
    for (size_t j = 0; j < Lk; j++) {
      if ((long long)j < r->lo || (long long)j >= r->hi) continue;
      ld vm = 0;
      for (size_t x = 0; x < Dv; x++) if (fin(vv(c, r->b, r->g, j, x)) && fabsl(vv(c, r->b, r->g, j, x)) > vm) vm = fabsl(vv(c, r->b, r->g, j, x));
      ld t = fabsl(aw[j]);
      if (d->kind == SMX_ATTN_COSFORMER) {
        /* the sums run over the cos and sin halves of the features: their terms, not the weight, set the scale */
        ld ai = PI_L / 2 * (ld)r->pos / (ld)Lk, aj = PI_L / 2 * (ld)j / (ld)Lk, cd = cosl(ai - aj);
        /* (cos and sin are rounded to f32 absolutely: a weight of 0, cos = 0 exactly, is not one in f32) */
        ld amp = fabsl(cosl(ai) * cosl(aj)) + fabsl(sinl(ai) * sinl(aj)) + 0x1p-22L;
        t = cd != 0 ? fabsl(aw[j] / cd) * amp : t;
      }
      mag += t * vm;
      sabs2 += t;
    }
    ld omax = 0;
    for (size_t x = 0; x < Dv; x++) if (pos && fin(o[x]) && fabsl(o[x]) > omax) omax = fabsl(o[x]);
    /* O = num / den: the error of num, and O times the relative error of den */
    *oext = pos && fin(mag) && fin(sabs2) ? 1e-5L * (mag + omax * sabs2) / den : 0;
    *lext = pos && fin(sabs2) ? 1e-5L * sabs2 / den : 0;
    if (den == den && fabsl(den) <= 1e-5L * sabs2) {   /* a sum of 0 within its rounding: either side may come out */
      for (size_t x = 0; x < Dv; x++) ocls[x] = EXP_ANY;
      *lcls = EXP_ANY;
    }
    (void)sabs;
  }
  /* the running sums are not per pair: a non-finite result may come out as NaN or as an infinity; but not
   * over a sum of 0 within its rounding (EXP_ANY above): there f32 may find the sum 0 and give O = 0, the
   * header's rule for a zero sum (cosformer, Lk = 1: cos(pi/2 p_i) is 0 for odd p_i, 1e-19 in long double,
   * so an infinity in V gave inf / 1e-19 where the library's 0 is right, case 0x434e947f0001165d) */
  for (size_t x = 0; x < Dv; x++)
    if (!fin(o[x]) && ocls[x] != EXP_ANY) { ocls[x] = EXP_NONFINITE; nonfinite = 1; }
  if (!fin(*lse) && *lcls == EXP_BOUND) *lcls = EXP_NONFINITE;
  (void)nonfinite;
}

static void unit(ld *x, size_t n, ld eps) {
  ld ss = 0;
  for (size_t i = 0; i < n; i++) ss += x[i] * x[i];
  ld nr = sqrtl(ss);
  if (!(nr > eps) && nr == nr) nr = eps;
  for (size_t i = 0; i < n; i++) x[i] /= nr;
}

/* Screening near the Trim edge: a = (1 - (1 - s) / r)^2 with s = q^.k^ rounded in f32 (a few 2^-24 sqrt(D)
 * absolutely) moves by 2 sqrt(a) |ds| / r, relatively large for the small a of keys just inside the edge
 * and for small r. lse = log sum a m carries that relatively; the bound the soak applies adds
 * sum_j 2 sqrt(a_j) m_j ds / r / sum_j a_j m_j to lse and sum_j 2 sqrt(a_j) m_j ds / r |v^_j| to O. The
 * Softmask near the end of its window, (cos + 1) / 2 with cos near -1, has an absolute error of a few
 * 2^-24: its share, a_j 2^-21, joins the same sums. */
static int colbad_any(const unsigned char *cb, size_t n) {
  for (size_t x = 0; x < n; x++) if (cb[x]) return 1;
  return 0;
}

static void screen_row(const rowctx *r, ld *o, unsigned char *ocls, ld *lse, unsigned char *lcls, ld *kn, ld *vn,
                       ld *oext, ld *lext) {
  const attn_case *c = r->c;
  const smx_attention_desc *d = &c->d;
  size_t Lk = d->len_k, Dq = d->dim_qk, Dv = d->dim_v;
  ld eps = d->screen_eps != 0 ? (ld)d->screen_eps : 1e-12L;
  if (eps < (ld)FLT_MIN) eps = (ld)FLT_MIN;   /* the header: at least FLT_MIN */
  if (eps > (ld)FLT_MAX) eps = (ld)FLT_MAX;
  ld rr = c->sr ? c->sr[r->h] : (ld)d->screen_r, w = c->sw ? c->sw[r->h] : (ld)d->screen_window, den = 0;
  ld *qn = r->qn;   /* the raw q (no qk_norm with screening) */
  ld ds = 0x1p-22L * (1 + sqrtl((ld)Dq)), dsum = 0, dvsum = 0;
  unit(qn, Dq, eps);
  for (size_t x = 0; x < Dv; x++) o[x] = 0;
  int any_row = 0, row_bad = 0, vnorm = !(d->screen_flags & SMX_ATTN_SCREEN_NO_VNORM);
  int tanhn = !(d->screen_flags & SMX_ATTN_SCREEN_NO_TANHNORM), h_nan = 0;
  unsigned char *colbad = r->colbad;
  for (size_t x = 0; x < Dv; x++) colbad[x] = 0;
  for (size_t j = 0; j < Lk; j++) {
    int vbad = 0, vnan = 0;
    for (size_t x = 0; x < Dv; x++) {
      ld v = vv(c, r->b, r->g, j, x);
      vbad |= !fin(v);
      vnan |= v != v;
    }
    /* the Softmask's window (p_i - w, p_i] is part of the row's key range, as a window mask is (tile.c
     * never reads the keys outside it): a key beyond it is not seen, and its non-finite K does not reach
     * the row (smx_attention.h, screening) */
    int outside = 0;
    if (w > 0 && w != INFINITY) {
      ld dist = (ld)((long long)j - r->pos);
      outside = dist > 0 || dist <= -w;
    }
    if (!r->inr[j] || outside) {
      any_row |= vbad;   /* a masked key's non-finite V: no rule (0 * inf), and TanhNorm couples the columns */
      continue;
    }
    ld sim = 0, m = 1;
    for (size_t x = 0; x < Dq; x++) kn[x] = kv(c, r->b, r->g, j, x);
    unit(kn, Dq, eps);
    for (size_t x = 0; x < Dq; x++) sim += qn[x] * kn[x];
    ld a = 1 - (1 - sim) / rr;
    a = a != a ? a : a > 0 ? a * a : 0;   /* NaN reaches the row */
    if (w > 0 && w != INFINITY) {
      ld dist = (ld)((long long)j - r->pos);
      m = dist > 0 || dist <= -w ? 0 : 0.5L * (cosl(PI_L * dist / w) + 1);
    }
    for (size_t x = 0; x < Dv; x++) vn[x] = vv(c, r->b, r->g, j, x);
    if (!(d->screen_flags & SMX_ATTN_SCREEN_NO_VNORM)) unit(vn, Dv, eps);
    if (a * m == 0 && !(a == 0 && sim > 1 - rr - 4 * ds)) {
      /* a key that Trim drops: the header lets a NaN in its V reach the rows that see other keys of its
       * tile (0 x NaN in P V, as in PyTorch's kernels), and TanhNorm couples the columns */
      any_row |= vbad;
      continue;
    }
    {
      /* keys at the edge (a = 0 here, s within ds of 1 - r) may come out just inside */
      ld sa = a > 0 ? sqrtl(a) : 0, vm = 0;
      for (size_t x = 0; x < Dv; x++) if (fin(vn[x]) && fabsl(vn[x]) > vm) vm = fabsl(vn[x]);
      /* the Softmask near its far end, m = (cos + 1) / 2 with cos near -1, carries the f32 rounding of cos and
       * of its argument absolutely: 2^-21 */
      ld dm = w > 0 && w != INFINITY ? 0x1p-21L : 0;
      ld da = (2 * sa + 4 * ds / rr) * ds / rr * m + (a > 0 ? a : 0) * dm;
      dsum += da;
      dvsum += da * vm;
    }
    if (a * m == 0) {
      any_row |= vbad;   /* a trimmed key takes no part; what 0 * inf gives is not documented */
      continue;
    }
    /* a NaN weight makes all of h_i NaN; so does a non-finite v when V is normalised (the header: v / |v|
     * is NaN for a NaN and, in its column, for an infinity, and the library carries either as a NaN
     * weight). Without the normalisation, a non-finite v reaches its column of h_i; TanhNorm then couples
     * the columns: a NaN entry of h reaches all of O_i (smx_attention.h, NaN); of an infinite, not NaN, h
     * it has no documented rule (IEEE gives 0 x inf), so the other columns go unchecked below; with
     * neither, only the column the infinity reaches */
    if (a != a || (vbad && vnorm)) row_bad = h_nan = 1;
    else if (vbad) {
      for (size_t x = 0; x < Dv; x++) if (!fin(vv(c, r->b, r->g, j, x))) colbad[x] = 1;
      if (vnan && tanhn) row_bad = h_nan = 1;
    }
    den += a * m;
    for (size_t x = 0; x < Dv; x++) o[x] += a * m * vn[x];
  }
  *lse = den > 0 ? logl(den) : den == den ? -INFINITY : den;
  *lcls = den > 0 ? EXP_BOUND : den == den ? EXP_ZERO : EXP_NAN;
  *lext = den > 0 && fin(dsum) ? dsum / den : 0;
  *oext = fin(dvsum) ? dvsum : 0;
  ld ss = 0;
  for (size_t x = 0; x < Dv; x++) ss += o[x] * o[x];
  if (!(d->screen_flags & SMX_ATTN_SCREEN_NO_TANHNORM) && ss > 0 && fin(ss)) {
    ld f = tanhl(sqrtl(ss)) / sqrtl(ss);
    for (size_t x = 0; x < Dv; x++) o[x] *= f;
  }
  for (size_t x = 0; x < Dv; x++) ocls[x] = den > 0 ? EXP_BOUND : den == den ? EXP_ZERO : EXP_NAN;
  for (size_t x = 0; x < Dv; x++)
    if (ocls[x] == EXP_BOUND && !fin(o[x])) ocls[x] = EXP_NONFINITE;
  if (tanhn && !fin(ss) && ocls[0] == EXP_BOUND)   /* TanhNorm of an infinite h: no rule (without it: O = h) */
    for (size_t x = 0; x < Dv; x++) ocls[x] = EXP_NONFINITE;
  if (row_bad && den == den)
    for (size_t x = 0; x < Dv; x++) ocls[x] = EXP_NONFINITE;
  else if (den == den)
    for (size_t x = 0; x < Dv; x++) {
      if (colbad[x]) ocls[x] = EXP_NONFINITE;
      else if (tanhn && !h_nan && colbad_any(colbad, Dv)) ocls[x] = EXP_ANY;
    }
  if (any_row) {
    for (size_t x = 0; x < Dv; x++) ocls[x] = EXP_ANY;
    *lcls = EXP_ANY;
  }
}

void attn_reference(const attn_case *c, attn_expect *e) {
  const smx_attention_desc *d = &c->d;
  size_t Lk = d->len_k, Dq = d->dim_qk, Dv = d->dim_v, G = d->heads_kv ? d->heads_q / d->heads_kv : 1;
  int diff = d->diff_lambda != 0;
  size_t dqe = diff ? Dq / 2 : Dq;
  /* the header: the double options are used as floats (a scale below FLT_MIN / 2 is 0, which with a
   * non-finite q or k gives 0 x inf = NaN scores) */
  ld scale = d->scale != 0 ? (ld)(float)d->scale : 1 / sqrtl((ld)dqe);
  size_t big = (Lk > Dq ? Lk : Dq) + Dv + 1;
  ld *qn = malloc(big * sizeof *qn), *kn = malloc(big * sizeof *kn), *z = malloc(big * sizeof *z);
  ld *o2 = malloc(big * sizeof *o2), *vn = malloc(big * sizeof *vn);
  unsigned char *vis = malloc(Lk + 1), *inr = malloc(Lk + 1), *c2 = malloc(Dv + 1), *cb = malloc(Dv + 1);
  size_t nb = (Lk + 63) / 64;
  ld *bs = malloc((nb + 1) * sizeof *bs);
  unsigned char *sel = malloc(nb + 1);
  min_rowmax = INFINITY;
  max_rowmax = -INFINITY;
  min_score = INFINITY;
  for (size_t b = 0; b < d->batch; b++)
    for (size_t h = 0; h < d->heads_q; h++)
      for (size_t i = 0; i < d->len_q; i++) {
        rowctx r = { c, b, h, i, h / G, (b * d->heads_q + h) * d->len_q + i, 0, 0, 0, qn, vis, inr, sel, cb, 0 };
        attn_ref_range(d, i, &r.pos, &r.lo, &r.hi);
        ld ss = 0;
        for (size_t x = 0; x < Dq; x++) {
          qn[x] = qv(c, b, h, i, x);
          ss += qn[x] * qn[x];
        }
        if (d->qk_norm) {
          ld eps = d->qk_norm_eps != 0 ? (ld)d->qk_norm_eps : 1e-6L, inv = sqrtl(ss / (ld)Dq + eps);
          for (size_t x = 0; x < Dq; x++) qn[x] = qn[x] / inv * (c->qw ? c->qw[x] : 1);
        }
        for (size_t j = 0; j < Lk; j++) {
          int ok = (long long)j >= r.lo && (long long)j < r.hi;
          if (ok && d->radial_frame) ok = attn_ref_radial_ok(d->radial_frame, r.pos, (long long)j);
          if (ok && d->mask_kind == SMX_ATTN_MASK_BOOL) ok = c->keep[mask_at(c, b, h, i, j)] != 0;
          inr[j] = (unsigned char)ok;
          if (ok && d->mask_kind == SMX_ATTN_MASK_BIAS && c->bias[mask_at(c, b, h, i, j)] == -INFINITY) ok = 0;
          vis[j] = (unsigned char)ok;
          r.n_vis += (size_t)ok;
        }
        ld *o = e->o + r.row * Dv;
        unsigned char *ocls = e->o_cls + r.row * Dv;
        int tie = 0;
        if (d->nsa_topk) {   /* blocks held whole by [lo, hi), by scale <q, mean k>; the k best and the local block */
          for (size_t blk = 0; blk < nb; blk++) {
            size_t j0 = blk * 64, nk = Lk - j0 < 64 ? Lk - j0 : 64;
            bs[blk] = -INFINITY;
            sel[blk] = 0;
            if (!((long long)j0 >= r.lo && (long long)(j0 + nk) <= r.hi)) continue;
            ld sc = 0;
            for (size_t x = 0; x < Dq; x++) {
              ld mean = 0;
              for (size_t j = j0; j < j0 + nk; j++) mean += kv(c, b, r.g, j, x);
              sc += scale * qn[x] * (mean / (ld)nk);
            }
            bs[blk] = sc;
          }
          ld last = 0;
          size_t taken = 0;
          for (size_t kk = 0; kk < d->nsa_topk; kk++) {
            size_t best = nb;
            for (size_t blk = 0; blk < nb; blk++)
              if (!sel[blk] && bs[blk] != -INFINITY && (best == nb || bs[blk] > bs[best])) best = blk;
            if (best == nb) break;
            sel[best] = 1;
            last = bs[best];
            taken++;
          }
          /* the next best: a near tie with the last taken makes the choice f32's rounding's */
          if (taken == d->nsa_topk)
            for (size_t blk = 0; blk < nb; blk++)
              if (!sel[blk] && bs[blk] != -INFINITY && fabsl(bs[blk] - last) <= 1e-4L * (1 + fabsl(last))) tie = 1;
          if (r.hi > r.lo) sel[(size_t)(r.hi - 1) / 64] = 1;
          for (size_t j = 0; j < Lk; j++) if (!sel[j / 64]) vis[j] = 0;
        }
        e->o_extra[r.row] = e->l_extra[r.row] = 0;
        ld *lse = &e->lse[r.row];
        unsigned char *lcls = &e->l_cls[r.row];
        if (d->kind == SMX_ATTN_SCREEN) {
          screen_row(&r, o, ocls, lse, lcls, kn, vn, &e->o_extra[r.row], &e->l_extra[r.row]);
        } else if (d->kind == SMX_ATTN_LINEAR || d->kind == SMX_ATTN_COSFORMER || d->kind == SMX_ATTN_MALA) {
          linear_row(&r, o, ocls, lse, lcls, z, &e->o_extra[r.row], &e->l_extra[r.row]);
        } else {
          score_map(&r, 0, dqe, scale, o, ocls, lse, lcls, kn, z, &e->o_extra[r.row], &e->l_extra[r.row]);
          if (diff) {   /* O = O1 - lambda O2, the second map on the second halves; lse the first map's */
            ld l2, oe2, le2;
            unsigned char lc2;
            score_map(&r, dqe, dqe, scale, o2, c2, &l2, &lc2, kn, z, &oe2, &le2);
            e->o_extra[r.row] += fabsl((ld)d->diff_lambda) * oe2;
            for (size_t x = 0; x < Dv; x++) {
              unsigned char a = ocls[x], bcl = c2[x];
              o[x] = o[x] - (ld)d->diff_lambda * o2[x];
              if (a == EXP_ANY || bcl == EXP_ANY) ocls[x] = EXP_ANY;
              else if (a == EXP_NAN || bcl == EXP_NAN) ocls[x] = EXP_NAN;
              else if (a == EXP_NONFINITE || bcl == EXP_NONFINITE) ocls[x] = EXP_NONFINITE;
              else if (a == EXP_ZERO && bcl == EXP_ZERO) ocls[x] = EXP_ZERO;
              else ocls[x] = EXP_BOUND;
            }
          }
        }
        if (tie) {
          for (size_t x = 0; x < Dv; x++) ocls[x] = EXP_ANY;
          *lcls = EXP_ANY;
        }
        if (d->gate) {
          int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
          for (size_t x = 0; x < Dv; x++) o[x] *= 1 / (1 + expl(-c->gate[r.row * (ew ? Dv : 1) + (ew ? x : 0)]));
        }
      }
  e->min_rowmax = min_rowmax;
  e->max_rowmax = max_rowmax;
  e->min_score = min_score;
  free(qn); free(kn); free(z); free(o2); free(vn); free(vis); free(inr); free(c2); free(cb); free(bs); free(sel);
}
