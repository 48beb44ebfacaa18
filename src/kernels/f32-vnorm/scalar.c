/* Portable vnorm kernels: the f32 table computes in double (the reference
 * for the vector kernels), and the f64 passes every table's f64 rows use. */
#include <math.h>

#include "kernels/f32-vnorm/ukernels.h"

static double sp_d(double x) { return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x))); }   /* NaN: NaN */
static double sig_d(double x) {
  double e = exp(-fabs(x));
  return (x > 0.0 ? 1.0 : e) / (1.0 + e);
}

/* Neumaier's compensated sum: the f64 rows' sums keep an error of a few
 * ulps whatever the row length. */
typedef struct ksum { double s, c; } ksum;
static void kadd(ksum *k, double v) {
  double t = k->s + v;
  k->c += fabs(k->s) >= fabs(v) ? (k->s - t) + v : (v - t) + k->s;
  k->s = t;
}
static double kval(const ksum *k) { return k->s + k->c; }

/* ---- double */
double smx_vnorm_softpick_exp_f64(size_t n, const double *x, double *e, double m, double em) {
  ksum s = { 0, 0 };
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], v = exp(xi - m);
    e[i] = v;
    if (xi != -INFINITY) kadd(&s, fabs(v - em));
  }
  return kval(&s);
}

void smx_vnorm_softpick_out_f64(size_t n, const double *e, double *y, double em, double s) {
  for (size_t i = 0; i < n; i++) {
    double a = e[i] - em;
    y[i] = (a > 0.0 ? a : 0.0) * s;
  }
}

double smx_vnorm_softpick_dot_f64(size_t n, const double *x, const double *g, double m, double em, double *gy) {
  ksum s = { 0, 0 }, t = { 0, 0 };
  for (size_t i = 0; i < n; i++) {
    double a = exp(x[i] - m) - em;
    if (x[i] != -INFINITY) kadd(&s, fabs(a));
    if (a > 0.0) kadd(&t, g[i] * a);
  }
  *gy = kval(&t);
  return kval(&s);
}

void smx_vnorm_softpick_bwd_f64(size_t n, const double *x, const double *g, double *dx, double m, double s,
                                double d) {
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], e = exp(xi - m) * s;
    dx[i] = e * (xi > 0.0 ? g[i] - d : xi < 0.0 ? d : 0.0);
  }
}

double smx_vnorm_softplus_f64(size_t n, const double *x, double *y, const double *g, double *gy) {
  ksum s = { 0, 0 }, t = { 0, 0 };
  for (size_t i = 0; i < n; i++) {
    double v = sp_d(x[i]);
    if (g) kadd(&t, g[i] * v);
    if (y) y[i] = v;
    kadd(&s, v);
  }
  if (gy) *gy = kval(&t);
  return kval(&s);
}

void smx_vnorm_softplus_bwd_f64(size_t n, const double *x, const double *g, double *dx, double s, double d) {
  for (size_t i = 0; i < n; i++) dx[i] = sig_d(x[i]) * s * (g[i] - d);
}

void smx_vnorm_sa_out_f64(size_t n, const double *x, const double *p, double *y, double lo, double s) {
  for (size_t i = 0; i < n; i++) y[i] = p[i] == 0.0 ? 0.0 : (x[i] - lo) * s * p[i];
}

double smx_vnorm_sa_dot_f64(size_t n, const double *x, const double *p, const double *g, double lo, double s,
                            double *gp) {
  ksum a = { 0, 0 }, b = { 0, 0 };
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0.0) continue;
    double pg = p[i] * g[i];
    kadd(&a, pg * (x[i] - lo) * s);
    kadd(&b, pg);
  }
  *gp = kval(&b);
  return kval(&a);
}

void smx_vnorm_sa_bwd_f64(size_t n, const double *x, const double *p, const double *g, double *dx, double lo,
                          double s, double d) {
  for (size_t i = 0; i < n; i++) {
    double pi = p[i];
    dx[i] = pi == 0.0 ? 0.0 : pi * (g[i] * ((x[i] - lo) * s + s) - d);
  }
}

void smx_vnorm_sig_bwd_f64(size_t n, const double *y, const double *g, double *dx, double s) {
  for (size_t i = 0; i < n; i++) dx[i] = y[i] * (1.0 - y[i]) * g[i] * s;
}

