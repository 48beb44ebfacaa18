/*
 * References and bounds of the row variants of include/smx/smx_norm.h
 * (softpick, SSMax, self-adjust softmax, adaptive temperature, top-k
 * softmax, sigmoid with a bias, softplus-l1, standardised softmax) and their
 * backward passes, in long double from the stored inputs. The backward rows
 * take x (in0) and dy (in1): prep_vn_backward stores the family's row as x
 * and a fixed dy in [-1, 1].
 */
#include <float.h>
#include <math.h>

#include "op.h"

void prep_vn_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  (void)o;
  for (size_t i = 0; i < n; i++) {
    dt_put(dt, in0, i, x[i]);
    dt_put(dt, in1, i, (long double)((i * 2654435761u) % 2001u) / 1000.0L - 1.0L);
  }
}

/* the storage rounding and the smallest normals around an arithmetic bound b */
static double finish(dtype od, long double ref, double b) {
  double a = (double)fabsl(ref);
  b += dt_unit(od) * a + dt_arith_tiny(od);
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

/* ---------------------------------------------------------------- softpick */
/* c->m: finite max; c->logd: the denominator D; c->d: <dy, y>; c->s: the
 * scale of d's rounding, sum |dy_i| E_i (2 + |x_i - m|) / D; c->target: the
 * index of the first max; c->T (not a temperature here): the relative
 * rounding scale of D, sum (E_i (2 + |x_i - m|) + e^-m) / D, which exceeds
 * 1 where the terms cancel (x_i near 0). E_i = e^(x_i - m) carries the rounding of x_i - m
 * (|x_i - m| eps relative), hence the (2 + |x_i - m|) factors. */
void ref_softpick_row(ref_ctx *c) {
  ref_softmax_state(c);
  if (c->nan || c->kinf || c->masked) return;
  long double em = expl(-c->m), D = VN_SOFTPICK_EPS, gy = 0, ga = 0, da = 0;
  size_t im = c->n;
  for (size_t i = 0; i < c->n; i++) {
    long double x = ref_in(c, 0, i);
    if (x == -INFINITY) continue;
    if (x == c->m && im == c->n) im = i;
    long double a = expl(x - c->m) - em;
    D += fabsl(a);
    da += expl(x - c->m) * (2 + fabsl(x - c->m)) + em;
    if (c->in[1] && a > 0) gy += ref_in(c, 1, i) * a;
    if (c->in[1]) ga += fabsl(ref_in(c, 1, i)) * expl(x - c->m) * (2 + fabsl(x - c->m));
  }
  c->logd = D;
  c->d = gy / D;
  c->T = isinf(em) ? 0.0L : da / D;
  c->s = ga / D + fabsl(c->d) * c->T;
  c->target = (int64_t)im;
}

long double ref_softpick_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) {
    *aux = 1;   /* 1/k rounded once */
    return x == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  }
  if (c->masked || x == -INFINITY) return 0.0L;
  long double e = expl(x - c->m), em = expl(-c->m);
  if (isinf(em)) return 0.0L;   /* every x_i < 0: exactly 0 */
  long double y = e > em ? (e - em) / c->logd : 0.0L;
  *aux = (e * (2 + fabsl(x - c->m)) + em) / c->logd + y * c->T;
  return y;
}

long double ref_softpick_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), g = ref_in(c, 1, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf || c->masked || x == -INFINITY) return 0.0L;
  long double e = expl(x - c->m) / c->logd;
  long double r = e * (x > 0 ? g - c->d : x < 0 ? c->d : 0.0L);
  if ((int64_t)i == c->target) r -= VN_SOFTPICK_EPS / c->logd * c->d;
  *aux = e * (2 + fabsl(x - c->m)) * (fabsl(g) + fabsl(c->d) + c->s) + VN_SOFTPICK_EPS / c->logd * c->s;
  return r;
}

double bound_vn_8(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  return finish(od, ref, 8.0 * dt_eps(od) * (double)aux);
}

/* ------------------------------------------- softmax of a rescaled row */
/* The rows below reuse the softmax reference at T = 1/a (c->T is set here;
 * the variants take no temperature) with the masked-row policy 0. */
static void sm_at_scale(ref_ctx *c, long double a) {
  c->flags = 0;
  c->T = a > 0 ? 1.0L / a : INFINITY;
  ref_softmax_state(c);
}

