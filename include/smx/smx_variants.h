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

/* ============================================================== row variants
 * Softpick, SSMax, self-adjust softmax, adaptive temperature, top-k softmax,
 * sigmoid with a bias, softplus-l1, standardised softmax and mixture of
 * softmaxes (issue 13, items 3-10). Common rules:
 *  - one-row forms take n values; rows forms rows x cols with leading
 *    dimensions >= cols; y may equal x (in place, same leading dimension)
 *    unless said otherwise; any other overlap is refused (SMX_E_INVALID_ARG);
 *  - backward passes (vector-Jacobian products) take x, y and dy and write
 *    dx; each says which of x / y it reads (the other may be NULL); dx may
 *    equal dy;
 *  - opt->threads splits the rows (bitwise the same results for every count);
 *    opt->temperature and opt->algo are not used (parameters are explicit);
 *  - f16 / bf16 rows compute in f32 and round the outputs once;
 *  - f32 accuracy is stated against a long-double reference and checked by
 *    the op test driver (tests/ops/) at every ISA and thread count; the f64
 *    forms meet the same bounds with DBL_EPSILON for FLT_EPSILON.
 */

/* ---------------------------------------------------------------- softpick */
/*
 * Softpick (Zuhri et al. 2025, arXiv 2504.20966), rectified, not summing to 1,
 * in the stable form of the reference code:
 *   y_i = ReLU(e^(x_i-m) - e^(-m)) / (sum_{x_j > -inf} |e^(x_j-m) - e^(-m)| + eps)
 * m the max over the finite entries; eps >= 0 finite (the Python default 1e-6).
 * Special values: NaN anywhere: the row is NaN. A +inf entry: 1/k on the k
 * +inf entries, 0 elsewhere. Masked (-inf) entries give 0 and are left out
 * of the denominator; a row without finite entries gives 0. x <= 0 gives
 * exactly 0; a row of zeros gives 0 (0 / eps). n = 1: one entry, by the formula.
 * Accuracy (f32): |y_i - ref_i| <= 8 FLT_EPSILON (E_i (2 + |x_i - m|) + e^-m) / D + FLT_MIN,
 * E_i = e^(x_i-m), D the denominator (the subtraction E_i - e^-m is exact up
 * to the rounding of its operands, hence the absolute term near x_i = 0).
 * Backward: reads x and dy (y may be NULL): the exact derivative,
 *   dx_j = (E_j/D)([x_j>0] dy_j - sign(x_j) <dy,y>) - [j = first argmax] (eps/D) <dy,y>;
 * 0 on rows with a +inf entry or no finite entry, NaN on rows with NaN.
 * Accuracy (f32): |dx_j - ref_j| <= 8 FLT_EPSILON (E_j/D)(2 + |x_j - m|)(|dy_j| + |<dy,y>| + a) + FLT_MIN,
 * a = sum_i |dy_i| E_i (2 + |x_i - m|) / D (the rounding of <dy,y>).
 */
SMX_API smx_status smx_softpick_f32(const float *x, float *y, size_t n, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_f64(const double *x, double *y, size_t n, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                         double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                         size_t cols, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                         size_t cols, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                          size_t cols, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                             double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_backward_f64(const double *x, const double *y, const double *dy, double *dx,
                                             size_t n, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
                                                  const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows,
                                                  size_t cols, double eps, const smx_options *opt);
SMX_API smx_status smx_softpick_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
                                                  const double *dy, size_t lddy, double *dx, size_t lddx,
                                                  size_t rows, size_t cols, double eps, const smx_options *opt);

/* ------------------------------------------------------------------- SSMax */
/*
 * Scalable-Softmax (Nakanishi 2025, arXiv 2501.19399): y = softmax((s log n) x),
 * s >= 0 finite (a learnable scalar in the paper; negative s is refused).
 * lens: NULL for the row length (cols), else one count n per row (>= 1; the
 * keys a query sees in prefix or causal use). The one-row forms take lens as a
 * pointer to one count, or NULL. It is softmax at temperature 1/(s log n)
 * through the softmax engine (same kernels and algorithms as smx_softmax).
 * Special values: those of smx_softmax (NaN: NaN row; +inf entries: 1/k on
 * them; -inf entries 0; no entry above -inf: 0). s log n = 0 (n = 1 or
 * s = 0): uniform over the entries above -inf (the limit).
 * Accuracy: smx_softmax's bound at T = 1/(s log n) (tests/ops: the bound of
 * the softmax rows, with T carried exactly as a double).
 * Backward: reads y and dy (x may be NULL): dx = (s log n) y (dy - <dy,y>),
 * the gradient with s held fixed. Accuracy: that of smx_softmax_backward.
 */
SMX_API smx_status smx_ssmax_f32(const float *x, float *y, size_t n, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_f64(const double *x, double *y, size_t n, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n, double s, const int64_t *lens,
    const smx_options *opt);
SMX_API smx_status smx_ssmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, double s, const int64_t *lens, const smx_options *opt);
SMX_API smx_status smx_ssmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n, double s, const int64_t *lens,
    const smx_options *opt);
