/*
 * smx.focal_loss, info_nce, dice_loss, and what every target loss shares: its keywords and its targets'
 * checks (variants_loss.c; also used by cross_entropy and the op table's target losses, tloss.c).
 */
#ifndef SMX_PY_VARIANTS_LOSS_H
#define SMX_PY_VARIANTS_LOSS_H

#include <stdint.h>

#include "arrays.h"

/* The keywords every target loss shares: reduction, ignore_index, return_grad, grad_scale, threads. */
typedef struct smx_py_loss_args {
  smx_options o;     /* o.loss = &e (set by smx_py_loss_parse; a smx_py_loss_args is never copied) */
  smx_loss_ext e;
  int want_grad;
} smx_py_loss_args;

/* Reads the keywords (any may be NULL: the default) into *a; 0, or -1 with a TypeError / ValueError naming fn
 * and the keyword. */
int smx_py_loss_parse(const char *fn, PyObject *red, PyObject *ign, PyObject *rg, PyObject *gs, PyObject *thr,
                      smx_py_loss_args *a);

/* targets as a C int64 array (uint64 and floats refused) of logits' shape without the last (class) axis, each
 * in [0, cols) or ignore_index; logits must have a class (cols > 0) unless there are no rows. A new reference,
 * or NULL with a TypeError / ValueError naming the argument, the rule and the first bad target. */
PyArrayObject *smx_py_loss_targets(const char *fn, PyObject *to, PyArrayObject *logits, int64_t ignore_index);

PyObject *smx_py_focal_loss(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_info_nce(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_dice_loss(PyObject *self, PyObject *args, PyObject *kwargs);

#define SMX_PY_LOSS_COMMON_DOC                                                                              \
  "logits: [..., C], the classes on the LAST axis (as smx.cross_entropy), float32 or float64 (float16\n"  \
  "is computed and returned as float32); targets: integers of shape logits.shape[:-1].\n"                 \
  "reduction 'mean' (over the rows not ignored), 'sum' (a float) or 'none' (an array, ignored rows 0);\n" \
  "return_grad=True returns (loss, grad), grad_scale times the gradient of the returned loss (of the\n"   \
  "sum of the row losses for 'none') in the computing dtype. threads >= 0: results do not depend on it.\n" \
  "The GIL is released. Definitions, special values and bounds: include/smx/smx_losses.h.\n"

PyDoc_STRVAR(focal_loss_doc,
             "focal_loss($module, /, logits, targets, gamma=2.0, alpha=None, reduction='mean', ignore_index=-100,\n"
             "           return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "Focal loss on softmax (Lin et al. 2017): -alpha_t (1 - p_t)^gamma log p_t per row, p = softmax\n"
             "over the classes; gamma = 0 and no alpha is cross-entropy. alpha: None or C per-class weights.\n"
             SMX_PY_LOSS_COMMON_DOC);

PyDoc_STRVAR(info_nce_doc,
             "info_nce($module, /, sim, targets=None, temperature=1.0, symmetric=True, reduction='mean',\n"
             "         ignore_index=-100, return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "InfoNCE over a 2-D similarity matrix sim (rows x cols): the cross-entropy of each row of\n"
             "sim / temperature against its positive column (targets[r], default r: the diagonal);\n"
             "symmetric=True (CLIP) averages it with the cross-entropy of that column (down the rows).\n"
             "Symmetric targets must be distinct. reduction 'mean' / 'sum' give a float, 'none' one\n"
             "value per row; return_grad=True returns (loss, grad wrt sim). float32 or float64.\n"
             "Definition and bounds: include/smx/smx_losses.h. The GIL is released.");
PyDoc_STRVAR(dice_loss_doc,
             "dice_loss($module, /, logits, targets, smooth=1.0, reduction='mean', ignore_index=-100,\n"
             "          return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "Soft Dice loss of softmax(logits) (classes on the last axis) summed over every other axis:\n"
             "Dice_c = (2 sum P G + smooth) / (sum P + sum G + smooth) per class c; 'mean' gives\n"
             "1 - mean_c Dice_c, 'sum' sum_c (1 - Dice_c), 'none' the C values 1 - Dice_c. targets: integer\n"
             "classes of shape logits.shape[:-1] (one-hot; ignore_index rows left out) or a float array of\n"
             "the logits' shape (soft targets). return_grad=True returns (loss, grad). float32 or float64.\n"
             "Definition and bounds: include/smx/smx_losses.h. The GIL is released.");

#endif
