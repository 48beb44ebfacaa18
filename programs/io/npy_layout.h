/*
 * Where the elements of a row live in a Fortran-order (column-major) file.
 * Row r of the rows x cols view has the C-order multi-index (i0, ..., i(k-1))
 * over the leading dimensions P = shape[0 .. k); in column-major order its
 * element j sits at element index F(r) + rows * j, where F(r) = i0 + P0 * (i1
 * + P1 * (...)). For 2-d arrays F(r) = r, so a column's rows are consecutive;
 * for more dimensions consecutive rows are strided, but a block of them still
 * falls in a window of the column that is usually small enough to transfer
 * whole, so the reader and writer move windows, not single elements.
 */
#ifndef SMX_IO_NPY_LAYOUT_H
#define SMX_IO_NPY_LAYOUT_H

#include <stdint.h>

#include "io/npy_io.h"

/* 1 when the file's layout is row-major for our purpose: C order, or a shape
 * with at most one dimension above 1 (then both orders coincide). */
int smx_io_layout_is_c(const smx_npy_info *info);

/* Walks F(r) for consecutive rows r, in O(1) amortised per step. */
typedef struct smx_io_frow {
  int np;                              /* leading dimensions: ndim - 1          */
  uint64_t dims[SMX_NPY_MAX_DIMS];
  uint64_t stride[SMX_NPY_MAX_DIMS];   /* column-major strides of P             */
  uint64_t idx[SMX_NPY_MAX_DIMS];      /* C-order multi-index of the row        */
  uint64_t f;                          /* F(r)                                  */
} smx_io_frow;

/* Positions the walk at row (< info->rows). */
void smx_io_frow_start(smx_io_frow *it, const smx_npy_info *info, uint64_t row);
/* Moves to the next row. */
void smx_io_frow_next(smx_io_frow *it);

/* The smallest element range [*lo, *lo + *span) holding f[0 .. m) (m > 0);
 * returns 1 when f is exactly lo, lo + 1, ... (a 2-d column: one run). */
int smx_io_span(const uint64_t *f, size_t m, uint64_t *lo, uint64_t *span);

#endif
