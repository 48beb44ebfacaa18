/* The scores functions of the module (include/smx/smx_scores.h). */
#ifndef SMX_PY_SCORE_OPS_H
#define SMX_PY_SCORE_OPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* smx.NoOptimumError, created by the module's init (a ValueError subclass). */
extern PyObject *smx_py_no_optimum_error;

PyObject *smx_py_score(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_ood_metrics(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_calibration(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_fit_temperature(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_kl_templates(PyObject *self, PyObject *args, PyObject *kwargs);

#endif
