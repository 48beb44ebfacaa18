/*
 * The special-value policy of smx (documented in include/smx/smx.h), decided
 * here and nowhere else. Kernels only report a non-finite state; the row is
 * then scanned and written from these functions, for every storage type.
 */
#ifndef SMX_CORE_POLICY_H
#define SMX_CORE_POLICY_H

#include <stddef.h>
#include <stdint.h>

typedef enum smx_op { SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP } smx_op;

/* What the policy needs to know of a row; scanned in one or several pieces. */
typedef struct smx_row_summary {
  int has_nan;
  size_t n_posinf;   /* entries equal to +inf */
  size_t n_live;     /* entries above -inf    */
} smx_row_summary;

/* Adds x[0..n) to the summary (start from an all-zero summary). */
void smx_policy_scan(const float *x, size_t n, smx_row_summary *s);
void smx_policy_scan_f64(const double *x, size_t n, smx_row_summary *s);
/* 1 if the policy decides the row's outputs (NaN, +inf, or no entry above -inf). */
int smx_policy_is_special(const smx_row_summary *s);
/* The policy's output for an entry x_i of a special row (softmax, log-softmax). */
float smx_policy_value(smx_op op, const smx_row_summary *s, uint32_t flags, float xi);
/* The same in double (the float version is this value rounded). */
double smx_policy_value_f64(smx_op op, const smx_row_summary *s, uint32_t flags, double xi);
/* The policy's log-sum-exp of a special row. */
float smx_policy_lse(const smx_row_summary *s, uint32_t flags);
double smx_policy_lse_f64(const smx_row_summary *s, uint32_t flags);

/*
 * Scans x[0..n) and, if the row is special, writes its outputs (y for the
 * softmax ops, *lse for logsumexp) and returns 1. Returns 0 for an ordinary
 * row, writing nothing. x may equal y.
 */
int smx_policy_row(smx_op op, const float *x, float *y, size_t n, uint32_t flags, float *lse);
int smx_policy_row_f64(smx_op op, const double *x, double *y, size_t n, uint32_t flags, double *lse);

/* Fills y[0..n) (or *lse) with NaN: the row had a NaN that a kernel met after writing. */
void smx_policy_nan_row(smx_op op, float *y, size_t n, float *lse);
void smx_policy_nan_row_f64(smx_op op, double *y, size_t n, double *lse);

#endif
