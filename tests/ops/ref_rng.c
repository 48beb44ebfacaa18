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
#include <math.h>

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
