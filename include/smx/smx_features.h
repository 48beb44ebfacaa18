/*
 * smx features: OOD scores from a classifier's penultimate features (and its
 * last layer), fitted once on training features: Mahalanobis, deep kNN, ViM,
 * the ViM residual, ReAct. Definitions: OpenOOD v1.5's, with the formulas and
 * sources in docs/scores.md section 8. Every score is "higher = more
 * in-distribution", like the logit scores of smx_scores.h, and goes through
 * the same metrics (smx_ood_metrics_f64).
 *
 * Notation: f = one feature row (F values), W = the last layer, C x F
 * row-major as PyTorch's nn.Linear stores it, b its C biases (logits =
 * f W^T + b), N = training rows.
 *
 *  SMX_FEAT_MAHALANOBIS  max_c -(f - mu_c)^T S^-1 (f - mu_c); mu_c = class means,
 *                        S = ML covariance (divided by N) of the class-centred
 *                        training features (Lee et al. 2018; OpenOOD mds, no 1/2).
 *                        S^-1: Cholesky (LAPACK dpotrf, whitening by L^-1, dtrtri).
 *                        A singular S (Cholesky fails, or reciprocal condition
 *                        number (dpocon) below F * 2^-52) is SMX_E_SINGULAR at
 *                        finish unless the config asks for SMX_COV_PINV (S^+ from
 *                        dsyevd, eigenvalues below F * 2^-52 * max dropped, as
 *                        scipy.linalg.pinvh) or SMX_COV_SHRINK ((1 - a) S +
 *                        a tr(S)/F I, as sklearn's ShrunkCovariance).
 *  SMX_FEAT_KNN          -(squared L2 distance from f/|f| to its k-th nearest
 *                        training row g/|g|) (Sun et al. 2022; FAISS IndexFlatL2).
 *                        A zero row stays zero. The bank is float32 (FAISS's type);
 *                        FAISS finds the k nearest, their distances are then
 *                        recomputed in double: within 2^-21 absolute of the exact
 *                        k-th distance of the float32 bank. k > N: SMX_E_INVALID_ARG
 *                        at finish (never clamped: it would change the score).
 *                        SMX_KNN_IVF: FAISS IndexIVFFlat, APPROXIMATE (may miss
 *                        neighbours outside the probed lists).
 *  SMX_FEAT_VIM          -alpha r + logsumexp(logits) (Wang et al. 2022). u = -W^+ b
 *                        (LAPACK pseudo-inverse); P = the top D eigenvectors of
 *                        (1/N) sum (f - u)(f - u)^T (about u, uncentred, as OpenOOD's
 *                        EmpiricalCovariance(assume_centered=True)); r = |(f - u)
 *                        projected on the complement of P|; alpha = mean training
 *                        max-logit / mean training r (second pass over the stored
 *                        float32 training rows at finish).
 *  SMX_FEAT_RESIDUAL     -r.
 *  SMX_FEAT_REACT        logsumexp(min(f, t) W^T + b), t = the p-th percentile of all
 *                        N * F training values (NumPy's linear interpolation, over
 *                        the float32 training rows) (Sun et al. 2021).
 * logits: VIM uses the logits passed to the score call, or f W^T + b when NULL.
 *
 * Accuracy (f64 input; f32 input adds its own rounding): MAHALANOBIS, VIM,
 * RESIDUAL, REACT within 1e-6 relative of the float64 formula (statistics and
 * products in double; the eigen/Cholesky factors carry the usual cond * 2^-52);
 * KNN as above.
 *
 * Memory: O(C F + F^2) doubles for the statistics; KNN, REACT and VIM (alpha,
 * percentile, bank) keep the training rows as float32 (N F 4 bytes) until
 * finish, after which only KNN's unit rows stay (one copy: the flat index's):
 * leave them out of config.methods to fit in O(F^2) over a stream larger than
 * memory.
 *
 * Optional parts: MAHALANOBIS, VIM, RESIDUAL need LAPACK (Debian: liblapacke-dev
 * and libopenblas-dev), KNN needs FAISS (Debian: libfaiss-dev) at build time.
 * Without them those methods give SMX_E_NOT_BUILT and
 * smx_feature_method_requires names the package. REACT needs neither.
 * Threads (opt->threads): scoring runs in fixed blocks of 64 rows, so results
 * are the same for every thread count; fitting is sequential apart from BLAS.
 * OpenBLAS's own thread count (OPENBLAS_NUM_THREADS, or an MPI launcher's
 * core binding) can change the last bits of a fit (its threaded dgemv inside
 * the eigensolver; about 1e-14 relative): a saved model scores bit for bit the
 * same everywhere.
 */
