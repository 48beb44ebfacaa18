/*
 * smx — softmaxes over modulated or selected scores: MultiMax, the mixture of
 * softmaxes, adaptive temperature and top-k softmax, each with its backward pass
 * (the common rules of the row variants: smx_norm.h). Included by smx/smx.h.
 */
#ifndef SMX_SMX_MULTI_H
#define SMX_SMX_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- MultiMax */
/*
 * MultiMax (Zhou, Fritz and Keuper 2024, "MultiMax: Sparse and Multi-Modal
 * Attention Learning", ICML 2024, arXiv 2406.01189): softmax of the scores
 * passed through the paper's piecewise modulator (its eq. 6, with the
 * second-order terms, in the parametrisation of the authors' code: ranges r
 * and scales t, four of each):
 *   s(x) = x + t0 (r0 - x)_+ + t1 (x - r1)_+ + t2 (r2 - x)_+^2 + t3 (x - r3)_+^2
 *   y = softmax(s(x) / T)      (T = opt->temperature, 0 means 1)
 * r = t = 0 is softmax. The eight parameters are finite (else
 * SMX_E_INVALID_ARG); the paper learns them, so the backward also returns
 * their gradients. The options, strides, threads and in-place rules are
 * softmax's (y may equal x).
 *
 * Special values: s(-inf) = -inf and s(+inf) = +inf (masks stay masks,
 * whatever the parameters), NaN stays NaN; then softmax's policy (smx.h): a
 * row of all -inf gives 0 (NaN with SMX_FLAG_MASKED_ROW_NAN), k entries at
 * +inf give 1/k. n = 1 gives 1.
 * Accuracy: s(x) is formed in the row's precision (f32 rows in float, with
 * the parameters rounded to float), within a few eps (|x| + the sizes of
 * its four terms), which moves y_i relatively by as much over T; then the
 * softmax bound of smx.h on s (tests/unit/test_multimax.c checks f32 and
 * f64 against a long-double reference at every ISA).
 *
 * Backward (VJP): dx_i = s'(x_i) * y_i (dy_i - <dy, y>) / T, from x, the
 * forward output y and dy (none may be NULL); s'(x) = 1 - t0 [x < r0] +
 * t1 [x > r1] - 2 t2 (r2 - x)_+ + 2 t3 (x - r3)_+ (one-sided at the kinks);
 * an infinite x_i gets dx_i = 0. dparams: NULL, or 8 doubles that receive
 * dL/dr0..dL/dr3 then dL/dt0..dL/dt3, summed over every row (per row, then
 * in row order: the same for every thread count). dx may equal y or dy
 * exactly, never x. Accuracy: the softmax backward's bound of smx_grad.h
 * times |s'(x_i)|, plus a few roundings of s'(x_i) (f32 rows form s' and
 * the parameter terms in float, with the parameters rounded to float, and
 * sum the terms in float lanes flushed into double every few hundred
 * entries; where 1/T or a parameter is beyond float, in double).
 */
SMX_API smx_status smx_multimax_f32(const float *x, float *y, size_t n, const double ranges[4], const double ts[4],
                                    const smx_options *opt);
SMX_API smx_status smx_multimax_f64(const double *x, double *y, size_t n, const double ranges[4],
                                    const double ts[4], const smx_options *opt);
SMX_API smx_status smx_multimax_rows_f32(const float *x, size_t ldx, float *y, size_t ldy, size_t rows, size_t cols,
                                         const double ranges[4], const double ts[4], const smx_options *opt);
SMX_API smx_status smx_multimax_rows_f64(const double *x, size_t ldx, double *y, size_t ldy, size_t rows,
                                         size_t cols, const double ranges[4], const double ts[4],
                                         const smx_options *opt);
/* f16 / bf16 storage: each row widened to f32 in a per-thread scratch row,
 * computed as f32 and rounded once to the storage type (the f32 bounds on
 * the widened inputs, plus u |ref|, u = 2^-11 or 2^-8). */
SMX_API smx_status smx_multimax_rows_f16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                         size_t cols, const double ranges[4], const double ts[4],
                                         const smx_options *opt);
SMX_API smx_status smx_multimax_rows_bf16(const uint16_t *x, size_t ldx, uint16_t *y, size_t ldy, size_t rows,
                                          size_t cols, const double ranges[4], const double ts[4],
                                          const smx_options *opt);
SMX_API smx_status smx_multimax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const double ranges[4],
    const double ts[4], double *dparams, const smx_options *opt);