/* a = 0 (n = 1 here): uniform over the entries above -inf */
static long double uniform_at(const ref_ctx *c, size_t i) {
  long double x = ref_in(c, 0, i);
  if (c->nan) return NAN;
  if (c->kinf) return x == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  return x == -INFINITY ? 0.0L : 1.0L;   /* only n = 1 rows reach here */
}

/* a = s log n as the implementation forms it, in double */
static long double ssmax_a(size_t n) { return (long double)((double)VN_SSMAX_S * log((double)n)); }

void ref_ssmax_row(ref_ctx *c) {
  long double a = ssmax_a(c->n);
  sm_at_scale(c, a);
  if (a > 0) c->T = (long double)(1.0 / (double)a);   /* T = 1/a, rounded to double as the engine takes it */
}

long double ref_ssmax_at(const ref_ctx *c, size_t i, long double *aux) {
  *aux = 0;
  if (isinf(c->T)) return uniform_at(c, i);
  return ref_softmax_at(c, i, aux);
}

void ref_ssmax_backward_row(ref_ctx *c) {
  long double a = ssmax_a(c->n);
  c->T = a > 0 ? 1.0L / a : INFINITY;
  ref_backward_row(c);
}

void ref_unit_backward_row(ref_ctx *c) {
  c->T = 1;
  ref_backward_row(c);
}

/* y = softmax(x) stored as in0 (at the options' T, any distribution will do) and dy */
void prep_sm_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  prep_softmax_backward(x, n, o, dt, in0, in1);
}

/* compensated long-double sums: the reference must beat the implementation's
 * compensated double sums on long rows */
static void kaddl(long double *s, long double *c, long double v) {
  long double t = *s + v;
  *c += fabsl(*s) >= fabsl(v) ? (*s - t) + v : (v - t) + *s;
  *s = t;
}

/* c->d = sum_j y_j |t_j| of the softmax state in c */
static void mean_abs_t(ref_ctx *c) {
  long double s = 0;
  c->d = 0;
  if (c->nan || c->kinf || c->masked) return;
  for (size_t i = 0; i < c->n; i++) {
    long double aux, y = ref_softmax_at(c, i, &aux);
    if (y > 0) s += y * fabsl(aux);
  }
  c->d = s;
}

/* ----------------------------------------------------- adaptive softmax */
/* c->T = 1/beta; c->s: the relative rounding scale of beta (from the
 * rounding of p and H in the arithmetic) */
void ref_adaptive_row(ref_ctx *c) {
  sm_at_scale(c, 1);
  long double h = 0, hc = 0, sens = 0;
  if (!(c->nan || c->kinf || c->masked))
    for (size_t i = 0; i < c->n; i++) {
      long double aux, p = ref_softmax_at(c, i, &aux);
      if (p == 0) continue;
      kaddl(&h, &hc, -p * logl(p + 1e-9L));
      sens += p * fabsl(logl(p + 1e-9L) + 1) * (4 + fabsl(aux) / 2);
    }
  h += hc;
  long double b = 1, db = 0;
  if (h > 0.5L) {
    long double q = (((-0.037L * h + 0.481L) * h - 2.3L) * h + 4.917L) * h - 1.791L;
    if (q > 1) { b = q; db = ((-0.148L * h + 1.443L) * h - 4.6L) * h + 4.917L; }
  }
  /* beta's rounding: p's (sens), the polynomial's cancellation, 1/beta */
  long double terms = ((0.037L * h + 0.481L) * h + 2.3L) * h * h + 4.917L * h + 1.791L;
  c->s = fabsl(db) / b * (sens + 4 * (h + 1)) + (db != 0 ? 4 * terms / b : 0) + 2;
  sm_at_scale(c, b);
  mean_abs_t(c);
}

/* (4 + |t|/2 + (|t| + sum_j y_j |t_j|) s) eps ref, t = (x - m)/T: the softmax
 * bound plus a relative rounding s eps of the scale 1/T (beta, or the std),
 * which moves log y_i by (t_i - sum_j y_j t_j) s eps */
double bound_vn_beta(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  double t = (double)fabsl(aux);
  double b = ref > 0 ? (4.0 + t / 2.0 + (t + (double)c->d) * (double)c->s) * dt_eps(od) * (double)ref : 0.0;
  return finish(od, ref, b);
}