#ifndef SMX_SMX_FEATURES_H
#define SMX_SMX_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum smx_feature_method {
  SMX_FEAT_MAHALANOBIS = 1,
  SMX_FEAT_KNN = 2,
  SMX_FEAT_VIM = 3,
  SMX_FEAT_RESIDUAL = 4,
  SMX_FEAT_REACT = 5
} smx_feature_method;
#define SMX_FEAT_BIT(m) (1u << (unsigned)(m))
#define SMX_FEAT_ALL 0x3eu

typedef enum smx_cov_policy { SMX_COV_ERROR = 0, SMX_COV_PINV = 1, SMX_COV_SHRINK = 2 } smx_cov_policy;
typedef enum smx_knn_index { SMX_KNN_FLAT = 0, SMX_KNN_IVF = 1 } smx_knn_index;

/* Zero means the default for every field but `features`. */
typedef struct smx_feature_config {
  size_t features;          /* F >= 1 (required)                                               */
  size_t classes;           /* C: labels in [0, C); 0: no labels (MAHALANOBIS then refused)      */
  unsigned methods;         /* SMX_FEAT_BIT(...) set; 0: all that the inputs allow              */
  size_t k;                 /* KNN: 0 -> 50                                                     */
  size_t vim_dim;           /* VIM: D in [1, F); 0 -> 1000 if F >= 2048, 512 if F >= 768, else F/2 */
  double react_percentile;  /* REACT: p in (0, 100]; 0 -> 90                                     */
  smx_cov_policy cov_policy;
  double shrinkage;         /* SMX_COV_SHRINK: a in (0, 1]                                       */
  smx_knn_index knn_index;
  size_t ivf_lists, ivf_probe; /* SMX_KNN_IVF: 0 -> about sqrt(N) lists (at most N), 0 -> 1 probe (at most the lists) */
  /* VIM, RESIDUAL, REACT: the last layer (copied): weight C x F with leading
   * dimension ldw >= F, bias C values (NULL: zero). With classes == 0 the
   * layer's rows are its own count, head_rows. */
  const double *weight, *bias;
  size_t ldw, head_rows;
} smx_feature_config;

typedef struct smx_feature_model smx_feature_model;

/** "mahalanobis", "knn", "vim", "residual", "react"; NULL for another value. */
SMX_API const char *smx_feature_method_name(smx_feature_method m);
/** Parses those names; SMX_E_INVALID_ARG for another. */
SMX_API smx_status smx_feature_method_from_name(const char *name, smx_feature_method *m);
/** NULL when this build has what m needs, else a static sentence naming the Debian package. */
SMX_API const char *smx_feature_method_requires(smx_feature_method m);

/*
 * A model to fit. SMX_E_INVALID_ARG: features == 0; vim_dim >= F; percentile
 * outside (0, 100]; shrinkage outside (0, 1] with SMX_COV_SHRINK; a weight
 * whose rows are not classes (head_rows != classes when both are set) or
 * ldw < F; non-finite weight or bias; methods outside SMX_FEAT_ALL; VIM,
 * RESIDUAL or REACT asked for without a weight. SMX_E_NOT_BUILT: a method asked
 * for explicitly that the build lacks (methods == 0 leaves such methods out).
 */
