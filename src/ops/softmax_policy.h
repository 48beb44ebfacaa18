/*
 * The policy entries of softmax, log-softmax and log-sum-exp, as documented
 * in include/smx/smx.h: NaN anywhere gives NaN; k entries at +inf share the
 * mass (1/k each, log-softmax -log k, log-sum-exp +inf); a row with no entry
 * above -inf gives 0 (log-softmax -inf, log-sum-exp -inf), or NaN with
 * SMX_FLAG_MASKED_ROW_NAN.
 */
#ifndef SMX_OPS_SOFTMAX_POLICY_H
#define SMX_OPS_SOFTMAX_POLICY_H

#include "core/policy.h"

#include "core/op.h"

extern const smx_policy smx_policy_softmax;
extern const smx_policy smx_policy_log_softmax;
extern const smx_policy smx_policy_logsumexp;

/* The entry of op. */
const smx_policy *smx_softmax_policy(smx_op op);

#endif