/* ------------------------------------------------ standardised softmax */
void ref_std_row(ref_ctx *c) {
  long double s = 0, sc = 0, q = 0, qc = 0, r = 0, rc = 0;
  size_t nf = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double x = ref_in(c, 0, i);
    if (isfinite(x)) { kaddl(&s, &sc, x); nf++; }
  }
  long double mean = nf ? (s + sc) / (long double)nf : 0;
  for (size_t i = 0; i < c->n; i++) {
    long double x = ref_in(c, 0, i);
    if (!isfinite(x)) continue;
    kaddl(&q, &qc, (x - mean) * (x - mean));
    kaddl(&r, &rc, x - mean);
  }
  r += rc;
  q = nf ? q + qc - r * r / (long double)nf : 0;
  long double sd = nf > 1 && q > 0 ? sqrtl(q / (long double)(nf - 1)) : 0;
  sm_at_scale(c, 1.0L / (VN_STD_T * (sd + 1e-7L)));
  c->s = 4;   /* the std's relative rounding, in eps */
  mean_abs_t(c);
}

/* ----------------------------------------------------- self-adjust softmax */
/* c->d, c->s: lo and 1/R of the weights (0 and 1 for the basic form) */
static void sa_row(ref_ctx *c, int normalized) {
  sm_at_scale(c, 1);
  c->d = 0;
  c->s = 1;
  if (!normalized) return;
  long double lo = 0, hi = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double x = ref_in(c, 0, i);
    if (!isfinite(x)) continue;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  c->d = lo;
  c->s = hi > lo ? 1.0L / (hi - lo) : 0;
}
void ref_sa_row(ref_ctx *c) { sa_row(c, 0); }
void ref_sa_norm_row(ref_ctx *c) { sa_row(c, 1); }

/* aux: the softmax's t; the bound (8 + |t|/2) eps |ref| */
long double ref_sa_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), p = ref_softmax_at(c, i, aux);
  if (c->nan) return NAN;
  if (p == 0) { *aux = 0; return 0; }
  if (x == INFINITY) return INFINITY;   /* +inf entries: +inf, whatever the range (0 for [inf]) */
  return (x - c->d) * c->s * p;
}

double bound_vn_sa(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  long double x = ref_in(c, 0, i);
  double t = (double)fabsl(aux), w = isfinite(x) ? (double)fabsl((x - c->d) * c->s) : 0.0;
  double b = (8.0 + t / 2.0) * dt_eps(od) * (double)fabsl(ref) + dt_arith_tiny(od) * w;
  return finish(od, ref, b);
}

/* The backward from x (in0) and dy (in1): dx = p (g (w + s) - D) plus, for
 * the normalised form, (D - G) s at the first finite minimum when it is < 0
 * and -D s at the first finite maximum when it is > 0; D = <p, g w>,
 * G = <p, g>. c->ex: D, G, and their rounding scales sum p (2 + |t|) |g|
 * (|w| + s) and sum p (2 + |t|) |g| (p carries |t| = |x - m| eps from the
 * rounding of x - m); c->top[0], top[1]: the first min / max (n: no term).
 * +inf entries: NaN there (x / k has no finite slope), and the row's D is
 * NaN, so the min / max terms are NaN too; 0 elsewhere. */
static void sa_backward_row(ref_ctx *c, int normalized) {
  sa_row(c, normalized);
  long double lo = c->d, sc = c->s, D = 0, G = 0, DE = 0, GE = 0, mn = INFINITY, mx = -INFINITY;
  size_t imin = c->n, imax = c->n;
  for (size_t i = 0; i < c->n; i++) {
    long double x = ref_in(c, 0, i);
    if (!isfinite(x)) continue;
    if (x < mn) { mn = x; imin = i; }
    if (x > mx) { mx = x; imax = i; }
  }
  c->top[0] = normalized && sc != 0 && mn < 0 ? imin : c->n;
  c->top[1] = normalized && sc != 0 && mx > 0 ? imax : c->n;
  if (!(c->nan || c->kinf || c->masked))
    for (size_t i = 0; i < c->n; i++) {
      long double t, p = ref_softmax_at(c, i, &t), x = ref_in(c, 0, i), g = ref_in(c, 1, i);
      if (p == 0) continue;
      long double w = (x - lo) * sc, e = p * (2 + fabsl(t)) * fabsl(g);
      D += p * g * w;
      G += p * g;
      DE += e * (fabsl(w) + sc);
      GE += e;
    }
  c->ex[0] = D;
  c->ex[1] = G;
  c->ex[2] = DE;
  c->ex[3] = GE;
}
void ref_sa_backward_row(ref_ctx *c) { sa_backward_row(c, 0); }
void ref_sa_norm_backward_row(ref_ctx *c) { sa_backward_row(c, 1); }

