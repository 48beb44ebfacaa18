#include <math.h>

#include "core/policy.h"
#include "smx/smx.h"

/* Every storage type goes through these double-valued helpers (float and the
 * half types widen exactly), so the policy is written once. */

static inline void scan_one(double v, smx_row_summary *s) {
  if (v != v) s->has_nan = 1;
  else if (v == INFINITY) s->n_posinf++;
  if (v > -INFINITY) s->n_live++;
}

void smx_policy_nan_row(smx_op op, float *y, size_t n, float *lse) {
  if (op == SMX_OP_LOGSUMEXP) { *lse = NAN; return; }
  for (size_t i = 0; i < n; i++) y[i] = NAN;
}

void smx_policy_nan_row_f64(smx_op op, double *y, size_t n, double *lse) {
  if (op == SMX_OP_LOGSUMEXP) { *lse = NAN; return; }
  for (size_t i = 0; i < n; i++) y[i] = NAN;
}

void smx_policy_scan(const float *x, size_t n, smx_row_summary *s) {
  for (size_t i = 0; i < n; i++) scan_one(x[i], s);
}

void smx_policy_scan_f64(const double *x, size_t n, smx_row_summary *s) {
  for (size_t i = 0; i < n; i++) scan_one(x[i], s);
}

int smx_policy_is_special(const smx_row_summary *s) { return s->has_nan || s->n_posinf > 0 || s->n_live == 0; }

double smx_policy_value_f64(smx_op op, const smx_row_summary *s, uint32_t flags, double xi) {
  if (s->has_nan) return NAN;
  if (s->n_posinf > 0) {
    /* the limit of softmax(x) as the +inf entries grow together */
    if (xi != INFINITY) return op == SMX_OP_SOFTMAX ? 0.0 : -INFINITY;
    return op == SMX_OP_SOFTMAX ? 1.0 / (double)s->n_posinf : -log((double)s->n_posinf);
  }
  /* fully masked row (every entry -inf) */
  if (flags & SMX_FLAG_MASKED_ROW_NAN) return NAN;
  return op == SMX_OP_SOFTMAX ? 0.0 : -INFINITY;
}

float smx_policy_value(smx_op op, const smx_row_summary *s, uint32_t flags, float xi) {
  return (float)smx_policy_value_f64(op, s, flags, xi);
}

double smx_policy_lse_f64(const smx_row_summary *s, uint32_t flags) {
  if (s->has_nan) return NAN;
  if (s->n_posinf > 0) return INFINITY;
  return (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -INFINITY;
}

float smx_policy_lse(const smx_row_summary *s, uint32_t flags) { return (float)smx_policy_lse_f64(s, flags); }

int smx_policy_row(smx_op op, const float *x, float *y, size_t n, uint32_t flags, float *lse) {
  smx_row_summary s = { 0, 0, 0 };
  smx_policy_scan(x, n, &s);   /* the whole row first: y may be x */
  if (!smx_policy_is_special(&s)) return 0;
  if (op == SMX_OP_LOGSUMEXP) { *lse = smx_policy_lse(&s, flags); return 1; }
  for (size_t i = 0; i < n; i++) y[i] = smx_policy_value(op, &s, flags, x[i]);
  return 1;
}

int smx_policy_row_f64(smx_op op, const double *x, double *y, size_t n, uint32_t flags, double *lse) {
  smx_row_summary s = { 0, 0, 0 };
  smx_policy_scan_f64(x, n, &s);   /* the whole row first: y may be x */
  if (!smx_policy_is_special(&s)) return 0;
  if (op == SMX_OP_LOGSUMEXP) { *lse = smx_policy_lse_f64(&s, flags); return 1; }
  for (size_t i = 0; i < n; i++) y[i] = smx_policy_value_f64(op, &s, flags, x[i]);
  return 1;
}
