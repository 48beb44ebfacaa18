/* Rows stored as f16 or bf16, computed in f32 through a small buffer. */
#ifndef SMX_API_HALF_ROW_H
#define SMX_API_HALF_ROW_H

#include <stdint.h>

#include "api/softmax_row.h"

typedef enum smx_elem { SMX_ELEM_F32, SMX_ELEM_F16, SMX_ELEM_BF16, SMX_ELEM_F64 } smx_elem;

static inline size_t smx_elem_size(smx_elem e) { return e == SMX_ELEM_F64 ? 8 : e == SMX_ELEM_F32 ? 4 : 2; }

/* One row of n >= 1 half-precision values (elem is F16 or BF16); y may equal x. */
void smx_row_half(const smx_row_params *p, smx_elem elem, const uint16_t *x, uint16_t *y, size_t n, float *lse);

#endif
