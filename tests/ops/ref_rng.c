/*
 * Long-double references of the operations that draw noise (include/smx/smx_topk.h, smx_noisy.h): the noise is
 * rebuilt from the public generator (smx_philox4x32, smx_noisy_softmax_noise) at the row's number c->row, as
 * the headers define it; what the library computes from it is the reference's, in long double.
 *
 * Gumbel-softmax: z_i = x_i + g_i (g_i = -log(-log U_i) in double, the sum in double) rounded to float, then
 * softmax's reference, policy and bound on z at T = tau (the family's temperature); the hard form is the
 * one-hot of argmax z (exact). Noisy Softmax (ANNEALED, norms r = |x_t| + 1 as the adapter passes them): the
 * noisy target f~_t formed in double as the header says, then cross-entropy on the row with f_t replaced by it
 * in long double, the losses' common bound (ref_losses.c).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "op.h"

/* the Gumbel noise of column i, as smx_topk.h defines it (counter (i, row, step)) */
static double gumbel_noise(const ref_ctx *c, size_t i) {
  uint32_t ctr[4] = { (uint32_t)i, (uint32_t)c->row, OPS_RNG_STEP, 0 }, w[4];
  smx_philox4x32(OPS_RNG_SEED, ctr, w);
  double u = ((double)((uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32) + 0.5) * 0x1p-53;
  return -log(-log(u));
}

/* z_i: x_i + g_i in double, rounded to float (beyond the float range: +-inf) */
static long double gz(const ref_ctx *c, size_t i) {
  double v = (double)ref_in(c, 0, i) + gumbel_noise(c, i);
  return dt_round(DT_F32, (long double)v);
}

/* softmax's row state (ref_softmax.c) over z at T = tau; ex[0] = the index of the first maximal z */
static void gumbel_state(ref_ctx *c) {
  long double s = 0.0L;
  c->nan = 0;
  c->kinf = 0;
  c->m = -INFINITY;
  c->ex[0] = -1;
  for (size_t i = 0; i < c->n; i++) {
    long double v = gz(c, i);
    if (v != v) c->nan = 1;
    else if (v == INFINITY) { if (!c->kinf++) c->ex[0] = (long double)i; }
    else if (v > c->m) { c->m = v; if (!c->kinf) c->ex[0] = (long double)i; }
  }
  c->masked = c->m == -INFINITY && c->kinf == 0;
  c->logd = -INFINITY;
  if (c->nan || c->kinf || c->masked) return;
  for (size_t i = 0; i < c->n; i++) s += expl((gz(c, i) - c->m) / c->T);
  c->logd = logl(s);
}

void ref_gumbel_row(ref_ctx *c) { gumbel_state(c); }
void ref_gumbel_hard_row(ref_ctx *c) { gumbel_state(c); }

long double ref_gumbel_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = 0;
  if (c->nan) return NAN;
  long double z = gz(c, i);
  if (c->kinf) return z == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : 0.0L;
  *aux = (z - c->m) / c->T;
  return expl(*aux - c->logd);
}

/* one-hot of the first maximal z; a NaN row all NaN; no z above -inf: 0 (NaN with the flag) */
long double ref_gumbel_hard_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = 0;
  if (c->nan) return NAN;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : 0.0L;
  return (long double)i == c->ex[0] ? 1.0L : 0.0L;
}

/* ----------------------------------------------------------- Noisy Softmax */
/* ex[0] = a = alpha |xi|, ex[1] = dA/df_t, ex[2] = f~_t, ex[4] = the loss (m, logd: the noisy row's lse, m + logd),
 * ex[5] = 0 (no terms cancel beyond the loss's size); c->nan marks a NaN row (loss and gradient NaN). */
