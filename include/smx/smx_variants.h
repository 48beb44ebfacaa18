/*
 * smx — the softmax family beyond softmax: elementwise and normalised
 * variants, each as a row operation of the engine (the options, threads,
 * strides and in-place rules of smx.h). Included by smx/smx.h.
 */
#ifndef SMX_SMX_VARIANTS_H
#define SMX_SMX_VARIANTS_H

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

#ifdef __cplusplus
}
#endif

#endif
