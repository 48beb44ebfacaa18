/*
 * smx scores: what people build on softmax. Per-sample confidence / OOD
 * scores from a logits matrix, OOD detection metrics from two score arrays,
 * calibration figures and temperature scaling.
 *
 * Conventions (all functions):
 *  - Scores are "higher = more in-distribution (ID)" without exception. Codes
 *    that store an anomaly score (energy E(x), entropy H) store the negation.
 *  - Logits are rows x cols float32, row-major, leading dimension ldx >= cols
 *    (counted in elements); cols = K classes. Labels are int32 in [0, K).
 *  - Figures are computed in double. Every function checks all arguments
 *    before writing anything and returns SMX_E_INVALID_ARG (nothing written)
 *    for a NULL pointer with work to do, ldx < cols, cols == 0 with rows > 0,
 *    a size product that overflows, or a bad parameter named below.
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
 * out[r] = score of row r, for r in [0, rows). out must not overlap x.
 * SMX_E_INVALID_ARG also for an unknown kind, a bad temperature or gamma, or a
 * missing template matrix for KL_MATCHING.
 */
SMX_API smx_status smx_scores_rows_f32(smx_score_kind kind, const float *x, size_t ldx, size_t rows, size_t cols,
                                       const smx_score_params *params, double *out);

/*
 * Several scores of the same matrix: out[k][r] = score kinds[k] (with
 * params[k]; params NULL = defaults for all) of row r, bitwise equal to
 * nkinds calls of smx_scores_rows_f32 but cheaper: the double-path scores
 * share one row of exponentials per distinct temperature (e.g. msp with
 * SMX_SCORE_FLAG_DOUBLE, neg_entropy, margin_prob, gen, kl_matching and
 * nonuniformity all use T = 1). At most SMX_SCORES_MULTI_MAX kinds; every
 * (kind, params, out[k]) is checked as in smx_scores_rows_f32 before anything
 * is written; outputs that overlap each other are SMX_E_INVALID_ARG.
 */
#define SMX_SCORES_MULTI_MAX 32
SMX_API smx_status smx_scores_multi_rows_f32(size_t nkinds, const smx_score_kind *kinds,
                                             const smx_score_params *params, const float *x, size_t ldx,
                                             size_t rows, size_t cols, double *const *out);

/*
 * KL-matching templates (OpenOOD's kl_matching postprocessor): templates[k]
 * = mean of softmax(z) over the reference rows whose argmax is k (first index
 * on ties); a class that no row predicts gets the one-hot template e_k.
 * templates: cols x cols doubles, row-major. Rows containing NaN are skipped
 * (*used, if not NULL, receives the number of rows that counted).
 * Streaming: call smx_kl_templates_accumulate_f32 on blocks of rows with the
 * same sums/counts buffers (cols x cols doubles and cols uint64, zeroed by the
 * caller), then smx_kl_templates_finish.
 */
SMX_API smx_status smx_kl_templates_fit_f32(const float *x, size_t ldx, size_t rows, size_t cols, double *templates,
                                            size_t *used);
SMX_API smx_status smx_kl_templates_accumulate_f32(const float *x, size_t ldx, size_t rows, size_t cols,
                                                   double *sums, uint64_t *counts);
SMX_API smx_status smx_kl_templates_finish(const double *sums, const uint64_t *counts, size_t cols,
                                           double *templates);

