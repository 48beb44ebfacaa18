/*
 * Maps N-d arrays and an axis onto one row operation of the op table (smx_op_rows, include/smx/smx_ops.h),
 * forward or backward, without the Python API (it runs with the GIL released).
 *
 * The axis is the row. The arrays (inputs x, y, dy; the output; lens, one count per row) share the other
 * ("outer") dimensions, which are sorted by the first input's stride, merged where every array is evenly
 * spaced, and the innermost one becomes the `rows` of one library call when its rows are unit-stride and
 * spaced at least a row apart; the remaining outer dimensions are iterated. A row that is not unit-stride
 * (axis != -1 of a C array, a Fortran array, a sliced or negative-stride view), or a half-precision dtype
 * whose backward the library computes in float32 only, is gathered in blocks of rows into a bounded scratch
 * buffer (converted there where needed), computed there and scattered back: never a full-size temporary.
 * With threads > 1 each thread gathers its own share of the blocks; the result never depends on it.
 */
#ifndef SMX_PY_WALK_H
#define SMX_PY_WALK_H

#include <stddef.h>

#include "smx/smx.h"

#define SMX_PY_MAX_DIMS 64

/* The arrays of a job; absent ones have a NULL pointer (and zero strides). */
enum { SMX_PY_X, SMX_PY_Y, SMX_PY_DY, SMX_PY_OUT, SMX_PY_LENS, SMX_PY_NARR };

typedef struct smx_py_job {
  const smx_op_info *op;  /* a row operation (sig ROWS, ROWS_YBWD, ROWS_LENS or LSE)            */
  int backward;           /* 0: forward (reads x); 1: the backward entry (reads what it needs)  */
  smx_op_dtype dtype;     /* the storage type of x, y, dy and out                               */
  const double *params;   /* the op's parameter values (smx_op_call.params), nparams of them   */
  size_t nparams;
  char *p[SMX_PY_NARR];   /* data; OUT of an LSE op and LENS (int64) hold one value per row     */
  ptrdiff_t axis[SMX_PY_NARR]; /* byte stride along the row (x, y, dy, and out but for LSE)    */
  size_t n;               /* length of the row                                                  */
  int outer;              /* number of outer dimensions                                         */
  size_t shape[SMX_PY_MAX_DIMS];
  ptrdiff_t s[SMX_PY_NARR][SMX_PY_MAX_DIMS]; /* byte strides of the outer dims, per array      */
  smx_options opt;
} smx_py_job;

/* Bytes of one element of a storage type. */
size_t smx_py_dtype_size(smx_op_dtype dt);

/* Runs the job: SMX_E_NOMEM when the scratch cannot be allocated, SMX_E_UNSUPPORTED for a dtype the op has
 * no entry for, otherwise the library's status. Modifies the job's dimension lists. */
smx_status smx_py_run(smx_py_job *job);

#endif
