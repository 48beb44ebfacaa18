/*
 * NumPy arrays in and out: the accepted dtypes, the input conversion (a copy
 * only for data the C library cannot read in place), the checks on out= and
 * the allocation of results.
 */
#ifndef SMX_PY_ARRAYS_H
#define SMX_PY_ARRAYS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL smx_py_ARRAY_API
#ifndef SMX_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "smx/smx.h"

/*
 * The input as an aligned, native-byte-order float16/32/64 array (a new
 * reference; the same object when it already is one). TypeError for other
 * dtypes, naming the dtype (integers and booleans: "cast first").
 */
PyArrayObject *smx_py_input(const char *fn, PyObject *a, smx_op_dtype *dt);

/*
 * The same, except that integer arrays (and lists of ints) are read as
 * float64, as scipy.special does: the input of softmax, log_softmax and
 * logsumexp. Booleans remain a TypeError.
 */
PyArrayObject *smx_py_input_real(const char *fn, PyObject *a, smx_op_dtype *dt);

/*
 * As smx_py_input_real, naming the argument `what` in errors; with bf16, an int16 or uint16 array is read
 * as bfloat16 bit patterns (smx.torch's bfloat16 tensors travel so: NumPy has no bfloat16) and nothing else
 * is accepted.
 */
PyArrayObject *smx_py_input_named(const char *fn, const char *what, PyObject *a, int bf16, smx_op_dtype *dt);

/*
 * Checks a caller's out= against the dtype and shape the result must have:
 * TypeError if it is not an ndarray or has another dtype, ValueError if the
 * shape differs or it is read-only, misaligned, byte-swapped or has a zero
 * stride (elements written twice). Returns 0 or -1.
 */
int smx_py_check_out(const char *fn, PyObject *out, PyArrayObject *x, int ndim, const npy_intp *shape);

/* Whether the memory spans of two arrays intersect (empty arrays: never). */
int smx_py_spans_overlap(PyArrayObject *a, PyArrayObject *b);

/* Whether a and b are the same elements: same data pointer, shape and strides. */
int smx_py_same_elements(PyArrayObject *a, PyArrayObject *b);

#endif
