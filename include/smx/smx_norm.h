/*
 * smx — row normalisations beyond softmax: softpick, SSMax, standardised softmax,
 * self-adjust softmax and softplus-l1, each with its backward pass (adaptive
 * temperature is in smx_multi.h). Included by smx/smx.h.
 */
#ifndef SMX_SMX_NORM_H
#define SMX_SMX_NORM_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================== row variants
 * Softpick, SSMax, self-adjust softmax, softplus-l1 and standardised softmax
 * here, sigmoid with a bias (smx_elem.h), adaptive temperature, top-k softmax
 * and the mixture of softmaxes (smx_multi.h) (issue 13, items 3-10). Common
 * rules (those of this header's row variants, there too):
 *  - one-row forms take n values; rows forms rows x cols with leading
 *    dimensions >= cols; y may equal x (in place, same leading dimension)
 *    unless said otherwise; any other overlap is refused (SMX_E_INVALID_ARG);
 *  - backward passes (vector-Jacobian products) take x, y and dy and write
 *    dx; each says which of x / y it reads (the other may be NULL); dx may
 *    equal dy;
 *  - opt->threads splits the rows (bitwise the same results for every count);
 *    opt->algo is not used, nor opt->temperature (parameters are explicit)
 *    except by the standardised softmax, whose temperature it is;
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
SMX_API smx_status smx_softpick_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double eps,
    const smx_options *opt);
SMX_API smx_status smx_softpick_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double eps,
    const smx_options *opt);

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
SMX_API smx_status smx_ssmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double s, const int64_t *lens,
    const smx_options *opt);
SMX_API smx_status smx_ssmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, double s, const int64_t *lens,
    const smx_options *opt);

/* ------------------------------------------------- standardised softmax */
/*
 * Logit standardisation (Sun et al., CVPR 2024, "Logit Standardization in
 * Knowledge Distillation"; the KD.py of sunshangquan/logit-standardization-KD):
 * z = (x - mean) / (std + 1e-7), std unbiased (n - 1), 1e-7 added to the std;
 * y = softmax(z / T), T = opt->temperature (0 means 1; > 0, finite: the only
 * temperature, no second one). Mean and std are over the
 * finite entries; -inf entries give 0 and are left out; one finite entry
 * (or n = 1) has std 0, so z = 0 and y = 1 there. NaN: NaN row; +inf
 * entries: 1/k on them. Computed as softmax(x / (T (std + 1e-7))) through
 * the softmax engine (softmax is shift-invariant).
 * Accuracy: smx_softmax's bound plus the std's rounding (4 eps relative):
 * (4 + |t_i|/2 + 4 (|t_i| + sum_j y_j |t_j|)) eps y_i + FLT_MIN, t = (z - max z)/T.
 * f64 rows spanning more than DBL_MAX: the moments and the softmax's scale
 * are taken on the row scaled by a power of 2, so z stays finite.
 * Backward: reads x and dy (y may be NULL, it is recomputed): with
 * gz = (1/T) y (dy - <dy,y>), dx_j = (gz_j - mean gz)/(sd + eps)
 * - (sum gz_i (x_i - mean)) (x_j - mean) / ((sd + eps)^2 (nf - 1) sd) on
 * finite entries, 0 on the others, NaN on NaN rows.
 */
SMX_API smx_status smx_standardize_softmax_f32(const float *x, float *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_f64(const double *x, double *y, size_t n, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
    size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
    const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
    const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
    const double *dy, size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y,
    size_t ldy, const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols,
    const smx_options *opt);
SMX_API smx_status smx_standardize_softmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y,
    size_t ldy, const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols,
    const smx_options *opt);

/* ------------------------------------------------------ self-adjust softmax */
/*
 * Self-Adjust Softmax (Zheng et al. 2025, arXiv 2502.18277 / EMNLP 2025):
 * normalized = 0: y = x * softmax(x); normalized != 0:
 * y = (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x),
 * x_min / x_max over the finite entries (the paper states no epsilon: a row
 * whose finite entries are all 0 has a zero range and gives y = 0).
 * Special values: masked (-inf) entries give 0 (never -inf * 0 = NaN); a
 * row without an entry above -inf gives 0; NaN: NaN row; +inf entries give
 * +inf (x * 1/k; the normalised form too, its range 0 included: [inf] gives
 * [inf]), 0 elsewhere. n = 1: x (basic) or (x - lo)/R (normalised).
 * Not a distribution: the basic form can be negative.
 * Accuracy (f32): smx_softmax's bound on p times |w|, plus 4 FLT_EPSILON |y_i|
 * (tests/ops: 8 FLT_EPSILON (1 + |x_i - m|) |w_i| p_i + FLT_MIN).
 * Backward: reads x and dy (y may be NULL; softmax(x) is recomputed); the
 * exact derivative: dx = p (g (w + s) - <p, g w>) with w = (x - lo) s,
 * s = 1 / R (1 and lo = 0 for the basic form), plus for the normalised form
 * the terms of lo and hi at the first minimum (x_min < 0) and first maximum
 * (x_max > 0): dx[argmin] += (<p,g w> - <p,g>) s, dx[argmax] -= <p,g w> s.
 * Backward special values: NaN row: NaN; masked entries 0; a row with +inf
 * entries: NaN at them (x / k has no finite slope) and at the normalised
 * form's min / max terms, 0 elsewhere. Accuracy (tests/ops):
 * 8 eps (p_i (2 + |x_i - m|) (|g_i| (|w_i| + s) + |D|) + p_i sum_j p_j
 * (2 + |x_j - m|) |g_j| (|w_j| + s)) plus FLT_MIN (DBL_MIN) times the terms
 * p multiplies, D = <p, g w> (and the min / max terms' own scale).
 * Normalised rows whose range R is beyond the type (R = inf) or below its
 * reciprocal (s = 1/R beyond the type): the weights by division, the terms
 * in s grouped (f32 in double), so a gradient beyond the range is +-inf,
 * never NaN.
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
SMX_API smx_status smx_sa_softmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, int normalized,
    const smx_options *opt);
SMX_API smx_status smx_sa_softmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, int normalized,
    const smx_options *opt);

/* ------------------------------------------------------------ softplus-l1 */
/*
 * y_i = softplus(x_i) / sum_j softplus(x_j), softplus(x) = max(x, 0) +
 * log1p(e^-|x|) (stable): the positivity map + l1 normalisation of the LSSA
 * family (Gao, Spratling et al. 2025, arXiv 2501.13428) without its
 * length-dependent scale and re-weighting (not implemented: their exact
 * formulas are unverified here). A distribution over the row.
 * Special values: -inf entries give 0 and add 0; a row of -inf: 0; NaN: NaN
 * row; +inf entries: 1/k on them, 0 elsewhere. n = 1: 1 (0 for -inf).
 * Rows far below 0, where softplus(x) ~ e^x underflows (any size, e.g.
 * [-800, -801] in f64 gives [0.731, 0.269]), are computed from the terms
 * scaled by e^-max (in double, at libm's speed).
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
SMX_API smx_status smx_softplus_l1_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_softplus_l1_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_NORM_H */