SMX_API smx_status smx_feature_model_create(const smx_feature_config *cfg, smx_feature_model **model);
SMX_API void smx_feature_model_destroy(smx_feature_model *model);

/*
 * Adds n training rows (row i at x + i * ldx, ldx >= F elements) with their
 * labels (int64 in [0, C); NULL when classes == 0). Streaming: class means
 * and the pooled within-class scatter are merged batch by batch in double
 * (Chan et al.), so any batching gives the same statistics up to rounding.
 * The whole batch is checked first (finite values, label range): a bad batch
 * adds nothing. SMX_E_INVALID_ARG after finish.
 */
SMX_API smx_status smx_feature_model_fit_batch_f32(smx_feature_model *model, const float *x, size_t ldx,
                                                   const int64_t *labels, size_t n);
SMX_API smx_status smx_feature_model_fit_batch_f64(smx_feature_model *model, const double *x, size_t ldx,
                                                   const int64_t *labels, size_t n);

/*
 * Derives every method's parameters. SMX_E_INVALID_ARG: no rows; a class
 * in [0, C) without rows (MAHALANOBIS); k > N (KNN). SMX_E_SINGULAR: the
 * covariance (above). SMX_E_NOT_BUILT cannot happen here (checked at create).
 * On failure the model is unchanged and may be finished again after more rows.
 */
SMX_API smx_status smx_feature_model_finish(smx_feature_model *model, const smx_options *opt);

/* Facts of a finished model (any pointer may be NULL). */
typedef struct smx_feature_info {
  size_t features, classes, rows, k, vim_dim;
  unsigned methods;             /* what it can score                          */
  double react_percentile;      /* p                                           */
  double react_threshold;       /* t (NaN without REACT)                       */
  double vim_alpha;             /* alpha (NaN without VIM)                     */
  size_t cov_rank;              /* rank used for S^-1 (F unless PINV dropped)  */
} smx_feature_info;
SMX_API smx_status smx_feature_model_info(const smx_feature_model *model, smx_feature_info *info);

/*
 * out[i] = score of row i of x (n rows, ldx >= F) for a finished model.
 * logits: VIM only, n x C with ldl >= C, or NULL (computed from W, b).
 * SMX_E_INVALID_ARG: not finished, a method the model was not fitted for,
 * non-finite features or logits (nothing written), out overlapping x.
 * n == 0 is fine (nothing to do).
 */
SMX_API smx_status smx_feature_score_f32(const smx_feature_model *model, smx_feature_method method, const float *x,
                                         size_t ldx, const float *logits, size_t ldl, size_t n, double *out,
                                         const smx_options *opt);
SMX_API smx_status smx_feature_score_f64(const smx_feature_model *model, smx_feature_method method, const double *x,
                                         size_t ldx, const double *logits, size_t ldl, size_t n, double *out,
                                         const smx_options *opt);

/*
 * The finished model in a file (format: docs/feature-model.md): a 128-byte
 * header (magic "SMXFEAT1", version, sizes), the arrays, and a 64-bit
 * checksum. save writes a temporary file next to path and renames it over
 * path (never a half-written file): SMX_E_IO with errno kept. load refuses
 * (SMX_E_PARSE, nothing allocated) a file that is truncated, longer than its
 * sizes say, of another version, whose checksum or sizes do not match, or
 * that holds a non-finite value;
 * SMX_E_NOT_BUILT if it holds methods this build lacks (load with
 * drop_missing = 1 keeps the others).
 */
SMX_API smx_status smx_feature_model_save(const smx_feature_model *model, const char *path);
SMX_API smx_status smx_feature_model_load(const char *path, int drop_missing, smx_feature_model **model);

#ifdef __cplusplus
}
#endif
#endif /* SMX_SMX_FEATURES_H */
