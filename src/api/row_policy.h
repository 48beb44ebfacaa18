/*
 * The special-value policy of smx (documented in include/smx/smx.h), decided
 * here and nowhere else. Kernels only report a non-finite state; the row is
 * then scanned and written by smx_policy_row.
 */
#ifndef SMX_API_ROW_POLICY_H
#define SMX_API_ROW_POLICY_H

#include <stddef.h>
#include <stdint.h>

typedef enum smx_op { SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP } smx_op;

/*
 * Scans x[0..n) and, if the row is special (a NaN, a +inf, or no entry above
 * -inf), writes its outputs (y for the softmax ops, *lse for logsumexp) and
 * returns 1. Returns 0 for an ordinary row, writing nothing. x may equal y.
 */
int smx_policy_row(smx_op op, const float *x, float *y, size_t n, uint32_t flags, float *lse);

/* Fills y[0..n) (or *lse) with NaN: the row had a NaN that a kernel met after writing. */
void smx_policy_nan_row(smx_op op, float *y, size_t n, float *lse);

#endif
