/*
 * One row of sparsemax / entmax (sparse_row.h): the max (the softmax
 * family's kernel), then the special-value policy where the row asks for it
 * (the softmax policy: NaN, +inf entries, no entry above -inf), else the
 * candidates (entries that can reach the support, one vector pass), the
 * threshold on them (sparse_tau.c), and one vector pass that writes the row.
 * Bisection entmax writes its few nonzero outputs by index after zeroing the
 * row.
 */
#include "ops/sparse_row.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/policy.h"
#include "ops/softmax_policy.h"
#include "ops/sparse_tau.h"
#include "registry/registry.h"

size_t smx_sparse_scratch(size_t n) { return n * (2 * sizeof(size_t) + 2 * sizeof(double)); }

/* z units per x unit */
static double scale_of(smx_sparse_kind kind, double alpha) {
  return kind == SMX_SPARSE_ENTMAX15 ? 0.5 : kind == SMX_SPARSE_ENTMAX_BISECT ? alpha - 1.0 : 1.0;
}

static double tau_of(smx_sparse_kind kind, const double *z, double *w, size_t k) {
  switch (kind) {
  case SMX_SPARSE_SPARSEMAX_SORT: return smx_sparsemax_tau_sort(z, w, k);
  case SMX_SPARSE_ENTMAX15: return smx_entmax15_tau(z, w, k);
  default: return smx_sparsemax_tau(z, w, k);
  }
}

/* When many entries are candidates (a narrow row), the lower bound of the
 * threshold is raised first: the exact threshold of a strided sample of the
 * row (a subset's threshold never exceeds the row's), then Newton's method on
 * f(t) = sum_i max(z_i - t, 0)^q - 1 over the whole row (q = 1: sparsemax, where
 * it is Michelot's 1986 algorithm; q = 2: entmax15) in vector passes, which
 * climbs to the root from below since f is convex and decreasing. The
 * rounding of the passes moves t by far less than NEWTON_SLACK, taken off
 * before the candidates are gathered; the exact search then runs on few. */
#define NEWTON_MIN 1024
#define NEWTON_SLACK 1e-4
static double newton_bound(const smx_sparse_ukernels *k, int f64, const void *x, size_t n, double m, double a,
                           smx_sparse_kind kind, double *z, double *w) {
  size_t stride = n / 512, ks = 0;
  for (size_t i = 0; i < n; i += stride) {
    double v = f64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
    double zi = a * (v - m);
    if (zi > -1.0) z[ks++] = zi;
  }
  double t = -1.0, s[3];
  if (ks) t = kind == SMX_SPARSE_ENTMAX15 ? smx_entmax15_tau(z, w, ks) : smx_sparsemax_tau(z, w, ks);
  t -= NEWTON_SLACK;
  for (int it = 0; it < 24; it++) {
    if (f64) k->rnewton_f64(n, x, m, a, t, s);
    else k->rnewton(n, x, (float)m, (float)a, (float)t, (float)(t - (double)(float)t), s);
    if (s[0] <= NEWTON_MIN) break;
    double step = kind == SMX_SPARSE_SPARSEMAX ? (s[1] - 1.0) / s[0] : (s[2] - 1.0) / (2.0 * s[1]);
    if (!(step > 1e-7)) break;
    t += step;
  }
  return t - NEWTON_SLACK;
}

/* Bisection entmax at alpha 1.5 or 2 on a narrow row: the halvings whose sign
 * the vector passes settle beyond doubt (|f| above a bound on their rounding)
 * run over the whole row in f32 or f64 vector passes; the first one in doubt,
 * or once few entries remain above the midpoint, hands over to the exact
 * double iterations on the entries above the bracket's lower end. The path of
 * midpoints is the exact one. Returns the iteration reached; *lo, *dm, *mid
 * the state. */
