/*
 * smx_feature_model_finish: from the streamed statistics and the stored
 * float32 training rows to each method's parameters (smx_features.h):
 *  - Mahalanobis: S = scatter / N, whitened by its Cholesky factor (or the
 *    pseudo-inverse / shrinkage the config chose), the class means whitened
 *    about the overall mean;
 *  - ViM / residual: u = -W^+ b; M = T / N + (m - u)(m - u)^T, T the total
 *    scatter (within-class scatter plus sum_c n_c (mu_c - m)(mu_c - m)^T), is
 *    the second moment about u that OpenOOD's EmpiricalCovariance(
 *    assume_centered=True) forms from f - u; its F - D smallest eigenvectors;
 *    alpha from a pass over the stored rows;
 *  - ReAct: the percentile of the stored values;
 *  - kNN: the rows normalised to unit length, then the FAISS index.
 * Everything goes into temporaries first: a failure leaves the model as it was.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/model.h"

#define BLK 256

typedef struct fin {
  double *gmean, *whiten, *wmu, *u, *ns;
  size_t rank;
  double alpha, thr;
  float *nbank;
  void *knn;
} fin;

static void fin_free(fin *t) {
  free(t->gmean);
  free(t->whiten);
  free(t->wmu);
  free(t->u);
  free(t->ns);
  free(t->nbank);
  smx_feat_knn_free(t->knn);
}

/* f / |f| (|f| in double); a zero row stays zero. */
void smx_feat_normalise_row_f32(const float *x, size_t F, float *y) {
  double s = 0.0;
  for (size_t j = 0; j < F; j++) s += (double)x[j] * (double)x[j];
  double inv = s > 0.0 ? 1.0 / sqrt(s) : 0.0;
  for (size_t j = 0; j < F; j++) y[j] = (float)((double)x[j] * inv);
}

static smx_status mahalanobis(const smx_feature_model *m, fin *t) {
  size_t F = m->F, S = m->S;
  double *cov = malloc(F * F * sizeof *cov);
  if (!cov) return SMX_E_NOMEM;
  for (size_t i = 0; i < F * F; i++) cov[i] = m->scatter[i] / (double)m->N;
  smx_status s = smx_feat_whitening(cov, F, m->cov, m->shrink, &t->whiten, &t->rank);
  free(cov);
  if (s) return s;
  double *d = malloc(S * F * sizeof *d);
  t->wmu = malloc(S * t->rank * sizeof *t->wmu);
  if (!d || !t->wmu) { free(d); return SMX_E_NOMEM; }
  for (size_t c = 0; c < S; c++)
    for (size_t j = 0; j < F; j++) d[c * F + j] = m->mean[c * F + j] - t->gmean[j];
  smx_feat_gemm_nt(d, t->whiten, t->wmu, S, t->rank, F, 0);
  free(d);
  return SMX_OK;
}

static smx_status vim(const smx_feature_model *m, fin *t) {
  size_t F = m->F, S = m->S, N = (size_t)m->N;
  t->u = malloc(F * sizeof *t->u);
  double *M = malloc(F * F * sizeof *M), *d = malloc(S * F * sizeof *d);
  smx_status s = SMX_OK;
  if (!t->u || !M || !d) { s = SMX_E_NOMEM; goto out; }
  if ((s = smx_feat_vim_origin(m->W, m->b, m->H, F, t->u))) goto out;
  memcpy(M, m->scatter, F * F * sizeof *M);
  for (size_t c = 0; c < S; c++) {
    double w = sqrt((double)m->count[c]);
    for (size_t j = 0; j < F; j++) d[c * F + j] = w * (m->mean[c * F + j] - t->gmean[j]);
  }
  smx_feat_syrk(M, d, S, F);   /* total scatter, upper triangle */
  for (size_t i = 0; i < F; i++)
    for (size_t j = i; j < F; j++)
      M[i * F + j] = M[i * F + j] / (double)N + (t->gmean[i] - t->u[i]) * (t->gmean[j] - t->u[j]);
  if ((s = smx_feat_complement(M, F, m->D, &t->ns))) goto out;
  if (!(m->methods & SMX_FEAT_BIT(SMX_FEAT_VIM))) goto out;
  /* alpha = mean max-logit / mean r over the training rows, in fixed blocks */
  size_t R = F - m->D, H = m->H;
  double *X = malloc(BLK * F * sizeof *X), *P = malloc(BLK * (R > H ? R : H) * sizeof *P);
  if (!X || !P) { free(X); free(P); s = SMX_E_NOMEM; goto out; }
  double sum_ml = 0.0, sum_r = 0.0;
  for (size_t i0 = 0; i0 < N; i0 += BLK) {
    size_t nr = N - i0 < BLK ? N - i0 : BLK;
    for (size_t i = 0; i < nr * F; i++) X[i] = (double)m->bank[i0 * F + i];
    smx_feat_gemm_nt(X, m->W, P, nr, H, F, 0);
    for (size_t i = 0; i < nr; i++) {
      double mx = -INFINITY;
      for (size_t c = 0; c < H; c++) mx = fmax(mx, P[i * H + c] + m->b[c]);
      sum_ml += mx;
    }
    for (size_t i = 0; i < nr; i++)
      for (size_t j = 0; j < F; j++) X[i * F + j] -= t->u[j];
    smx_feat_gemm_nt(X, t->ns, P, nr, R, F, 0);
    for (size_t i = 0; i < nr; i++) {
      double q = 0.0;
      for (size_t j = 0; j < R; j++) q += P[i * R + j] * P[i * R + j];
      sum_r += sqrt(q);
    }
  }
  free(X);
  free(P);
  t->alpha = (sum_ml / (double)N) / (sum_r / (double)N);
  if (!(sum_r > 0.0) || !isfinite(t->alpha)) s = SMX_E_SINGULAR;   /* no residual: D covers the data */
out:
  free(M);
  free(d);
  return s;
}

