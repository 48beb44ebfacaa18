/*
 * smx gradients: the backward passes of softmax and log-softmax, and a fused
 * cross-entropy (forward and backward) over rows of logits.
 *
 * Included by smx/smx.h; the same conventions hold: every function returns an
 * smx_status, never aborts on caller error, checks every argument before it
 * writes anything, and never reads or writes outside the caller's buffers.
 * Matrices are row-major, with leading dimensions counted in elements
 * (ld >= cols). Results are bitwise identical for every thread count (each
 * row is computed by one thread, and every reduction over rows is summed in
 * row order in double); they may differ in the last bits between ISAs.
 *
 * eps = 2^-23 below; T is the temperature of the options (0 means 1).
 */
#ifndef SMX_SMX_GRAD_H
#define SMX_SMX_GRAD_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ backward passes */
/*
 * Vector-Jacobian products, from the forward output y and the upstream
 * gradient dy (so the logits are not needed):
 *   softmax:      dx_i = (1/T) * y_i * (dy_i - <dy, y>)      y = softmax(x/T)
 *   log-softmax:  dx_i = (1/T) * (dy_i - exp(y_i) * sum(dy))  y = log_softmax(x/T)
 * Two passes over each row (the reduction, in double partial sums, then the
 * elementwise step); no extra memory. dx may equal dy or y (in place, with the
 * same leading dimension); any other overlap of dx with y or dy is rejected.
 * y and dy may overlap each other (both are only read).
 * Options: temperature (0 means 1) and threads are used; algo and flags are
 * ignored (any known value is accepted). NULL options = defaults.
 *
 * Values: IEEE arithmetic on the inputs, nothing else. A NaN anywhere in y or
 * dy makes the row's dx NaN through the reduction; a masked entry (softmax
 * y_i = 0, log-softmax y_i = -inf) gets dx_i = 0 (softmax; unless dy_i or the
 * dot is not finite) or dx_i = dy_i / T (log-softmax). A log-softmax y_i above
 * 88 is not a log-softmax value: exp(y_i) is then only guaranteed to be large.
 * rows == 0 or cols == 0: SMX_OK, nothing written.
 *
 * Accuracy (d = <dy, y>, S = sum(dy), exact references in long double):
 *   softmax:      |dx_i - ref_i| <= 4 * eps * |y_i| * (|dy_i| + |d|) / T
 *   log-softmax:  |dx_i - ref_i| <= 4 * eps * (|dy_i| + exp(y_i) * |S|) / T
 * (for results in the normal float range; the terms are the rounding of the
 * double reduction to float, the subtraction, the exponential and the scaling),
 * plus the reduction's own rounding where d (S) cancels: |y_i| n 2^-52 sum_j
 * |dy_j y_j| / T (log-softmax: exp(y_i) n 2^-52 sum_j |dy_j| / T), far below
 * the terms above unless d is many orders below the sum of its terms.
 */
SMX_API smx_status smx_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n,
                                            const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n,
                                                const smx_options *opt);
SMX_API smx_status smx_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy, float *dx,
                                                 size_t lddx, size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy,
                                                     float *dx, size_t lddx, size_t rows, size_t cols,
                                                     const smx_options *opt);
/* f64: the same formulas in double, the reduction compensated (products and
 * sums, Dot2); the bounds above with eps = 2^-52 (and no float-range caveat),
 * the reduction's term being Dot2's, 2 (n 2^-53)^2 in place of n 2^-52. */
SMX_API smx_status smx_softmax_backward_f64(const double *y, const double *dy, double *dx, size_t n,
                                            const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_f64(const double *y, const double *dy, double *dx, size_t n,
                                                const smx_options *opt);
SMX_API smx_status smx_softmax_backward_rows_f64(const double *y, size_t ldy, const double *dy, size_t lddy,
                                                 double *dx, size_t lddx, size_t rows, size_t cols,
                                                 const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_rows_f64(const double *y, size_t ldy, const double *dy, size_t lddy,
                                                     double *dx, size_t lddx, size_t rows, size_t cols,
                                                     const smx_options *opt);
/* f16 / bf16 storage (bit patterns), f32 arithmetic through a small stack
 * buffer, dx rounded once to the storage type: the f32 bound (on the widened
 * inputs) plus u * |ref_i|, u = 2^-11 (f16) or 2^-8 (bf16). */
SMX_API smx_status smx_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                 uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                                 const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                     uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                                     const smx_options *opt);
SMX_API smx_status smx_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                  uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                                  const smx_options *opt);
SMX_API smx_status smx_log_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                                      uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                                      const smx_options *opt);