long double ref_sa_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), g = ref_in(c, 1, i), t;
  long double lo = c->d, sc = c->s, D = c->ex[0], G = c->ex[1];
  int at_min = i == c->top[0], at_max = i == c->top[1];
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) return x == INFINITY || at_min || at_max ? NAN : 0.0L;
  if (c->masked) return 0;
  long double p = ref_softmax_at(c, i, &t), r = 0, w = isfinite(x) ? (x - lo) * sc : 0;
  if (p != 0) {
    r = p * (g * (w + sc) - D);
    *aux = p * (2 + fabsl(t)) * (fabsl(g) * (fabsl(w) + sc) + fabsl(D)) + p * c->ex[2];
  }
  if (at_min) r += (D - G) * sc;
  if (at_max) r -= D * sc;
  if (at_min || at_max) *aux += (c->ex[2] + c->ex[3] + fabsl(D) + fabsl(G)) * sc;
  return r;
}

/* 8 eps aux, plus p's underflow: FLT_MIN (DBL_MIN) times the terms it multiplies */
double bound_vn_sa_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  long double x = ref_in(c, 0, i), g = ref_in(c, 1, i);
  double w = isfinite(x) ? (double)fabsl((x - c->d) * c->s) : 0.0;
  double u = dt_arith_tiny(od) * ((double)fabsl(g) * (w + (double)c->s) + (double)fabsl(c->ex[0]) + 1.0);
  return finish(od, ref, 8.0 * dt_eps(od) * (double)aux + u);
}

/* ------------------------------------------------------------ top-k softmax */
/* c->top: the selection (k = VN_TOPK_K, or n), by value, ties to the lowest
 * index; c->logd: log sum exp(x_j - m) over it; c->m: its max */
void ref_topk_softmax_row(ref_ctx *c) {
  ref_softmax_state(c);
  size_t k = c->n < VN_TOPK_K ? c->n : VN_TOPK_K;
  c->k = k;
  for (size_t j = 0; j < k; j++) {
    size_t best = c->n;
    long double bv = 0;
    for (size_t i = 0; i < c->n; i++) {
      int taken = 0;
      for (size_t q = 0; q < j; q++) taken |= c->top[q] == i;
      long double v = ref_in(c, 0, i);
      if (taken || v != v) continue;
      if (best == c->n || v > bv) { best = i; bv = v; }
    }
    c->top[j] = best;
  }
  c->logd = -INFINITY;
  if (c->nan || c->kinf || k == 0) return;
  c->m = ref_in(c, 0, c->top[0]);
  if (c->m == -INFINITY) return;
  long double s = 0;
  for (size_t j = 0; j < k; j++) s += expl(ref_in(c, 0, c->top[j]) - c->m);
  c->logd = logl(s);
}

long double ref_topk_softmax_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i);
  *aux = 1;
  if (c->nan) return NAN;
  int sel = 0;
  for (size_t j = 0; j < c->k; j++) sel |= c->top[j] == i;
  if (c->kinf) {
    size_t kin = 0;   /* the +inf entries share the selection among themselves */
    for (size_t j = 0; j < c->k; j++) kin += ref_in(c, 0, c->top[j]) == INFINITY;
    return sel && x == INFINITY ? 1.0L / (long double)kin : 0.0L;
  }
  if (!sel || c->logd == -INFINITY || x == -INFINITY) return 0;
  *aux = x - c->m;   /* t_i: f64 rows carry its rounding through exp (bound_vn_topk) */
  return expl(x - c->m - c->logd);
}

/* f32 / half: formed in double, rounded once (4 eps); f64: smx.h's softmax bound (4 + |t|/2) eps */
double bound_vn_topk(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  double k = od == DT_F64 ? 4.0 + (double)fabsl(aux) / 2.0 : 4.0;
  return finish(od, ref, k * dt_eps(od) * (double)fabsl(ref));
}