static smx_status knn(const smx_feature_model *m, fin *t) {
  size_t F = m->F, N = (size_t)m->N;
  t->nbank = malloc(N * F * sizeof *t->nbank);
  if (!t->nbank) return SMX_E_NOMEM;
  for (size_t i = 0; i < N; i++) smx_feat_normalise_row_f32(m->bank + i * F, F, t->nbank + i * F);
  return smx_feat_knn_build(t->nbank, N, F, m->knn_kind, m->ivf_lists, m->ivf_probe, &t->knn);
}

smx_status smx_feature_model_finish(smx_feature_model *m, const smx_options *opt) {
  (void)opt;
  if (!m || m->finished || m->N == 0) return SMX_E_INVALID_ARG;
  unsigned me = m->methods;
  if ((me & SMX_FEAT_BIT(SMX_FEAT_KNN)) && m->k > m->N) return SMX_E_INVALID_ARG;
  if (me & SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS))
    for (size_t c = 0; c < m->S; c++)
      if (!m->count[c]) return SMX_E_INVALID_ARG;
  fin t;
  memset(&t, 0, sizeof t);
  t.alpha = t.thr = NAN;
  smx_status s = SMX_OK;
  size_t F = m->F;
  if (m->mean) {
    t.gmean = calloc(F, sizeof *t.gmean);
    if (!t.gmean) { s = SMX_E_NOMEM; goto fail; }
    for (size_t c = 0; c < m->S; c++)
      for (size_t j = 0; j < F; j++) t.gmean[j] += (double)m->count[c] * m->mean[c * F + j];
    for (size_t j = 0; j < F; j++) t.gmean[j] /= (double)m->N;
  }
  if ((me & SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS)) && (s = mahalanobis(m, &t))) goto fail;
  if ((me & (SMX_FEAT_BIT(SMX_FEAT_VIM) | SMX_FEAT_BIT(SMX_FEAT_RESIDUAL))) && (s = vim(m, &t))) goto fail;
  if (me & SMX_FEAT_BIT(SMX_FEAT_REACT)) t.thr = smx_feat_percentile(m->bank, (size_t)m->N * F, m->pct);
  if ((me & SMX_FEAT_BIT(SMX_FEAT_KNN)) && (s = knn(m, &t))) goto fail;
  m->gmean = t.gmean;
  m->whiten = t.whiten;
  m->wmu = t.wmu;
  m->rank = t.rank;
  m->u = t.u;
  m->ns = t.ns;
  m->alpha = t.alpha;
  m->thr = t.thr;
  m->knn = t.knn;
  m->rows = t.knn ? smx_feat_knn_adopt(t.knn, &t.nbank) : NULL;
  m->nbank = t.nbank;
  free(m->bank);   /* what the methods needed from the raw rows is derived now */
  m->bank = NULL;
  m->bank_cap = 0;
  m->finished = 1;
  return SMX_OK;
fail:
  fin_free(&t);
  return s;
}
