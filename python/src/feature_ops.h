/* The private functions behind smx.FeatureOOD (include/smx/smx_features.h). */
#ifndef SMX_PY_FEATURE_OPS_H
#define SMX_PY_FEATURE_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *smx_py_feature_fit(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_feature_score(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_feature_save(PyObject *self, PyObject *args);
PyObject *smx_py_feature_load(PyObject *self, PyObject *args);
PyObject *smx_py_feature_info(PyObject *self, PyObject *model);
PyObject *smx_py_feature_requires(PyObject *self, PyObject *method);

#endif
