/*
 * Reference of the fused softmax / log-softmax top-k (include/smx/smx_topk.h):
 * the k largest entries by x, ties to the lowest index (+inf first, -inf
 * last, as the order of x gives), values from the softmax reference; a NaN row
 * gives NaN values and indices -1. Outputs 0..k-1 are the values, k..2k-1 the
 * indices (compared exactly).
 */
#include <math.h>

#include "op.h"

void ref_topk_row(ref_ctx *c) {
  ref_softmax_state(c);
  for (size_t j = 0; j < c->k; j++) {
    size_t best = c->n;
    long double bv = 0;
    for (size_t i = 0; i < c->n; i++) {
      int taken = 0;
      for (size_t q = 0; q < j; q++) taken |= c->top[q] == i;
      if (taken) continue;
      long double v = ref_in(c, 0, i);
      if (best == c->n || v > bv) { best = i; bv = v; }
    }
    c->top[j] = best;
  }
}

static long double at(const ref_ctx *c, size_t i, long double *aux, int log_form) {
  *aux = 0;
  if (i >= c->k) return c->nan ? -1.0L : (long double)c->top[i - c->k];
  size_t j = c->top[i];
  return log_form ? ref_log_softmax_at(c, j, aux) : ref_softmax_at(c, j, aux);
}

/* smx_topk_*: the logits themselves, exact (NaN rows still give NaN and -1) */
long double ref_topk_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = 0;
  if (i >= c->k) return c->nan ? -1.0L : (long double)c->top[i - c->k];
  return c->nan ? NAN : ref_in(c, 0, c->top[i]);
}

long double ref_softmax_topk_at(const ref_ctx *c, size_t i, long double *aux) { return at(c, i, aux, 0); }
long double ref_log_softmax_topk_at(const ref_ctx *c, size_t i, long double *aux) { return at(c, i, aux, 1); }

double bound_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  return i >= c->k ? -1.0 : bound_softmax(c, od, i, ref, aux);
}

double bound_exact(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)od; (void)i; (void)ref; (void)aux;
  return -1.0;
}

double bound_log_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  return i >= c->k ? -1.0 : bound_log(c, od, i, ref, aux);
}
