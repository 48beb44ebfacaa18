/*
 * Scoring a batch of feature rows with a finished model (smx_features.h).
 * The rows are cut into fixed blocks (64 rows; 1024 for kNN, FAISS's own
 * query blocking works better on more) that the thread pool runs in any
 * order: each block's arithmetic does not depend on which thread ran it or
 * how many there are, so the scores are the same for every thread count.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "features/model.h"

#define BLK 64
#define KNN_BLK 1024


double smx_feat_lse(const double *z, size_t n) {
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) mx = fmax(mx, z[i]);
  if (!isfinite(mx)) return mx;
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += exp(z[i] - mx);
  return mx + log(s);
}

typedef struct job {
  const smx_feature_model *m;
  smx_feature_method method;
  const float *xf;
  const double *xd;
  size_t ldx;
  const float *lf;
  const double *ld;
  size_t ldl, n, blk;
  double *out;
  atomic_int status;   /* a failure of any block (NOMEM); which one is kept does not matter */
} job;

static void load_rows(const job *j, size_t r0, size_t nr, double *X) {
  size_t F = j->m->F;
  for (size_t i = 0; i < nr; i++)
    for (size_t c = 0; c < F; c++)
      X[i * F + c] = j->xf ? (double)j->xf[(r0 + i) * j->ldx + c] : j->xd[(r0 + i) * j->ldx + c];
}

static double sumsq(const double *a, size_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * a[i];
    s1 += a[i + 1] * a[i + 1];
    s2 += a[i + 2] * a[i + 2];
    s3 += a[i + 3] * a[i + 3];
  }
  for (; i < n; i++) s0 += a[i] * a[i];
  return (s0 + s1) + (s2 + s3);
}

static double dist2(const double *a, const double *b, size_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    double d0 = a[i] - b[i], d1 = a[i + 1] - b[i + 1], d2 = a[i + 2] - b[i + 2], d3 = a[i + 3] - b[i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < n; i++) s0 += (a[i] - b[i]) * (a[i] - b[i]);
  return (s0 + s1) + (s2 + s3);
}

static smx_status block_mahalanobis(const job *j, size_t r0, size_t nr) {
  const smx_feature_model *m = j->m;
  size_t F = m->F, R = m->rank;
  double *X = calloc(nr * F, sizeof *X), *G = malloc(nr * R * sizeof *G);
  if (!X || !G) { free(X); free(G); return SMX_E_NOMEM; }
  load_rows(j, r0, nr, X);
  for (size_t i = 0; i < nr; i++)
    for (size_t c = 0; c < F; c++) X[i * F + c] -= m->gmean[c];
  smx_feat_gemm_nt(X, m->whiten, G, nr, R, F, 0);
  for (size_t i = 0; i < nr; i++) {
    double best = INFINITY;
    for (size_t c = 0; c < m->S; c++) best = fmin(best, dist2(G + i * R, m->wmu + c * R, R));
    j->out[r0 + i] = -best;
  }
  free(X);
  free(G);
  return SMX_OK;
}

/* logits of the rows in X (nr x F) into L (nr x H): X W^T + b */
static void head(const smx_feature_model *m, const double *X, size_t nr, double *L) {
  smx_feat_gemm_nt(X, m->W, L, nr, m->H, m->F, 0);
  for (size_t i = 0; i < nr; i++)
    for (size_t c = 0; c < m->H; c++) L[i * m->H + c] += m->b[c];
}