SMX_API smx_status smx_ssmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, double s, const int64_t *lens, const smx_options *opt);

/* ---------------------------------------------------- adaptive temperature */
/*
 * Adaptive temperature (Velickovic et al. 2024, arXiv 2410.01104, the
 * paper's code): p = softmax(x), H = -sum p_i log(p_i + 1e-9),
 * beta = H > 0.5 ? max(poly(H), 1) : 1 with
 * poly(H) = -0.037 H^4 + 0.481 H^3 - 2.3 H^2 + 4.917 H - 1.791, then
 * y = softmax(beta x). Both softmaxes through the softmax engine; the entropy
 * in double. Special values: smx_softmax's (a NaN row gives NaN, beta = 1).
 * Accuracy: smx_softmax's bound at T = 1/beta plus the effect of beta's
 * rounding: (4 + |t_i|/2 + (|t_i| + sum_j y_j |t_j|) s) eps y_i + FLT_MIN,
 * t = beta (x - max), s the relative rounding of beta in eps (from p's and
 * the entropy's roundings through poly'(H)/beta; computed per row by
 * tests/ops/ref_vnorm.c).
 * Backward: reads x and dy (y may be NULL, it is recomputed): the exact
 * derivative of the forward, beta's dependence on x included where
 * beta = poly(H) > 1 (the paper applies beta at inference only):
 * dx = beta y (g - <g,y>) + (dL/dbeta) poly'(H) p (h - <h,p>),
 * dL/dbeta = sum y_i x_i (g_i - <g,y>), h_i = -log(p_i + 1e-9) - p_i/(p_i + 1e-9).
 * Rows with a +inf entry or NaN: undefined gradient (NaN or 0).
 */
SMX_API smx_status smx_adaptive_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);

/* ------------------------------------------------- standardised softmax */
/*
 * Logit standardisation (Sun et al., CVPR 2024, "Logit Standardization in
 * Knowledge Distillation"; the KD.py of sunshangquan/logit-standardization-KD):
 * z = (x - mean) / (std + 1e-7), std unbiased (n - 1), 1e-7 added to the std;
 * y = softmax(z / T), T = temperature > 0 finite. Mean and std are over the
 * finite entries; -inf entries give 0 and are left out; one finite entry
 * (or n = 1) has std 0, so z = 0 and y = 1 there. NaN: NaN row; +inf
 * entries: 1/k on them. Computed as softmax(x / (T (std + 1e-7))) through
 * the softmax engine (softmax is shift-invariant).
 * Accuracy: smx_softmax's bound plus the std's rounding (4 eps relative):
 * (4 + |t_i|/2 + 4 (|t_i| + sum_j y_j |t_j|)) eps y_i + FLT_MIN, t = (z - max z)/T.
 * f64 rows spanning more than DBL_MAX are a known issue (tests/ops/known_issues.c).
 * Backward: reads x and dy (y may be NULL, it is recomputed): with
 * gz = (1/T) y (dy - <dy,y>), dx_j = (gz_j - mean gz)/(sd + eps)
 * - (sum gz_i (x_i - mean)) (x_j - mean) / ((sd + eps)^2 (nf - 1) sd) on
 * finite entries, 0 on the others, NaN on NaN rows.
 */
