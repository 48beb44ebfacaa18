/* The language-model functions of the module (include/smx/smx_grad.h and smx_topk.h). */
#ifndef SMX_PY_LM_OPS_H
#define SMX_PY_LM_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *smx_py_cross_entropy(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_softmax_topk(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_topk(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_sample(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_gumbel_softmax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_gumbel_softmax_backward(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