/* ------------------------------------------------------- cross-entropy */
/*
 * Cross-entropy of rows x cols logits (row r, class j at logits[r*ld + j])
 * against rows int64 class targets, as
 * torch.nn.functional.cross_entropy(x / T, t, reduction, ignore_index,
 * label_smoothing), plus an optional z-loss. T = opt->temperature (0 means
 * 1); reduction, ignore_index, label_smoothing (e), z_loss (z) and
 * grad_scale are opt->loss's (NULL opt or opt->loss: SMX_LOSS_EXT_INIT,
 * PyTorch's defaults); SMX_FLAG_MASKED_ROW_NAN and threads are used, algo
 * is ignored. Per row, with lse = log sum_j
 * exp(x_j / T), V = cols, e = label_smoothing:
 *   loss_r = (1 - e) * (lse - x_t / T) + e * (lse - mean_j x_j / T) + z * lse^2
 * and, with s = grad_scale (SUM, NONE) or grad_scale / (rows not ignored) (MEAN),
 * p = softmax(x / T):
 *   grad_rj = (s / T) * (p_j * (1 + 2 z lse) - e / V - (1 - e) * [j == t])
 * i.e. grad_scale times the gradient of the returned loss (of sum_r loss_r
 * for NONE).
 *
 *  loss:  rows values for SMX_REDUCTION_NONE (ignored rows get 0), one value
 *         otherwise. Required. MEAN with every row ignored gives NaN (0/0, as
 *         PyTorch), and a zero gradient.
 *  grad:  NULL for the loss only. Otherwise rows x cols with leading dimension
 *         ldg; grad == logits with ldg == ld writes the gradient in place over
 *         the logits (logits are then read before they are overwritten).
 *  lse:   NULL, or rows values: log sum exp(x / T) of each row (ignored rows
 *         included), for reuse (e.g. a later backward with other weights).
 * Two passes over each row with a gradient (one online max/sum pass, one
 * pass that writes the gradient and, with label smoothing, sums the logits),
 * one (two with label smoothing) without. Memory: O(rows) doubles for the
 * ordered reduction, nothing of size rows x cols. SMX_E_NOMEM if that fails.
 *
 * SMX_E_INVALID_ARG, with nothing written, for: a target outside [0, cols)
 * that is not ignore_index (all targets are checked first); a NULL logits,
 * targets or loss when rows > 0; ld or ldg < cols; cols == 0 with rows > 0;
 * label_smoothing outside [0, 1], z_loss < 0 or either NaN/inf; grad_scale
 * NaN or infinite; a bad temperature, reduction or flag (the store flags
 * are accepted);
 * threads < 0; grad overlapping logits other than exactly; loss or lse
 * overlapping logits, grad or each other; targets overlapping an output.
 * rows == 0: SMX_OK; loss gets 0 for SUM and NaN for MEAN (PyTorch), nothing
 * for NONE.
 *
 * Special values (smx.h policy, per row that is not ignored):
 *  - NaN in the row: loss, lse and every gradient element of the row NaN.
 *  - x_t = -inf with some entry above -inf: loss +inf, finite gradient
 *    (as PyTorch). Label smoothing with any -inf entry: loss +inf.
 *  - every entry -inf: lse -inf, p = 0, loss +inf and grad_rj = -(s/T)(e/V +
 *    (1-e)[j==t]); with SMX_FLAG_MASKED_ROW_NAN loss, lse and gradient NaN
 *    (PyTorch gives NaN).
 *  - k entries +inf (no NaN): the limit, p = 1/k on them and 0 elsewhere;
 *    lse +inf; loss log(k) if x_t = +inf (and e = 0, z = 0), else +inf; an
 *    entry with p = 0 gets no z-loss term (not 0 * inf). PyTorch gives NaN.
 * Ignored rows: loss 0 and gradient 0 whatever their logits; they are read
 * only when lse is asked for (then computed as for any row).
 *
 * Accuracy (references in long double on the same inputs):
 *   loss (each row, or the reduction): |err| <= 4 * eps * max(1, |ref|)
 *     (for NONE and for the reductions, whose row sum is in double);
 *   lse: the log-sum-exp bound of smx.h;
 *   gradient: with q_j = (s/T) (1 + 2 z lse) p_j and r_j = the rest,
 *     |grad_j - ref_j| <= (6 + |x_j - max| / (2T)) * eps * |q_j| + 2 * eps * |r_j|
 *                         + (s/T) * |1 + 2 z lse| * FLT_MIN
 *     (the softmax bound of smx.h on p_j, plus the roundings of the scale;
 *     as for softmax, a p_j below FLT_MIN may come out as 0). Gradients
 *     beyond the float range (s/T above about 1e38) saturate at +-FLT_MAX.
 */
SMX_API smx_status smx_cross_entropy_f32(const float *logits, size_t ld, const int64_t *targets, float *loss,
                                         float *grad, size_t ldg, float *lse, size_t rows, size_t cols,
                                         const smx_options *opt);
/* f64 logits, gradient, loss and lse: each row from the f64 normalisations of
 * smx.h (smx_log_softmax_f64 into a per-thread scratch row of cols doubles,
 * smx_logsumexp_f64, smx_softmax_f64 into the gradient), so every row the
 * double range holds is covered (spans beyond DBL_MAX, any temperature); the
 * smoothing mean and the reduction are compensated. The bounds above with
 * eps = 2^-52 and DBL_MIN for FLT_MIN, the loss's 8 eps max(1, |ref|) (the
 * smoothing mean is of log-softmax values, each within its 4 eps); gradients
 * beyond the range saturate at +-DBL_MAX. SMX_E_NOMEM if the scratch cannot be had. */
SMX_API smx_status smx_cross_entropy_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                         double *grad, size_t ldg, double *lse, size_t rows, size_t cols,
                                         const smx_options *opt);
/* f16 / bf16 logits (and gradient, same storage type), f32 arithmetic, f32
 * loss and lse: the f32 bounds on the widened logits; the gradient is rounded
 * once more, + u * |ref|, u = 2^-11 (f16) or 2^-8 (bf16), and within half the
 * smallest subnormal of the storage type below its normal range. */
SMX_API smx_status smx_cross_entropy_f16(const uint16_t *logits, size_t ld, const int64_t *targets, float *loss,
                                         uint16_t *grad, size_t ldg, float *lse, size_t rows, size_t cols,
                                         const smx_options *opt);
SMX_API smx_status smx_cross_entropy_bf16(const uint16_t *logits, size_t ld, const int64_t *targets, float *loss,
                                          uint16_t *grad, size_t ldg, float *lse, size_t rows, size_t cols,
                                          const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_GRAD_H */
