/*
 * Maps an N-d array and an axis onto the C library's rows API, without the
 * Python API (it runs with the GIL released).
 *
 * The axis is the row. The other ("outer") dimensions are sorted by input
 * stride, merged where they are evenly spaced, and the innermost one becomes
 * the `rows` of one library call when its rows are unit-stride and spaced at
 * least a row apart; the remaining outer dimensions are iterated. A row that
 * is not unit-stride (axis != -1 of a C array, a Fortran array, a sliced view)
 * is gathered, in blocks of rows, into a bounded scratch buffer, computed
 * there and scattered back: no full-size temporary. With threads > 1 each
 * thread gathers its own share of the blocks.
 */
#ifndef SMX_PY_WALK_H
#define SMX_PY_WALK_H

#include <stddef.h>

#include "kernels.h"

#define SMX_PY_MAX_DIMS 64

typedef struct smx_py_job {
  smx_py_op op;
  smx_py_dtype dtype;
  const char *x;          /* input data                                       */
  char *y;                /* output data: same shape (softmax ops), or the
                             reduced shape (log-sum-exp)                      */
  size_t n;               /* length of the axis                                */
  ptrdiff_t x_axis;       /* byte stride of the axis in x                      */
  ptrdiff_t y_axis;       /* ... in y (unused for log-sum-exp)                 */
  int outer;              /* number of outer dimensions                        */
  size_t shape[SMX_PY_MAX_DIMS];
  ptrdiff_t xs[SMX_PY_MAX_DIMS];  /* byte strides of the outer dims in x       */
  ptrdiff_t ys[SMX_PY_MAX_DIMS];  /* ... in y                                  */
  smx_options opt;
} smx_py_job;

/* Runs the job; SMX_E_NOMEM when the scratch buffer cannot be allocated,
 * otherwise the library's status. Modifies the job's dimension lists. */
smx_status smx_py_run(smx_py_job *job);

#endif
