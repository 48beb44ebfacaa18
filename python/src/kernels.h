/*
 * The C library's rows entry points, looked up by (operation, dtype), so that
 * the array walker (walk.c) never names a dtype-specific function.
 */
#ifndef SMX_PY_KERNELS_H
#define SMX_PY_KERNELS_H

#include <stddef.h>

#include "smx/smx.h"

typedef enum smx_py_op { SMX_PY_SOFTMAX = 0, SMX_PY_LOG_SOFTMAX = 1, SMX_PY_LOGSUMEXP = 2, SMX_PY_SIGMOID = 3 } smx_py_op;
typedef enum smx_py_dtype { SMX_PY_F16 = 0, SMX_PY_F32 = 1, SMX_PY_F64 = 2 } smx_py_dtype;

/* Bytes per stored element (2, 4, 8). */
size_t smx_py_elem_size(smx_py_dtype dt);

/* Bytes per log-sum-exp value the library returns for this dtype: float for
 * f16 and f32, double for f64. */
size_t smx_py_lse_size(smx_py_dtype dt);

/*
 * One call of smx_<op>_rows_<dtype>. x, y: rows x cols with leading dimensions
 * ldx, ldy in elements. For SMX_PY_LOGSUMEXP, y receives `rows` values of
 * smx_py_lse_size(dt) bytes and ldy is unused.
 */
smx_status smx_py_rows(smx_py_op op, smx_py_dtype dt, const void *x, size_t ldx, void *y, size_t ldy,
                       size_t rows, size_t cols, const smx_options *opt);

/* Stores log-sum-exp value i of `lse` (as returned above) into one element of
 * the dtype at dst, rounding float to half where the dtype is float16. */
void smx_py_store_lse(smx_py_dtype dt, const void *lse, size_t i, void *dst);

#endif
