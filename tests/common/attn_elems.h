/*
 * One element of an attention operand in its storage type (f32, f16 or bf16),
 * read and written as float: the attention soak and the attention fuzz target
 * fill and read their tensors through these.
 */
#ifndef SMX_TESTS_ATTN_ELEMS_H
#define SMX_TESTS_ATTN_ELEMS_H

#include <stddef.h>
#include <stdint.h>

#include "math/half_scalar.h"
#include "smx/smx_attention.h"

static inline void tu_attn_put(smx_attn_dtype dt, void *p, size_t i, float v) {
  if (dt == SMX_ATTN_F32) ((float *)p)[i] = v;
  else if (dt == SMX_ATTN_F16) ((uint16_t *)p)[i] = smx_f32_to_f16(v);
  else ((uint16_t *)p)[i] = smx_f32_to_bf16(v);
}
static inline float tu_attn_get(smx_attn_dtype dt, const void *p, size_t i) {
  if (dt == SMX_ATTN_F32) return ((const float *)p)[i];
  if (dt == SMX_ATTN_F16) return smx_f16_to_f32(((const uint16_t *)p)[i]);
  return smx_bf16_to_f32(((const uint16_t *)p)[i]);
}

#endif
