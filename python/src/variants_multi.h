/* smx.multimax, multimax_backward (variants_multi.c). */
#ifndef SMX_PY_VARIANTS_MULTI_H
#define SMX_PY_VARIANTS_MULTI_H

#include "arrays.h"

PyObject *smx_py_multimax(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_multimax_backward(PyObject *self, PyObject *args, PyObject *kwargs);

PyDoc_STRVAR(multimax_doc,
             "multimax($module, /, x, ranges=(0, 0, 0, 0), ts=(0, 0, 0, 0), axis=-1, temperature=1.0,\n"
             "         threads=0, masked_row='zero')\n--\n\n"
             "MultiMax (Zhou, Fritz and Keuper 2024): softmax(s(x) / T) along axis with the modulator\n"
             "s(x) = x + t0 (r0 - x)_+ + t1 (x - r1)_+ + t2 (r2 - x)_+^2 + t3 (x - r3)_+^2 (r = ranges,\n"
             "t = ts, four finite numbers each; zeros give softmax). float32 or float64 (float16 is\n"
             "computed as float32). Definition, special values and bound: include/smx/smx_multi.h.");
PyDoc_STRVAR(multimax_backward_doc,
             "multimax_backward($module, /, x, y, dy, ranges=(0, 0, 0, 0), ts=(0, 0, 0, 0), axis=-1,\n"
             "                  temperature=1.0, threads=0, params_grad=False)\n--\n\n"
             "Vector-Jacobian product of multimax: dx = s'(x) * y * (dy - sum(dy * y)) / T, from the input\n"
             "x, the output y and the upstream gradient dy (same shape and dtype). params_grad=True\n"
             "returns (dx, dranges, dts), the gradients of the four ranges and four scales summed over\n"
             "every row (float64 arrays of 4).");

#endif
