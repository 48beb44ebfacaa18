#ifndef SMX_API_ALGO_SELECT_H
#define SMX_API_ALGO_SELECT_H
#include "api/row_policy.h"
#include "smx/smx.h"
/* SMX_ALGO_AUTO resolved for a row length and kernel set (crossovers in docs/crossovers.md). */
smx_algo smx_algo_auto(smx_op op, size_t cols, const char *isa);
#endif