static int bisect_vector(const smx_sparse_ukernels *k, int f64, const void *x, size_t n, double m, double alpha,
                         int n_iter, double *lo, double *dm, double *mid) {
  double a = alpha - 1.0, s[3];
  int q = alpha == 2.0 ? 1 : 2, it = 0;
  for (; it < n_iter; it++) {
    double d2 = *dm / 2, md = *lo + d2;
    if (f64) k->rnewton_f64(n, x, m, a, md, s);
    else k->rnewton(n, x, (float)m, (float)a, (float)md, (float)(md - (double)(float)md), s);
    if (s[0] <= NEWTON_MIN) break;
    double f = s[q] - 1.0, u = f64 ? 0x1p-40 : 0x1p-12;
    double margin = u * (s[q] + 1.0) + (f64 ? 0x1p-48 : 0x1p-20) * q * (q == 2 ? s[1] : s[0]);
    if (!(fabs(f) > margin)) break;
    *dm = d2;
    *mid = md;
    if (f >= 0.0) *lo = md;
  }
  return it;
}

typedef struct ws { size_t *idx, *act; double *z, *w; } ws;
static ws ws_of(void *scratch, size_t n) {
  ws s;
  s.idx = scratch;
  s.act = s.idx + n;
  s.z = (double *)(void *)(s.act + n);
  s.w = s.z + n;
  return s;
}

void smx_sparse_row_f32(smx_sparse_kind kind, double alpha, const float *x, float *y, size_t n, uint32_t flags,
                        void *scratch, double *tau_out, double *max_out) {
  const smx_registry *reg = smx_registry_current();
  ws s = ws_of(scratch, n);
  float m = reg->f32->rmax(n, x);
  if (tau_out) *tau_out = NAN;
  if (max_out) *max_out = NAN;
  if (isinf(m)) {   /* +inf entries, or nothing above -inf (NaN or not): the policy's row */
    smx_policy_row(&smx_policy_softmax, x, y, n, flags, NULL);
    return;
  }
  double a = scale_of(kind, alpha);
  /* every entry with a (x - m) > -1 is a candidate; the float threshold errs low.
   * The sort oracle takes every entry above -inf: a full O(n log n) sort */
  double thr_d = (double)m - 1.0 / a;
  float thr = (float)thr_d;
  if ((double)thr > thr_d) thr = nextafterf(thr, -INFINITY);
  if (kind == SMX_SPARSE_SPARSEMAX_SORT) thr = -FLT_MAX;
  int nan = 0;
  int narrow = kind == SMX_SPARSE_SPARSEMAX || kind == SMX_SPARSE_ENTMAX15;
  int vbis = kind == SMX_SPARSE_ENTMAX_BISECT && (alpha == 1.5 || alpha == 2.0);
  size_t k = reg->sparse->vselect(n, x, thr, s.idx, &nan, narrow || vbis ? NEWTON_MIN : n);
  if (k > NEWTON_MIN && narrow) {
    double t2 = (double)m + newton_bound(reg->sparse, 0, x, n, m, a, kind, s.z, s.w) / a;
    float th2 = (float)t2;
    if ((double)th2 > t2) th2 = nextafterf(th2, -INFINITY);
    k = reg->sparse->vselect(n, x, th2 > thr ? th2 : thr, s.idx, &nan, n);
  }
  if (nan) {
    smx_policy_nan_row(&smx_policy_softmax, y, n, NULL);
    return;
  }
  if (!(vbis && k > NEWTON_MIN))   /* else idx is partial: gathered again below */
    for (size_t j = 0; j < k; j++) s.z[j] = a * ((double)x[s.idx[j]] - (double)m);
  if (max_out) *max_out = m;
  if (kind == SMX_SPARSE_ENTMAX_BISECT) {
    double tau;
    if (k > NEWTON_MIN && (alpha == 1.5 || alpha == 2.0)) {
      double lo = -1.0, dm = -pow(1.0 / (double)n, a) - lo, mid = lo;
      int it = bisect_vector(reg->sparse, 0, x, n, m, alpha, SMX_ENTMAX_ITERS_F32, &lo, &dm, &mid);
      double t2 = (double)m + (lo - 1e-6) / a;
      float th2 = (float)t2;
      if ((double)th2 > t2) th2 = nextafterf(th2, -INFINITY);
      k = reg->sparse->vselect(n, x, th2 > thr ? th2 : thr, s.idx, &nan, n);
      if (nan) {
        smx_policy_nan_row(&smx_policy_softmax, y, n, NULL);
        return;
      }
      for (size_t j = 0; j < k; j++) s.z[j] = a * ((double)x[s.idx[j]] - (double)m);
      tau = smx_entmax_bisect_from(s.z, k, alpha, it, SMX_ENTMAX_ITERS_F32, lo, dm, mid, 1.0, s.w, s.act);
    } else {
      tau = smx_entmax_bisect(s.z, k, n, alpha, SMX_ENTMAX_ITERS_F32, s.w, s.act);
    }
    if (tau_out) *tau_out = tau;
    memset(y, 0, n * sizeof *y);   /* the candidates were read already: y may be x */
    for (size_t j = 0; j < k; j++) y[s.idx[j]] = (float)s.w[j];
    return;
  }
  double tau = tau_of(kind, s.z, s.w, k);
  if (tau_out) *tau_out = tau;
  float th = (float)tau, tl = (float)(tau - (double)th);
  reg->sparse->vthresh(n, x, y, m, (float)a, th, tl, kind == SMX_SPARSE_ENTMAX15);
}

