/*
 * Calibration figures of softmax(z / T) against labels (smx_metrics.h),
 * accumulated over blocks of rows: running sums for accuracy, NLL and Brier,
 * per-bin sums for the equal-width and classwise ECE, and one (confidence,
 * correct) pair per row for the equal-mass ECE, whose edges need every
 * confidence. All in double, with libm exp.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scores/exp_neg_f64.h"
#include "scores/radix_sort.h"
#include "core/operands.h"
#include "scores/score_options.h"
#include "smx/smx_metrics.h"

#define MAX_BINS 100000

typedef struct bin_sum { uint64_t n; double conf, hit; } bin_sum;

struct smx_calib_acc {
  size_t K, M;
  double T;
  uint32_t flags;
  uint64_t n, correct;
  double nll, brier;
  double *edges;     /* M + 1 equal-width edges, numpy.linspace(0, 1, M + 1) */
  bin_sum *top;      /* M bins of the top-label confidence  */
  bin_sum *cls;      /* K x M bins of p_k vs 1[y = k]         */
  double *e;         /* K exponentials of the current row    */
  double *conf;      /* adaptive ECE: confidences ...         */
  unsigned char *hit;/* ... and correctness, n of each        */
  size_t cap;
};

smx_status smx_calib_create(smx_calib_acc **acc, size_t cols, size_t bins, uint32_t flags, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_scores_resolve_options(opt, 1, &o);
  if (st != SMX_OK) return st;
  if (!acc || cols == 0) return SMX_E_INVALID_ARG;
  if (bins == 0) bins = 15;
  if (bins > MAX_BINS || (flags & ~(uint32_t)SMX_CALIB_NO_ADAPTIVE)) return SMX_E_INVALID_ARG;
  double temperature = o.temperature;   /* 0 resolved to 1; negative, NaN and inf refused */
  if (cols > SIZE_MAX / sizeof(bin_sum) / bins) return SMX_E_INVALID_ARG;
  smx_calib_acc *a = calloc(1, sizeof *a);
  if (!a) return SMX_E_NOMEM;
  a->K = cols;
  a->M = bins;
  a->T = temperature;
  a->flags = flags;
  a->edges = malloc((bins + 1) * sizeof(double));
  a->top = calloc(bins, sizeof(bin_sum));
  a->cls = calloc(cols * bins, sizeof(bin_sum));
  a->e = malloc(cols * sizeof(double));
  if (!a->edges || !a->top || !a->cls || !a->e) { smx_calib_destroy(a); return SMX_E_NOMEM; }
  double step = 1.0 / (double)bins;   /* as numpy.linspace: i * step, the last edge exactly 1 */
  for (size_t i = 0; i <= bins; i++) a->edges[i] = (double)i * step;
  a->edges[bins] = 1.0;
  *acc = a;
  return SMX_OK;
}

smx_status smx_calib_destroy(smx_calib_acc *a) {
  if (!a) return SMX_OK;
  free(a->edges);
  free(a->top);
  free(a->cls);
  free(a->e);
  free(a->conf);
  free(a->hit);
  free(a);
  return SMX_OK;
}

/* Bin b with edges[b] < v <= edges[b + 1]; 0 also takes v <= 0. */
static size_t width_bin(const double *edges, size_t M, double v) {
  double g = ceil(v * (double)M) - 1.0;
  size_t b = g <= 0.0 ? 0 : g >= (double)(M - 1) ? M - 1 : (size_t)g;
  while (b > 0 && v <= edges[b]) b--;
  while (b < M - 1 && v > edges[b + 1]) b++;
  return b;
}

