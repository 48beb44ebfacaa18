/*
 * smx — sparse maps: sparsemax, 1.5-entmax and bisection entmax, their backward
 * passes and their Fenchel-Young losses. Included by smx/smx.h.
 */
#ifndef SMX_SMX_SPARSE_H
#define SMX_SMX_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ sparsemax, entmax */
/*
 * sparsemax(x) = argmin_{p in simplex} ||p - x||^2 (Martins & Astudillo 2016):
 * y_i = max(x_i - tau, 0) with tau such that sum_i y_i = 1.
 * entmax15(x) = 1.5-entmax (Peters, Niculae & Martins 2019):
 * y_i = max(x_i / 2 - tau, 0)^2 with sum_i y_i = 1, computed exactly.
 * entmax(x, alpha), alpha > 1: y_i = max((alpha - 1) x_i - tau, 0)^(1/(alpha-1)),
 * tau by bisection as the entmax package's EntmaxBisectFunction: the bracket
 * [max - 1, max - (1/n)^(alpha-1)] on (alpha - 1) x, halved 30 times for f32,
 * f16 and bf16 rows and 50 times (the package's default) for f64 rows, so
 * |tau - tau*| <= 2^-30 (resp. 2^-50); y is formed at the last midpoint and
 * divided by its sum (ensure_sum_one). alpha = 2 is sparsemax and alpha = 1.5
 * entmax15 (up to the tolerance); alpha <= 1 (softmax is the limit alpha -> 1:
 * use smx_softmax_*), NaN or inf gives SMX_E_INVALID_ARG.
 *
 * Algorithms: the row max (one vector pass), the candidates that can reach the
 * support (entries >= max - 1/(alpha - 1): one vector pass), the threshold on
 * the candidates in double (sparsemax and entmax15: a randomised pivot search,
 * expected O(k) for k candidates, Duchi et al. 2008; the rule of entmax15 is
 * Peters et al.'s Alg. 2 support test), and one vector pass that writes y.
 * A narrow row (more than 1024 candidates) first raises the threshold's lower
 * bound: the exact threshold of a strided sample, then Newton steps on the
 * whole row in vector passes (for sparsemax, Michelot's algorithm); bisection
 * entmax at alpha 1.5 and 2 runs the halvings whose sign is beyond rounding as
 * vector passes. Other alpha on a narrow row run the halvings in scalar double
 * on every candidate (a pow each): much slower than softmax there.
 * smx_sparsemax_sort_rows_* is the O(n log n) sort-based algorithm
 * (Martins & Astudillo Alg. 1), kept as the oracle: the same support and the
 * same bits as smx_sparsemax_rows_*.
 *
 * Forms as smx_sigmoid_*: one row of n, or rows x cols with leading dimensions;
 * y may equal x (in place). opt->threads splits the rows (bitwise equal for any
 * thread count); opt->algo is ignored; opt->temperature must be 0 or 1 (other
 * values: SMX_E_INVALID_ARG: scale x instead); SMX_FLAG_MASKED_ROW_NAN is the
 * masked-row flag below. Each row uses a scratch of about 32 bytes per column
 * (SMX_E_NOMEM if it cannot be had).
 *
 * Special values (the softmax policy, since every one of these is a limit of
 * softmax's shape): -inf entries get 0 and take no part (a row with -inf
 * entries equals the row without them); a row with no entry above -inf gives
 * 0 everywhere (NaN with SMX_FLAG_MASKED_ROW_NAN); a NaN anywhere gives a NaN
 * row; k entries equal to +inf (no NaN) give 1/k on them and 0 elsewhere (the
 * limit as they grow together); n = 1 gives 1 for a finite entry.
 *
 * Accuracy, against a long-double reference, every ISA, eps = 2^-23 (f32) or
 * 2^-52 (f64), tau the exact threshold relative to the max (in [-1, 0)),
 * rho_i = |fl(x_i - max) - (x_i - max)| the rounding of x_i - max in the
 * arithmetic type for the entries within 2/(alpha - 1) of the max (0 whenever
 * |max| >= 2, and 0 further down, where y_i = 0 exactly), rho_S the largest
 * rho_j, u = 2^-11 (f16), 2^-8 (bf16), 0 else, and r = rho_i + rho_S + 4 eps_t:
 *   sparsemax: |y_i - ref_i| <= 2 eps ref_i + r + u ref_i,
 *   entmax15:  |y_i - ref_i| <= 5 eps ref_i + 2 sqrt(ref_i) r + r^2 + u ref_i,
 *   with eps_t = eps^2 for f32 and half rows (tau carried in two floats) and eps for f64;
 *   entmax:    |y_i - ref_i| <= 8 eps ref_i + 2 d (ref_i^(2-alpha) + ref_i G) / (alpha - 1)
 *              + 4 d^(1/(alpha-1)) / (alpha - 1) + u ref_i,
 *   d = 2^-30 (f32, half) or 2^-50 (f64), the bisection's tolerance, plus
 *   2^-50 + (alpha - 1)(rho_i + rho_S), and G = sum_j ref_j^(2-alpha) (the d^(1/(alpha-1)) term: an entry
 *   within d of the threshold, ref_i = 0, may come out as up to that much; the first-order term misses it);
 * plus half the storage type's smallest subnormal below its normal range. The
 * outputs are >= 0 and sum to 1 within n eps.
 */