void ref_noisy_row(ref_ctx *c) {
  size_t n = c->n, t = (size_t)c->target;
  double xi = 0;
  c->any = 0;
  c->nan = 0;
  c->ex[5] = 0;
  smx_noisy_softmax_noise(OPS_RNG_SEED, OPS_RNG_STEP, c->row, 1, &xi);
  if (n == 0) { c->nan = 1; c->ex[4] = NAN; return; }   /* refused (OP_EMPTY_INVALID) */
  long double ft = ref_in(c, 0, t);
  int bad = 0, live = 0;
  for (size_t j = 0; j < n; j++) {
    long double v = ref_in(c, 0, j);
    if (v != v || v == INFINITY) bad = 1;
    if (j != t && v > -INFINITY) live = 1;
  }
  /* the norm the adapter passes (its type's rounding of |f_t| + 1; 0 for an infinite or NaN f_t) */
  double r = isfinite(ft) ? (double)dt_round(c->dt, fabsl(ft) + 1) : 0.0;
  /* f~_t in double, as the library forms it (smx_noisy.h) */
  double a = OPS_NOISY_ALPHA * fabs(xi), f = (double)ft, amp = r - f, da_df = 0;
  if (amp > 0.0) da_df = -1.0;
  else amp = 0.0;
  double fn = a == 0.0 ? f : f - a * amp;
  c->ex[0] = a;
  c->ex[1] = da_df;
  c->ex[2] = fn;
  if (bad || (!live && fn == -INFINITY)) { c->nan = 1; c->ex[4] = NAN; return; }
  /* m = the largest of f~_t and the others (jm: which; n = the target); s = the sum without that one term, so
   * that log1p(s) keeps the loss where p~_t is 1 - 1e-26 */
  long double m = fn, s = 0.0L;
  size_t jm = n;
  for (size_t j = 0; j < n; j++)
    if (j != t && ref_in(c, 0, j) > m) { m = ref_in(c, 0, j); jm = j; }
  if (jm != n && fn > -INFINITY) s += expl((long double)fn - m);
  for (size_t j = 0; j < n; j++)
    if (j != t && j != jm) s += expl(ref_in(c, 0, j) - m);
  /* the lse as m + log1p(s), kept apart (m + log s rounds log s away at m = 1e30) */
  c->m = m;
  c->logd = log1pl(s);
  c->ex[4] = fn == -INFINITY ? INFINITY : (m - (long double)fn) + c->logd;
}

/* d/df_j = p~_j, d/df_t = (p~_t - 1)(1 - a dA/df_t); aux = G, the largest |gradient|: the target's
 * (|p~_t - 1| (1 - a dA/df_t) >= 1 - p~_t, the sum of the others) */
long double ref_noisy_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  long double pm1 = expm1l(-c->ex[4]);   /* p~_t - 1 */
  long double gt = pm1 * (1.0L - c->ex[0] * c->ex[1]);
  *aux = fabsl(gt);
  if (c->nan) return NAN;
  if ((int64_t)i == c->target) return gt;
  return expl((ref_in(c, 0, i) - c->m) - c->logd);
}

/* ------------------------------------------------------ mixture of softmaxes */
/* component 1: the row reversed */
void prep_mixture(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  (void)o;
  for (size_t i = 0; i < n; i++) {
    dt_put(dt, in0, i, x[i]);
    dt_put(dt, in1, i, x[n - 1 - i]);
  }
}

/* At temperature T = c->T (the components' logits divided by it, w not). Per component k: ex[k] = its max m_k,
 * ex[2 + k] = log sum exp((x - m_k) / T) (m_k = -inf: every entry -inf);
 * ex[4 + k] = log pi_k. c->nan: a NaN in a component (a NaN row); c->any: a +inf entry (the header leaves
 * it undefined). */
void ref_mixture_row(ref_ctx *c) {
  long double w[2] = { OPS_MIX_W0, OPS_MIX_W1 }, mw = fmaxl(w[0], w[1]);
  long double lw = mw + logl(expl(w[0] - mw) + expl(w[1] - mw));
  c->nan = 0;
  c->any = 0;
  for (int k = 0; k < 2; k++) {
    long double m = -INFINITY, s = 0.0L;
    for (size_t i = 0; i < c->n; i++) {
      long double v = ref_in(c, k, i);
      if (v != v) c->nan = 1;
      else if (v == INFINITY) c->any = 1;
      else if (v > m) m = v;
    }
    if (m > -INFINITY)
      for (size_t i = 0; i < c->n; i++) s += expl((ref_in(c, k, i) - m) / c->T);
    c->ex[k] = m;
    c->ex[2 + k] = m > -INFINITY ? logl(s) : 0.0L;
    c->ex[4 + k] = w[k] - lw;
  }
}

