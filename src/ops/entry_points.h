/*
 * Macros that write an operation's public entry points, one line per
 * operation (and dtype), so that the signatures the public headers declare
 * are spelled once and every dtype of an operation calls the same driver.
 */
#ifndef SMX_OPS_ENTRY_POINTS_H
#define SMX_OPS_ENTRY_POINTS_H

#include "core/elem.h"
#include "smx/smx.h"

/* An operation's own parameters, passed as a macro name and written `cols OWN()`: function-like, so that a
 * per-operation macro passes the name on to the per-dtype one before its comma appears. */
#define NO_PARAM()                     /* the operation has none */
#define ALPHA_PARAM() , double alpha   /* alpha-entmax's alpha */

/* Forward and backward, strided rows in every dtype and the contiguous row in f32 / f64, over the file's
 *   static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *g, size_t ldg,
 *                         void *out, size_t ldo, size_t rows, size_t cols OWN_DECL(), const smx_options *opt)
 * (forward: g unused, out = y; backward: g = dy, out = dx). The backward reads x and dy: y is in the
 * signature for the API convention and is not read. OWN_DECL() declares the operation's own parameters
 * and OWN_ARG() passes them on (NO_PARAM for both where it has none). */
#define SMX_X_DY_ENTRIES(NAME, OWN_DECL, OWN_ARG)                      \
  SMX_X_DY_ROWS_(NAME, f32, float, SMX_ELEM_F32, OWN_DECL, OWN_ARG)    \
  SMX_X_DY_ROWS_(NAME, f64, double, SMX_ELEM_F64, OWN_DECL, OWN_ARG)   \
  SMX_X_DY_ROWS_(NAME, f16, uint16_t, SMX_ELEM_F16, OWN_DECL, OWN_ARG) \
  SMX_X_DY_ROWS_(NAME, bf16, uint16_t, SMX_ELEM_BF16, OWN_DECL, OWN_ARG) \
  SMX_X_DY_ROW_(NAME, f32, float, OWN_DECL, OWN_ARG)                   \
  SMX_X_DY_ROW_(NAME, f64, double, OWN_DECL, OWN_ARG)

#define SMX_X_DY_ROWS_(NAME, SFX, T, ELEM, OWN_DECL, OWN_ARG)                                                \
  smx_status smx_##NAME##_rows_##SFX(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols     \
                                     OWN_DECL(), const smx_options *opt) {                                  \
    return run(ELEM, 0, x, ldx, NULL, 0, y, ldy, rows, cols OWN_ARG(), opt);                                \
  }                                                                                                         \
  smx_status smx_##NAME##_backward_rows_##SFX(const T *x, size_t ldx, const T *y, size_t ldy, const T *dy,  \
                                              size_t lddy, T *dx, size_t lddx, size_t rows, size_t cols     \
                                              OWN_DECL(), const smx_options *opt) {                         \
    (void)y; (void)ldy;                                                                                     \
    return run(ELEM, 1, x, ldx, dy, lddy, dx, lddx, rows, cols OWN_ARG(), opt);                             \
  }
#define SMX_X_DY_ROW_(NAME, SFX, T, OWN_DECL, OWN_ARG)                                                       \
  smx_status smx_##NAME##_##SFX(const T *x, T *y, size_t n OWN_DECL(), const smx_options *opt) {           \
    return smx_##NAME##_rows_##SFX(x, n, y, n, 1, n OWN_ARG(), opt);                                        \
  }                                                                                                         \
  smx_status smx_##NAME##_backward_##SFX(const T *x, const T *y, const T *dy, T *dx, size_t n OWN_DECL(),  \
                                         const smx_options *opt) {                                          \
    return smx_##NAME##_backward_rows_##SFX(x, n, y, n, dy, n, dx, n, 1, n OWN_ARG(), opt);                 \
  }

#endif
