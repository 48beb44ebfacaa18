/*
 * One row of sparsemax, entmax-1.5 or bisection entmax, in f32 or f64 (the
 * forward passes of sparse_forward.c; the losses of sparse_loss.c reuse them).
 */
#ifndef SMX_OPS_SPARSE_ROW_H
#define SMX_OPS_SPARSE_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

typedef enum smx_sparse_kind {
  SMX_SPARSE_SPARSEMAX,       /* pivot search */
  SMX_SPARSE_SPARSEMAX_SORT,  /* the sort oracle */
  SMX_SPARSE_ENTMAX15,        /* exact, pivot search */
  SMX_SPARSE_ENTMAX_BISECT    /* any alpha > 1 */
} smx_sparse_kind;

/* Bisection halvings: f32 (and half storage) and f64 */
#define SMX_ENTMAX_ITERS_F32 30
#define SMX_ENTMAX_ITERS_F64 50

/* Scratch bytes one row of n needs */
size_t smx_sparse_scratch(size_t n);

/* y = the op of x (n >= 1; y may equal x); scratch: smx_sparse_scratch(n) bytes.
 * *tau_out (may be NULL) gets the threshold relative to the row max (in the
 * op's z units), and *max_out the max; both NaN on a special row. */
void smx_sparse_row_f32(smx_sparse_kind kind, double alpha, const float *x, float *y, size_t n, uint32_t flags,
                        void *scratch, double *tau_out, double *max_out);
void smx_sparse_row_f64(smx_sparse_kind kind, double alpha, const double *x, double *y, size_t n, uint32_t flags,
                        void *scratch, double *tau_out, double *max_out);

#endif
