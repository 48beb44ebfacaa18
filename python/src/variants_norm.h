/* kd_loss and the mixture of softmaxes for python/smx/_norm.py (the row variants go through the generic
 * _rows of ops.c). */
#ifndef SMX_PY_VARIANTS_NORM_H
#define SMX_PY_VARIANTS_NORM_H

#include <Python.h>

PyObject *smx_py_kd_loss(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_kd_loss_doc[];
PyObject *smx_py_mixture(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_mixture_doc[];

#endif