smx_status smx_calib_add_rows_f32(smx_calib_acc *a, const float *x, size_t ldx, const int64_t *labels, size_t rows) {
  if (!a) return SMX_E_INVALID_ARG;
  if (rows == 0) return SMX_OK;
  size_t K = a->K, M = a->M;
  if (!x || !labels || ldx < K || !smx_span(rows, K, ldx) || rows > (size_t)PTRDIFF_MAX / sizeof(int64_t))
    return SMX_E_INVALID_ARG;
  /* everything is checked before anything is accumulated */
  for (size_t r = 0; r < rows; r++) {
    if (labels[r] < 0 || (uint64_t)labels[r] >= (uint64_t)K) return SMX_E_INVALID_ARG;
    const float *z = x + r * ldx;
    float m = -INFINITY;
    for (size_t j = 0; j < K; j++) {
      if (z[j] != z[j] || z[j] == INFINITY) return SMX_E_INVALID_ARG;
      m = z[j] > m ? z[j] : m;
    }
    if (m == -INFINITY) return SMX_E_INVALID_ARG;   /* no distribution */
  }
  if (!(a->flags & SMX_CALIB_NO_ADAPTIVE) && a->n + rows > a->cap) {
    size_t cap = a->cap ? a->cap : 1024;
    while (cap < a->n + rows) {
      if (cap > SIZE_MAX / 2 / sizeof(double)) return SMX_E_NOMEM;
      cap *= 2;
    }
    double *c = realloc(a->conf, cap * sizeof(double));
    if (!c) return SMX_E_NOMEM;
    a->conf = c;
    unsigned char *h = realloc(a->hit, cap);
    if (!h) return SMX_E_NOMEM;
    a->hit = h;
    a->cap = cap;
  }
  double inv_t = 1.0 / a->T;
  for (size_t r = 0; r < rows; r++) {
    const float *z = x + r * ldx;
    size_t y = (size_t)labels[r], arg = 0;
    for (size_t j = 1; j < K; j++)
      if (z[j] > z[arg]) arg = j;
    double m = z[arg], S = 0.0;
    for (size_t j = 0; j < K; j++) a->e[j] = smx_exp_neg_f64(((double)z[j] - m) * inv_t);
    S = smx_sum4_f64(a->e, K);
    double inv_s = 1.0 / S, conf = inv_s;   /* the max has e = 1 */
    int hit = arg == y;
    a->correct += (uint64_t)hit;
    a->nll += (m - (double)z[y]) * inv_t + log(S);
    double br = 0.0;
    for (size_t j = 0; j < K; j++) {
      double p = a->e[j] * inv_s, t = p - (j == y ? 1.0 : 0.0);
      br += t * t;
      bin_sum *cb = a->cls + j * M + width_bin(a->edges, M, p);
      cb->n++;
      cb->conf += p;
      cb->hit += j == y ? 1.0 : 0.0;
    }
    a->brier += br;
    bin_sum *tb = a->top + width_bin(a->edges, M, conf);
    tb->n++;
    tb->conf += conf;
    tb->hit += hit;
    if (!(a->flags & SMX_CALIB_NO_ADAPTIVE)) {
      a->conf[a->n] = conf;
      a->hit[a->n] = (unsigned char)hit;
    }
    a->n++;
  }
  return SMX_OK;
}

/* sum_b (n_b / n) |conf_b - acc_b| and the largest gap, over non-empty bins */
static void ece_of(const bin_sum *b, size_t M, uint64_t n, double *ece, double *mce) {
  double e = 0.0, mx = 0.0;
  for (size_t i = 0; i < M; i++) {
    if (!b[i].n) continue;
    double cnt = (double)b[i].n, gap = fabs(b[i].conf / cnt - b[i].hit / cnt);
    e += cnt / (double)n * gap;
    mx = gap > mx ? gap : mx;
  }
  *ece = e;
  if (mce) *mce = mx;
}