SMX_API smx_status smx_standardize_softmax_f32(const float *x, float *y, size_t n, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_f64(const double *x, double *y, size_t n, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n, double temperature,
    const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, double temperature, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n, double temperature,
    const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, double temperature, const smx_options *opt);

/* ------------------------------------------------------ self-adjust softmax */
/*
 * Self-Adjust Softmax (Zheng et al. 2025, arXiv 2502.18277 / EMNLP 2025):
 * normalized = 0: y = x * softmax(x); normalized != 0:
 * y = (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x),
 * x_min / x_max over the finite entries (the paper states no epsilon: a row
 * whose finite entries are all 0 has a zero range and gives y = 0).
 * Special values: masked (-inf) entries give 0 (never -inf * 0 = NaN); a
 * row without an entry above -inf gives 0; NaN: NaN row; +inf entries give
 * +inf (x * 1/k), 0 elsewhere. n = 1: x (basic) or (x - lo)/R (normalised).
 * Not a distribution: the basic form can be negative.
 * Accuracy (f32): smx_softmax's bound on p times |w|, plus 4 FLT_EPSILON |y_i|
 * (tests/ops: 8 FLT_EPSILON (1 + |x_i - m|) |w_i| p_i + FLT_MIN).
 * Backward: reads x and dy (y may be NULL; softmax(x) is recomputed); the
 * exact derivative: dx = p (g (w + s) - <p, g w>) with w = (x - lo) s,
 * s = 1 / R (1 and lo = 0 for the basic form), plus for the normalised form
 * the terms of lo and hi at the first minimum (x_min < 0) and first maximum
 * (x_max > 0): dx[argmin] += (<p,g w> - <p,g>) s, dx[argmax] -= <p,g w> s.
 */
SMX_API smx_status smx_sa_softmax_f32(const float *x, float *y, size_t n, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_f64(const double *x, double *y, size_t n, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n, int normalized,
    const smx_options *opt);
SMX_API smx_status smx_sa_softmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, int normalized, const smx_options *opt);
SMX_API smx_status smx_sa_softmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n, int normalized,
    const smx_options *opt);
SMX_API smx_status smx_sa_softmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, int normalized, const smx_options *opt);

/* ---------------------------------------------------------- top-k softmax */
/*
 * Top-k softmax ("sparse softmax", Sun et al. 2021, arXiv 2112.12433):
 * y_i = e^(x_i) / sum_{j in K} e^(x_j) for i in K, the k largest entries,
 * else 0; equal entries go to the lowest index (the selection of
 * smx_topk_f32, include/smx/smx_topk.h). k >= 1 (0 is refused); k >= n is
 * plain softmax. f32 / half rows select with the fused top-k kernels; f64
 * rows sort (a scratch of 4 n doubles per thread). y may equal x.
 * Special values: NaN anywhere: NaN row. -inf entries are selected only when
 * fewer than k entries are above -inf, and give 0. +inf entries (first in
 * the selection): 1/c on them, 0 elsewhere. A row of -inf: 0.
 * Accuracy (f32): the softmax over the selected values is formed in double
 * and rounded once: |y_i - ref_i| <= 4 FLT_EPSILON ref_i + FLT_MIN.
 * Backward: reads y and dy (x may be NULL): dx = y (dy - <dy, y>), 0 off the
 * support; k is not used.
 */
SMX_API smx_status smx_topk_softmax_f32(const float *x, float *y, size_t n, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_f64(const double *x, double *y, size_t n, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n, size_t k,
    const smx_options *opt);
SMX_API smx_status smx_topk_softmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, size_t k, const smx_options *opt);
SMX_API smx_status smx_topk_softmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n, size_t k,
    const smx_options *opt);
SMX_API smx_status smx_topk_softmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, size_t k, const smx_options *opt);

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

/* ------------------------------------------------------------ softplus-l1 */
/*
 * y_i = softplus(x_i) / sum_j softplus(x_j), softplus(x) = max(x, 0) +
 * log1p(e^-|x|) (stable): the positivity map + l1 normalisation of the LSSA
 * family (Gao, Spratling et al. 2025, arXiv 2501.13428) without its
 * length-dependent scale and re-weighting (not implemented: their exact
 * formulas are unverified here). A distribution over the row.
 * Special values: -inf entries give 0 and add 0; a row of -inf: 0; NaN: NaN
 * row; +inf entries: 1/k on them, 0 elsewhere. n = 1: 1 (0 for -inf).
 * Accuracy (f32): |y_i - ref_i| <= 8 FLT_EPSILON ref_i + FLT_MIN.
 * Backward: reads x and dy (y may be NULL): dx = sigma(x) (dy - <dy, y>) / S,
 * S = sum softplus; 0 on rows with +inf or no entry above -inf, NaN with NaN.
 * Accuracy (f32): 8 FLT_EPSILON sigma(x_j)(|dy_j| + sum_i |dy_i| y_i)/S + FLT_MIN.
 */
SMX_API smx_status smx_softplus_l1_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_softplus_l1_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_softplus_l1_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);

