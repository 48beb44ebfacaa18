/*
 * smx — the softmax family beyond softmax: elementwise and normalised
 * variants, each as a row operation of the engine (the options, threads,
 * strides and in-place rules of smx.h). Included by smx/smx.h.
 */
#ifndef SMX_SMX_VARIANTS_H
#define SMX_SMX_VARIANTS_H

#include "smx/smx.h"
#include "smx/smx_grad.h"

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
 * Targets: int64 class indices in [0, cols), or opt->ignore_index (loss 0,
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
 * the f64 losses.
 */
typedef struct smx_loss_options {
  smx_reduction reduction;
  int64_t ignore_index;     /* rows whose target equals it are left out              */
  double grad_scale;        /* 0 means 1: multiplies the gradient (finite)             */
  int threads;              /* 0 or 1: the calling thread only                         */
} smx_loss_options;
/* The defaults, also what a NULL options pointer means (as cross-entropy: -100). */
#define SMX_LOSS_OPTIONS_INIT { SMX_REDUCTION_MEAN, -100, 0.0, 1 }

/*
 * Focal loss (Lin, Goyal, Girshick, He and Dollar 2017, "Focal Loss for Dense
 * Object Detection", eq. 5), multi-class on softmax: with p = softmax(x),
 * t the target, q = 1 - p_t:
 *   loss_r = -alpha_t * q^gamma * log p_t
 *   grad_j = s * K * (p_j - [j == t]),  K = alpha_t * (q^gamma - gamma * p_t * q^(gamma-1) * log p_t)
 * gamma >= 0 finite (0: cross-entropy); alpha: NULL (every alpha 1) or cols
 * finite per-class weights. MEAN divides by the number of rows not ignored
 * (not by the sum of the alphas). q is formed as -expm1(log p_t), and
 * q^(gamma-1) log p_t as q^gamma * (log p_t / q) (-> -q^gamma as q -> 0),
 * so the gradient is finite at p_t = 1 for every gamma.
 * Special values: an entry -inf is p = 0; x_t = -inf gives loss +inf (0 when
 * alpha_t = 0) and a finite gradient; a row with a NaN, a +inf or every
 * entry -inf gives loss NaN and a NaN gradient row. cols = 1: loss 0, grad 0.
 * Accuracy: the losses' common bound (above).
 */
SMX_API smx_status smx_focal_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                      const int64_t *targets, double gamma, const float *alpha,
                                      const smx_loss_options *opt, float *loss, float *grad, size_t ldg);
SMX_API smx_status smx_focal_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                      const int64_t *targets, double gamma, const double *alpha,
                                      const smx_loss_options *opt, double *loss, double *grad, size_t ldg);

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
 * then the centred squares, compensated), with no such limit.
 */
SMX_API smx_status smx_spherical_z_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                            const int64_t *targets, double a, double b,
                                            const smx_loss_options *opt, float *loss, float *grad, size_t ldg);
SMX_API smx_status smx_spherical_z_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                            const int64_t *targets, double a, double b,
                                            const smx_loss_options *opt, double *loss, double *grad, size_t ldg);


/*
 * InfoNCE (van den Oord, Li and Vinyals 2018, "Representation Learning with
 * Contrastive Predictive Coding", eq. 4) and its symmetric CLIP form
 * (Radford et al. 2021, "Learning Transferable Visual Models From Natural
 * Language Supervision", fig. 3) over a given similarity matrix sim (rows x
 * cols, leading dimension ld), temperature T > 0 finite. Row r's positive is
 * column t_r: targets[r], or r when targets is NULL (the diagonal; needs
 * rows <= cols). With L = sim / T:
 *   row term     a_r = lse_c L[r][c] - L[r][t_r]                (cross-entropy of row r)
 *   column term  b_r = lse_q L[q][t_r] - L[r][t_r]              (cross-entropy of column t_r)
 *   loss_r = a_r (symmetric = 0), or (a_r + b_r) / 2 (symmetric = 1, CLIP)
 * reduced by opt->reduction over the rows not ignored (targets equal to
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
SMX_API smx_status smx_info_nce_f32(const float *sim, size_t ld, size_t rows, size_t cols, const int64_t *targets,
                                    double temperature, int symmetric, const smx_loss_options *opt, float *loss,
                                    float *grad, size_t ldg);
SMX_API smx_status smx_info_nce_f64(const double *sim, size_t ld, size_t rows, size_t cols, const int64_t *targets,
                                    double temperature, int symmetric, const smx_loss_options *opt, double *loss,
                                    double *grad, size_t ldg);


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
 * statistics, 3 x cols doubles for each of at most 32 row blocks, a row of
 * scratch per thread.
 * Special values: a row with a NaN, a +inf or every entry -inf makes every
 * class sum, hence the loss and the gradient, NaN.
 * Accuracy: the losses' common bound (above), with max_c (|A_c| + |B_c|)
 * (w_rc = A_c + B_c G_rc) added to the gradient's scale G.
 */
SMX_API smx_status smx_dice_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols, const int64_t *targets,
                                     const float *target_probs, size_t ldt, double smooth,
                                     const smx_loss_options *opt, float *loss, float *grad, size_t ldg);
