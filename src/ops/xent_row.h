/* One row of the fused cross-entropy (xent_row.c). */
#ifndef SMX_OPS_XENT_ROW_H
#define SMX_OPS_XENT_ROW_H

#include <stdint.h>

#include "ops/softmax_row_half.h"
#include "core/elem.h"
#include "kernels/f32-xent/ukernels.h"
#include "smx/smx.h"

/* What every row of one call shares. */
typedef struct smx_xent_params {
  const smx_f32_ukernels *k;     /* softmax family: ronline for the forward pass */
  const smx_xent_ukernels *g;    /* gradient family                               */
  smx_expc c;                    /* exp(a / T) = 2^(a c)                           */
  double inv_t;                  /* 1/T                                            */
  double eps;                    /* label smoothing                                */
  double z;                      /* z-loss coefficient                             */
  double s;                      /* gradient scale: 1, or 1/count for MEAN         */
  uint32_t flags;                /* SMX_FLAG_MASKED_ROW_NAN                        */
} smx_xent_params;

/*
 * Row of n >= 1 logits x (elem storage) with target t (0 <= t < n unless
 * ignored). Writes *loss (0 for an ignored row), *lse unless lse is NULL,
 * and the gradient g (n elements, same storage; may equal x) unless g is
 * NULL. An ignored row is not read at all when lse is NULL.
 */
void smx_xent_row(const smx_xent_params *p, smx_elem elem, const void *x, size_t n, int64_t t, int ignored,
                  double *loss, float *lse, void *g);

/* What every f64 row of one call shares (xent_row_f64.c). */
typedef struct smx_xent_row64 {
  double t;            /* T (resolved: > 0, finite)                              */
  double eps, z, s;    /* label smoothing, z-loss, gradient scale                */
  uint32_t flags;      /* SMX_FLAG_MASKED_ROW_NAN                                */
} smx_xent_row64;

/* The f64 row: as smx_xent_row, with a double lse and gradient; logp: a scratch row of n doubles. */
void smx_xent_row_f64(const smx_xent_row64 *p, const double *x, size_t n, int64_t t, int ignored, double *loss,
                      double *lse, double *g, double *logp);

#endif
