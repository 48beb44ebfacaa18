/* Rows stored as f16 or bf16, computed in f32 through the engine's half-precision adaptor. */
#ifndef SMX_OPS_SOFTMAX_ROW_HALF_H
#define SMX_OPS_SOFTMAX_ROW_HALF_H

#include <stdint.h>

#include "core/elem.h"
#include "ops/softmax_row_f32.h"

/* One row of n >= 1 half-precision values (elem is F16 or BF16); y may equal x. */
void smx_row_half(const smx_row_params *p, smx_elem elem, const uint16_t *x, uint16_t *y, size_t n, float *lse);

#endif