/* ---- float, computed in double */
static double softpick_exp_s(size_t n, const float *x, float *e, float m, const smx_expc *c, float em) {
  (void)c;
  double s = 0.0;
  for (size_t i = 0; i < n; i++) {
    float xi = x[i], v = (float)exp((double)xi - m);
    e[i] = v;
    if (xi != -INFINITY) s += fabs((double)v - em);
  }
  return s;
}

static void softpick_out_s(size_t n, const float *e, float *y, float em, float s) {
  for (size_t i = 0; i < n; i++) {
    double a = (double)e[i] - em;
    y[i] = (float)((a > 0.0 ? a : 0.0) * s);
  }
}

static double softpick_dot_s(size_t n, const float *x, const float *g, float m, const smx_expc *c, float em,
                             double *gy) {
  (void)c;
  double s = 0.0, t = 0.0;
  for (size_t i = 0; i < n; i++) {
    double a = exp((double)x[i] - m) - em;
    if (x[i] != -INFINITY) s += fabs(a);
    if (a > 0.0) t += g[i] * a;
  }
  *gy = t;
  return s;
}

static void softpick_bwd_s(size_t n, const float *x, const float *g, float *dx, float m, const smx_expc *c, float s,
                           float d) {
  (void)c;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], e = exp(xi - m) * s;
    dx[i] = (float)(e * (xi > 0.0 ? (double)g[i] - d : xi < 0.0 ? (double)d : 0.0));
  }
}

static double softplus_s(size_t n, const float *x, float *y, const float *g, double *gy, const smx_expc *c) {
  (void)c;
  double s = 0.0, t = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = sp_d(x[i]);
    if (g) t += g[i] * v;
    if (y) y[i] = (float)v;
    s += v;
  }
  if (gy) *gy = t;
  return s;
}

static void softplus_bwd_s(size_t n, const float *x, const float *g, float *dx, float s, float d, const smx_expc *c) {
  (void)c;
  for (size_t i = 0; i < n; i++) dx[i] = (float)(sig_d(x[i]) * s * ((double)g[i] - d));
}

static void sa_out_s(size_t n, const float *x, const float *p, float *y, float lo, float s) {
  for (size_t i = 0; i < n; i++) y[i] = p[i] == 0.0f ? 0.0f : (float)(((double)x[i] - lo) * s * p[i]);
}

static double sa_dot_s(size_t n, const float *x, const float *p, const float *g, float lo, float s, double *gp) {
  double a = 0.0, b = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == 0.0f) continue;
    double pg = (double)p[i] * g[i];
    a += pg * ((double)x[i] - lo) * s;
    b += pg;
  }
  *gp = b;
  return a;
}

static void sa_bwd_s(size_t n, const float *x, const float *p, const float *g, float *dx, float lo, float s, float d) {
  for (size_t i = 0; i < n; i++) {
    double pi = p[i];
    dx[i] = pi == 0.0 ? 0.0f : (float)(pi * ((double)g[i] * (((double)x[i] - lo) * s + s) - d));
  }
}

/* the same state in two sweeps (the max, then the sums in double) */
static void softpick_stats_s(size_t n, const float *x, const float *g, const smx_expc *c, smx_softpick_state *st) {
  (void)c;
  double m = -INFINITY, d = 0.0, gy = 0.0;
  size_t blk = 0;
  int nan = 0;
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    if (v != v) { nan = 1; continue; }
    if (v == INFINITY) { st->m = INFINITY; return; }
    if (v > m) {
      m = v;
      blk = i / SMX_SOFTPICK_BLOCK * SMX_SOFTPICK_BLOCK;
    }
  }
  /* a second sweep at the final max: the portable table is the reference, not the fast path */
  if (m != -INFINITY)
    for (size_t i = 0; i < n; i++) {
      double v = x[i];
      if (v != v || v == -INFINITY) continue;
      double a = (double)(float)exp(v - m) - (double)(float)exp(-m);
      d += fabs(a);
      if (g && a > 0.0) gy += g[i] * a;
    }
  st->m = (float)m;
  st->d = nan ? NAN : d;
  st->gy = gy;
  st->blk = blk;
}

static void softpick_outx_s(size_t n, const float *x, float *y, float m, const smx_expc *c, float em, float s) {
  (void)c;
  for (size_t i = 0; i < n; i++) {
    double a = (double)(float)exp((double)x[i] - m) - em;
    y[i] = (float)((a > 0.0 ? a : 0.0) * s);
  }
}