/* Equal-mass ECE with np.interp edges over the sorted confidences. */
static smx_status adaptive_ece(const smx_calib_acc *a, double *out) {
  size_t n = (size_t)a->n, M = a->M;
  uint64_t *k = malloc(n * sizeof *k), *t = malloc(n * sizeof *t);
  double *edges = malloc((M + 1) * sizeof(double));
  bin_sum *b = calloc(M, sizeof(bin_sum));
  if (!k || !t || !edges || !b) { free(k); free(t); free(edges); free(b); return SMX_E_NOMEM; }
  for (size_t i = 0; i < n; i++) k[i] = smx_key_from_f64(a->conf[i]);
  const uint64_t *s = smx_radix_sort_u64(k, t, n);
  double step = (double)n / (double)M;
  for (size_t j = 0; j <= M; j++) {
    double pos = j == M ? (double)n : (double)j * step;
    if (pos >= (double)(n - 1)) { edges[j] = smx_f64_from_key(s[n - 1]); continue; }
    size_t i = (size_t)pos;
    double lo = smx_f64_from_key(s[i]), hi = smx_f64_from_key(s[i + 1]);
    edges[j] = pos == (double)i ? lo : (hi - lo) * (pos - (double)i) + lo;
  }
  for (size_t i = 0; i < n; i++) {
    double v = a->conf[i];
    size_t lo = 0, hi = M;   /* first bin j with edges[j + 1] >= v */
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (edges[mid + 1] >= v) hi = mid; else lo = mid + 1;
    }
    if (lo == M || !(v > edges[lo])) continue;   /* the minimum: in no (lo, hi] bin */
    b[lo].n++;
    b[lo].conf += v;
    b[lo].hit += a->hit[i];
  }
  ece_of(b, M, a->n, out, NULL);
  free(k); free(t); free(edges); free(b);
  return SMX_OK;
}

smx_status smx_calib_result(const smx_calib_acc *a, smx_calibration *out, smx_reliability_bin *bins_out) {
  if (!a || !out || a->n == 0) return SMX_E_INVALID_ARG;
  /* two outputs: the summary must not lie inside the diagram */
  if (bins_out && smx_overlap(out, sizeof *out, bins_out, a->M * sizeof *bins_out)) return SMX_E_INVALID_ARG;
  smx_calibration c;
  double n = (double)a->n;
  c.n = a->n;
  c.acc = (double)a->correct / n;
  c.nll = a->nll / n;
  c.brier = a->brier / n;
  ece_of(a->top, a->M, a->n, &c.ece, &c.mce);
  double cw = 0.0;
  for (size_t k = 0; k < a->K; k++) {
    double e;
    ece_of(a->cls + k * a->M, a->M, a->n, &e, NULL);
    cw += e;
  }
  c.classwise_ece = cw / (double)a->K;
  c.adaptive_ece = NAN;
  if (!(a->flags & SMX_CALIB_NO_ADAPTIVE)) {
    smx_status s = adaptive_ece(a, &c.adaptive_ece);
    if (s) return s;
  }
  *out = c;
  if (bins_out) {
    for (size_t b = 0; b < a->M; b++) {
      const bin_sum *t = a->top + b;
      bins_out[b].lo = a->edges[b];
      bins_out[b].hi = a->edges[b + 1];
      bins_out[b].n = t->n;
      bins_out[b].conf = t->n ? t->conf / (double)t->n : NAN;
      bins_out[b].acc = t->n ? t->hit / (double)t->n : NAN;
    }
  }
  return SMX_OK;
}

smx_status smx_calibration_rows_f32(const float *x, size_t ldx, const int64_t *labels, smx_calibration *out,
                                    smx_reliability_bin *bins_out, size_t rows, size_t cols, size_t bins,
                                    const smx_options *opt) {
  if (!out || rows == 0) return SMX_E_INVALID_ARG;
  smx_calib_acc *a = NULL;
  smx_status s = smx_calib_create(&a, cols, bins, 0, opt);
  if (s) return s;
  s = smx_calib_add_rows_f32(a, x, ldx, labels, rows);
  if (!s) s = smx_calib_result(a, out, bins_out);
  smx_calib_destroy(a);
  return s;
}
