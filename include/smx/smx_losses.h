/*
 * smx — losses on softmax outputs (focal, InfoNCE / CLIP, soft Dice, S-DPO), the
 * spherical Z-loss on raw scores and the distillation loss, each with its gradient in the same
 * call. Included by smx/smx.h. Cross-entropy is in smx_grad.h, the Fenchel-Young
 * losses of the sparse maps in smx_sparse.h, Noisy Softmax in smx_noisy.h.
 */
#ifndef SMX_SMX_LOSSES_H
#define SMX_SMX_LOSSES_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- losses */
/*
 * Losses on softmax outputs (and the spherical Z-loss on raw scores), each
 * with its gradient, fused per row like smx_cross_entropy_f32 (smx_grad.h):
 * one online (max, sum) pass, then one pass that writes the gradient; no
 * probability matrix is formed. Logits are rows x cols, row-major with
 * leading dimension ld >= cols; the gradient (NULL: the loss only) is
 * rows x cols with ldg >= cols and may be the logits exactly (in place;
 * they are read first). The f32 forms take float logits and write float
 * losses and gradients; the f64 forms double. Results are the same for every
 * thread count (one thread per row; reductions in row order in double).
 *
 * Options: opt->loss (smx.h; NULL opt or opt->loss: SMX_LOSS_EXT_INIT) gives
 * the reduction, ignore_index and grad_scale; its label_smoothing and z_loss
 * must be 0 (they are cross-entropy's). opt->threads splits the rows; algo
 * and the store flags are ignored; SMX_FLAG_MASKED_ROW_NAN is refused; the
 * temperature must be 0 or 1 except for InfoNCE and the distillation loss,
 * whose temperature it is.
 * Targets: int64 class indices in [0, cols), or ignore_index (loss 0,
 * gradient 0, left out of the mean; such rows are not read). Every target is
 * checked before anything is written.
 * Reduction: NONE writes rows losses; SUM and MEAN one value (MEAN over the
 * rows not ignored; all ignored: NaN and a zero gradient; rows == 0: NaN for
 * MEAN, 0 for SUM). The gradient is grad_scale times the gradient of the
 * returned loss (of sum_r loss_r for NONE).
 * SMX_E_INVALID_ARG, nothing written, for: a bad option or parameter, a
 * target out of range, NULL logits / targets / loss with rows > 0, cols == 0
 * with rows > 0, ld or ldg < cols, overlaps other than grad == logits.
 * SMX_E_NOMEM when the O(rows) doubles of the row losses cannot be had.
 *
 * Accuracy (tests/unit/test_losses.c, against long double at every ISA, on
 * logits of scale 3 and rows up to 300): with G = max |ref gradient| of the
 * call, f32: loss within 16 eps max(1, |ref|), gradient within
 * 16 eps (|ref_j| + G) + FLT_MIN; f64: 64 eps and 64 eps (|ref_j| + G)
 * (eps = 2^-23, 2^-52). G is at least the size of the one-hot term of the
 * gradient (focal: |s K|, InfoNCE: |s| / T per row): p_t - 1 on a row whose
 * p_t is within eps of 1 is formed to eps absolutely, as cross-entropy's
 * 2 eps |r_j| says. The f64 gradients also match central differences of
 * the f64 losses. Gradient values beyond the range saturate at +-FLT_MAX
 * (f32) / +-DBL_MAX (f64); a loss beyond it is +inf. The op driver
 * (tests/ops) checks each loss row by row at every ISA and thread count.
 */

/*
 * Focal loss (Lin, Goyal, Girshick, He and Dollar 2017, "Focal Loss for Dense
 * Object Detection", eq. 5), multi-class on softmax: with p = softmax(x),
 * t the target, q = 1 - p_t:
 *   loss_r = -alpha_t * q^gamma * log p_t
 *   grad_j = s * K * (p_j - [j == t]),  K = alpha_t * (q^gamma - gamma * p_t * q^(gamma-1) * log p_t)
 * gamma >= 0 finite (0: cross-entropy); alpha: NULL (every alpha 1) or cols
 * finite per-class weights. MEAN divides by the number of rows not ignored
 * (not by the sum of the alphas). q is formed as -expm1(log p_t) (f64: where
 * p_t > e^-1/2, log p_t = -log1p(sum_{j!=t} e^(x_j - x_t)), so that q keeps
 * its relative precision however small, as K ~ q^gamma needs), and
 * q^(gamma-1) log p_t as q^gamma * (log p_t / q) (-> -q^gamma as q -> 0),
 * so the gradient is finite at p_t = 1 for every gamma.
 * Special values: an entry -inf is p = 0; x_t = -inf gives loss +inf (0 when
 * alpha_t = 0) and a finite gradient; a row with a NaN, a +inf or every
 * entry -inf gives loss NaN and a NaN gradient row. cols = 1: loss 0, grad 0.
 * Accuracy: the losses' common bound (above).
 */