static void sig_bwd_s(size_t n, const float *y, const float *g, float *dx, float s) {
  for (size_t i = 0; i < n; i++) dx[i] = (float)((double)y[i] * (1.0 - (double)y[i]) * g[i] * s);
}

static double softplus_sig_s(size_t n, const float *x, const float *g, float *sg, double *gy, const smx_expc *c) {
  (void)c;
  double s = 0.0, t = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = sp_d(x[i]);
    t += g[i] * v;
    s += v;
    sg[i] = (float)sig_d(x[i]);
  }
  *gy = t;
  return s;
}

static void sig_scale_s(size_t n, const float *sg, const float *g, float *dx, float s, float d, int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) dx[i] = (float)((double)sg[i] * s * ((double)g[i] - d));
}

static double sa_bexp_s(size_t n, const float *x, const float *g, float *e, float m, const smx_expc *c, float lo,
                        float s, double *egw, double *eg) {
  (void)c;
  double a = 0.0, b = 0.0, t = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = exp((double)x[i] - m);
    e[i] = (float)v;
    t += v;
    if (v == 0.0) continue;
    double vg = v * g[i];
    a += vg * ((double)x[i] - lo) * s;
    b += vg;
  }
  *egw = a;
  *eg = b;
  return t;
}

static void sa_bwde_s(size_t n, const float *x, const float *e, const float *g, float *dx, float lo, float s, float d,
                      float inv, int stream) {
  (void)stream;
  for (size_t i = 0; i < n; i++) {
    double pi = (double)e[i] * inv;
    dx[i] = pi == 0.0 ? 0.0f : (float)(pi * ((double)g[i] * (((double)x[i] - lo) * s + s) - d));
  }
}

static void sa_stats_s(size_t n, const float *x, smx_vnorm_stats *st) {
  smx_vnorm_stats s = { 0, 0, -INFINITY, INFINITY, n, n };
  for (size_t i = 0; i < n; i++) {
    float v = x[i];
    if (v != v) s.nan = 1;
    else if (v == INFINITY) s.pinf = 1;
    else if (v != -INFINITY) {
      if (v > s.fmax) { s.fmax = v; s.imax = i; }
      if (v < s.fmin) { s.fmin = v; s.imin = i; }
    }
  }
  *st = s;
}

static void mm_bwd_s(size_t n, const float *x, const float *y, const float *dy, float *dx, float dot, float s,
                     const float p[8], double *pg, int stream) {
  (void)stream;
  const double r0 = p[0], r1 = p[1], r2 = p[2], r3 = p[3], t0 = p[4], t1 = p[5], t2 = 2.0 * p[6], t3 = 2.0 * p[7];
  double acc[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
  for (size_t i = 0; i < n; i++) {
    double v = x[i], g = (double)y[i] * ((double)dy[i] - dot) * s;
    if (v == INFINITY || v == -INFINITY) { dx[i] = 0.0f; continue; }
    double a = r0 - v, b = v - r1, c = r2 - v, d = v - r3;
    a = a > 0.0 ? a : 0.0;
    b = b > 0.0 ? b : 0.0;
    c = c > 0.0 ? c : 0.0;
    d = d > 0.0 ? d : 0.0;
    double lo = v < r0 ? t0 : 0.0, hi = v > r1 ? t1 : 0.0;
    dx[i] = (float)(g * (1.0 - lo + hi - t2 * c + t3 * d));
    acc[0] += g * lo;
    acc[1] -= g * hi;
    acc[2] += g * t2 * c;
    acc[3] -= g * t3 * d;
    acc[4] += g * a;
    acc[5] += g * b;
    acc[6] += g * c * c;
    acc[7] += g * d * d;
  }
  if (pg)
    for (int q = 0; q < 8; q++) pg[q] = acc[q];
}

const smx_vnorm_ukernels smx_vnorm_ukernels_scalar = {
  "scalar", softpick_exp_s, softpick_out_s, softpick_dot_s, softpick_bwd_s, softplus_s, softplus_bwd_s,
  sa_out_s, sa_dot_s,       sa_bwd_s,       softpick_stats_s, softpick_outx_s, sig_bwd_s,
  softplus_sig_s, sig_scale_s, sa_bexp_s, sa_bwde_s, sa_stats_s, mm_bwd_s,
};
