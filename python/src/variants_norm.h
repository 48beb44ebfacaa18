/* The row variants of include/smx/smx_norm.h (softpick, SSMax, ...) for
 * python/smx/_norm.py, which handles axes, dtypes and out=. */
#ifndef SMX_PY_VARIANTS_NORM_H
#define SMX_PY_VARIANTS_NORM_H

#include <Python.h>

PyObject *smx_py_vnorm_rows(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_vnorm_rows_doc[];
PyObject *smx_py_kd_loss(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_kd_loss_doc[];
PyObject *smx_py_mixture(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char smx_py_mixture_doc[];

#endif
