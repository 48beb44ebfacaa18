/*
 * smx_feature_model: configuration, the streaming fit and finish
 * (smx_features.h). Statistics are kept in double: per class a count and a
 * mean, and one pooled within-class scatter matrix, merged batch by batch
 * with Chan et al.'s update (a batch's class groups are centred on their own
 * mean, then the shift between the old mean and the batch mean enters as
 * n_a n_b / (n_a + n_b) d d^T), so no sum of squares of raw values is ever
 * formed.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "features/model.h"

#define SUB 2048   /* rows per sub-batch of the fit (workspace SUB x F doubles, twice): dsyrk wants a deep K */

static const char *const names[] = { NULL, "mahalanobis", "knn", "vim", "residual", "react" };

const char *smx_feature_method_name(smx_feature_method m) {
  return (int)m >= 1 && (int)m <= 5 ? names[m] : NULL;
}

smx_status smx_feature_method_from_name(const char *name, smx_feature_method *m) {
  if (!name || !m) return SMX_E_INVALID_ARG;
  for (int i = 1; i <= 5; i++)
    if (!strcmp(name, names[i])) {
      *m = (smx_feature_method)i;
      return SMX_OK;
    }
  return SMX_E_INVALID_ARG;
}

static int method_built(int m) { return smx_feature_method_requires((smx_feature_method)m) == NULL; }

static size_t default_dim(size_t F) { return F >= 2048 ? 1000 : F >= 768 ? 512 : F / 2; }

void smx_feature_model_destroy(smx_feature_model *m) {
  if (!m) return;
  free(m->W);
  free(m->b);
  free(m->count);
  free(m->mean);
  free(m->scatter);
  free(m->bank);
  free(m->ws);
  free(m->gmean);
  free(m->whiten);
  free(m->wmu);
  free(m->u);
  free(m->ns);
  free(m->nbank);
  smx_feat_knn_free(m->knn);
  free(m);
}

static int all_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

smx_status smx_feature_model_create(const smx_feature_config *cfg, smx_feature_model **out) {
  if (!cfg || !out) return SMX_E_INVALID_ARG;
  size_t F = cfg->features, C = cfg->classes;
  if (F == 0 || F > ((size_t)1 << 20) || C > ((size_t)1 << 24)) return SMX_E_INVALID_ARG;
  if (cfg->methods & ~(unsigned)SMX_FEAT_ALL) return SMX_E_INVALID_ARG;
  double pct = cfg->react_percentile == 0.0 ? 90.0 : cfg->react_percentile;
  if (!(pct > 0.0 && pct <= 100.0)) return SMX_E_INVALID_ARG;
  if ((unsigned)cfg->cov_policy > SMX_COV_SHRINK || (unsigned)cfg->knn_index > SMX_KNN_IVF) return SMX_E_INVALID_ARG;
  if (cfg->cov_policy == SMX_COV_SHRINK && !(cfg->shrinkage > 0.0 && cfg->shrinkage <= 1.0)) return SMX_E_INVALID_ARG;
  size_t H = 0;
  if (cfg->weight) {
    H = C ? C : cfg->head_rows;
    if (H == 0 || (C && cfg->head_rows && cfg->head_rows != C) || cfg->ldw < F || H > ((size_t)1 << 24))
      return SMX_E_INVALID_ARG;
    for (size_t i = 0; i < H; i++)
      if (!all_finite(cfg->weight + i * cfg->ldw, F)) return SMX_E_INVALID_ARG;
    if (cfg->bias && !all_finite(cfg->bias, H)) return SMX_E_INVALID_ARG;
  } else if (cfg->bias) {
    return SMX_E_INVALID_ARG;
  }
  size_t D = cfg->vim_dim ? cfg->vim_dim : default_dim(F);
  unsigned methods = cfg->methods;
  if (!methods) {   /* all that the inputs and the build allow */
    for (int m = 1; m <= 5; m++) {
      unsigned bit = SMX_FEAT_BIT(m);
      int inputs = m == SMX_FEAT_MAHALANOBIS ? C > 0 : m == SMX_FEAT_KNN ? 1 : m == SMX_FEAT_REACT ? H > 0
                 : H > 0 && D >= 1 && D < F;
      if (inputs && method_built(m)) methods |= bit;
    }
    if (!methods) return smx_feat_have_faiss() ? SMX_E_INVALID_ARG : SMX_E_NOT_BUILT;
  } else {
    if ((methods & SMX_FEAT_BIT(SMX_FEAT_MAHALANOBIS)) && C == 0) return SMX_E_INVALID_ARG;
    if ((methods & FEAT_NEEDS_HEAD) && H == 0) return SMX_E_INVALID_ARG;
    if ((methods & (SMX_FEAT_BIT(SMX_FEAT_VIM) | SMX_FEAT_BIT(SMX_FEAT_RESIDUAL))) && !(D >= 1 && D < F))
      return SMX_E_INVALID_ARG;
    for (int m = 1; m <= 5; m++)
      if ((methods & SMX_FEAT_BIT(m)) && !method_built(m)) return SMX_E_NOT_BUILT;
  }
  if (cfg->vim_dim && cfg->vim_dim >= F) return SMX_E_INVALID_ARG;

  smx_feature_model *m = calloc(1, sizeof *m);
  if (!m) return SMX_E_NOMEM;
  m->F = F;
  m->C = C;
  m->S = C ? C : 1;
  m->k = cfg->k ? cfg->k : 50;
  m->D = D;
  m->pct = pct;
  m->cov = cfg->cov_policy;
  m->shrink = cfg->shrinkage;
  m->knn_kind = cfg->knn_index;
  m->ivf_lists = cfg->ivf_lists;
  m->ivf_probe = cfg->ivf_probe;
  m->methods = methods;
  m->H = H;
  m->alpha = NAN;
  m->thr = NAN;
  int ok = 1;
  if (H) {
    m->W = malloc(H * F * sizeof *m->W);
    m->b = calloc(H, sizeof *m->b);
    ok = m->W && m->b;
    for (size_t i = 0; ok && i < H; i++) memcpy(m->W + i * F, cfg->weight + i * cfg->ldw, F * sizeof *m->W);
    if (ok && cfg->bias) memcpy(m->b, cfg->bias, H * sizeof *m->b);
  }
  m->count = calloc(m->S, sizeof *m->count);
  ok = ok && m->count;
  if (ok && (methods & FEAT_NEEDS_LAPACK)) {
    m->mean = calloc(m->S * F, sizeof *m->mean);
    m->scatter = calloc(F * F, sizeof *m->scatter);
    ok = m->mean && m->scatter;
  }
  if (!ok) {
    smx_feature_model_destroy(m);
    return SMX_E_NOMEM;
  }
  *out = m;
  return SMX_OK;
}

