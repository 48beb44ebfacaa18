/*
 * smx — elementwise maps: sigmoid and sigmoid with a bias (sigmoid attention), with
 * their backward passes. Included by smx/smx.h; the options, threads, strides and
 * in-place rules of smx.h.
 */
#ifndef SMX_SMX_ELEM_H
#define SMX_SMX_ELEM_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- sigmoid */
/*
 * y = sigma(x / T) = 1 / (1 + exp(-x / T)) elementwise, T = opt->temperature
 * (0 means 1; any positive finite T). The one-row form takes n values; the
 * rows form rows x cols with leading dimensions ldx, ldy >= cols. y may
 * equal x (in place, same leading dimension); any other overlap is refused.
 * opt->algo and SMX_FLAG_MASKED_ROW_NAN are accepted and have no effect (no
 * row normalisation); opt->threads splits the rows.
 *
 * Special values, element by element (no row-level rule): NaN gives NaN,
 * +inf gives 1, -inf gives 0, -0 and +0 give 0.5. n = 1 is one sigmoid.
 *
 * Accuracy (f32, against a long-double reference, every ISA, any T):
 * |y - ref| <= 3 * FLT_EPSILON * ref for ref >= FLT_MIN, and |y - ref| <=
 * FLT_MIN below (the AVX2 kernels flush outputs under about 2^-127 to 0).
 * f64: |y - ref| <= 3 * DBL_EPSILON * ref for ref >= DBL_MIN, within DBL_MIN below.
 * Half storage (f16, bf16): f32 arithmetic, outputs rounded once:
 * |y - ref| <= u * ref + the f32 bound, u = 2^-11 (f16) or 2^-8 (bf16), for
 * outputs in the storage type's normal range; below, within half its
 * smallest subnormal.
 */
SMX_API smx_status smx_sigmoid_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_sigmoid_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                        const smx_options *opt);
SMX_API smx_status smx_sigmoid_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_sigmoid_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                        const smx_options *opt);
SMX_API smx_status smx_sigmoid_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                        size_t cols, const smx_options *opt);
SMX_API smx_status smx_sigmoid_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                         size_t cols, const smx_options *opt);

/* ---------------------------------------------------- sigmoid with a bias */
/*
 * y = sigma(x/T + b) elementwise (sigmoid attention, Ramapuram et al. 2024,
 * apple/ml-sigmoid-attention: b = -log n is its recommended bias), b = bias
 * finite, T = opt->temperature as for smx_sigmoid_*; b = 0 is exactly
 * smx_sigmoid_*. Formed as sigma((x + b T) / T): the sum is rounded once in
 * the arithmetic's type. Special values as smx_sigmoid_*.
 * Accuracy (f32): |y - ref| <= (3 + 2 |x/T + b| + 2 |b|) FLT_EPSILON ref (1 - ref)
 * + 3 FLT_EPSILON ref for ref >= FLT_MIN, FLT_MIN below (half storage: plus
 * its rounding, as smx_sigmoid_*).
 * Backward (any bias): reads y and dy (x may be NULL): dx = y (1 - y) dy / T
 * (T = opt->temperature). Accuracy (f32): 4 FLT_EPSILON |y (1 - y) dy / T| + FLT_MIN.
 */
SMX_API smx_status smx_sigmoid_bias_f32(const float *x, float *y, size_t n, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_bias_f64(const double *x, double *y, size_t n, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_bias_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_bias_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_bias_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_bias_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double bias, const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_sigmoid_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_ELEM_H */
