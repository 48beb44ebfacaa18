/* smx.noisy_softmax_loss, smx.noisy_softmax_noise (variants_noisy.c). */
#ifndef SMX_PY_VARIANTS_NOISY_H
#define SMX_PY_VARIANTS_NOISY_H

#include "arrays.h"

PyObject *smx_py_noisy_softmax_loss(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_noisy_softmax_noise(PyObject *self, PyObject *args, PyObject *kwargs);

PyDoc_STRVAR(noisy_softmax_loss_doc,
             "noisy_softmax_loss($module, /, logits, targets, norms, alpha=0.1, seed=0, step=0, mode='annealed',\n"
             "                   row_offset=0, reduction='mean', ignore_index=-100, return_grad=False,\n"
             "                   grad_scale=1.0, threads=0)\n"
             "--\n\n"
             "Noisy Softmax (Chen, Deng and Du, CVPR 2017): cross-entropy with the target logit f_t replaced by\n"
             "f_t - alpha * max(norms - f_t, 0) * |xi|, xi ~ N(0, 1) drawn from Philox keyed by (seed, row, step)\n"
             "(row: row_offset + the index in the flattened leading axes, so that a batch split in pieces draws\n"
             "as if whole; the values: smx.noisy_softmax_noise(rows, seed, step, row0)).\n"
             "norms: ||W_t|| ||X|| per row, of shape logits.shape[:-1] (finite, >= 0).\n"
             "mode 'annealed' (the paper's), 'free' (f_t - alpha |xi|; norms may be None) or 'amplitude'\n"
             "(f_t - alpha norms |xi|). alpha = 0 is cross-entropy.\n"
             "logits: [..., C], the classes on the LAST axis, float32 or float64 (float16 is computed and\n"
             "returned as float32); targets: integers of shape logits.shape[:-1]. reduction 'mean' (over the\n"
             "rows not ignored), 'sum' (a float) or 'none' (an array, ignored rows 0). return_grad=True returns\n"
             "(loss, grad, grad_norms): grad_scale times the gradients of the returned loss (of the sum of the\n"
             "row losses for 'none') with respect to the logits and the norms, xi held fixed. threads >= 0:\n"
             "results do not depend on it. The GIL is released. Definition, special values and bounds:\n"
             "include/smx/smx_noisy.h.");
PyDoc_STRVAR(noisy_softmax_noise_doc,
             "noisy_softmax_noise($module, /, rows, seed=0, step=0, row0=0)\n--\n\n"
             "The noise xi of smx.noisy_softmax_loss for rows row0 .. row0 + rows - 1 (float64): Box-Muller\n"
             "on the Philox4x32-10 block of key seed and counter (0xFFFFFFFF, row, step low, step high);\n"
             "the recipe is in include/smx/smx_noisy.h.");

#endif
