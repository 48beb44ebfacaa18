/*
 * The feature scores' linear algebra on LAPACK (LAPACKE) and BLAS (CBLAS,
 * OpenBLAS in Debian): no hand-written factorisation. Built only where CMake
 * found them (SMX_HAVE_LAPACK); otherwise every entry reports SMX_E_NOT_BUILT
 * and the methods that need it are refused at create.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/model.h"

#ifdef SMX_HAVE_LAPACK
#include <cblas.h>
#include <lapacke.h>

int smx_feat_have_lapack(void) { return 1; }

void smx_feat_syrk(double *S, const double *X, size_t n, size_t F) {
  if (!n) return;
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)F, (int)n, 1.0, X, (int)F, 1.0, S, (int)F);
}

void smx_feat_gemm_nt(const double *A, const double *B, double *C, size_t m, size_t n, size_t k, int accumulate) {
  if (!m || !n) return;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0, A, (int)k, B, (int)k,
              accumulate ? 1.0 : 0.0, C, (int)n);
}

/* Row-major upper triangle = column-major lower triangle: LAPACK sees the
 * same symmetric matrix either way; we pass row-major and 'U'. */
static smx_status chol_whiten(double *M, size_t F, double **A, size_t *rank) {
  const lapack_int n = (lapack_int)F;
  double anorm = LAPACKE_dlansy(LAPACK_ROW_MAJOR, '1', 'U', n, M, n);
  lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', n, M, n);   /* M = U^T U */
  if (info > 0) return SMX_E_SINGULAR;
  if (info < 0) return SMX_E_INTERNAL;
  double rcond = 0.0;
  info = LAPACKE_dpocon(LAPACK_ROW_MAJOR, 'U', n, M, n, anorm, &rcond);
  if (info != 0) return SMX_E_INTERNAL;
  if (!(rcond >= (double)F * DBL_EPSILON)) return SMX_E_SINGULAR;
  /* x^T S^-1 x = |U^-T x|^2: the whitening is U^-T (lower triangular) */
  info = LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'U', 'N', n, M, n);
  if (info != 0) return info > 0 ? SMX_E_SINGULAR : SMX_E_INTERNAL;
  double *W = calloc(F * F, sizeof *W);
  if (!W) return SMX_E_NOMEM;
  for (size_t i = 0; i < F; i++)
    for (size_t j = i; j < F; j++) W[j * F + i] = M[i * F + j];   /* (U^-1)^T */
  *A = W;
  *rank = F;
  return SMX_OK;
}

/* S^+ = V diag(1/l) V^T over the eigenvalues above F * eps * max |l| (scipy
 * pinvh's default); whitening rows v_j^T / sqrt(l_j). */
static smx_status pinv_whiten(double *M, size_t F, double **A, size_t *rank) {
  double *w = malloc(F * sizeof *w);
  if (!w) return SMX_E_NOMEM;
  lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)F, M, (lapack_int)F, w);
  if (info != 0) { free(w); return SMX_E_INTERNAL; }
  double big = 0.0;
  for (size_t j = 0; j < F; j++) big = fmax(big, fabs(w[j]));
  double cut = big * (double)F * DBL_EPSILON;
  size_t r = 0;
  for (size_t j = 0; j < F; j++) r += w[j] > cut;
  if (r == 0) { free(w); return SMX_E_SINGULAR; }   /* S = 0: no direction to measure */
  double *W = malloc(r * F * sizeof *W);
  if (!W) { free(w); return SMX_E_NOMEM; }
  size_t row = 0;
  for (size_t j = F; j-- > 0;) {   /* largest first */
    if (!(w[j] > cut)) continue;
    double s = 1.0 / sqrt(w[j]);
    for (size_t i = 0; i < F; i++) W[row * F + i] = M[i * F + j] * s;   /* column j of V */
    row++;
  }
  free(w);
  *A = W;
  *rank = r;
  return SMX_OK;
}

