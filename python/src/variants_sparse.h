/* The Fenchel-Young losses of sparsemax / entmax for python/smx/_sparse.py (variants_sparse.c); the maps
 * and their VJPs go through the generic _rows (ops.c). */
#ifndef SMX_PY_VARIANTS_SPARSE_H
#define SMX_PY_VARIANTS_SPARSE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *smx_py_sparse_loss_rows(PyObject *self, PyObject *args);

#define SMX_PY_SPARSE_METHODS                                                                               \
  {"_sparse_loss_rows", smx_py_sparse_loss_rows, METH_VARARGS,                                            \
   "_sparse_loss_rows(op, logits, targets, alpha, reduction, ignore_index, grad_scale, threads, "          \
   "masked_nan, loss, grad): the Fenchel-Young losses on C-contiguous arrays"},

#endif