void smx_sparse_row_f64(smx_sparse_kind kind, double alpha, const double *x, double *y, size_t n, uint32_t flags,
                        void *scratch, double *tau_out, double *max_out) {
  const smx_registry *reg = smx_registry_current();
  ws s = ws_of(scratch, n);
  double m = reg->f64->rmax(n, x);
  if (tau_out) *tau_out = NAN;
  if (max_out) *max_out = NAN;
  if (isinf(m)) {
    smx_policy_row_f64(&smx_policy_softmax, x, y, n, flags, NULL);
    return;
  }
  double a = scale_of(kind, alpha);
  /* m - 1/a rounded up would drop an entry exactly at the edge: step one ulp down */
  double thr = kind == SMX_SPARSE_SPARSEMAX_SORT ? -DBL_MAX : nextafter(m - 1.0 / a, -INFINITY);
  int nan = 0;
  int narrow = kind == SMX_SPARSE_SPARSEMAX || kind == SMX_SPARSE_ENTMAX15;
  int vbis = kind == SMX_SPARSE_ENTMAX_BISECT && (alpha == 1.5 || alpha == 2.0);
  size_t k = reg->sparse->vselect_f64(n, x, thr, s.idx, &nan, narrow || vbis ? NEWTON_MIN : n);
  if (k > NEWTON_MIN && narrow) {
    double t2 = nextafter(m + newton_bound(reg->sparse, 1, x, n, m, a, kind, s.z, s.w) / a, -INFINITY);
    k = reg->sparse->vselect_f64(n, x, t2 > thr ? t2 : thr, s.idx, &nan, n);
  }
  if (nan) {
    smx_policy_nan_row_f64(&smx_policy_softmax, y, n, NULL);
    return;
  }
  if (!(vbis && k > NEWTON_MIN))
    for (size_t j = 0; j < k; j++) s.z[j] = a * (x[s.idx[j]] - m);
  if (max_out) *max_out = m;
  if (kind == SMX_SPARSE_ENTMAX_BISECT) {
    double tau;
    if (k > NEWTON_MIN && (alpha == 1.5 || alpha == 2.0)) {
      double lo = -1.0, dm = -pow(1.0 / (double)n, a) - lo, mid = lo;
      int it = bisect_vector(reg->sparse, 1, x, n, m, alpha, SMX_ENTMAX_ITERS_F64, &lo, &dm, &mid);
      double t2 = nextafter(m + (lo - 1e-9) / a, -INFINITY);
      k = reg->sparse->vselect_f64(n, x, t2 > thr ? t2 : thr, s.idx, &nan, n);
      if (nan) {
        smx_policy_nan_row_f64(&smx_policy_softmax, y, n, NULL);
        return;
      }
      for (size_t j = 0; j < k; j++) s.z[j] = a * (x[s.idx[j]] - m);
      tau = smx_entmax_bisect_from(s.z, k, alpha, it, SMX_ENTMAX_ITERS_F64, lo, dm, mid, 1.0, s.w, s.act);
    } else {
      tau = smx_entmax_bisect(s.z, k, n, alpha, SMX_ENTMAX_ITERS_F64, s.w, s.act);
    }
    if (tau_out) *tau_out = tau;
    memset(y, 0, n * sizeof *y);
    for (size_t j = 0; j < k; j++) y[s.idx[j]] = s.w[j];
    return;
  }
  double tau = tau_of(kind, s.z, s.w, k);
  if (tau_out) *tau_out = tau;
  reg->sparse->vthresh_f64(n, x, y, m, a, tau, kind == SMX_SPARSE_ENTMAX15);
}
