#ifndef SMX_OPS_ALGO_SELECT_H
#define SMX_OPS_ALGO_SELECT_H
#include "ops/softmax_policy.h"
#include "smx/smx.h"
/* SMX_ALGO_AUTO resolved for a row length and kernel set (crossovers in docs/crossovers.md). */
smx_algo smx_algo_auto(smx_op op, size_t rows, size_t cols, const char *isa);
/* The same for f64 rows (algo_select_f64.c). */
smx_algo smx_algo_auto_f64(smx_op op, size_t rows, size_t cols, const char *isa);
/* Whether outputs of this size go out with non-temporal stores by default. */
int smx_stream_default(size_t rows, size_t cols);
#endif