double bound_vn_4(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i; (void)aux;
  return finish(od, ref, 4.0 * dt_eps(od) * (double)fabsl(ref));
}

/* ------------------------------------------------------ sigmoid with a bias */
void ref_vn_none_row(ref_ctx *c) { (void)c; }

long double ref_sigmoid_bias_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i);
  *aux = 0;
  if (x != x) return x;
  long double z = x / c->T + VN_SIGMOID_BIAS;
  *aux = isfinite(z) ? fabsl(z) : 0;
  return 1.0L / (1.0L + expl(-z));
}

double bound_vn_sigmoid(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  double r = (double)ref;
  double q = (double)((1.0L - ref) * aux);   /* (1 - r)|z|, without |z| overflowing */
  double b = (3.0 * (1.0 - r) + 2.0 * q + 2.0 * fabs((double)VN_SIGMOID_BIAS) * (1.0 - r) + 3.0) * dt_eps(od) * r;
  if (r < dt_arith_tiny(od)) b = dt_arith_tiny(od);
  return r >= dt_tiny(od) ? b + dt_unit(od) * r : b + dt_half_sub(od);
}

/* y = sigma(x/T + b) stored as in0, and dy */
void prep_sigmoid_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  long double t = o && o->temperature != 0.0 ? o->temperature : 1.0L;
  for (size_t i = 0; i < n; i++) {
    long double v = x[i];
    dt_put(dt, in0, i, v != v ? v : 1.0L / (1.0L + expl(-(v / t + VN_SIGMOID_BIAS))));
    dt_put(dt, in1, i, (long double)((i * 2654435761u) % 2001u) / 1000.0L - 1.0L);
  }
}

long double ref_sigmoid_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double y = ref_in(c, 0, i), g = ref_in(c, 1, i);
  long double r = y * (1 - y) * g / c->T;
  *aux = fabsl(r);
  return r;
}

double bound_vn_abs4(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  return finish(od, ref, 4.0 * dt_eps(od) * (double)aux);
}

/* ------------------------------------------------------------ softplus-l1 */
static long double sp_l(long double x) { return (x > 0 ? x : 0) + log1pl(expl(-fabsl(x))); }

/* softplus(x) e^-h and sigmoid(x) e^-h for h = min(max x, 0) (ex[0]): the row scaled by its largest
 * term, so that rows far below 0 (softplus(x) ~ e^x underflows even in long double past -11355) keep
 * their ratios; log1p(t) / t -> 1 as t = e^x -> 0 */
static long double sp_h(const ref_ctx *c, long double x) {
  long double h = c->ex[0], t = expl(x);
  if (x == -INFINITY) return 0;
  if (h == 0) return sp_l(x);
  return expl(x - h) * (t > 0 ? log1pl(t) / t : 1.0L);
}
static long double sig_h(const ref_ctx *c, long double x) {
  long double h = c->ex[0];
  if (h == 0) return 1.0L / (1.0L + expl(-x));
  return expl(x - h) / (1.0L + expl(x));
}

/* c->logd: S (scaled by e^-h); c->d: <dy, y>; c->s: sum |dy_i| y_i */
void ref_softplus_l1_row(ref_ctx *c) {
  ref_softmax_state(c);
  long double s = 0, gy = 0, ga = 0;
  c->ex[0] = 0;
  if (c->nan || c->kinf) return;
  if (!c->masked && c->m < 0) c->ex[0] = c->m;
  for (size_t i = 0; i < c->n; i++) s += sp_h(c, ref_in(c, 0, i));
  if (c->in[1] && s > 0)
    for (size_t i = 0; i < c->n; i++) {
      long double y = sp_h(c, ref_in(c, 0, i)) / s, g = ref_in(c, 1, i);
      gy += g * y;
      ga += fabsl(g) * y;
    }
  c->logd = s;
  c->d = gy;
  c->s = ga;
}

long double ref_softplus_l1_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) { *aux = 1; return x == INFINITY ? 1.0L / (long double)c->kinf : 0.0L; }
  if (!(c->logd > 0)) return 0;
  long double y = sp_h(c, x) / c->logd;
  *aux = y;
  return y;
}

long double ref_softplus_l1_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), g = ref_in(c, 1, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf || !(c->logd > 0)) return 0;
  long double sg = sig_h(c, x);
  *aux = sg * (fabsl(g) + c->s) / c->logd;
  return sg * (g - c->d) / c->logd;
}