smx_status smx_feat_whitening(const double *S, size_t F, smx_cov_policy pol, double shrink, double **A,
                              size_t *rank) {
  double *M = malloc(F * F * sizeof *M);
  if (!M) return SMX_E_NOMEM;
  memcpy(M, S, F * F * sizeof *M);
  if (pol == SMX_COV_SHRINK) {   /* (1 - a) S + a mu I, mu = tr(S) / F */
    double tr = 0.0;
    for (size_t i = 0; i < F; i++) tr += M[i * F + i];
    for (size_t i = 0; i < F; i++)
      for (size_t j = i; j < F; j++) M[i * F + j] *= 1.0 - shrink;
    for (size_t i = 0; i < F; i++) M[i * F + i] += shrink * tr / (double)F;
  }
  smx_status s = pol == SMX_COV_PINV ? pinv_whiten(M, F, A, rank) : chol_whiten(M, F, A, rank);
  free(M);
  return s;
}

smx_status smx_feat_complement(const double *M0, size_t F, size_t D, double **ns) {
  double *M = malloc(F * F * sizeof *M), *w = malloc(F * sizeof *w);
  smx_status s = SMX_OK;
  if (!M || !w) { s = SMX_E_NOMEM; goto out; }
  memcpy(M, M0, F * F * sizeof *M);
  if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)F, M, (lapack_int)F, w) != 0) { s = SMX_E_INTERNAL; goto out; }
  size_t m = F - D;   /* ascending eigenvalues: the first F - D columns */
  double *R = malloc(m * F * sizeof *R);
  if (!R) { s = SMX_E_NOMEM; goto out; }
  for (size_t j = 0; j < m; j++)
    for (size_t i = 0; i < F; i++) R[j * F + i] = M[i * F + j];
  *ns = R;
out:
  free(M);
  free(w);
  return s;
}

smx_status smx_feat_vim_origin(const double *W, const double *b, size_t H, size_t F, double *u) {
  /* min-norm least squares W x = b (SVD, dgelsd) = W^+ b */
  size_t ldb = H > F ? H : F;
  double *A = malloc(H * F * sizeof *A), *B = calloc(ldb, sizeof *B), *sv = malloc((H < F ? H : F) * sizeof *sv);
  smx_status s = SMX_OK;
  if (!A || !B || !sv) { s = SMX_E_NOMEM; goto out; }
  memcpy(A, W, H * F * sizeof *A);
  for (size_t i = 0; i < H; i++) B[i] = b ? b[i] : 0.0;
  lapack_int rank = 0;
  lapack_int info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)H, (lapack_int)F, 1, A, (lapack_int)F, B, 1, sv,
                                   1e-15, &rank);
  if (info != 0) { s = SMX_E_INTERNAL; goto out; }
  for (size_t i = 0; i < F; i++) u[i] = -B[i];
out:
  free(A);
  free(B);
  free(sv);
  return s;
}

#else /* !SMX_HAVE_LAPACK */

int smx_feat_have_lapack(void) { return 0; }
void smx_feat_syrk(double *S, const double *X, size_t n, size_t F) { (void)S; (void)X; (void)n; (void)F; }
/* Plain loops: REACT's logits need a product even without BLAS. */
void smx_feat_gemm_nt(const double *A, const double *B, double *C, size_t m, size_t n, size_t k, int accumulate) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0.0;
      for (size_t t = 0; t < k; t++) s += A[i * k + t] * B[j * k + t];
      C[i * n + j] = accumulate ? C[i * n + j] + s : s;
    }
}
smx_status smx_feat_whitening(const double *S, size_t F, smx_cov_policy pol, double shrink, double **A,
                              size_t *rank) {
  (void)S; (void)F; (void)pol; (void)shrink; (void)A; (void)rank;
  return SMX_E_NOT_BUILT;
}
smx_status smx_feat_complement(const double *M, size_t F, size_t D, double **ns) {
  (void)M; (void)F; (void)D; (void)ns;
  return SMX_E_NOT_BUILT;
}
smx_status smx_feat_vim_origin(const double *W, const double *b, size_t H, size_t F, double *u) {
  (void)W; (void)b; (void)H; (void)F; (void)u;
  return SMX_E_NOT_BUILT;
}

#endif