/* ========================================================== OOD metrics */
/*
 * From scores of ID samples (id, n_id) and OOD samples (ood, n_ood), higher =
 * more ID. Two conventions, named explicitly:
 *  - "idpos": ID is the positive class, the score as is (ODIN, energy paper,
 *    hendrycks OE / energy_ood code).
 *  - "oodpos": OOD is the positive class and the score is negated (OpenOOD
 *    v1.5, openood/evaluators/metrics.py).
 * A threshold t accepts as positive every sample at or beyond it, so a group of
 * tied scores always enters the curves together, exactly as scikit-learn's
 * _binary_clf_curve does (a diagonal step).
 *
 * The field names are the keys of smx.ood_metrics in Python, of smx eval's
 * JSON and the column headers of its report (docs/metrics.md lists them all).
 * Where the conventions differ, the name says which one it follows:
 *
 *  auroc              P(s_id > s_ood) + P(s_id = s_ood) / 2 = sklearn roc_auc_score
 *                     (and OpenOOD's AUROC: the same number in both conventions).
 *  ap_in              scikit-learn average_precision_score, ID positive (step sum,
 *                     no interpolation): sum_n (R_n - R_{n-1}) P_n.
 *  ap_out             the same with OOD positive on -score.
 *  aupr_in_trapz, aupr_out_trapz   OpenOOD v1.5's AUPR-In / AUPR-Out: trapezoid
 *                     (sklearn auc) over precision_recall_curve's points plus
 *                     (recall 0, precision 1).
 *  fpr_idpos_exact    papers (ODIN, energy): share of OOD accepted at the first
 *                     threshold (from the top) that accepts >= tpr of the ID
 *                     samples; thr_idpos_exact is that threshold (OOD with score
 *                     >= thr_idpos_exact count as false positives).
 *  fpr_oodpos_exact   OpenOOD's orientation on the full ROC curve: share of ID
 *                     flagged OOD at the first threshold (from the bottom) that
 *                     flags >= tpr of the OOD samples; thr_oodpos_exact: samples
 *                     with score <= it are flagged.
 *  fpr_oodpos_openood bit-for-bit OpenOOD v1.5: as fpr_oodpos_exact but on the
 *                     curve after sklearn roc_curve's drop_intermediate=True, which
 *                     with ties can move it to a later point. Equal to
 *                     fpr_oodpos_exact without ties.
 *  fpr_idpos_nearest, fpr_oodpos_nearest   hendrycks/outlier-exposure and
 *                     wetliu/energy_ood fpr_and_fdr_at_recall: the curve point
 *                     whose recall is nearest to tpr (may be just below it).
 * tpr: 0 means 0.95. n_tied_values = n - number of distinct scores.
 * Exact: counts are integers, AUROC is one integer sum divided once; the
 * others are double sums over the curve points (equal to sklearn to ~1e-15).
 * O(n log n): both arrays are copied and radix sorted (the f32 entry sorts
 * 32-bit keys, f64 64-bit keys; -0 equals +0), then merged once. Workspace:
 * 2 x (n_id + n_ood) keys, allocated (SMX_E_NOMEM if that fails).
 * SMX_E_INVALID_ARG: n_id == 0 or n_ood == 0 (nothing to compare), a NaN
 * score, tpr outside (0, 1], NULL pointers.
 */
typedef struct smx_ood_metrics {
  double auroc;
  double ap_in, ap_out;
  double aupr_in_trapz, aupr_out_trapz;
  double fpr_idpos_exact, fpr_oodpos_exact, fpr_oodpos_openood;
  double fpr_idpos_nearest, fpr_oodpos_nearest;
  double thr_idpos_exact, thr_oodpos_exact;
  double tpr;          /* the target used */
  uint64_t n_id, n_ood, n_tied_values;
} smx_ood_metrics;

SMX_API smx_status smx_ood_metrics_f64(const double *id, size_t n_id, const double *ood, size_t n_ood, double tpr,
                                       smx_ood_metrics *out);
SMX_API smx_status smx_ood_metrics_f32(const float *id, size_t n_id, const float *ood, size_t n_ood, double tpr,
                                       smx_ood_metrics *out);

/* ========================================================== calibration */
/*
 * Top-label calibration of softmax(z / T) against labels, accumulated over
 * blocks of rows (bounded memory apart from one (confidence, correct) pair
 * per row that the equal-mass ECE needs; SMX_CALIB_NO_ADAPTIVE drops it).
 * conf = max_k p_k, pred = argmax (first index on ties), correct = pred == y.
 *
 *  acc            mean correct
 *  nll            mean of lse(z/T) - z_y/T (natural log)
 *  brier          mean over rows of sum_k (p_k - 1[y = k])^2   (range [0, 2]; no / K)
 *  ece            sum_b (n_b / n) |acc_b - conf_b| over `bins` equal-width bins
 *  mce            max_b |acc_b - conf_b| over non-empty bins
 *  adaptive_ece   the same over equal-mass bins (torrvision AdaptiveECELoss):
 *                 edges = np.interp(linspace(0, n, bins + 1), arange(n), sort(conf));
 *                 as there, the lowest edge is min(conf), so with (lo, hi] bins
 *                 the sample(s) at the minimum confidence are in no bin.
 *  classwise_ece  (1/K) sum_k sum_b (n_kb / n) |mean 1[y = k] - mean p_k|, bins over p_k
 *
 * Bin edge convention (equal width, as gpleiss _ECELoss): edges e_b = b / bins,
 * bin b = (e_b, e_{b+1}], so a confidence exactly on an edge belongs to the bin
 * below it and 1.0 to the last bin; a value of exactly 0 (only possible for
 * classwise p_k) goes to the first bin. Empty bins contribute nothing (and are
 * left out of MCE); the reliability diagram reports them with n = 0.
 * Rows with NaN logits are refused (SMX_E_INVALID_ARG, naming nothing written);
 * labels outside [0, K) likewise. bins: 0 -> 15, at most 100000.
 */