SMX_API smx_status smx_focal_loss_f32(const float *logits, size_t ld, const int64_t *targets, const float *alpha,
                                      float *loss, float *grad, size_t ldg, size_t rows, size_t cols, double gamma,
                                      const smx_options *opt);
SMX_API smx_status smx_focal_loss_f64(const double *logits, size_t ld, const int64_t *targets, const double *alpha,
                                      double *loss, double *grad, size_t ldg, size_t rows, size_t cols, double gamma,
                                      const smx_options *opt);

/*
 * The Z-loss of de Brebisson and Vincent 2016 ("The Z-loss: a shift and scale
 * invariant classification loss belonging to the Spherical Family", arXiv
 * 1604.08859, the sequel of arXiv 1511.05042), on the raw scores x of a row
 * of D = cols entries (no softmax: it needs only sum x, sum x^2 and x_t):
 *   mu = sum_k x_k / D,  sigma^2 = sum_k x_k^2 / D - mu^2,  z_t = (x_t - mu) / sigma
 *   loss_r = softplus(a (b - z_t)) / a = log(1 + exp(a (b - z_t))) / a
 *   grad_k = -s * sigmoid(a (b - z_t)) / sigma * ([k == t] - 1/D - z_t z_k / D)
 * a > 0 and b finite are the paper's hyperparameters. This is not PaLM's
 * z-loss regulariser (z * lse^2, smx_cross_entropy_f32's z_loss).
 * Special values: a row whose sigma is 0 (every entry equal, D = 1) or not
 * finite (any NaN or infinite entry) gives loss NaN and a NaN gradient row
 * (z is undefined; torch's (x - mean) / std gives the same).
 * Accuracy: the losses' common bound (above); for f32 rows while sigma^2 >=
 * 2^-20 mean(x^2): their moments are summed in double in one pass (the
 * registry's sum and dot kernels, products exact), which loses digits below
 * that, as the paper's own formula does. f64 rows take two passes (the mean,
 * then the centred squares, compensated) of the row scaled by a power of
 * two, with no such limit (entries of 1e300 or subnormal ones included).
 */
SMX_API smx_status smx_spherical_z_loss_f32(const float *logits, size_t ld, const int64_t *targets, float *loss,
                                            float *grad, size_t ldg, size_t rows, size_t cols, double a, double b,
                                            const smx_options *opt);
SMX_API smx_status smx_spherical_z_loss_f64(const double *logits, size_t ld, const int64_t *targets, double *loss,
                                            double *grad, size_t ldg, size_t rows, size_t cols, double a, double b,
                                            const smx_options *opt);


/*
 * InfoNCE (van den Oord, Li and Vinyals 2018, "Representation Learning with
 * Contrastive Predictive Coding", eq. 4) and its symmetric CLIP form
 * (Radford et al. 2021, "Learning Transferable Visual Models From Natural
 * Language Supervision", fig. 3) over a given similarity matrix sim (rows x
 * cols, leading dimension ld), temperature T = opt->temperature (0 means 1). Row r's positive is
 * column t_r: targets[r], or r when targets is NULL (the diagonal; needs
 * rows <= cols). With L = sim / T:
 *   row term     a_r = lse_c L[r][c] - L[r][t_r]                (cross-entropy of row r)
 *   column term  b_r = lse_q L[q][t_r] - L[r][t_r]              (cross-entropy of column t_r)
 *   loss_r = a_r (symmetric = 0), or (a_r + b_r) / 2 (symmetric = 1, CLIP)
 * reduced by the options' reduction over the rows not ignored (targets equal to
 * ignore_index; such rows still count as negatives in the column softmaxes).
 * Symmetric: no column may be the positive of two rows (SMX_E_INVALID_ARG),
 * and the columns that are nobody's positive have no column term. Gradient
 * with respect to sim (s = grad_scale, over the count for MEAN, halved when
 * symmetric): s/T (softmax_row(L) - Y) on the rows, plus s/T (softmax_col(L)
 * - Y) on the targeted columns, Y the positives' indicator.
 * grad may equal sim (in place) only when symmetric = 0.
 * Memory: O(rows + cols), plus 16 x rows elements of scratch per thread for
 * the gathered column blocks (symmetric).
 * Special values: a row (column) with a NaN, a +inf or every entry -inf
 * gives a NaN term and a NaN gradient row (column); -inf entries are
 * excluded pairs (p = 0), a -inf positive gives +inf.
 * Accuracy: the losses' common bound (above).
 */
