/*
 * Inputs of the language-model and scores functions: an array whose class
 * axis becomes the last one of a C-contiguous float16 / float32 copy (a view
 * when it already is one), which is what the C library's rows API reads.
 */
#ifndef SMX_PY_MATRIX_H
#define SMX_PY_MATRIX_H

#include <stdint.h>

#include "arrays.h"

typedef struct smx_py_matrix {
  PyArrayObject *arr; /* class axis last (a new reference): C-contiguous, or the caller's own view (IN_PLACE) */
  size_t ld;          /* the rows' leading dimension in elements (cols for a copy, at least 1)            */
  smx_op_dtype dtype; /* SMX_OP_F16, SMX_OP_F32 (or F64 with KEEP_F64)    */
  smx_op_dtype given; /* the caller's dtype (float64 becomes float32)     */
  int axis;           /* the caller's axis, normalised; ndim - 1 if none  */
  size_t rows, cols;  /* the product of the other dimensions, the axis    */
} smx_py_matrix;

/*
 * Converts `a` (float16/32/64, at least 1-D) along `axis` (NULL: -1; None is
 * refused). float64, and float16 when f32_only is 1, are converted to float32;
 * f32_only == SMX_PY_KEEP_F64 keeps float16 and float64 as they are;
 * SMX_PY_F32_F64 keeps float64 and converts float16 to float32. With
 * SMX_PY_IN_PLACE or-ed in, an input of the computed dtype whose rows are
 * unit-stride and evenly spaced (smx_py_row_ld) is not copied: m->arr is the
 * caller's view (axis moved last) and m->ld its row stride, which the caller
 * passes as the library's leading dimension. Otherwise a C copy, m->ld = cols.
 * Returns 0, or -1 with an exception set (m->arr NULL).
 */
#define SMX_PY_KEEP_F64 2
#define SMX_PY_F32_F64 3
#define SMX_PY_IN_PLACE 0x10
int smx_py_matrix_in(const char *fn, const char *what, PyObject *a, PyObject *axis, int f32_only, smx_py_matrix *m);

/* The leading dimension (elements) of the rows of a (classes last) when they are unit-stride and evenly
 * spaced at least a row apart (the leading axes merge into one), else 0. */
size_t smx_py_row_ld(PyArrayObject *a, size_t rows, size_t cols);

/* Moves the last axis of a result back to m->axis (a view; steals res). */
PyObject *smx_py_matrix_restore(const smx_py_matrix *m, PyObject *res);

/* A 1-D array of integer labels / targets as int32 or int64 (want_type, or
 * -1: int32 stays int32, other integers become int64), C-contiguous.
 * TypeError for non-integer dtypes (bool included). */
PyArrayObject *smx_py_int_input(const char *fn, const char *what, PyObject *a, int want_type);

/* A Python int (not bool) into *v within [lo, hi]; TypeError / ValueError. */
int smx_py_int_arg(const char *fn, const char *what, PyObject *o, long long lo, long long hi, long long *v);

/* A Python int (not bool) in [0, 2^64) into *v (seeds, steps, row offsets). */
int smx_py_u64_arg(const char *fn, const char *what, PyObject *o, uint64_t *v);

/* A fused loss's result: the loss (the per-row array for reduction 'none', else a float), alone when
 * grad is NULL, else the tuple (loss, grad[, grad2]). New references; NULL with an exception set. */
PyObject *smx_py_loss_result(int none, PyArrayObject *loss, PyArrayObject *grad, PyArrayObject *grad2);

/* A real number (not bool); finite unless allow_inf. */
int smx_py_real_arg(const char *fn, const char *what, PyObject *o, double *v);

#endif