SMX_API smx_status smx_dice_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                     const int64_t *targets, const double *target_probs, size_t ldt, double smooth,
                                     const smx_loss_options *opt, double *loss, double *grad, size_t ldg);


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
                                                  const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx,
                                                  size_t rows, size_t cols, const double ranges[4],
                                                  const double ts[4], double *dparams, const smx_options *opt);
SMX_API smx_status smx_multimax_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
                                                   const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx,
                                                   size_t rows, size_t cols, const double ranges[4],
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

/*
 * The Fenchel-Young losses of these maps (Blondel, Martins & Niculae 2020;
 * sparsemax's is the sparsemax loss of Martins & Astudillo 2016, eq. 18): per
 * row, with p the map's output and Omega(p) = (1 - sum_i p_i^alpha) / (alpha (alpha - 1)),
 *   loss_r = Omega(p) + <p, x> - x_t  (>= 0),   grad_r = s (p - e_t),
 * alpha = 2 (sparsemax), 1.5 (entmax15, exact) or any alpha > 1 (bisection), as
 * smx_cross_entropy_f32 (include/smx/smx_grad.h) does for softmax: targets are
 * rows int64 class indices; opt (smx_xent_options, NULL for the defaults) gives
 * the reduction (MEAN over the rows not ignored, SUM, NONE), ignore_index (loss 0,
 * gradient 0), grad_scale (s = grad_scale, divided by the rows not ignored for
 * MEAN), threads and SMX_FLAG_MASKED_ROW_NAN; label_smoothing and z_loss must be
 * 0 and the temperature 0 or 1 (else SMX_E_INVALID_ARG). loss: rows values
 * (NONE) or one; grad: NULL, or rows x cols with leading dimension ldg, which
 * may be the logits exactly. Targets are all checked before anything is written.
 * Special rows: a NaN gives a NaN loss and gradient; +inf entries give a NaN
 * loss and the gradient of the map's limit (1/k on the +inf entries); a row
 * with no entry above -inf gives +inf (NaN with the flag), gradient -s e_t; a
 * target at -inf gives +inf. Accuracy: the loss within 8 eps max(1, |loss|) +
 * the map's error times max|x - max| over the support; the gradient within the
 * map's bound times |s|.
 */
SMX_API smx_status smx_sparsemax_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                          const int64_t *targets, const smx_xent_options *opt, float *loss,
                                          float *grad, size_t ldg);
SMX_API smx_status smx_sparsemax_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                          const int64_t *targets, const smx_xent_options *opt, double *loss,
                                          double *grad, size_t ldg);
SMX_API smx_status smx_entmax15_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                         const int64_t *targets, const smx_xent_options *opt, float *loss,
                                         float *grad, size_t ldg);
SMX_API smx_status smx_entmax15_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                         const int64_t *targets, const smx_xent_options *opt, double *loss,
                                         double *grad, size_t ldg);
SMX_API smx_status smx_entmax_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                       const int64_t *targets, double alpha, const smx_xent_options *opt,
                                       float *loss, float *grad, size_t ldg);
SMX_API smx_status smx_entmax_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                       const int64_t *targets, double alpha, const smx_xent_options *opt,
                                       double *loss, double *grad, size_t ldg);
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
 * f64 rows spanning more than DBL_MAX: the moments and the softmax's scale
 * are taken on the row scaled by a power of 2, so z stays finite.
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
 * Arguments as the other losses (above: targets, ignore_index, reduction,
 * grad_scale, threads, grad in place over the logits). norms: rows values of
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
 * Accuracy (tests/unit/test_noisy_softmax.c, against long double at every
 * ISA): the losses' common bound (above), for both gradients, with G the
 * largest |reference gradient| of the logits; alpha = 0 agrees with
 * smx_cross_entropy_f32 / _f64 within that bound.
 */
typedef enum smx_noisy_mode {
  SMX_NOISY_ANNEALED = 0,
  SMX_NOISY_FREE = 1,
  SMX_NOISY_AMPLITUDE = 2
} smx_noisy_mode;

SMX_API smx_status smx_noisy_softmax_loss_f32(const float *logits, size_t ld, size_t rows, size_t cols,
                                              const int64_t *targets, const float *norms, double alpha,
                                              uint64_t seed, uint64_t step, uint64_t row_offset,
                                              smx_noisy_mode mode, const smx_loss_options *opt, float *loss,
                                              float *grad, size_t ldg, float *grad_norms);
SMX_API smx_status smx_noisy_softmax_loss_f64(const double *logits, size_t ld, size_t rows, size_t cols,
                                              const int64_t *targets, const double *norms, double alpha,
                                              uint64_t seed, uint64_t step, uint64_t row_offset,
                                              smx_noisy_mode mode, const smx_loss_options *opt, double *loss,
                                              double *grad, size_t ldg, double *grad_norms);
/* xi[i] = the noise of row number row0 + i (above), for i < rows.
 * @return SMX_E_INVALID_ARG if xi is NULL with rows > 0. */
SMX_API smx_status smx_noisy_softmax_noise(uint64_t seed, uint64_t step, size_t row0, size_t rows, double *xi);

#ifdef __cplusplus
}
#endif

#endif
