/* The module's functions: smx.softmax, smx.log_softmax, smx.logsumexp. */
#ifndef SMX_PY_OPS_H
#define SMX_PY_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *smx_py_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_log_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_logsumexp(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_sigmoid(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