/* --------------------------------------------- distillation loss (KD + LS) */
/*
 * The knowledge-distillation loss of logit standardisation (Sun et al., CVPR
 * 2024; KD.py of sunshangquan/logit-standardization-KD): per row r,
 *   L_r = T^2 KL(softmax(Z(t_r)/T) || softmax(Z(s_r)/T)),
 * s the student's and t the teacher's logits (rows x cols, leading
 * dimensions lds, ldt), T = temperature > 0, Z the z-score of
 * smx_standardize_softmax (unbiased std + 1e-7; standardize = 0: Z(x) = x,
 * the classic Hinton KD). reduction: SMX_REDUCTION_MEAN (KD.py's
 * kl_div(...).sum(1).mean()), SUM, or NONE (loss gets rows values).
 * grad: NULL, or rows x cols (ldg): the gradient of the reduced loss (of
 * sum_r L_r for NONE) in the student's logits, T (p_s - p_t) through Z's VJP.
 * grad may be the student exactly (in place). Arithmetic in double.
 * Special values: NaN in a row: its loss NaN; a student -inf where the
 * teacher has mass: loss +inf. rows == 0: loss 0 (SUM) or NaN (MEAN).
 * Accuracy: 8 DBL_EPSILON-level relative arithmetic in double, rounded once
 * to float for the f32 forms (tests/python/test_norm.py checks the loss and
 * the gradient against torch and central differences).
 */
SMX_API smx_status smx_kd_loss_f32(const float *student, size_t lds, const float *teacher, size_t ldt, size_t rows,
                                   size_t cols, double temperature, int standardize, smx_reduction reduction,
                                   float *loss, float *grad, size_t ldg, const smx_options *opt);
SMX_API smx_status smx_kd_loss_f64(const double *student, size_t lds, const double *teacher, size_t ldt,
                                   size_t rows, size_t cols, double temperature, int standardize,
                                   smx_reduction reduction, double *loss, double *grad, size_t ldg,
                                   const smx_options *opt);

/* ---------------------------------------------------- mixture of softmaxes */
/*
 * Mixture of softmaxes (Yang et al. 2018, "Breaking the Softmax Bottleneck:
 * A High-Rank RNN Language Model"), as log-probabilities: per row r,
 *   y_ri = log sum_k pi_rk softmax(x_rk)_i,  pi_r = softmax(w_r),
 * computed as LSE_k(w_rk - LSE(w_r) + x_rk,i - LSE(x_rk)): no probability is
 * formed. Layout: the K component rows of row r are rows r*K .. r*K+K-1 of x
 * (rows*K x cols, leading dimension ldx); w: rows x K mixture logits (ldw;
 * log-weights are accepted as they are: softmax(log pi) = pi when pi sums
 * to 1); y: rows x cols (ldy), no overlap with the inputs.
 * Backward: dy (rows x cols) gives dx (rows*K x cols, lddx) and, unless dw
 * is NULL, dw (rows x K, lddw), with q_rki = pi_rk softmax(x_rk)_i / p_ri:
 *   dx_rk,i = dy_ri q_rki - softmax(x_rk)_i sum_j dy_rj q_rkj,
 *   dw_rk = sum_i dy_ri q_rki - pi_rk sum_i dy_ri.
 * Special values: a component of all -inf adds nothing; -inf entries of
 * every component give y = -inf and zero gradients there; NaN: NaN.
 * Arithmetic in double (f32 widened, rounded once). K >= 1.
 * Accuracy: tests/python/test_norm.py checks y against float64 NumPy and the
 * gradients against central differences (a few DBL_EPSILON relative).
 */
SMX_API smx_status smx_mixture_log_softmax_rows_f32(const float *x, size_t ldx, const float *w, size_t ldw,
                                                    float *y, size_t ldy, size_t rows, size_t k, size_t cols,
                                                    const smx_options *opt);
SMX_API smx_status smx_mixture_log_softmax_rows_f64(const double *x, size_t ldx, const double *w, size_t ldw,
                                                    double *y, size_t ldy, size_t rows, size_t k, size_t cols,
                                                    const smx_options *opt);
SMX_API smx_status smx_mixture_log_softmax_backward_rows_f32(const float *x, size_t ldx, const float *w, size_t ldw,
                                                             const float *dy, size_t lddy, float *dx, size_t lddx,
                                                             float *dw, size_t lddw, size_t rows, size_t k,
                                                             size_t cols, const smx_options *opt);
SMX_API smx_status smx_mixture_log_softmax_backward_rows_f64(const double *x, size_t ldx, const double *w,
                                                             size_t ldw, const double *dy, size_t lddy, double *dx,
                                                             size_t lddx, double *dw, size_t lddw, size_t rows,
                                                             size_t k, size_t cols, const smx_options *opt);

#ifdef __cplusplus
}
#endif

#endif