#define SMX_CALIB_NO_ADAPTIVE 0x1u

typedef struct smx_calibration {
  uint64_t n;
  double acc, nll, brier, ece, mce, adaptive_ece, classwise_ece;
} smx_calibration;

typedef struct smx_reliability_bin {
  double lo, hi;     /* (lo, hi]                                   */
  uint64_t n;        /* samples in the bin                          */
  double conf, acc;  /* mean confidence and accuracy (NaN when n = 0) */
} smx_reliability_bin;

typedef struct smx_calib_acc smx_calib_acc;

/* temperature: 0 means 1; > 0 and finite. */
SMX_API smx_status smx_calib_create(size_t cols, size_t bins, double temperature, uint32_t flags,
                                    smx_calib_acc **acc);
SMX_API smx_status smx_calib_add_rows_f32(smx_calib_acc *acc, const float *x, size_t ldx, size_t rows,
                                          const int32_t *labels);
/* bins_out: NULL or `bins` entries (the reliability diagram). SMX_E_INVALID_ARG with no rows added. */
SMX_API smx_status smx_calib_result(const smx_calib_acc *acc, smx_calibration *out, smx_reliability_bin *bins_out);
SMX_API void smx_calib_destroy(smx_calib_acc *acc);

/* The whole matrix at once (create, add, result, destroy). */
SMX_API smx_status smx_calibration_rows_f32(const float *x, size_t ldx, size_t rows, size_t cols,
                                            const int32_t *labels, double temperature, size_t bins,
                                            smx_calibration *out, smx_reliability_bin *bins_out);

/* ================================================== temperature scaling */
/*
 * Fits T > 0 minimising the validation NLL(T) = mean[lse(z/T) - z_y/T].
 * With b = 1/T, N(b) is convex: N'(b) = mean(E_{p_b}[z] - z_y), N''(b) =
 * mean Var_{p_b}(z) >= 0. A finite positive optimum exists iff N'(0+) < 0 (the
 * true-class logit is above the row mean on average) and N'(inf) > 0 (some
 * sample is misclassified: its true logit is below the row maximum). Solved
 * by Newton on b, safeguarded by a bisection bracket (each step stays inside
 * the bracket, else it bisects), to |db| <= 4 eps b.
 * Returns SMX_E_NO_OPTIMUM, with the reason in info (and *T untouched), when:
 *  SMX_TS_TO_ZERO      every sample has its true class at the row maximum: the
 *                      NLL keeps falling as T -> 0 (no bound is returned);
 *  SMX_TS_TO_INFINITY  N'(0+) >= 0: the NLL keeps falling as T -> inf.
 * One class only (K = 1) is the first case (every sample is right and the NLL
 * is 0 for every T). Rows with NaN logits or labels out of range:
 * SMX_E_INVALID_ARG. Rows with
 * -inf logits are fine (masked classes); +inf logits are refused.
 */
typedef enum smx_ts_outcome { SMX_TS_OPTIMUM = 0, SMX_TS_TO_ZERO = 1, SMX_TS_TO_INFINITY = 2 } smx_ts_outcome;

typedef struct smx_ts_info {
  smx_ts_outcome outcome;
  int iterations;       /* Newton / bisection steps                   */
  double nll_at_1;      /* validation NLL at T = 1                    */
  double nll_at_t;      /* validation NLL at the fitted T (or NaN)    */
  double grad;          /* dNLL/db at the end (about 0 at the optimum) */
} smx_ts_info;

SMX_API smx_status smx_temperature_fit_f32(const float *x, size_t ldx, size_t rows, size_t cols,
                                           const int32_t *labels, double *T, smx_ts_info *info);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_SCORES_H */