static int need_bank(const smx_feature_model *m) {
  return (m->methods & (SMX_FEAT_BIT(SMX_FEAT_KNN) | SMX_FEAT_BIT(SMX_FEAT_REACT) | SMX_FEAT_BIT(SMX_FEAT_VIM))) != 0;
}

typedef struct { int64_t label; size_t row; } lab_row;

static int cmp_lab_row(const void *a, const void *b) {
  const lab_row *x = a, *y = b;
  if (x->label != y->label) return x->label < y->label ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* One sub-batch (n <= SUB rows, already checked) into the statistics. */
static void merge_rows(smx_feature_model *m, const float *xf, const double *xd, size_t ldx, const int64_t *labels,
                       size_t n, double *Xc, double *Dm, lab_row *order) {
  size_t F = m->F;
  for (size_t i = 0; i < n; i++) {
    order[i].label = labels ? labels[i] : 0;
    order[i].row = i;
  }
  qsort(order, n, sizeof *order, cmp_lab_row);
  size_t groups = 0;
  for (size_t g0 = 0; g0 < n;) {
    size_t g1 = g0 + 1;
    while (g1 < n && order[g1].label == order[g0].label) g1++;
    size_t c = (size_t)order[g0].label, nb = g1 - g0;
    double *mb = Dm + groups * F;   /* the batch mean, then the scaled shift, in place */
    for (size_t j = 0; j < F; j++) mb[j] = 0.0;
    for (size_t r = g0; r < g1; r++) {
      double *dst = Xc + r * F;
      size_t row = order[r].row;
      for (size_t j = 0; j < F; j++) dst[j] = xf ? (double)xf[row * ldx + j] : xd[row * ldx + j];
      for (size_t j = 0; j < F; j++) mb[j] += dst[j];
    }
    for (size_t j = 0; j < F; j++) mb[j] /= (double)nb;
    for (size_t r = g0; r < g1; r++)
      for (size_t j = 0; j < F; j++) Xc[r * F + j] -= mb[j];
    double na = (double)m->count[c], nbd = (double)nb, tot = na + nbd;
    double s = sqrt(na * nbd / tot), w = nbd / tot;
    double *mu = m->mean + c * F;
    for (size_t j = 0; j < F; j++) {
      double d = mb[j] - mu[j];
      mu[j] += d * w;
      mb[j] = d * s;
    }
    m->count[c] += nb;
    groups++;
    g0 = g1;
  }
  smx_feat_syrk(m->scatter, Xc, n, F);
  smx_feat_syrk(m->scatter, Dm, groups, F);
}

static smx_status fit_batch(smx_feature_model *m, const float *xf, const double *xd, size_t ldx,
                            const int64_t *labels, size_t n) {
  if (!m) return SMX_E_INVALID_ARG;
  if (m->finished) return SMX_E_INVALID_ARG;
  if (n == 0) return SMX_OK;
  size_t F = m->F;
  if ((!xf && !xd) || ldx < F || (m->C && !labels) || (!m->C && labels)) return SMX_E_INVALID_ARG;
  if ((n - 1) > (SIZE_MAX / sizeof(double) - F) / ldx) return SMX_E_INVALID_ARG;
  int bank = need_bank(m);
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < F; j++) {
      double v = xf ? (double)xf[i * ldx + j] : xd[i * ldx + j];
      if (!isfinite(v) || (bank && fabs(v) > FLT_MAX)) return SMX_E_INVALID_ARG;
    }
    if (labels && (labels[i] < 0 || (uint64_t)labels[i] >= m->C)) return SMX_E_INVALID_ARG;
  }
  if (m->N + n < m->N || (m->N + n) > SIZE_MAX / sizeof(float) / F) return SMX_E_INVALID_ARG;
  if (bank && m->N + n > m->bank_cap) {
    size_t cap = m->bank_cap ? m->bank_cap : 1024;
    while (cap < m->N + n) cap = cap > SIZE_MAX / 2 / sizeof(float) / F ? (size_t)(m->N + n) : cap * 2;
    float *nb = realloc(m->bank, cap * F * sizeof *nb);
    if (!nb) return SMX_E_NOMEM;
    m->bank = nb;
    m->bank_cap = cap;
  }
  double *Xc = NULL, *Dm = NULL;
  lab_row *order = NULL;
  if (m->scatter) {
    if (!m->ws && !(m->ws = malloc(2 * SUB * F * sizeof(double) + SUB * sizeof(lab_row)))) return SMX_E_NOMEM;
    Xc = m->ws;
    Dm = Xc + SUB * F;
    order = (lab_row *)(void *)(Dm + SUB * F);
  }
  if (bank)
    for (size_t i = 0; i < n; i++) {
      float *dst = m->bank + (m->N + i) * F;
      for (size_t j = 0; j < F; j++) dst[j] = xf ? xf[i * ldx + j] : (float)xd[i * ldx + j];
    }
  if (m->scatter)
    for (size_t i = 0; i < n; i += SUB) {
      size_t nr = n - i < SUB ? n - i : SUB;
      merge_rows(m, xf ? xf + i * ldx : NULL, xd ? xd + i * ldx : NULL, ldx, labels ? labels + i : NULL, nr, Xc, Dm,
                 order);
    }
  else
    for (size_t i = 0; i < n; i++) m->count[labels ? (size_t)labels[i] : 0]++;
  m->N += n;
  return SMX_OK;
}

smx_status smx_feature_model_fit_batch_f32(smx_feature_model *m, const float *x, size_t ldx, const int64_t *labels,
                                           size_t n) {
  if (!x && n) return SMX_E_INVALID_ARG;
  return fit_batch(m, x, NULL, ldx, labels, n);
}

smx_status smx_feature_model_fit_batch_f64(smx_feature_model *m, const double *x, size_t ldx, const int64_t *labels,
                                           size_t n) {
  if (!x && n) return SMX_E_INVALID_ARG;
  return fit_batch(m, NULL, x, ldx, labels, n);
}

smx_status smx_feature_model_info(const smx_feature_model *m, smx_feature_info *info) {
  if (!m || !info) return SMX_E_INVALID_ARG;
  if (!m->finished) return SMX_E_INVALID_ARG;
  info->features = m->F;
  info->classes = m->C;
  info->rows = (size_t)m->N;
  info->k = m->k;
  info->vim_dim = m->D;
  info->methods = m->methods;
  info->react_percentile = m->pct;
  info->react_threshold = m->thr;
  info->vim_alpha = m->alpha;
  info->cov_rank = m->rank;
  return SMX_OK;
}