/* y_i = log sum_k pi_k softmax(x_k / T)_i; aux = the size of the terms the library's double arithmetic rounds:
 * max over the live components of |x_ki - m_k| / T + log s_k + |log pi_k| */
long double ref_mixture_at(const ref_ctx *c, size_t i, long double *aux) {
  long double t[2], m = -INFINITY, s = 0.0L;
  *aux = 0;
  if (c->nan) return NAN;
  for (int k = 0; k < 2; k++) {
    long double x = ref_in(c, k, i);
    long double u = (x - c->ex[k]) / c->T;
    t[k] = c->ex[k] == -INFINITY || x == -INFINITY ? -INFINITY : c->ex[4 + k] + (u - c->ex[2 + k]);
    if (t[k] > -INFINITY) *aux = fmaxl(*aux, fabsl(u) + c->ex[2 + k] + fabsl(c->ex[4 + k]));
    m = fmaxl(m, t[k]);
  }
  if (m == -INFINITY) return -INFINITY;
  for (int k = 0; k < 2; k++) s += expl(t[k] - m);
  return m + logl(s);
}

/* the header's: 8 DBL_EPSILON (|ref| + aux + 1), plus the rounding to float (2^-24 |ref|, half the smallest
 * subnormal) for f32 */
double bound_mixture(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  if (c->any) return INFINITY;
  double b = 8.0 * 0x1p-52 * (double)(fabsl(ref) + aux + 1.0L);
  return od == DT_F64 ? b : b + 0x1p-24 * (double)fabsl(ref) + 0x1p-150;
}

/* ------------------------------------------------- mixture of softmaxes, backward */
/* in[0]: component 0 (component 1 is it reversed), in[1]: dy (prep_vn_backward). The gradients of the header's
 * formula in long double at T = c->T, with q_ki = pi_k softmax(x_k / T)_i / p_i (0 where p_i = 0: y_i = -inf does
 * not move):
 *   dx_ki = (dy_i q_ki - softmax(x_k / T)_i D_k) / T, D_k = sum_j dy_j q_kj;  dw_k = sum_i dy_i (q_ki - pi_k) over
 *   p_i > 0.
 * Row state: ex[0..5] the forward's; ex[6 + k] = D_k, ex[8 + k] = G_k = sum_j |dy_j| q_kj, ex[10] = the largest
 * A_i of the forward's bound, ex[11] = n (the sums' length). */
static long double mix_x(const ref_ctx *c, int k, size_t i) { return ref_in(c, 0, k ? c->n - 1 - i : i); }
static long double mix_dy(const ref_ctx *c, size_t i) { return ref_in(c, 1, i); }

/* log softmax(x_k / T)_i (-inf for a -inf entry or a component of all -inf) */
static long double mix_ls(const ref_ctx *c, int k, size_t i) {
  long double x = mix_x(c, k, i);
  return c->ex[k] == -INFINITY || x == -INFINITY ? -INFINITY : (x - c->ex[k]) / c->T - c->ex[2 + k];
}

/* the forward's y_i, and q_ki (0 where y_i = -inf) */
static long double mix_q(const ref_ctx *c, int k, size_t i, long double y) {
  long double ls = mix_ls(c, k, i);
  return y == -INFINITY || ls == -INFINITY ? 0.0L : expl(c->ex[4 + k] + ls - y);
}

