/* The module's row functions: smx.softmax, log_softmax, logsumexp, sigmoid, and the generic _rows. */
#ifndef SMX_PY_OPS_H
#define SMX_PY_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

#endif