static smx_status block_vim(const job *j, size_t r0, size_t nr) {
  const smx_feature_model *m = j->m;
  size_t F = m->F, R = F - m->D, H = m->H;
  int vim = j->method == SMX_FEAT_VIM;
  double *X = calloc(nr * F, sizeof *X), *P = malloc(nr * R * sizeof *P), *L = vim ? malloc(nr * H * sizeof *L) : NULL;
  if (!X || !P || (vim && !L)) { free(X); free(P); free(L); return SMX_E_NOMEM; }
  load_rows(j, r0, nr, X);
  if (vim) {
    if (j->lf || j->ld)
      for (size_t i = 0; i < nr; i++)
        for (size_t c = 0; c < H; c++)
          L[i * H + c] = j->lf ? (double)j->lf[(r0 + i) * j->ldl + c] : j->ld[(r0 + i) * j->ldl + c];
    else
      head(m, X, nr, L);
  }
  for (size_t i = 0; i < nr; i++)
    for (size_t c = 0; c < F; c++) X[i * F + c] -= m->u[c];
  smx_feat_gemm_nt(X, m->ns, P, nr, R, F, 0);
  for (size_t i = 0; i < nr; i++) {
    double r = sqrt(sumsq(P + i * R, R));
    j->out[r0 + i] = vim ? -m->alpha * r + smx_feat_lse(L + i * H, H) : -r;
  }
  free(X);
  free(P);
  free(L);
  return SMX_OK;
}

static smx_status block_react(const job *j, size_t r0, size_t nr) {
  const smx_feature_model *m = j->m;
  size_t F = m->F, H = m->H;
  double *X = calloc(nr * F, sizeof *X), *L = malloc(nr * H * sizeof *L);
  if (!X || !L) { free(X); free(L); return SMX_E_NOMEM; }
  load_rows(j, r0, nr, X);
  for (size_t i = 0; i < nr * F; i++) X[i] = X[i] > m->thr ? m->thr : X[i];
  head(m, X, nr, L);
  for (size_t i = 0; i < nr; i++) j->out[r0 + i] = smx_feat_lse(L + i * H, H);
  free(X);
  free(L);
  return SMX_OK;
}

/* FAISS finds the k nearest unit training rows of each unit query; the k-th
 * distance is then recomputed in double from the stored rows (the largest of
 * the k, so a tie in FAISS's float order cannot pick the wrong one). */
static smx_status block_knn(const job *j, size_t r0, size_t nr) {
  const smx_feature_model *m = j->m;
  size_t F = m->F, k = m->k;
  float *Q = calloc(nr * F, sizeof *Q);
  double *qd = malloc(F * sizeof *qd);
  int64_t *lab = malloc(nr * k * sizeof *lab);
  smx_status s = SMX_OK;
  if (!Q || !qd || !lab) { s = SMX_E_NOMEM; goto out; }
  for (size_t i = 0; i < nr; i++) {
    if (j->xf) {
      smx_feat_normalise_row_f32(j->xf + (r0 + i) * j->ldx, F, Q + i * F);
    } else {
      const double *x = j->xd + (r0 + i) * j->ldx;
      double inv = sqrt(sumsq(x, F));
      inv = inv > 0.0 ? 1.0 / inv : 0.0;
      for (size_t c = 0; c < F; c++) Q[i * F + c] = (float)(x[c] * inv);
    }
  }
  if ((s = smx_feat_knn_search(m->knn, Q, nr, k, lab))) goto out;
  for (size_t i = 0; i < nr; i++) {
    if (j->xf) {
      for (size_t c = 0; c < F; c++) qd[c] = (double)Q[i * F + c];
    } else {   /* the unit query in double, not its float rounding */
      const double *x = j->xd + (r0 + i) * j->ldx;
      double inv = sqrt(sumsq(x, F));
      inv = inv > 0.0 ? 1.0 / inv : 0.0;
      for (size_t c = 0; c < F; c++) qd[c] = x[c] * inv;
    }
    double worst = -INFINITY;
    for (size_t t = 0; t < k; t++) {
      int64_t l = lab[i * k + t];
      if (l < 0 || (uint64_t)l >= m->N) { worst = NAN; break; }   /* IVF found fewer than k */
      const float *b = m->rows + (size_t)l * F;
      double d = 0.0;
      for (size_t c = 0; c < F; c++) {
        double e = qd[c] - (double)b[c];
        d += e * e;
      }
      worst = fmax(worst, d);
    }
    j->out[r0 + i] = -worst;
  }
out:
  free(Q);
  free(qd);
  free(lab);
  return s;
}

