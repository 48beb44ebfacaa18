/* The module's row functions (smx.softmax, log_softmax, logsumexp, sigmoid) and its generic entries over the
 * op table: _rows (ops.c), _tloss (tloss.c), _op_info, _op_names. */
#ifndef SMX_PY_OPS_H
#define SMX_PY_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "smx/smx.h"

PyObject *smx_py_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_log_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_logsumexp(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_sigmoid(PyObject *self, PyObject *args, PyObject *kwargs);

/* smx._smx._rows: any row operation of the op table over strided arrays (python/smx/_rows.py). */
PyObject *smx_py_rows(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_rows_doc[];
/* smx._smx._op_info(name): the op table's row as a dict. */
PyObject *smx_py_op_info(PyObject *self, PyObject *arg);
extern const char smx_py_op_info_doc[];
/* smx._smx._op_names(): the table's C stems. */
PyObject *smx_py_op_names(PyObject *self, PyObject *unused);
extern const char smx_py_op_names_doc[];
/* smx._smx._tloss: any target loss of the op table (sig TLOSS) over a NumPy array (python/smx/_losses.py). */
PyObject *smx_py_tloss(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_tloss_doc[];

/* The most parameter values (doubles) an op takes from Python. */
#define SMX_PY_MAX_PARAMS 16
/* The op's parameter values from the sequence params (None: every default) into v (SMX_PY_MAX_PARAMS), *nv of
 * them, each checked against the table's type and range: a ValueError naming the parameter and its range. */
int smx_py_op_params(const char *fn, const smx_op_info *op, PyObject *params, double *v, size_t *nv);

#endif
