/*
 * smx scores: what people build on softmax. Per-sample confidence / OOD
 * scores from a logits matrix, and the KL-matching templates they may need.
 * The figures over a whole set (OOD detection metrics from two score arrays,
 * calibration, temperature scaling) are in smx_metrics.h.
 *
 * Conventions (both headers):
 *  - The API convention of smx.h: inputs (pointer, leading dimension; class
 *    labels are inputs, const int64_t *), outputs, shape, the function's own
 *    parameters (here the score kind and its smx_score_params), then
 *    const smx_options *opt last (NULL: the defaults; each function says
 *    which fields it reads). An accumulator (smx_calib_acc) comes first in
 *    the functions that work on it, as the attention plan does.
 *  - Scores are "higher = more in-distribution (ID)" without exception. Codes
 *    that store an anomaly score (energy E(x), entropy H) store the negation.
 *  - Logits are rows x cols float32, row-major, leading dimension ldx >= cols
 *    (counted in elements); cols = K classes. Labels are int64 in [0, K).
 *  - Figures are computed in double. Every function checks all arguments
 *    before writing anything and returns SMX_E_INVALID_ARG (nothing written)
 *    for a NULL pointer with work to do, ldx < cols, cols == 0 with rows > 0,
 *    a size product that overflows, options smx_options refuses, or a bad
 *    parameter named below.
 *  - NaN in a logits row gives a NaN score for that row (and the metrics
 *    functions refuse NaN scores: SMX_E_INVALID_ARG). -inf logits are masked
 *    classes (probability 0). A row of all -inf has no distribution: its
 *    probability scores are NaN, max-logit and energy are -inf.
 *    +inf logits: the limit (the k entries at +inf share probability 1/k),
 *    max-logit and energy are +inf, the logit margin is +inf if one entry is
 *    +inf and NaN if several are.
 *
 * Sources of every formula and the places where OpenOOD, scikit-learn and the
 * papers disagree: docs/scores.md.
 */
#ifndef SMX_SMX_SCORES_H
#define SMX_SMX_SCORES_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ scores */
/*
 * Per-sample scores, z = one logits row, p = softmax(z), p(1) >= p(2) the two
 * largest probabilities, lse = log sum_k exp(z_k):
 *
 *  SMX_SCORE_MSP           max_k p_k                              (Hendrycks & Gimpel)
 *  SMX_SCORE_MAX_LOGIT     max_k z_k                              (MaxLogit / MLS)
 *  SMX_SCORE_ENERGY        T * lse(z / T) = -E(x)                 (Liu et al.; T = temperature, 0 -> 1)
 *  SMX_SCORE_NEG_ENTROPY   sum_k p_k log p_k = -H(p)              (0 log 0 = 0)
 *  SMX_SCORE_MARGIN_PROB   p(1) - p(2)                            (K = 1: 1)
 *  SMX_SCORE_MARGIN_LOGIT  z(1) - z(2)                            (K = 1: +inf)
 *  SMX_SCORE_GEN           -sum_{j in top-M of p} p_j^g (1 - p_j)^g  (Liu et al. 2023;
 *                          g = gen_gamma in (0, 1], 0 -> 0.1; M = gen_m, 0 -> 100, M >= K: all)
 *  SMX_SCORE_ODIN          max_k softmax(z / T)_k, T = temperature (0 -> 1000).
 *                          This is ODIN WITHOUT input perturbation (eps = 0): the
 *                          perturbation x~ = x - eps * sign(grad_x CE(f(x)/T, argmax))
 *                          needs the model's gradient, which a logits library does not
 *                          have. To get full ODIN, run the perturbed forward pass in
 *                          your framework and pass the logits f(x~) here (on the
 *                          command line: smx score odin PERTURBED.npy, or smx eval
 *                          --perturbed-id F --perturbed-ood F).
 *                          The scores cluster near 1/K with a spread of about 1/(K T):
 *                          exponentials near 1 are summed as 1 + (e - 1) (see below),
 *                          where rounding e to float would create ties.
 *  SMX_SCORE_KL_MATCHING   -min_k KL(p || d_k), d_k = template k (a K x K row-major
 *                          matrix of probabilities, rows summing to 1, see
 *                          smx_kl_templates_fit_f32); KL = sum_j p_j log(p_j / d_kj),
 *                          0 log 0 = 0, p_j > 0 = d_kj gives +inf    (Hendrycks et al. 2022)
 *  SMX_SCORE_NONUNIFORMITY sum_k |p_k - 1/K| (the L1 form of the authors' code; the
 *                          Wasserstein-1 distance with the 0/1 metric is half of it;
 *                          range [0, 2 (1 - 1/K)])                   (Ji et al. 2023)
 *
 * Accuracy (|score - exact| for the exact score of the float logits). Each row
 * is read from memory once; every score of a call shares one exponential pass
 * per temperature (vectorised per ISA, results independent of the row count).
 *  - MAX_LOGIT exact; MARGIN_LOGIT one rounding.
 *  - MSP, ENERGY: the f32 softmax kernels (sum of f32 exponentials in double
 *    partial sums): relative error <= 16 * 2^-24 for MSP, absolute error <=
 *    16 * 2^-24 * max(1, T) for ENERGY.
 *  - The others by default: f32 exponentials (1.18 ulp) summed in double, with
 *    the entries near 1 summed as 1 + (e - 1), so that a high temperature
 *    creates no ties: |score - exact| <= 16 * 2^-24 (1 + |score|). GEN's top-M
 *    terms and 1 - p are in double (1 - p re-formed in double when below 2^-64).
 *  - SMX_SCORE_FLAG_DOUBLE, any kind: exponentials in double (1.07 ulp) and
 *    compensated sums: |score - exact| <= 1e-13 (1 + |score|) at any row length;
 *    KL_MATCHING (libm log) 1e-12 relative.
 * Tested against long double at every ISA on wide adversarial rows. Probabilities
 * below 2^-1021 (double) or 2^-149 (f32) relative to the top class count as 0.
 * GEN forms 1 - p of the top class from the other classes, so confident rows
 * keep their (1 - p)^gamma term (naive 1 - p would round it to 0).
 */
