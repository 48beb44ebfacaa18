/*
 * Thresholds of sparsemax and entmax (sparse_tau.h). Everything here is
 * scalar double arithmetic on the candidates, which are few on ordinary rows:
 * the whole-row passes are the registry's kernels (src/kernels/f32-sparse/).
 */
#include "ops/sparse_tau.h"

#include <math.h>
#include <stdlib.h>

#include "core/ksum.h"

/* Neumaier's compensated sum (core/ksum.h), in index order */
typedef struct csum { double s, c; } csum;
static void cs_add(csum *a, double v) { smx_kadd(&a->s, &a->c, v); }
static double cs_val(const csum *a) { return a->s + a->c; }

/* the final sparsemax threshold from the support {z_j >= vmin} */
static double sparsemax_final(const double *z, size_t k, double vmin) {
  csum s = { 0, 0 };
  size_t r = 0;
  for (size_t j = 0; j < k; j++)
    if (z[j] >= vmin) { cs_add(&s, z[j]); r++; }
  cs_add(&s, -1.0);
  return cs_val(&s) / (double)r;
}

/* the final entmax-1.5 threshold from the support {z_j >= vmin}: two passes
 * (mean, then the squares about it) so that ss has no cancellation */
static double entmax15_final(const double *z, size_t k, double vmin) {
  csum s = { 0, 0 }, q = { 0, 0 };
  size_t r = 0;
  for (size_t j = 0; j < k; j++)
    if (z[j] >= vmin) { cs_add(&s, z[j]); r++; }
  double mean = cs_val(&s) / (double)r;
  for (size_t j = 0; j < k; j++)
    if (z[j] >= vmin) { double d = z[j] - mean; cs_add(&q, d * d); }
  double delta = (1.0 - cs_val(&q)) / (double)r;
  return mean - sqrt(delta > 0.0 ? delta : 0.0);
}

/* The pivot rules: is the pivot v in the support when the set is the accepted
 * entries plus G (sum s, sum of squares q, count r, all >= v)? */
static int sparsemax_in(double s, double q, double r, double v) {
  (void)q;
  return s - r * v < 1.0;   /* tau = (s - 1)/r < v */
}
static int entmax15_in(double s, double q, double r, double v) {
  double mean = s / r, ss = q - s * mean, delta = (1.0 - ss) / r;
  return mean - sqrt(delta > 0.0 ? delta : 0.0) <= v;   /* tau_r <= z_(r) */
}

/* Duchi et al.'s randomised pivot on w (a copy of z), with the rule above.
 * Returns the smallest value of the support. The pivot is drawn from a fixed
 * generator, so a row always takes the same path. */
static double pivot_search(const double *z, double *w, size_t k, int (*in)(double, double, double, double)) {
  for (size_t j = 0; j < k; j++) w[j] = z[j];
  size_t lo = 0, hi = k;
  double s = 0, q = 0, r = 0, vmin = 0;
  uint64_t rng = 0x9e3779b97f4a7c15ull ^ k;
  while (lo < hi) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    size_t p = lo + (size_t)(rng % (uint64_t)(hi - lo));
    double v = w[p];
    w[p] = w[lo];
    w[lo] = v;
    /* [lo, g): >= v (the pivot first), [g, hi): < v */
    size_t g = lo + 1;
    double ds = v, dq = v * v, dr = 1;
    for (size_t j = lo + 1; j < hi; j++) {
      double a = w[j];
      if (a >= v) {
        ds += a;
        dq += a * a;
        dr += 1;
        w[j] = w[g];
        w[g++] = a;
      }
    }
    if (in(s + ds, q + dq, r + dr, v)) {
      s += ds; q += dq; r += dr;
      vmin = v;
      lo = g;
    } else {
      lo = lo + 1;
      hi = g;
    }
  }
  return vmin;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

double smx_sparsemax_tau(const double *z, double *w, size_t k) {
  return sparsemax_final(z, k, pivot_search(z, w, k, sparsemax_in));
}

double smx_entmax15_tau(const double *z, double *w, size_t k) {
  return entmax15_final(z, k, pivot_search(z, w, k, entmax15_in));
}

double smx_sparsemax_tau_sort(const double *z, double *w, size_t k) {
  for (size_t j = 0; j < k; j++) w[j] = z[j];
  qsort(w, k, sizeof *w, cmp_desc);
  double cum = 0, vmin = w[0];
  for (size_t j = 0; j < k; j++) {
    cum += w[j];
    if (1.0 + (double)(j + 1) * w[j] > cum) vmin = w[j];   /* the largest such rank wins */
  }
  return sparsemax_final(z, k, vmin);
}

double smx_entmax15_tau_sort(const double *z, double *w, size_t k) {
  for (size_t j = 0; j < k; j++) w[j] = z[j];
  qsort(w, k, sizeof *w, cmp_desc);
  double s = 0, q = 0;
  size_t cnt = 0;
  for (size_t j = 0; j < k; j++) {
    s += w[j];
    q += w[j] * w[j];
    if (entmax15_in(s, q, (double)(j + 1), w[j])) cnt++;
  }
  return entmax15_final(z, k, w[cnt ? cnt - 1 : 0]);
}

double smx_entmax_pow(double t, double alpha) {
  if (!(t > 0.0)) return 0.0;
  if (alpha == 1.5) return t * t;
  if (alpha == 2.0) return t;
  return pow(t, 1.0 / (alpha - 1.0));
}

double smx_entmax_bisect(const double *z, size_t k, size_t n, double alpha, int n_iter, double *p, size_t *act) {
  double lo = -1.0, hi = -pow(1.0 / (double)n, alpha - 1.0);
  double f_lo = -1.0;
  for (size_t j = 0; j < k; j++) f_lo += smx_entmax_pow(z[j] - lo, alpha);
  return smx_entmax_bisect_from(z, k, alpha, 0, n_iter, lo, hi - lo, lo, f_lo, p, act);
}

double smx_entmax_bisect_from(const double *z, size_t k, double alpha, int it0, int n_iter, double lo, double dm,
                              double mid, double f_lo, double *p, size_t *act) {
  size_t na = 0;
  for (size_t j = 0; j < k; j++)
    if (z[j] > lo) act[na++] = j;
  for (int it = it0; it < n_iter; it++) {
    dm /= 2;
    mid = lo + dm;
    double f = -1.0;
    for (size_t a = 0; a < na; a++) f += smx_entmax_pow(z[act[a]] - mid, alpha);
    if (f * f_lo >= 0.0) {
      lo = mid;
      /* entries at or below the lower end stay out from now on */
      size_t keep = 0;
      for (size_t a = 0; a < na; a++)
        if (z[act[a]] > lo) act[keep++] = act[a];
      na = keep;
    }
  }
  double sum = 0.0;
  for (size_t j = 0; j < k; j++) sum += (p[j] = smx_entmax_pow(z[j] - mid, alpha));
  for (size_t j = 0; j < k; j++) p[j] /= sum;
  return mid;
}
