/*
 * The engine side of the losses with one class target per row (focal, the
 * spherical Z-loss): option and argument checks (every target before
 * anything is written), the rows on the task grid, and the reduction of the
 * row losses in row order, in double, so that every result is the same for
 * every thread count. Each loss supplies its row function.
 */
#ifndef SMX_OPS_LOSS_ROWS_H
#define SMX_OPS_LOSS_ROWS_H

#include <stdint.h>

#include "core/elem.h"
#include "core/options.h"
#include "smx/smx.h"

/* One row: its number r in the call, x (n >= 1 elements of the call's type),
 * its target t in [0, n), the gradient scale s (grad_scale, or grad_scale /
 * count for MEAN); writes *loss and, when g is not NULL, the row's gradient
 * (n elements; g may be x). */
typedef void (*smx_loss_row_fn)(const void *ctx, size_t r, const void *x, size_t n, size_t t, double s, double *loss,
                                void *g);

typedef struct smx_loss_call {
  smx_elem elem;              /* SMX_ELEM_F32 (float loss) or SMX_ELEM_F64 (double loss) */
  const void *logits;
  size_t ld, rows, cols;
  const int64_t *targets;
  const smx_loss_resolved *opt; /* smx_resolve_loss_options, by the loss (it knows what it uses) */
  void *loss;                 /* rows values for NONE, else one */
  void *grad;                 /* NULL, or rows x cols with ldg; may be logits exactly */
  size_t ldg;
  smx_loss_row_fn row;
  const void *ctx;
} smx_loss_call;

smx_status smx_loss_rows(const smx_loss_call *c);


#endif
