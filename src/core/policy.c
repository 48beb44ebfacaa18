/* The special-row scan and writers of policy.h. */
#include <math.h>

#include "core/policy.h"

/* Every storage type goes through these double-valued helpers (float and the
 * half types widen exactly), so the scan is written once. */
static inline void scan_one(double v, smx_row_summary *s) {
  if (v != v) s->has_nan = 1;
  else if (v == INFINITY) s->n_posinf++;
  if (v > -INFINITY) s->n_live++;
}

void smx_policy_scan(const float *x, size_t n, smx_row_summary *s) {
  for (size_t i = 0; i < n; i++) scan_one(x[i], s);
}

void smx_policy_scan_f64(const double *x, size_t n, smx_row_summary *s) {
  for (size_t i = 0; i < n; i++) scan_one(x[i], s);
}

int smx_policy_is_special(const smx_row_summary *s) { return s->has_nan || s->n_posinf > 0 || s->n_live == 0; }

void smx_policy_nan_row(const smx_policy *pol, float *y, size_t n, float *out) {
  if (pol->is_reduction) { *out = NAN; return; }
  for (size_t i = 0; i < n; i++) y[i] = NAN;
}

void smx_policy_nan_row_f64(const smx_policy *pol, double *y, size_t n, double *out) {
  if (pol->is_reduction) { *out = NAN; return; }
  for (size_t i = 0; i < n; i++) y[i] = NAN;
}

int smx_policy_row(const smx_policy *pol, const float *x, float *y, size_t n, uint32_t flags, float *out) {
  smx_row_summary s = { 0, 0, 0 };
  smx_policy_scan(x, n, &s);   /* the whole row first: y may be x */
  if (!smx_policy_is_special(&s)) return 0;
  if (pol->is_reduction) { *out = (float)pol->reduce(&s, flags); return 1; }
  for (size_t i = 0; i < n; i++) y[i] = (float)pol->value(&s, flags, x[i]);
  return 1;
}

int smx_policy_row_f64(const smx_policy *pol, const double *x, double *y, size_t n, uint32_t flags, double *out) {
  smx_row_summary s = { 0, 0, 0 };
  smx_policy_scan_f64(x, n, &s);   /* the whole row first: y may be x */
  if (!smx_policy_is_special(&s)) return 0;
  if (pol->is_reduction) { *out = pol->reduce(&s, flags); return 1; }
  for (size_t i = 0; i < n; i++) y[i] = pol->value(&s, flags, x[i]);
  return 1;
}
