/* What the op table's generic entries share (ops.c's _rows, tloss.c's _tloss): the parameters' values. */
#ifndef SMX_PY_OPS_H
#define SMX_PY_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "smx/smx.h"

/* The most parameter values (doubles) an op takes from Python. */
#define SMX_PY_MAX_PARAMS 16
/* The op's parameter values from the sequence params (None: every default) into v (SMX_PY_MAX_PARAMS), *nv of
 * them, each checked against the table's type and range: a ValueError naming the parameter and its range. */
int smx_py_op_params(const char *fn, const smx_op_info *op, PyObject *params, double *v, size_t *nv);

#endif
