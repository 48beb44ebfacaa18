/*
 * The long-double reference of the attention backward pass
 * (smx_attention_backward.h), from the composed form and never from the
 * library's algorithm: for each query row the scores z_ij with every option,
 * the softmax (with the sink in its denominator), O, then autograd by hand
 * through gate, P V, the softmax, the options and Q K^T. Beside each gradient
 * it keeps its magnitude M (the same sums on absolute values), which the
 * documented bound is relative to. Supports what the backward supports
 * (attn_bwd_case_ok).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_soak.h"

typedef long double ld;

int attn_bwd_case_ok(const smx_attention_desc *d) {
  return (d->kind == SMX_ATTN_SOFTMAX || d->kind == SMX_ATTN_SIGMOID || d->kind == SMX_ATTN_SOFTPICK) && !d->l2_distance && !d->nsa_topk &&
         !d->k_int8 && d->blasst_log_threshold == 0;
}

static ld sig(ld x) { return 1 / (1 + expl(-x)); }

/* softpick's dz at key z (row max m, shifted denominator den): w = relu(e^z - 1) / (e^m den), so
 * dz = e^{z - m} / den (1[z > 0] dP - sign(z) D), D = sum_j w_j dP_j; the eps term's derivative through m is
 * the caller's */
static ld spick_ds(ld z, ld m, ld den, ld dp, ld dd) {
  ld e = expl(z - m) / den;
  return e * (z > 0 ? dp - dd : z < 0 ? dd : 0);
}

/* QK-norm: rows x^ = x r w, r = 1 / sqrt(mean x^2 + eps), into xn (and r per row) */
static ld *norm_rows(const ld *x, size_t n, size_t D, ld eps, const ld *wt, ld *r) {
  ld *xn = malloc((n * D + 1) * sizeof(ld));
  for (size_t i = 0; i < n; i++) {
    ld ss = 0;
    for (size_t t = 0; t < D; t++) ss += x[i * D + t] * x[i * D + t];
    r[i] = 1 / sqrtl(ss / (ld)D + eps);
    for (size_t t = 0; t < D; t++) xn[i * D + t] = x[i * D + t] * r[i] * (wt ? wt[t] : 1);
  }
  return xn;
}

/* QK-norm's backward: gx (the gradient of x^) in place into that of x, r (dy - y mean(dy y)) with y = x r and
 * dy = gx w; its magnitude mx alike, r (|w| M + |y| mean(|w| M |y|)); the weights' gradient dw += gx y and its
 * magnitude mw += M |y| (dw, mw may be NULL) */
static void norm_back(const ld *x, size_t n, size_t D, const ld *wt, const ld *r, ld *gx, ld *mx, ld *dw, ld *mw) {
  for (size_t i = 0; i < n; i++) {
    ld dot = 0, adot = 0;
    for (size_t t = 0; t < D; t++) {
      ld y = x[i * D + t] * r[i], w = wt ? wt[t] : 1;
      dot += gx[i * D + t] * w * y;
      adot += mx[i * D + t] * fabsl(w * y);
      if (dw) dw[t] += gx[i * D + t] * y, mw[t] += mx[i * D + t] * fabsl(y);
    }
    for (size_t t = 0; t < D; t++) {
      ld y = x[i * D + t] * r[i], w = wt ? wt[t] : 1;
      gx[i * D + t] = r[i] * (gx[i * D + t] * w - y * dot / (ld)D);
      mx[i * D + t] = r[i] * (mx[i * D + t] * fabsl(w) + fabsl(y) * adot / (ld)D);
    }
  }
}

