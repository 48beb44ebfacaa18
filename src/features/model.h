/*
 * The fitted feature model (smx_features.h) and the pieces that share it:
 * model.c (create, streaming fit, finish), linalg.c (LAPACK / BLAS, or
 * SMX_E_NOT_BUILT), percentile.c (exact order statistics of the bank),
 * score.c (the five scores), model_io.c (save / load), knn.c + faiss_knn.cpp
 * (the FAISS index, or SMX_E_NOT_BUILT).
 */
#ifndef SMX_FEATURES_MODEL_H
#define SMX_FEATURES_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx_features.h"

#define FEAT_NEEDS_BANK (SMX_FEAT_BIT(SMX_FEAT_KNN) | SMX_FEAT_BIT(SMX_FEAT_REACT) | SMX_FEAT_BIT(SMX_FEAT_VIM) | \
                         SMX_FEAT_BIT(SMX_FEAT_RESIDUAL))
#define FEAT_NEEDS_LAPACK (SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS) | SMX_FEAT_BIT(SMX_FEAT_VIM) | \
                           SMX_FEAT_BIT(SMX_FEAT_RESIDUAL))
#define FEAT_NEEDS_HEAD (SMX_FEAT_BIT(SMX_FEAT_VIM) | SMX_FEAT_BIT(SMX_FEAT_RESIDUAL) | SMX_FEAT_BIT(SMX_FEAT_REACT))

struct smx_feature_model {
  /* configuration, defaults resolved */
  size_t F, C;            /* C = configured classes (0: unlabelled) */
  size_t S;               /* statistics slots: max(C, 1)             */
  size_t k, D;
  double pct;
  smx_cov_policy cov;
  double shrink;
  smx_knn_index knn_kind;
  size_t ivf_lists, ivf_probe;
  unsigned methods;       /* what fitting prepares; after finish, what it can score */
  double *W, *b;          /* H x F, H (NULL when no head) */
  size_t H;

  /* streaming statistics (double): counts, class means, pooled within-class scatter (upper triangle) */
  uint64_t N;
  uint64_t *count;        /* S */
  double *mean;           /* S x F */
  double *scatter;        /* F x F, or NULL without LAPACK methods */
  float *bank;            /* N x F raw training rows (float32), or NULL */
  size_t bank_cap;
  double *ws;             /* fit workspace, 2 SUB x F doubles and SUB row records, kept between batches
                             (allocating it per batch cost page faults on every call) */

  /* finished */
  int finished;
  double *gmean;          /* F: the overall mean (Mahalanobis centring)  */
  size_t rank;            /* Mahalanobis whitening rows                  */
  double *whiten;         /* rank x F: |whiten (x - gmean) - wmu_c|^2 = (x - mu_c)^T S^-1 (x - mu_c) */
  double *wmu;            /* S x rank                                     */
  double *u;              /* F: ViM origin -W^+ b                         */
  double *ns;             /* (F - D) x F: complement basis, one row per vector */
  double alpha;           /* ViM                                          */
  double thr;             /* ReAct                                        */
  float *nbank;           /* N x F unit rows (kNN), owned, or NULL once the index holds them */
  const float *rows;      /* the unit rows: nbank, or the flat index's own storage (one copy)  */
  void *knn;              /* FAISS index (knn.c), or NULL                 */
};

/* ---- linalg.c (SMX_E_NOT_BUILT without LAPACK) */
int smx_feat_have_lapack(void);
/* S += X^T X, upper triangle (X: n x F row-major, doubles). */
void smx_feat_syrk(double *S, const double *X, size_t n, size_t F);
/* C(m x n) = A(m x k) B(n x k)^T (+ C when accumulate), row-major. */
void smx_feat_gemm_nt(const double *A, const double *B, double *C, size_t m, size_t n, size_t k, int accumulate);
/* Whitening of the symmetric S (upper triangle read; F x F), per policy:
 * *A (malloc'ed, *rank x F). SMX_E_SINGULAR / SMX_E_NOMEM / SMX_E_NOT_BUILT. */
smx_status smx_feat_whitening(const double *S, size_t F, smx_cov_policy pol, double shrink, double **A,
                              size_t *rank);
/* The eigenvectors of the symmetric M (F x F, upper read) with the F - D
 * smallest eigenvalues, as rows of *ns ((F - D) x F, malloc'ed). */
smx_status smx_feat_complement(const double *M, size_t F, size_t D, double **ns);
/* u = -W^+ b (numpy.linalg.pinv's cut-off, 1e-15 of the largest singular value). */
smx_status smx_feat_vim_origin(const double *W, const double *b, size_t H, size_t F, double *u);

/* ---- percentile.c: the p-th percentile (NumPy's linear rule) of n float values */
double smx_feat_percentile(const float *x, size_t n, double p);

/* ---- knn.c / faiss_knn.cpp */
int smx_feat_have_faiss(void);
/* Builds the index over nrows unit rows (N x F); kind FLAT or IVF. */
smx_status smx_feat_knn_build(const float *rows, size_t N, size_t F, smx_knn_index kind, size_t lists, size_t probe,
                              void **index);
/* For each of n unit queries, the labels of its k nearest (n x k, ascending distance). */
smx_status smx_feat_knn_search(void *index, const float *q, size_t n, size_t k, int64_t *labels);
void smx_feat_knn_free(void *index);
/* The flat index's stored rows (N x F, FAISS's own array), or NULL (IVF, or no FAISS). */
const float *smx_feat_knn_rows(void *index);
/* After a build: frees *nbank when the index holds the same rows, and says where they are. */
const float *smx_feat_knn_adopt(void *index, float **nbank);

/* ---- finish.c: f / |f| (|f| in double); a zero row stays zero */
void smx_feat_normalise_row_f32(const float *x, size_t F, float *y);

/* ---- score.c */
double smx_feat_lse(const double *z, size_t n);

#endif