typedef enum smx_score_kind {
  SMX_SCORE_MSP = 1,
  SMX_SCORE_MAX_LOGIT = 2,
  SMX_SCORE_ENERGY = 3,
  SMX_SCORE_NEG_ENTROPY = 4,
  SMX_SCORE_MARGIN_PROB = 5,
  SMX_SCORE_MARGIN_LOGIT = 6,
  SMX_SCORE_GEN = 7,
  SMX_SCORE_ODIN = 8,
  SMX_SCORE_KL_MATCHING = 9,
  SMX_SCORE_NONUNIFORMITY = 10
} smx_score_kind;

/* Every kind: double exponentials and compensated sums instead of the f32 ones (bounds above). */
#define SMX_SCORE_FLAG_DOUBLE 0x1u

typedef struct smx_score_params {  /* all-zero, or a NULL pointer, means the defaults */
  double temperature;       /* ENERGY (0 -> 1), ODIN (0 -> 1000); > 0 and finite          */
  double gen_gamma;         /* GEN: 0 -> 0.1; must be in (0, 1]                            */
  size_t gen_m;             /* GEN: 0 -> 100 top probabilities (all when >= K)            */
  const double *templates;  /* KL_MATCHING: K x K, row k = template of class k (required) */
  uint32_t flags;           /* SMX_SCORE_FLAG_DOUBLE                                      */
} smx_score_params;

/** @return "msp", "max_logit", "energy", ... (the CLI's names), or NULL for an unknown kind. */
SMX_API const char *smx_score_name(smx_score_kind kind);
/** Parses a CLI name (also "mls", "entropy", "kl", "nonuniformity"); SMX_E_INVALID_ARG if unknown. */
SMX_API smx_status smx_score_from_name(const char *name, smx_score_kind *kind);

/*
 * out[r] = score `kind` (with params; NULL: the defaults) of row r, for r in
 * [0, rows). out must not overlap x. SMX_E_INVALID_ARG also for an unknown
 * kind, a bad temperature or gamma, or a missing template matrix for
 * KL_MATCHING. Options: threads (rows are cut into fixed blocks, and a row's
 * score depends on that row alone, so the result is the same for any count);
 * each score's temperature is params->temperature, so opt->temperature must
 * be 0 or 1, and SMX_FLAG_MASKED_ROW_NAN is refused (all -inf rows have
 * their own rule above); algo and the store flags have no effect.
 */
SMX_API smx_status smx_scores_rows_f32(const float *x, size_t ldx, double *out, size_t rows, size_t cols,
                                       smx_score_kind kind, const smx_score_params *params, const smx_options *opt);

/*
 * Several scores of the same matrix: out[k][r] = score kinds[k] (with
 * params[k]; params NULL = defaults for all) of row r, bitwise equal to
 * nkinds calls of smx_scores_rows_f32 but cheaper: the double-path scores
 * share one row of exponentials per distinct temperature (e.g. msp with
 * SMX_SCORE_FLAG_DOUBLE, neg_entropy, margin_prob, gen, kl_matching and
 * nonuniformity all use T = 1). At most SMX_SCORES_MULTI_MAX kinds; every
 * (kind, params, out[k]) is checked as in smx_scores_rows_f32 before anything
 * is written; outputs that overlap each other are SMX_E_INVALID_ARG. The
 * options as for smx_scores_rows_f32.
 */
#define SMX_SCORES_MULTI_MAX 32
SMX_API smx_status smx_scores_multi_rows_f32(const float *x, size_t ldx, double *const *out, size_t rows,
                                             size_t cols, size_t nkinds, const smx_score_kind *kinds,
                                             const smx_score_params *params, const smx_options *opt);

/*
 * KL-matching templates (OpenOOD's kl_matching postprocessor): templates[k]
 * = mean of softmax(z) over the reference rows whose argmax is k (first index
 * on ties); a class that no row predicts gets the one-hot template e_k.
 * templates: cols x cols doubles, row-major. Rows containing NaN are skipped
 * (*used, if not NULL, receives the number of rows that counted).
 * Streaming: call smx_kl_templates_accumulate_f32 on blocks of rows with the
 * same sums/counts buffers (cols x cols doubles and cols uint64, zeroed by the
 * caller), then smx_kl_templates_finish. Options: none is used (the sums run
 * in row order on the calling thread); the templates are of softmax(z), as
 * KL_MATCHING scores it, so opt->temperature must be 0 or 1, and
 * SMX_FLAG_MASKED_ROW_NAN is refused.
 */
SMX_API smx_status smx_kl_templates_fit_f32(const float *x, size_t ldx, double *templates, size_t *used, size_t rows,
                                            size_t cols, const smx_options *opt);
SMX_API smx_status smx_kl_templates_accumulate_f32(const float *x, size_t ldx, double *sums, uint64_t *counts,
                                                   size_t rows, size_t cols, const smx_options *opt);
SMX_API smx_status smx_kl_templates_finish(const double *sums, const uint64_t *counts, double *templates,
                                           size_t cols);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_SCORES_H */