SMX_API smx_status smx_sparsemax_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_sparsemax_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_sparsemax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                          const smx_options *opt);
SMX_API smx_status smx_sparsemax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                          size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                          size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                           size_t cols, const smx_options *opt);
/* The sort-based oracle (O(n log n) per row), same contract and results. */
SMX_API smx_status smx_sparsemax_sort_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                               size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_sort_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                               size_t cols, const smx_options *opt);

SMX_API smx_status smx_entmax15_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_entmax15_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_entmax15_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                         const smx_options *opt);
SMX_API smx_status smx_entmax15_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                         size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                         size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                          size_t cols, const smx_options *opt);

SMX_API smx_status smx_entmax_f32(const float *x, float *y, size_t n, double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_f64(const double *x, double *y, size_t n, double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                       double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows, size_t cols,
                                       double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                       size_t cols, double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                        size_t cols, double alpha, const smx_options *opt);

/*
 * Vector-Jacobian products, from y alone (x is not read and may be NULL): with
 * g_i = y_i^(2 - alpha) where y_i > 0 and 0 elsewhere,
 *   dx_i = g_i (dy_i - sum_j g_j dy_j / sum_j g_j)
 * (sparsemax: g = the support's indicator, dx_i = dy_i - mean over the support
 * of dy, 0 off it; entmax15: g = sqrt(y)). dx may be y or dy (same leading
 * dimension), or both when they are one buffer. A NaN in y gives a NaN row; a
 * row without support (a masked row) gives 0; dy off the support is not read
 * into the result. Same options as the forward passes (temperature 0 or 1).
 * Accuracy (f32, f64, against long double): |dx_i - ref_i| <= 4 eps g_i
 * (|dy_i| + |mu| + nu) + the smallest normal, mu = sum g dy / sum g and
 * nu = sum g |dy| / sum g (the sums are compensated; the products g dy are
 * rounded once each).
 */
SMX_API smx_status smx_sparsemax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                              const smx_options *opt);
SMX_API smx_status smx_sparsemax_backward_f64(const double *x, const double *y, const double *dy, double *dx,
                                              size_t n, const smx_options *opt);
SMX_API smx_status smx_sparsemax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
                                                   const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows,
                                                   size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
                                                   const double *dy, size_t lddy, double *dx, size_t lddx,
                                                   size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                             const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_f64(const double *x, const double *y, const double *dy, double *dx,
                                             size_t n, const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
                                                  const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows,
                                                  size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
                                                  const double *dy, size_t lddy, double *dx, size_t lddx,
                                                  size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                           double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
                                           double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
                                                const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows,
                                                size_t cols, double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
                                                const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows,
                                                size_t cols, double alpha, const smx_options *opt);

/* f16 / bf16 storage: f32 arithmetic on the widened y and dy, dx rounded once
 * (the f32 bound plus u |ref|, u = 2^-11 or 2^-8; below the storage type's
 * normal range, within half its smallest subnormal). */
SMX_API smx_status smx_sparsemax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double alpha,
    const smx_options *opt);
SMX_API smx_status smx_entmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double alpha,
    const smx_options *opt);

/*
 * The Fenchel-Young losses of these maps (Blondel, Martins & Niculae 2020;
 * sparsemax's is the sparsemax loss of Martins & Astudillo 2016, eq. 18): per
 * row, with p the map's output and Omega(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1)),
 *   loss_r = Omega(p) + <p, x> - x_t  (>= 0),   grad_r = s (p - e_t),
 * alpha = 2 (sparsemax), 1.5 (entmax15, exact) or any alpha > 1 (bisection), as
 * smx_cross_entropy_f32 (include/smx/smx_grad.h) does for softmax: targets are
 * rows int64 class indices; opt->loss (smx.h; NULL: SMX_LOSS_EXT_INIT) gives
 * the reduction (MEAN over the rows not ignored, SUM, NONE), ignore_index (loss 0,
 * gradient 0) and grad_scale (s = grad_scale, divided by the rows not ignored for
 * MEAN); opt gives threads and SMX_FLAG_MASKED_ROW_NAN; label_smoothing and z_loss
 * must be 0 and the temperature 0 or 1 (else SMX_E_INVALID_ARG). loss: rows values
 * (NONE) or one; grad: NULL, or rows x cols with leading dimension ldg, which
 * may be the logits exactly. Targets are all checked before anything is written.
 * Special rows: a NaN gives a NaN loss and gradient; +inf entries give a NaN
 * loss and the gradient of the map's limit (1/k on the +inf entries); a row
 * with no entry above -inf gives +inf (NaN with the flag), gradient -s e_t; a
 * target at -inf gives +inf. Accuracy: the loss within 8 eps max(1, |loss|) +
 * the map's error times max|x - max| over the support; the gradient within the
 * map's bound times |s|, plus the rounding of p_t - 1 (eps |grad_t|).
 */
SMX_API smx_status smx_sparsemax_loss_f32(const float *logits, size_t ld, const int64_t *targets, float *loss,
                                   float *grad, size_t ldg, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_sparsemax_loss_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                   double *grad, size_t ldg, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_loss_f32(const float *logits, size_t ld, const int64_t *targets, float *loss,
                                   float *grad, size_t ldg, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax15_loss_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                   double *grad, size_t ldg, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_entmax_loss_f32(const float *logits, size_t ld, const int64_t *targets, float *loss,
                                   float *grad, size_t ldg, size_t rows, size_t cols, double alpha, const smx_options *opt);
SMX_API smx_status smx_entmax_loss_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                   double *grad, size_t ldg, size_t rows, size_t cols, double alpha, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_SPARSE_H */