SMX_API smx_status smx_multimax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const double ranges[4],
    const double ts[4], double *dparams, const smx_options *opt);
SMX_API smx_status smx_multimax_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                             const double ranges[4], const double ts[4], double *dparams,
                                             const smx_options *opt);
SMX_API smx_status smx_multimax_backward_f64(const double *x, const double *y, const double *dy, double *dx,
                                             size_t n, const double ranges[4], const double ts[4], double *dparams,
                                             const smx_options *opt);
SMX_API smx_status smx_multimax_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy,
                                                  const float *dy, size_t lddy, float *dx, size_t lddx, size_t rows,
                                                  size_t cols, const double ranges[4], const double ts[4],
                                                  double *dparams, const smx_options *opt);
SMX_API smx_status smx_multimax_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy,
                                                  const double *dy, size_t lddy, double *dx, size_t lddx,
                                                  size_t rows, size_t cols, const double ranges[4],
                                                  const double ts[4], double *dparams, const smx_options *opt);

/* ---------------------------------------------------- mixture of softmaxes */
/*
 * Mixture of softmaxes (Yang et al. 2018, "Breaking the Softmax Bottleneck:
 * A High-Rank RNN Language Model"), as log-probabilities: per row r,
 *   y_ri = log sum_k pi_rk softmax(x_rk / T)_i,  pi_r = softmax(w_r),
 * T = opt->temperature (0: 1), which divides the component logits x only
 * (not w: divide w yourself to temper the weights too), computed as
 * LSE_k(w_rk - LSE(w_r) + x_rk,i / T - LSE(x_rk / T)): no probability is
 * formed. Layout: the K component rows of row r are rows r*K .. r*K+K-1 of x
 * (rows*K x cols, leading dimension ldx); w: rows x K mixture logits (ldw;
 * log-weights are accepted as they are: softmax(log pi) = pi when pi sums
 * to 1); y: rows x cols (ldy), no overlap with the inputs.
 * Backward: dy (rows x cols) gives dx (rows*K x cols, lddx) and, unless dw
 * is NULL, dw (rows x K, lddw), with q_rki = pi_rk softmax(x_rk)_i / p_ri:
 *   dx_rk,i = (dy_ri q_rki - softmax(x_rk / T)_i sum_j dy_rj q_rkj) / T,
 *   dw_rk = sum_i dy_ri (q_rki - pi_rk), over the entries with y_ri > -inf
 *   (y_ri = -inf stays -inf whatever w is: its dy_ri moves nothing).
 * Special values: a component of all -inf adds nothing (its dx is 0, its dw
 * -pi_k sum dy); -inf entries of every component give y = -inf and zero
 * gradients there; NaN: NaN. A +inf entry is not supported (the result is
 * unspecified). Arithmetic in double (f32 widened, rounded once), each
 * component's log-sum-exp kept as m_k / T + log s_k (s_k summed
 * compensated), its entries (x - m_k) / T.
 * K >= 1.
 * Accuracy: |y_i - ref_i| <= 8 DBL_EPSILON (|ref_i| + A_i + 1), A_i the
 * largest |x_ki - m_k| / T + log s_k + |log pi_k| over the components with
 * x_ki > -inf; f32 rows add the rounding to float, 2^-24 |ref_i| (tests/ops
 * checks f32 and f64 at K = 2 and every temperature against long double).
 * Gradients: within 16 DBL_EPSILON (1 + A) (cols + 16) times the size of
 * their terms (|dy_i| q_ki + softmax(x_k / T)_i sum_j |dy_j| q_kj, over T,
 * for dx, sum_i |dy_i| (q_ki + pi_k) for dw; A the largest A_i) plus
 * DBL_MIN; f32 adds the rounding to float (tests/ops checks both at K = 2
 * against long double; test_mixture_temperature checks T against central
 * differences).
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
SMX_API smx_status smx_adaptive_softmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_adaptive_softmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt);

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
 * and rounded once: |y_i - ref_i| <= 4 FLT_EPSILON ref_i + FLT_MIN. f64: the
 * softmax bound of smx.h, (4 + |t_i|/2) DBL_EPSILON ref_i with t_i = x_i - max
 * (the rounding of x_i - max, carried through exp: e^-55 and below was seen
 * 15 eps off).
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
SMX_API smx_status smx_topk_softmax_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, size_t k,
    const smx_options *opt);
SMX_API smx_status smx_topk_softmax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
    const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows, size_t cols, size_t k,
    const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_MULTI_H */
