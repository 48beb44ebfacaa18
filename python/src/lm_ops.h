/*
 * What smx.sample (lm_ops.c) shares with smx.torch's entries on tensor memory (lm_rows.c).
 */
#ifndef SMX_PY_LM_OPS_H
#define SMX_PY_LM_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "smx/smx.h"

/* The sampling filters and method from their keyword objects (NULL: the default; temperature 1, filters off,
 * multinomial, row_offset 0), each checked with an error naming it. Returns 0, or -1 with an exception set. */
int smx_py_sample_params(const char *fn, PyObject *temp, PyObject *tk, PyObject *tp, PyObject *mp, PyObject *gr,
                         PyObject *meth, PyObject *ro, smx_sample_params *out);

#endif