static void task(void *ctx, size_t t) {
  job *j = ctx;
  size_t r0 = t * j->blk, nr = j->n - r0 < j->blk ? j->n - r0 : j->blk;
  smx_status s;
  switch (j->method) {
    case SMX_FEAT_MAHALANOBIS: s = block_mahalanobis(j, r0, nr); break;
    case SMX_FEAT_KNN: s = block_knn(j, r0, nr); break;
    case SMX_FEAT_REACT: s = block_react(j, r0, nr); break;
    default: s = block_vim(j, r0, nr); break;
  }
  if (s) atomic_store(&j->status, (int)s);
}

static int finite_rows_f32(const float *x, size_t ld, size_t n, size_t w) {
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0; c < w; c++)
      if (!isfinite(x[i * ld + c])) return 0;
  return 1;
}

static int finite_rows_f64(const double *x, size_t ld, size_t n, size_t w) {
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0; c < w; c++)
      if (!isfinite(x[i * ld + c])) return 0;
  return 1;
}

static int overlaps(const void *a, size_t abytes, const void *b, size_t bbytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return abytes && bbytes && x < y + bbytes && y < x + abytes;
}

static smx_status score(const smx_feature_model *m, smx_feature_method method, const float *xf, const double *xd,
                        size_t ldx, const float *lf, const double *ld, size_t ldl, size_t n, double *out,
                        const smx_options *opt, size_t esize) {
  if (!m || !m->finished || (int)method < 1 || (int)method > 5) return SMX_E_INVALID_ARG;
  if (!(m->methods & SMX_FEAT_BIT(method))) {
    const char *why = smx_feature_method_requires(method);
    return why ? SMX_E_NOT_BUILT : SMX_E_INVALID_ARG;
  }
  if (n == 0) return SMX_OK;
  size_t F = m->F;
  if ((!xf && !xd) || !out || ldx < F) return SMX_E_INVALID_ARG;
  if ((n - 1) > (SIZE_MAX / esize - F) / ldx) return SMX_E_INVALID_ARG;
  int logits = lf || ld;
  if (logits && (method != SMX_FEAT_VIM || ldl < m->H || (n - 1) > (SIZE_MAX / esize - m->H) / ldl))
    return SMX_E_INVALID_ARG;
  if (xf ? !finite_rows_f32(xf, ldx, n, F) : !finite_rows_f64(xd, ldx, n, F)) return SMX_E_INVALID_ARG;
  if (logits && (lf ? !finite_rows_f32(lf, ldl, n, m->H) : !finite_rows_f64(ld, ldl, n, m->H)))
    return SMX_E_INVALID_ARG;
  size_t xbytes = ((n - 1) * ldx + F) * esize, obytes = n * sizeof(double);
  if (n > SIZE_MAX / sizeof(double) || overlaps(out, obytes, xf ? (const void *)xf : (const void *)xd, xbytes))
    return SMX_E_INVALID_ARG;
  if (logits && overlaps(out, obytes, lf ? (const void *)lf : (const void *)ld, ((n - 1) * ldl + m->H) * esize))
    return SMX_E_INVALID_ARG;
  job j = { m, method, xf, xd, ldx, lf, ld, ldl, n, method == SMX_FEAT_KNN ? KNN_BLK : BLK, out, SMX_OK };
  atomic_init(&j.status, SMX_OK);
  size_t tasks = (n + j.blk - 1) / j.blk;
  int threads = opt ? opt->threads : 0;
  smx_status s = smx_parallel_for(threads, tasks, task, &j);
  return s ? s : (smx_status)atomic_load(&j.status);
}

smx_status smx_feature_score_f32(const smx_feature_model *m, smx_feature_method method, const float *x, size_t ldx,
                                 const float *logits, size_t ldl, size_t n, double *out, const smx_options *opt) {
  if (!x && n) return SMX_E_INVALID_ARG;
  return score(m, method, x, NULL, ldx, logits, NULL, ldl, n, out, opt, sizeof(float));
}

smx_status smx_feature_score_f64(const smx_feature_model *m, smx_feature_method method, const double *x, size_t ldx,
                                 const double *logits, size_t ldl, size_t n, double *out, const smx_options *opt) {
  if (!x && n) return SMX_E_INVALID_ARG;
  return score(m, method, NULL, x, ldx, NULL, logits, ldl, n, out, opt, sizeof(double));
}
