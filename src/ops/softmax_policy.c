/* The policy entries of softmax_policy.h. */
#include <math.h>

#include "ops/softmax_policy.h"
#include "smx/smx.h"

/* the shared shape: the limit as the +inf entries grow together, or a masked row */
static double special(const smx_row_summary *s, uint32_t flags, double xi, int log_form) {
  if (s->has_nan) return NAN;
  if (s->n_posinf > 0) {
    if (xi != INFINITY) return log_form ? -INFINITY : 0.0;
    return log_form ? -log((double)s->n_posinf) : 1.0 / (double)s->n_posinf;
  }
  if (flags & SMX_FLAG_MASKED_ROW_NAN) return NAN;
  return log_form ? -INFINITY : 0.0;
}

static double softmax_value(const smx_row_summary *s, uint32_t flags, double xi) { return special(s, flags, xi, 0); }
static double log_softmax_value(const smx_row_summary *s, uint32_t flags, double xi) { return special(s, flags, xi, 1); }

static double logsumexp_reduce(const smx_row_summary *s, uint32_t flags) {
  if (s->has_nan) return NAN;
  if (s->n_posinf > 0) return INFINITY;
  return (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -INFINITY;
}

const smx_policy smx_policy_softmax = { softmax_value, NULL, 0 };
const smx_policy smx_policy_log_softmax = { log_softmax_value, NULL, 0 };
const smx_policy smx_policy_logsumexp = { NULL, logsumexp_reduce, 1 };

const smx_policy *smx_softmax_policy(smx_op op) {
  return op == SMX_OP_SOFTMAX ? &smx_policy_softmax : op == SMX_OP_LOG_SOFTMAX ? &smx_policy_log_softmax
                                                                                : &smx_policy_logsumexp;
}