void attn_reference_backward(const attn_case *c, const long double *dO, attn_grad_ref *g) {
  const smx_attention_desc *d = &c->d;
  if (d->diff_lambda != 0) {   /* two maps: through two one-map cases (attn_ref_bwd_diff.c) */
    attn_reference_backward_diff(c, dO, g);
    return;
  }
  size_t B = d->batch, Hq = d->heads_q, Hkv = d->heads_kv, Lq = d->len_q, Lk = d->len_k, D = d->dim_qk,
         Dv = d->dim_v, grp = Hkv ? Hq / Hkv : 1;
  ld scale = (ld)(float)(d->scale != 0 ? d->scale : 1.0 / sqrt((double)D));
  ld cap = (ld)(float)d->softcap, ss = (ld)(float)d->ssmax_s, sb = (ld)(float)d->sigmoid_bias;
  int sigk = d->kind == SMX_ATTN_SIGMOID, pick = d->kind == SMX_ATTN_SOFTPICK;
  int ew = (d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) != 0;
  size_t nq = B * Hq * Lq * D, nk = B * Hkv * Lk * D, nv = B * Hkv * Lk * Dv;
  memset(g->dq, 0, nq * sizeof(ld));
  memset(g->mq, 0, nq * sizeof(ld));
  memset(g->dk, 0, nk * sizeof(ld));
  memset(g->mk, 0, nk * sizeof(ld));
  memset(g->dv, 0, nv * sizeof(ld));
  memset(g->mv, 0, nv * sizeof(ld));
  if (g->dbias) memset(g->dbias, 0, B * Hq * Lq * Lk * sizeof(ld)), memset(g->mbias, 0, B * Hq * Lq * Lk * sizeof(ld));
  if (g->dsinks) memset(g->dsinks, 0, Hq * sizeof(ld)), memset(g->msinks, 0, Hq * sizeof(ld));
  if (g->dfox) memset(g->dfox, 0, B * Hq * Lk * sizeof(ld)), memset(g->mfox, 0, B * Hq * Lk * sizeof(ld));
  /* a row that sees no key (and no sink) has O = 0: its dgate is 0 */
  size_t ng = B * Hq * Lq * ((d->gate_flags & SMX_ATTN_GATE_ELEMENTWISE) ? Dv : 1);
  if (g->dgate) memset(g->dgate, 0, ng * sizeof(ld)), memset(g->mgate, 0, ng * sizeof(ld));
  ld *x = calloc(Lk + 1, sizeof(ld)), *z = calloc(Lk + 1, sizeof(ld)), *w = calloc(Lk + 1, sizeof(ld));
  ld *dp = calloc(Lk + 1, sizeof(ld)), *adp = calloc(Lk + 1, sizeof(ld)), *zmag = calloc(Lk + 1, sizeof(ld));
  ld *omag = calloc(Dv + 1, sizeof(ld)), *oin = calloc(Dv + 1, sizeof(ld)), *doin = calloc(Dv + 1, sizeof(ld)), *sg = calloc(Dv + 1, sizeof(ld));
  unsigned char *vis = calloc(Lk + 1, 1);
  /* the stored O's rounding below a 16-bit type's normal range (half its smallest subnormal, absolute):
   * dgate = dO O_stored (1 - sigmoid(g)) carries it into (1 - sigmoid(g)) |dO| per element (kept apart and
   * added to mgate at the end over 2^-16, the smallest relative bound it is compared with), and D into every
   * dS (below) */
  ld hsub = d->dtype == SMX_ATTN_F16 ? 0x1p-25L : d->dtype == SMX_ATTN_BF16 ? 0x1p-134L : 0;
  ld *xg = g->dgate ? calloc(ng + 1, sizeof(ld)) : NULL;
  ld gomax = 0;
  /* QK-norm: the products see the normalised rows; their gradients go back through the norm at the end */
  const ld *Q = c->q, *K = c->k;
  ld *qn = NULL, *kn = NULL, *qr = NULL, *kr = NULL;
  if (d->qk_norm) {
    ld eps = d->qk_norm_eps != 0 ? (ld)d->qk_norm_eps : 1e-6L;
    qr = malloc((B * Hq * Lq + 1) * sizeof(ld));
    kr = malloc((B * Hkv * Lk + 1) * sizeof(ld));
    Q = qn = norm_rows(c->q, B * Hq * Lq, D, eps, c->qw, qr);
    K = kn = norm_rows(c->k, B * Hkv * Lk, D, eps, c->kw, kr);
  }
  if (g->dqw) memset(g->dqw, 0, D * sizeof(ld)), memset(g->mqw, 0, D * sizeof(ld));
  if (g->dkw) memset(g->dkw, 0, D * sizeof(ld)), memset(g->mkw, 0, D * sizeof(ld));
  for (size_t b = 0; b < B; b++)
    for (size_t h = 0; h < Hq; h++)
      for (size_t i = 0; i < Lq; i++) {
        size_t gg = h / grp, row = (b * Hq + h) * Lq + i;
        const ld *q = Q + row * D;
        long long pos, lo, hi;
        attn_ref_range(d, i, &pos, &lo, &hi);
        size_t n = 0;
        for (size_t j = 0; j < Lk; j++) {
          size_t mi = ((b * Hq + h) * Lq + i) * Lk + j;
          vis[j] = (long long)j >= lo && (long long)j < hi &&
                   (!d->radial_frame || attn_ref_radial_ok(d->radial_frame, pos, (long long)j)) &&
                   (d->mask_kind != SMX_ATTN_MASK_BOOL || c->keep[mi]) &&
                   (d->mask_kind != SMX_ATTN_MASK_BIAS || c->bias[mi] != -INFINITY);
          n += vis[j];
        }
        ld fac = ss > 0 ? (n > 0 ? ss * logl((ld)n) : 1) : 1;
        ld m = -INFINITY;
        for (size_t j = 0; j < Lk; j++) {
          if (!vis[j]) continue;
          const ld *k = K + ((b * Hkv + gg) * Lk + j) * D;
          ld dot = 0, mag = 0;
          for (size_t t = 0; t < D; t++) {
            dot += q[t] * k[t];
            mag += fabsl(q[t] * k[t]);
          }
          x[j] = scale * dot;
          ld y = cap > 0 ? cap * tanhl(x[j] / cap) : x[j];
          z[j] = y * fac;
          zmag[j] = scale * mag * fac;
          size_t mi = ((b * Hq + h) * Lq + i) * Lk + j;
          if (d->mask_kind == SMX_ATTN_MASK_BIAS) z[j] += c->bias[mi], zmag[j] += fabsl(c->bias[mi]);
          if (d->alibi) {
            ld a = c->slopes[h] * (ld)llabs(pos - (long long)j);
            z[j] -= a, zmag[j] += fabsl(a);
          }
          if (d->fox) {
            ld f = c->fox[(b * Hq + h) * Lk + (size_t)pos] - c->fox[(b * Hq + h) * Lk + j];
            z[j] += f, zmag[j] += fabsl(c->fox[(b * Hq + h) * Lk + (size_t)pos]) + fabsl(c->fox[(b * Hq + h) * Lk + j]);
          }
          if (!isnan(m) && (isnan(z[j]) || z[j] > m)) m = z[j];
        }
        ld sk = d->sinks ? c->sinks[h] : -INFINITY;
        ld mm = isnan(m) ? m : (sk > m ? sk : m), den = 0;
        if (mm == -INFINITY) {   /* no key, no sink: O = 0, no gradient at all */
          g->rowz[row] = 1;
          continue;
        }
        g->rowz[row] = 0;
        /* softpick: den = sum_j |e^{z_j - m} - e^{-m}| + eps (the eps of the reference code after the shift
         * by m); kappa = sum_j (e^{z_j - m} + e^{-m}) / den, what the cancellation of each term makes of the
         * f32 rounding relatively (the forward's lse carries 2^-21 kappa), 1 for the other kinds */
        ld kappa = 1, em = pick ? expl(-mm) : 0;
        size_t first = Lk;   /* softpick: the first key at the maximum, where eps e^m has its derivative */
        for (size_t j = 0; j < Lk; j++)
          if (vis[j]) {
            den += pick ? fabsl(expl(z[j] - mm) - em) : expl(z[j] - mm);
            if (first == Lk && z[j] == m) first = j;
          }
        if (pick) {
          den += (ld)1e-8f;
          kappa = (ld)1e-8f;
          for (size_t j = 0; j < Lk; j++)
            if (vis[j]) kappa += expl(z[j] - mm) + em;
          kappa /= den;
        }
        ld wsink = d->sinks ? expl(sk - mm) : 0;
        den += wsink;
        wsink /= den;
        memset(oin, 0, Dv * sizeof(ld));
        memset(omag, 0, Dv * sizeof(ld));
        ld zmax = 0;
        for (size_t j = 0; j < Lk; j++) {
          if (!vis[j]) continue;
          /* sigmoid attention: w = sigmoid(z + b), not normalised */
          w[j] = sigk ? sig(z[j] + sb) : pick ? fmaxl(expl(z[j] - mm) - em, 0) / den : expl(z[j] - mm) / den;
          if (zmag[j] > zmax) zmax = zmag[j];
          const ld *v = c->v + ((b * Hkv + gg) * Lk + j) * Dv;
          for (size_t t = 0; t < Dv; t++) oin[t] += w[j] * v[t];
          if (pick)   /* O's terms before softpick's cancellation, with the logit's rounding */
            for (size_t t = 0; t < Dv; t++) omag[t] += (expl(z[j] - mm) + em) / den * kappa * (1 + zmag[j] / 32) * fabsl(v[t]);
        }
        g->zmax[row] = zmax;
        const ld *dor = dO + row * Dv;
        ld dd = 0, add = 0, dgs = 0, adgs = 0;
        /* dgate is formed from the stored O, whose error is relative to the largest |O| of the tensor (the
         * forward's bound; mgate is multiplied by it at the end), plus what the logits' rounding adds (the
         * forward's 2^-21 Z term: 2^-16 (Z / 32)) */
        ld omax = 1 + zmax / 32;
        for (size_t t = 0; t < Dv; t++) gomax = fabsl(oin[t]) > gomax ? fabsl(oin[t]) : gomax;
        for (size_t t = 0; t < Dv; t++) {
          sg[t] = d->gate ? sig(c->gate[row * (ew ? Dv : 1) + (ew ? t : 0)]) : 1;
          doin[t] = dor[t] * sg[t];
          dd += doin[t] * oin[t];
          if (d->gate) {
            ld dg = dor[t] * oin[t] * sg[t] * (1 - sg[t]), adg = fabsl(dor[t]) * omax * sg[t] * (1 - sg[t]);
            xg[ew ? row * Dv + t : row] += fabsl(dor[t]) * (1 - sg[t]) * hsub;
            /* softpick's weights need not sum to 1 and cancel near z = 0: O's error is relative to its terms'
             * magnitudes (2^-21 of them in the forward), not to the largest |O| */
            if (pick) xg[ew ? row * Dv + t : row] += fabsl(dor[t]) * sg[t] * (1 - sg[t]) * 0x1p-16L * omag[t];
            if (ew) {
              g->dgate[row * Dv + t] = dg;
              g->mgate[row * Dv + t] = adg;
            }
            dgs += dg;
            adgs += adg;
          }
        }
        if (d->gate && !ew) g->dgate[row] = dgs, g->mgate[row] = adgs;
        for (size_t j = 0; j < Lk; j++) {
          if (!vis[j]) continue;
          const ld *v = c->v + ((b * Hkv + gg) * Lk + j) * Dv;
          dp[j] = adp[j] = 0;
          for (size_t t = 0; t < Dv; t++) {
            dp[j] += doin[t] * v[t];
            adp[j] += fabsl(doin[t] * v[t]);
          }
          add += (pick ? (expl(z[j] - mm) + em) / den * kappa * (1 + zmag[j] / 32) : w[j]) * adp[j];
        }
        /* D = sum dO O_stored: a stored O below the 16-bit type's normal range is off by up to hsub, absolute
         * (the soak found dq 1.002x its bound on a gated f16 row); in |D| over 2^-16, the smallest relative
         * bound |D| is multiplied by */
        for (size_t t = 0; t < Dv; t++) add += fabsl(dor[t]) * hsub * 0x1p16L;
        if (d->sinks) {
          g->dsinks[h] -= wsink * dd;
          g->msinks[h] += wsink * add;
        }
        ld fr = 0, afr = 0;
        for (size_t j = 0; j < Lk; j++) {
          if (!vis[j]) continue;
          /* the weight as it carries the rounding of its logit (2^-24 Z relative, a few times): w (1 + Z / 32) */
          ld wm = w[j] * (1 + zmag[j] / 32), ds = w[j] * (dp[j] - dd), ads = wm * (adp[j] + add);
          if (pick) {   /* the magnitudes as computed for `add` below */
            wm = (expl(z[j] - mm) + em) / den * kappa * (1 + zmag[j] / 32);
            ds = spick_ds(z[j], mm, den, dp[j], dd) - (j == first ? (ld)1e-8f / den * dd : 0);
            ld e = expl(z[j] - mm) / den;
            ads = e * kappa * (1 + zmag[j] / 32) * (adp[j] + add);
            /* z within its f32 rounding of 0: the kink of relu and |.| may fall on either side */
            if (fabsl(z[j]) <= 0x1p-20L * zmag[j]) ads += e * (adp[j] + 2 * add) * 0x1p16L;
          }
          if (sigk) {   /* dz = w (1 - w) dP, no D; 1 - w as sigmoid(-(z + b)) (1 - w rounds to 2^-64 steps) */
            ld wn = sig(-(z[j] + sb));
            ds = w[j] * wn * dp[j];
            ads = wm * wn * (1 + zmag[j] / 32) * adp[j];   /* 1 - w carries the logit's rounding too */
          }
          size_t mi = ((b * Hq + h) * Lq + i) * Lk + j;
          if (g->dbias) g->dbias[mi] = ds, g->mbias[mi] = ads;
          if (d->fox) {
            fr += ds, afr += ads;
            g->dfox[(b * Hq + h) * Lk + j] -= ds;
            g->mfox[(b * Hq + h) * Lk + j] += ads;
          }
          ld ch = fac;
          if (cap > 0) {
            ld th = tanhl(x[j] / cap);
            ch *= 1 - th * th;
          }
          ld dx = ds * ch, adx = ads * fabsl(ch);
          const ld *k = K + ((b * Hkv + gg) * Lk + j) * D;
          for (size_t t = 0; t < D; t++) {
            g->dq[row * D + t] += scale * dx * k[t];
            g->mq[row * D + t] += scale * adx * fabsl(k[t]);
            g->dk[((b * Hkv + gg) * Lk + j) * D + t] += scale * dx * q[t];
            g->mk[((b * Hkv + gg) * Lk + j) * D + t] += scale * adx * fabsl(q[t]);
          }
          for (size_t t = 0; t < Dv; t++) {
            g->dv[((b * Hkv + gg) * Lk + j) * Dv + t] += w[j] * doin[t];
            g->mv[((b * Hkv + gg) * Lk + j) * Dv + t] += wm * fabsl(doin[t]);
          }
        }
        if (d->fox) {
          g->dfox[(b * Hq + h) * Lk + (size_t)pos] += fr;
          g->mfox[(b * Hq + h) * Lk + (size_t)pos] += afr;
        }
      }
  if (g->dgate)
    for (size_t e = 0; e < ng; e++) g->mgate[e] = g->mgate[e] * gomax + xg[e] * 0x1p16L;
  if (d->qk_norm) {
    norm_back(c->q, B * Hq * Lq, D, c->qw, qr, g->dq, g->mq, g->dqw, g->mqw);
    norm_back(c->k, B * Hkv * Lk, D, c->kw, kr, g->dk, g->mk, g->dkw, g->mkw);
  }
  free(qn), free(kn), free(qr), free(kr);
  free(xg);
  free(x), free(z), free(w), free(dp), free(adp), free(zmag), free(oin), free(omag), free(doin), free(sg), free(vis);
}
