/* smx.attention (python/src/attention.c). */
#ifndef SMX_PY_ATTENTION_H
#define SMX_PY_ATTENTION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *smx_py_attention(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_attention_doc[];
PyObject *smx_py_attention_backward(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_attention_backward_doc[];

#endif
