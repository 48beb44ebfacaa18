/*
 * (operation, dtype) -> the C library's rows function. float16 data travels
 * as its bit pattern (uint16_t), which is how NumPy stores it.
 */
#include "kernels.h"

#include <stdint.h>
#include <string.h>

size_t smx_py_elem_size(smx_py_dtype dt) {
  return dt == SMX_PY_F16 ? 2 : dt == SMX_PY_F32 ? 4 : 8;
}

size_t smx_py_lse_size(smx_py_dtype dt) {
  return dt == SMX_PY_F64 ? sizeof(double) : sizeof(float);
}

smx_status smx_py_rows(smx_py_op op, smx_py_dtype dt, const void *x, size_t ldx, void *y, size_t ldy,
                       size_t rows, size_t cols, const smx_options *opt) {
  switch (dt) {
  case SMX_PY_F16:
    if (op == SMX_PY_SIGMOID) return smx_sigmoid_rows_f16(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_SOFTMAX) return smx_softmax_rows_f16(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_LOG_SOFTMAX) return smx_log_softmax_rows_f16(x, ldx, y, ldy, rows, cols, opt);
    return smx_logsumexp_rows_f16(x, ldx, y, rows, cols, opt);
  case SMX_PY_F32:
    if (op == SMX_PY_SIGMOID) return smx_sigmoid_rows_f32(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_SOFTMAX) return smx_softmax_rows_f32(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_LOG_SOFTMAX) return smx_log_softmax_rows_f32(x, ldx, y, ldy, rows, cols, opt);
    return smx_logsumexp_rows_f32(x, ldx, y, rows, cols, opt);
  case SMX_PY_F64:
    if (op == SMX_PY_SIGMOID) return smx_sigmoid_rows_f64(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_SOFTMAX) return smx_softmax_rows_f64(x, ldx, y, ldy, rows, cols, opt);
    if (op == SMX_PY_LOG_SOFTMAX) return smx_log_softmax_rows_f64(x, ldx, y, ldy, rows, cols, opt);
    return smx_logsumexp_rows_f64(x, ldx, y, rows, cols, opt);
  }
  return SMX_E_INVALID_ARG;
}

void smx_py_store_lse(smx_py_dtype dt, const void *lse, size_t i, void *dst) {
  if (dt == SMX_PY_F64) {
    memcpy(dst, (const double *)lse + i, sizeof(double));
  } else if (dt == SMX_PY_F32) {
    memcpy(dst, (const float *)lse + i, sizeof(float));
  } else {
    uint16_t h;
    smx_f32_to_f16_n((const float *)lse + i, &h, 1);
    memcpy(dst, &h, sizeof h);
  }
}