/* the mixture's row state (ref_mixture_row) on a view whose in[1] is component 1 */
static void mix_forward_state(ref_ctx *c, long double **y) {
  size_t n = c->n;
  *y = malloc((n ? n : 1) * sizeof(long double));
  if (!*y) abort();
  ref_ctx f = *c;
  /* ref_mixture_row reads in[1] through ref_in in the row's dtype: give it component 1 in that dtype */
  void *buf = malloc((n ? n : 1) * dt_size(c->dt));
  if (!buf) abort();
  for (size_t i = 0; i < n; i++) dt_put(c->dt, buf, i, mix_x(c, 1, i));
  f.in[1] = buf;
  ref_mixture_row(&f);
  for (int e = 0; e < 6; e++) c->ex[e] = f.ex[e];
  c->nan = f.nan;
  c->any = f.any;
  c->ex[10] = 0.0L;
  for (size_t i = 0; i < n; i++) {
    long double a;
    (*y)[i] = ref_mixture_at(&f, i, &a);
    if (a > c->ex[10]) c->ex[10] = a;
  }
  free(buf);
}

void ref_mixture_backward_row(ref_ctx *c) {
  long double *y;
  mix_forward_state(c, &y);
  for (int k = 0; k < 2; k++) {
    long double d = 0.0L, g = 0.0L;
    for (size_t j = 0; j < c->n; j++) {
      long double q = mix_q(c, k, j, y[j]);
      d += mix_dy(c, j) * q;
      g += fabsl(mix_dy(c, j)) * q;
    }
    c->ex[6 + k] = d;
    c->ex[8 + k] = g;
  }
  c->ex[11] = (long double)c->n;
  free(y);
}

/* dx of component k at i; aux = the size of its terms, |dy_i| q_ki + s_ki G_k */
static long double mix_dx_at(const ref_ctx *c, int k, size_t i, long double *aux) {
  *aux = 0.0L;
  if (c->nan) return NAN;
  long double t[2], m = -INFINITY;   /* y_i, as ref_mixture_at forms it from the two components */
  for (int q = 0; q < 2; q++) {
    long double ls = mix_ls(c, q, i);
    t[q] = ls == -INFINITY ? -INFINITY : c->ex[4 + q] + ls;
    m = fmaxl(m, t[q]);
  }
  long double yi = m == -INFINITY ? -INFINITY : m + logl(expl(t[0] - m) + expl(t[1] - m));
  long double q = mix_q(c, k, i, yi), ls = mix_ls(c, k, i), s = ls == -INFINITY ? 0.0L : expl(ls);
  *aux = (fabsl(mix_dy(c, i)) * q + s * c->ex[8 + k]) / c->T;
  return (mix_dy(c, i) * q - s * c->ex[6 + k]) / c->T;
}
long double ref_mixture_dx0_at(const ref_ctx *c, size_t i, long double *aux) { return mix_dx_at(c, 0, i, aux); }

/* dw_k = D_k - pi_k sum dy over the entries with p_i > 0; aux = G_k + pi_k sum |dy| there */
static long double mix_dw_at(const ref_ctx *c, int k, long double *aux) {
  *aux = 0.0L;
  if (c->nan) return NAN;
  long double s = 0.0L, sa = 0.0L;
  for (size_t i = 0; i < c->n; i++) {
    int live = mix_ls(c, 0, i) > -INFINITY || mix_ls(c, 1, i) > -INFINITY;
    if (live) { s += mix_dy(c, i); sa += fabsl(mix_dy(c, i)); }
  }
  long double pi = expl(c->ex[4 + k]);
  *aux = c->ex[8 + k] + pi * sa;
  return c->ex[6 + k] - pi * s;
}
long double ref_mixture_dw1_at(const ref_ctx *c, size_t i, long double *aux) { (void)i; return mix_dw_at(c, 1, aux); }

/* the gradients' bound (smx_multi.h): 16 DBL_EPSILON (1 + A) (n + 16) times the size of the terms, plus the smallest
 * normal of the arithmetic (products of subnormals); f32 adds its rounding (2^-24 |ref|, half the smallest
 * subnormal) */
double bound_mixture_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  if (c->any) return INFINITY;
  double b = 16.0 * 0x1p-52 * (double)((1.0L + c->ex[10]) * (c->ex[11] + 16.0L) * aux) + DBL_MIN;
  return od == DT_F64 ? b : b + 0x1p-24 * (double)fabsl(ref) + 0x1p-150;
}
