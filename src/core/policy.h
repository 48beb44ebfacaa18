/*
 * The engine's side of the special-value policy. Kernels only report a
 * non-finite state; the row is then summarised here (NaN? how many +inf? any
 * entry above -inf?) and written from its operation's policy entry. What an
 * operation outputs on such a row (softmax's 1/k over k +inf entries, for
 * one) is that operation's entry (src/ops/<op>_policy.c), not a rule of the
 * engine. The documented policy of each operation is in include/smx/.
 */
#ifndef SMX_CORE_POLICY_H
#define SMX_CORE_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* What a policy needs to know of a row; scanned in one or several pieces. */
typedef struct smx_row_summary {
  int has_nan;
  size_t n_posinf;   /* entries equal to +inf */
  size_t n_live;     /* entries above -inf    */
} smx_row_summary;

/* One operation's outputs on a special row, in double (float outputs are these rounded). */
typedef struct smx_policy {
  /* the output for entry xi (operations with one output per entry) */
  double (*value)(const smx_row_summary *s, uint32_t flags, double xi);
  /* the row's one output (reductions: log-sum-exp, a loss) */
  double (*reduce)(const smx_row_summary *s, uint32_t flags);
  int is_reduction;   /* 1: the row has one output (reduce), 0: one per entry (value) */
} smx_policy;

/* Adds x[0..n) to the summary (start from an all-zero summary). */
void smx_policy_scan(const float *x, size_t n, smx_row_summary *s);
void smx_policy_scan_f64(const double *x, size_t n, smx_row_summary *s);
/* 1 if the policy decides the row's outputs (NaN, +inf, or no entry above -inf). */
int smx_policy_is_special(const smx_row_summary *s);

/*
 * Scans x[0..n) and, if the row is special, writes its outputs (y for an
 * elementwise operation, *out for a reduction) and returns 1. Returns 0 for
 * an ordinary row, writing nothing. x may equal y.
 */
int smx_policy_row(const smx_policy *pol, const float *x, float *y, size_t n, uint32_t flags, float *out);
int smx_policy_row_f64(const smx_policy *pol, const double *x, double *y, size_t n, uint32_t flags, double *out);

/* Fills y[0..n) (or *out) with NaN: the row had a NaN that a kernel met after writing. */
void smx_policy_nan_row(const smx_policy *pol, float *y, size_t n, float *out);
void smx_policy_nan_row_f64(const smx_policy *pol, double *y, size_t n, double *out);

#endif
