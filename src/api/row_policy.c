#include <math.h>

#include "api/row_policy.h"
#include "smx/smx.h"

void smx_policy_nan_row(smx_op op, float *y, size_t n, float *lse) {
  if (op == SMX_OP_LOGSUMEXP) { *lse = NAN; return; }
  for (size_t i = 0; i < n; i++) y[i] = NAN;
}

int smx_policy_row(smx_op op, const float *x, float *y, size_t n, uint32_t flags, float *lse) {
  int has_nan = 0;
  size_t n_posinf = 0, n_live = 0;   /* live: above -inf */
  for (size_t i = 0; i < n; i++) {
    float v = x[i];
    if (v != v) has_nan = 1;
    else if (v == INFINITY) n_posinf++;
    if (v > -INFINITY) n_live++;
  }
  if (has_nan) { smx_policy_nan_row(op, y, n, lse); return 1; }
  if (n_posinf > 0) {
    /* the limit of softmax(x) as the +inf entries grow together */
    if (op == SMX_OP_LOGSUMEXP) { *lse = INFINITY; return 1; }
    float on = op == SMX_OP_SOFTMAX ? (float)(1.0 / (double)n_posinf) : (float)(-log((double)n_posinf));
    float off = op == SMX_OP_SOFTMAX ? 0.0f : -INFINITY;
    for (size_t i = 0; i < n; i++) y[i] = x[i] == INFINITY ? on : off;
    return 1;
  }
  if (n_live == 0) {
    /* fully masked row (every entry -inf) */
    int as_nan = (flags & SMX_FLAG_MASKED_ROW_NAN) != 0;
    if (op == SMX_OP_LOGSUMEXP) { *lse = as_nan ? NAN : -INFINITY; return 1; }
    float v = as_nan ? NAN : (op == SMX_OP_SOFTMAX ? 0.0f : -INFINITY);
    for (size_t i = 0; i < n; i++) y[i] = v;
    return 1;
  }
  return 0;
}
