/*
 * smx metrics: figures over a whole set of samples. OOD detection metrics
 * from the scores of ID and OOD samples, calibration of softmax(z / T)
 * against labels, and the temperature that minimises the validation NLL.
 * The per-sample scores, and the conventions both headers follow (argument
 * order, "higher = more ID", int64 labels in [0, K), nothing written on a
 * refusal), are in smx_scores.h; formulas and sources in docs/scores.md and
 * docs/metrics.md.
 */
#ifndef SMX_SMX_METRICS_H
#define SMX_SMX_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * score, tpr outside (0, 1], NULL pointers. Options: none is read yet (the
 * sort runs on the calling thread); opt->temperature must be 0 or 1 and
 * SMX_FLAG_MASKED_ROW_NAN is refused.
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

SMX_API smx_status smx_ood_metrics_f64(const double *id, const double *ood, smx_ood_metrics *out, size_t n_id,
                                       size_t n_ood, double tpr, const smx_options *opt);
SMX_API smx_status smx_ood_metrics_f32(const float *id, const float *ood, smx_ood_metrics *out, size_t n_id,
                                       size_t n_ood, double tpr, const smx_options *opt);

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
 * Rows with NaN or +inf logits, or all -inf, are refused (SMX_E_INVALID_ARG,
 * nothing accumulated or written); labels outside [0, K) likewise. bins: 0 ->
 * 15, at most 100000. T = opt->temperature (0 means 1); the other options
 * have no effect but SMX_FLAG_MASKED_ROW_NAN, which is refused.
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

/* An accumulator for cols classes at T = opt->temperature; flags: SMX_CALIB_NO_ADAPTIVE or 0. */
SMX_API smx_status smx_calib_create(smx_calib_acc **acc, size_t cols, size_t bins, uint32_t flags,
                                    const smx_options *opt);
/* Adds rows x cols logits (ld ldx) and their labels; the whole block is checked before any row counts. */
SMX_API smx_status smx_calib_add_rows_f32(smx_calib_acc *acc, const float *x, size_t ldx, const int64_t *labels,
                                          size_t rows);
/* bins_out: NULL or `bins` entries (the reliability diagram). SMX_E_INVALID_ARG with no rows added. */
SMX_API smx_status smx_calib_result(const smx_calib_acc *acc, smx_calibration *out, smx_reliability_bin *bins_out);
/* Frees acc (NULL: nothing to do); always SMX_OK. */
SMX_API smx_status smx_calib_destroy(smx_calib_acc *acc);

/* The whole matrix at once (create, add, result, destroy). */
SMX_API smx_status smx_calibration_rows_f32(const float *x, size_t ldx, const int64_t *labels, smx_calibration *out,
                                            smx_reliability_bin *bins_out, size_t rows, size_t cols, size_t bins,
                                            const smx_options *opt);

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
 * SMX_E_INVALID_ARG. Rows with -inf logits are fine (masked classes), but
 * not at the label; +inf logits are refused. Options: none is read (the fit
 * runs on the calling thread); the temperature is what it fits, so
 * opt->temperature must be 0 or 1, and SMX_FLAG_MASKED_ROW_NAN is refused.
 */
typedef enum smx_ts_outcome { SMX_TS_OPTIMUM = 0, SMX_TS_TO_ZERO = 1, SMX_TS_TO_INFINITY = 2 } smx_ts_outcome;

typedef struct smx_ts_info {
  smx_ts_outcome outcome;
  int iterations;       /* Newton / bisection steps                   */
  double nll_at_1;      /* validation NLL at T = 1                    */
  double nll_at_t;      /* validation NLL at the fitted T (or NaN)    */
  double grad;          /* dNLL/db at the end (about 0 at the optimum) */
} smx_ts_info;

SMX_API smx_status smx_temperature_fit_f32(const float *x, size_t ldx, const int64_t *labels, double *T,
                                           smx_ts_info *info, size_t rows, size_t cols, const smx_options *opt);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_METRICS_H */
