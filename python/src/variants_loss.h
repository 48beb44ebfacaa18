/* smx.focal_loss, spherical_z_loss, info_nce, dice_loss (variants_loss.c). */
#ifndef SMX_PY_VARIANTS_LOSS_H
#define SMX_PY_VARIANTS_LOSS_H

#include "arrays.h"

PyObject *smx_py_focal_loss(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *smx_py_spherical_z_loss(PyObject *self, PyObject *args, PyObject *kwargs);
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
PyDoc_STRVAR(spherical_z_loss_doc,
             "spherical_z_loss($module, /, logits, targets, a=1.0, b=0.0, reduction='mean', ignore_index=-100,\n"
             "                 return_grad=False, grad_scale=1.0, threads=0)\n--\n\n"
             "The Z-loss of de Brebisson and Vincent 2016 (arXiv 1604.08859), a member of the spherical\n"
             "family: softplus(a (b - z_t)) / a per row, z_t = (x_t - mean(x)) / std(x) (population std).\n"
             "Not PaLM's z-loss (smx.cross_entropy's z_loss=). a > 0, b finite.\n" SMX_PY_LOSS_COMMON_DOC);

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
