/*
 * What every target loss shares: its keywords and its targets' checks (variants_loss.c, whose focal_loss,
 * info_nce and dice_loss use them, as do cross_entropy and the op table's target losses, tloss.c).
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

#endif
