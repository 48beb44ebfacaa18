/*
 * smx — Noisy Softmax (Chen, Deng and Du 2017): cross-entropy with annealed noise on
 * the target logit, its gradients and its noise. Included by smx/smx.h.
 */
#ifndef SMX_SMX_NOISY_H
#define SMX_SMX_NOISY_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"
#include "smx/smx_losses.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- Noisy Softmax */
/*
 * Noisy Softmax (Chen, Deng and Du 2017, "Noisy Softmax: Improving the
 * Generalization Ability of DCNN via Postponing the Early Softmax
 * Saturation", CVPR 2017, arXiv 1708.03769, eq. 5-6): cross-entropy with the
 * target logit f_t = ||W_t|| ||X|| cos(theta_t) lowered by annealed noise,
 *   f~_t = f_t - alpha * A * |xi|,   loss_r = lse(f with f_t replaced by f~_t) - f~_t,
 * with xi ~ N(0, 1) per row and step and, by mode:
 *   SMX_NOISY_ANNEALED (the paper's method, the default): A = max(r - f_t, 0)
 *     = ||W_t|| ||X|| (1 - cos theta_t), r = norms[row] = ||W_t|| ||X||;
 *     the noise vanishes as theta_t -> 0. r >= |f_t| in exact arithmetic;
 *     the clamp at 0 keeps a rounded r below f_t from raising the target.
 *   SMX_NOISY_FREE (the paper's ablation "free noise"): A = 1; norms unused.
 *   SMX_NOISY_AMPLITUDE (the ablation "amplitude noise"): A = r.
 * The paper trains with alpha about 0.1; alpha = 0 is cross-entropy.
 * Gradients with xi fixed (p~ = softmax(f~), s = the gradient scale, over
 * the count for MEAN):
 *   d/df_j = s p~_j (j != t),   d/df_t = s (p~_t - 1) (1 - alpha |xi| dA/df_t),
 *   d/dr   = s (p~_t - 1) (-alpha |xi| dA/dr),
 * dA/df_t = -1, dA/dr = 1 for ANNEALED where r - f_t > 0 (0 and 0 where the
 * clamp holds); 0, 0 for FREE; 0, 1 for AMPLITUDE.
 *
 * f~_t is formed in double as (f_t) - (alpha |xi|) A, with A = r - f_t for
 * ANNEALED (each operation rounded once; -inf below the double range): the
 * bound below is on the loss and gradients of that f~_t.
 * The noise: xi(row) = smx_philox_normal: the Philox4x32-10 block w =
 * smx_philox4x32(seed, { 0xFFFFFFFF, row mod 2^32, step mod 2^32, step >> 32 })
 * (smx_topk.h; word 0 is 0xFFFFFFFF so that no sampling draw, whose word 0
 * is a column index or 0, shares the block), u1 = ((w0 | (w1 & 0x1fffff) << 32)
 * + 0.5) 2^-53, u2 the same from (w2, w3), xi = sqrt(-2 ln u1) cos(2 pi u2)
 * (Box-Muller; |xi| < 8.7). row = row_offset + the row's place in the call
 * (as smx_sample's row_offset: a batch processed in pieces draws as if
 * whole); give each batch its own step (or seed). smx_noisy_softmax_noise
 * returns the values. They depend on (seed, row, step) only: results are bitwise the
 * same for every thread count.
 *
 * Arguments as the other losses (smx_losses.h: targets, opt->loss's
 * ignore_index, reduction and grad_scale, threads, grad in place over the
 * logits). norms: rows values of
 * the logits' type, finite and >= 0 for every row not ignored; NULL allowed
 * only for FREE. grad_norms: NULL, or rows values (0 on ignored rows).
 * SMX_E_INVALID_ARG, nothing written: alpha < 0 or not finite, a bad mode, a
 * norm NaN, infinite or negative (rows not ignored), NULL norms (ANNEALED,
 * AMPLITUDE) with rows > 0, grad_norms overlapping another argument, and the
 * losses' common cases.
 * Special values (per row not ignored): a NaN or a +inf entry, or every
 * entry -inf: loss NaN and NaN gradients (grad_norms too); f_t = -inf (or
 * f~_t below the double range) with some other entry finite: loss +inf,
 * finite gradients (as cross-entropy); -inf entries elsewhere are p = 0.
 * The row's statistics are taken over the entries other than the target and
 * merged with f~_t in double (no cancellation when p~_t is near 1).
 * Accuracy (tests/unit/test_noisy_softmax.c and the op driver tests/ops,
 * against long double at every ISA): the losses' common bound (above), for
 * both gradients, with G the
 * largest |reference gradient| of the logits; alpha = 0 agrees with
 * smx_cross_entropy_f32 / _f64 within that bound.
 */
typedef enum smx_noisy_mode {
  SMX_NOISY_ANNEALED = 0,
  SMX_NOISY_FREE = 1,
  SMX_NOISY_AMPLITUDE = 2
} smx_noisy_mode;

SMX_API smx_status smx_noisy_softmax_loss_f32(const float *logits, size_t ld, const int64_t *targets,
                                              const float *norms, float *loss, float *grad, size_t ldg,
                                              float *grad_norms, size_t rows, size_t cols, double alpha,
                                              uint64_t seed, uint64_t step, uint64_t row_offset, smx_noisy_mode mode,
                                              const smx_options *opt);
SMX_API smx_status smx_noisy_softmax_loss_f64(const double *logits, size_t ld, const int64_t *targets,
                                              const double *norms, double *loss, double *grad, size_t ldg,
                                              double *grad_norms, size_t rows, size_t cols, double alpha,
                                              uint64_t seed, uint64_t step, uint64_t row_offset, smx_noisy_mode mode,
                                              const smx_options *opt);
/* xi[i] = the noise of row number row0 + i (above), for i < rows.
 * @return SMX_E_INVALID_ARG if xi is NULL with rows > 0. */
SMX_API smx_status smx_noisy_softmax_noise(uint64_t seed, uint64_t step, size_t row0, size_t rows, double *xi);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_NOISY_H */