SMX_API smx_status smx_info_nce_f32(const float *sim, size_t ld, const int64_t *targets, float *loss, float *grad,
                                    size_t ldg, size_t rows, size_t cols, int symmetric, const smx_options *opt);
SMX_API smx_status smx_info_nce_f64(const double *sim, size_t ld, const int64_t *targets, double *loss, double *grad,
                                    size_t ldg, size_t rows, size_t cols, int symmetric, const smx_options *opt);


/*
 * Soft Dice loss over softmax probabilities (the multi-class soft Dice of
 * Milletari, Navab and Ahmadi 2016, "V-Net", eq. 1 with plain sums in the
 * denominator, as in Sudre et al. 2017's generalised Dice without weights),
 * with classes summed over the rows (batch Dice: the rows are the samples or
 * pixels, the columns the classes). With P = softmax of each row, G the
 * targets (one-hot rows from class indices, or a soft rows x cols matrix
 * target_probs with leading dimension ldt), smoothing s >= 0 finite:
 *   I_c = sum_r P_rc G_rc,  S_c = sum_r P_rc,  U_c = sum_r G_rc
 *   Dice_c = (2 I_c + s) / (S_c + U_c + s)      (1 when S_c + U_c + s = 0)
 *   loss = 1 - mean_c Dice_c (MEAN), sum_c (1 - Dice_c) (SUM), or the cols
 *   values 1 - Dice_c (NONE).
 * Gradient (s_g = grad_scale, kappa = 1/cols for MEAN, else 1):
 *   w_rc = -kappa (2 G_rc - Dice_c) / (S_c + U_c + s)
 *   grad_rj = s_g P_rj (w_rj - sum_k P_rk w_rk)
 * Exactly one of targets / target_probs is given. ignore_index applies to
 * class targets: such rows are left out of every sum and get a 0 gradient.
 * rows == 0: every Dice is 1 (loss 0). grad must not overlap the logits
 * (the rows are read again after the class sums). Memory: O(rows) row
 * statistics, 4 x cols doubles for each of at most 32 row blocks, a row of
 * scratch per thread.
 * Special values: a row with a NaN, a +inf or every entry -inf makes every
 * class sum, hence the loss and the gradient, NaN.
 * Accuracy: the losses' common bound (above), with max_c (|A_c| + |B_c|)
 * (w_rc = A_c + B_c G_rc) added to the gradient's scale G.
 */
SMX_API smx_status smx_dice_loss_f32(const float *logits, size_t ld, const int64_t *targets, const float *target_probs,
                                     size_t ldt, float *loss, float *grad, size_t ldg, size_t rows, size_t cols,
                                     double smooth, const smx_options *opt);
SMX_API smx_status smx_dice_loss_f64(const double *logits, size_t ld, const int64_t *targets,
                                     const double *target_probs, size_t ldt, double *loss, double *grad, size_t ldg,
                                     size_t rows, size_t cols, double smooth, const smx_options *opt);

/* --------------------------------------------- distillation loss (KD + LS) */
/*
 * The knowledge-distillation loss of logit standardisation (Sun et al., CVPR
 * 2024; KD.py of sunshangquan/logit-standardization-KD): per row r,
 *   L_r = T^2 KL(softmax(Z(t_r)/T) || softmax(Z(s_r)/T)),
 * s the student's and t the teacher's logits (rows x cols, leading
 * dimensions lds, ldt), T = opt->temperature (0 means 1), Z the z-score of
 * smx_standardize_softmax (unbiased std + 1e-7; standardize = 0: Z(x) = x,
 * the classic Hinton KD). The reduction is opt->loss's: SMX_REDUCTION_MEAN
 * (KD.py's kl_div(...).sum(1).mean()), SUM, or NONE (loss gets rows values);
 * its ignore_index is not used (no targets) and grad_scale multiplies the
 * gradient.
 * grad: NULL, or rows x cols (ldg): the gradient of the reduced loss (of
 * sum_r L_r for NONE) in the student's logits, T (p_s - p_t) through Z's VJP.
 * grad may be the student exactly (in place). Arithmetic in double.
 * Special values: NaN in a row: its loss NaN; a student -inf where the
 * teacher has mass: loss +inf. rows == 0: loss 0 (SUM) or NaN (MEAN).
 * Accuracy: 8 DBL_EPSILON-level relative arithmetic in double, rounded once
 * to float for the f32 forms (tests/python/test_norm.py checks the loss and
 * the gradient against torch and central differences).
 */
