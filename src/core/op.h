/* The softmax family's three row operations: what the policy entries, the
 * f32 and f64 row drivers and AUTO's crossovers (src/tune/) are keyed by. */
#ifndef SMX_CORE_OP_H
#define SMX_CORE_OP_H

typedef enum smx_op { SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP } smx_op;

#endif
