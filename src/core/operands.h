/*
 * Argument checks shared by every entry point: the span of a strided matrix,
 * overlap between arguments, and the sizes of per-row arrays. An entry point
 * lists its arguments once (smx_arg) and asks smx_check_args(); nothing else
 * in the library compares pointers.
 */
#ifndef SMX_CORE_OPERANDS_H
#define SMX_CORE_OPERANDS_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

/*
 * Elements spanned by rows x cols with leading dimension ld (rows, cols >= 1,
 * ld >= cols), or 0 when that many elements of the widest type the library
 * stores (8 bytes) would exceed PTRDIFF_MAX bytes. One limit for every
 * element type keeps the refusals the same across f16, f32 and f64.
 */
size_t smx_span(size_t rows, size_t cols, size_t ld);

/* n * m (n, m >= 1), or 0 when it exceeds limit. */
size_t smx_mul(size_t n, size_t m, size_t limit);

/* 1 if [a, a + a_bytes) and [b, b + b_bytes) overlap. */
int smx_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/*
 * One argument of a call: a rows x cols matrix of es-byte elements with
 * leading dimension ld (a vector of n: rows 1, cols n, ld n). An absent
 * optional argument has p == NULL and is skipped.
 */
typedef struct smx_arg {
  const void *p;
  size_t rows, cols, ld, es;
  int out;          /* written by the call */
  int alias;        /* out only: 1 + the index of the input it may be exactly
                       (same pointer and leading dimension: in place); 0 none */
} smx_arg;

#define SMX_ARG_IN(ptr, r, c, l, size) { (const void *)(ptr), (r), (c), (l), (size), 0, 0 }
#define SMX_ARG_OUT(ptr, r, c, l, size, in_place_of) { (const void *)(ptr), (r), (c), (l), (size), 1, (in_place_of) }

/*
 * SMX_OK when every present argument's span exists and no output overlaps
 * another argument (except its in-place input, exactly); SMX_E_INVALID_ARG
 * otherwise. Requires rows >= 1 and cols >= 1 for every present argument.
 */
smx_status smx_check_args(const smx_arg *a, size_t n);

/*
 * The operand checks of a row operation y = f(x) (es-byte elements), in the
 * order every such entry point refuses: leading dimensions below cols, then
 * an empty call (rows or cols 0: SMX_OK with *empty set, nothing is read),
 * then absent pointers and spans; y may be x exactly (in place).
 */
smx_status smx_check_x_y(const void *x, size_t ldx, const void *y, size_t ldy, size_t rows, size_t cols, size_t es,
                         int *empty);

/* The same for a backward from y and dy into dx: dx may be exactly y or
 * exactly dy (same leading dimension), or both when they are one buffer. */
smx_status smx_check_y_dy_dx(const void *y, size_t ldy, const void *dy, size_t lddy, const void *dx, size_t lddx,
                             size_t rows, size_t cols, size_t es, int *empty);

/* The operand checks of a top-k: x (es-byte elements) into rows x k values
 * (vs-byte elements) and indices; k above cols is refused with the leading
 * dimension, rows or k 0 is an empty call (*empty set), and no output may
 * overlap x or the other output. */
smx_status smx_check_x_topk(const void *x, size_t ldx, size_t es, size_t rows, size_t cols, size_t k,
                            const void *values, size_t vs, const int64_t *indices, int *empty);

#endif