SMX_API smx_status smx_kd_loss_f32(const float *student, size_t lds, const float *teacher, size_t ldt, float *loss,
                                   float *grad, size_t ldg, size_t rows, size_t cols, int standardize,
                                   const smx_options *opt);
SMX_API smx_status smx_kd_loss_f64(const double *student, size_t lds, const double *teacher, size_t ldt,
                                   double *loss, double *grad, size_t ldg, size_t rows, size_t cols, int standardize,
                                   const smx_options *opt);

/* ------------------------------------------------------ S-DPO (preferences) */
/*
 * The S-DPO loss (Chen, Tan, Zhang, Wang, He, Ding, Hu and Dong 2024, "On
 * Softmax Direct Preference Optimization for Recommendation", NeurIPS 2024,
 * eq. 8): the Plackett-Luce form of DPO over one preferred and several
 * rejected items. Row r holds the cols log-ratio margins of its items,
 *   m_j = log pi(y_j | x) - log pi_ref(y_j | x)   (the caller forms them),
 * with the preferred item w = targets[r] (int64, in [0, cols), or the
 * options' ignore_index: loss 0, gradient 0, left out of the mean) and the
 * other columns the rejected items; with b = beta,
 *   loss_r = -log sigmoid(-log sum_{j != w} exp(b (m_j - m_w)))
 *          = logsumexp_j(b m_j) - b m_w     (exactly: the j = w term is 1)
 *   grad_j = s * b * (softmax(b m)_j - [j == w]),   s = grad_scale (/ count for MEAN)
 * so a row is the fused cross-entropy of softmax(b m) at w (smx_grad.h), in
 * every dtype, and the sigmoid is never rounded on its own: a loss of 1e-30
 * keeps its digits. beta in [DBL_MIN, DBL_MAX] (S-DPO's beta; 1 is the
 * paper's default); the options' temperature must be 0 or 1 and
 * label_smoothing and z_loss 0 (SMX_E_INVALID_ARG); reduction, ignore_index,
 * grad_scale, threads and SMX_FLAG_MASKED_ROW_NAN as for cross-entropy.
 * Storage: f64 margins give double losses and gradients; f32, f16 and bf16
 * margins float losses and a gradient of the margins' type (f32 arithmetic).
 * A rejected item padded with -inf takes no part (rows with fewer rejected
 * items); the gradient in pi_ref's log-probabilities is minus this one.
 * Special values, cross-entropy's: NaN in the row: NaN loss and gradient;
 * m_w = -inf: loss +inf; k margins +inf: p = 1/k on them, loss log k or
 * +inf; cols = 1 (nothing rejected): loss 0.
 * Accuracy: cross-entropy's bounds (smx_grad.h) at temperature 1 / beta:
 * loss 4 eps max(1, |ref|); gradient (6 + b |m_j - max| / 2) eps |q_j| + ...;
 * f16 / bf16 gradients + u |ref|. The op driver checks every dtype against
 * the -log sigmoid(-log sum) form in long double (tests/ops/ref_losses.c).
 */
SMX_API smx_status smx_sdpo_loss_f64(const double *margins, size_t ld, const int64_t *targets, double *loss,
                                     double *grad, size_t ldg, size_t rows, size_t cols, double beta,
                                     const smx_options *opt);
SMX_API smx_status smx_sdpo_loss_f32(const float *margins, size_t ld, const int64_t *targets, float *loss,
                                     float *grad, size_t ldg, size_t rows, size_t cols, double beta,
                                     const smx_options *opt);
SMX_API smx_status smx_sdpo_loss_f16(const uint16_t *margins, size_t ld, const int64_t *targets, float *loss,
                                     uint16_t *grad, size_t ldg, size_t rows, size_t cols, double beta,
                                     const smx_options *opt);
SMX_API smx_status smx_sdpo_loss_bf16(const uint16_t *margins, size_t ld, const int64_t *targets, float *loss,
                                      uint16_t *grad, size_t ldg, size_t rows, size_t cols, double beta,
                                      const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_LOSSES_H */
