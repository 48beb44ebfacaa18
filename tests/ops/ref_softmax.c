/*
 * Long-double references and the documented bounds (include/smx/smx.h) of
 * softmax, log-softmax and log-sum-exp, special-value policy included: the
 * reference itself follows the policy, so NaN rows, -inf masks, all -inf rows
 * (with and without SMX_FLAG_MASKED_ROW_NAN) and +inf entries are checked by
 * the same comparison as ordinary rows.
 */
#include <math.h>

#include "op.h"

long double ref_in(const ref_ctx *c, int which, size_t i) { return dt_get(c->dt, c->in[which], i); }

void ref_row_facts(ref_ctx *c) {
  c->nan = 0;
  c->kinf = 0;
  c->m = -INFINITY;
  for (size_t i = 0; i < c->n; i++) {
    long double v = ref_in(c, 0, i);
    if (v != v) c->nan = 1;
    else if (v == INFINITY) c->kinf++;
    else if (v > c->m) c->m = v;
  }
  c->masked = c->m == -INFINITY && c->kinf == 0;
}

void ref_softmax_state(ref_ctx *c) {
  ref_row_facts(c);
  c->logd = -INFINITY;
  if (c->nan || c->kinf || c->masked) return;
  /* blocked sum, so that 2^26 terms keep the long double's precision */
  long double s = 0.0L, blk = 0.0L;
  for (size_t i = 0; i < c->n; i++) {
    blk += expl((ref_in(c, 0, i) - c->m) / c->T);
    if ((i & 4095) == 4095) { s += blk; blk = 0.0L; }
  }
  c->logd = logl(s + blk);
}

void ref_sm_row(ref_ctx *c) { ref_softmax_state(c); }

/* The policy outcome of element i, or 0 when the element is an ordinary one. */
static int special(const ref_ctx *c, size_t i, int log_form, long double *out) {
  if (c->nan) { *out = NAN; return 1; }
  if (c->kinf) {
    int hit = ref_in(c, 0, i) == INFINITY;
    *out = log_form ? (hit ? -logl((long double)c->kinf) : -INFINITY) : (hit ? 1.0L / (long double)c->kinf : 0.0L);
    return 1;
  }
  if (c->masked) {
    *out = (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : log_form ? -INFINITY : 0.0L;
    return 1;
  }
  return 0;
}

long double ref_softmax_at(const ref_ctx *c, size_t i, long double *aux) {
  long double r;
  *aux = 0;
  if (special(c, i, 0, &r)) return r;
  *aux = (ref_in(c, 0, i) - c->m) / c->T;
  return expl(*aux - c->logd);
}

long double ref_log_softmax_at(const ref_ctx *c, size_t i, long double *aux) {
  long double r;
  *aux = 0;
  if (special(c, i, 1, &r)) return r;
  return (ref_in(c, 0, i) - c->m) / c->T - c->logd;
}

long double ref_lse_at(const ref_ctx *c, size_t i, long double *aux) {
  (void)i;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) return INFINITY;
  if (c->n > 0 && c->masked && (c->flags & SMX_FLAG_MASKED_ROW_NAN)) return NAN;
  if (c->masked) return -INFINITY;
  return c->m / c->T + c->logd;
}

/* (4 + |t|/2) eps ref + u ref; below the storage's normal range the arithmetic
 * type's tiny outputs are only promised to be in [0, tiny), and the storage
 * rounds them to within half its smallest subnormal. */
double bound_softmax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  double r = (double)ref, t = (double)fabsl(aux);
  double b = r > 0 ? (4.0 + t / 2.0) * dt_eps(od) * r : 0.0;   /* r == 0: t may be -inf */
  if (r >= dt_tiny(od)) return b + dt_unit(od) * r;
  return b + dt_half_sub(od) + (r < dt_arith_tiny(od) ? dt_arith_tiny(od) : 0.0);
}

/* 4 eps max(1, |ref|) (+ the storage rounding): log-softmax and log-sum-exp */
double bound_log(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i; (void)aux;
  double a = (double)fabsl(ref);
  double b = 4.0 * dt_eps(od) * fmax(1.0, a) + dt_unit(od) * a;
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}
