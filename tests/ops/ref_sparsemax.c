/*
 * References and bounds of sparsemax, entmax-1.5 and bisection entmax and of
 * their VJPs (include/smx/smx_sparse.h), in long double. The row state:
 * the special-value summary (the softmax policy), the max m, and the exact
 * threshold tau of z = a (x - m), a = alpha - 1, found on the candidates
 * (z > -1 - slack): by a sort for alpha 2 and 1.5 (Martins & Astudillo 2016,
 * Alg. 1; Peters et al. 2019, Alg. 2), by safeguarded Newton steps for other
 * alpha. The entmax-specific parts are in ref_entmax.c.
 */
#include <math.h>
#include <stdlib.h>

#include "op.h"

/* rho: the rounding of x - m in the arithmetic type */
long double ref_sparse_rho(const ref_ctx *c, long double x) {
  long double d = x - c->m;
  if (isinf(d)) return 0;
  long double r = c->dt == DT_F64 ? (long double)(double)d : (long double)(float)d;
  return fabsl(r - d);
}

static int cmp_desc(const void *a, const void *b) {
  long double x = *(const long double *)a, y = *(const long double *)b;
  return (x < y) - (x > y);
}

static long double pw(long double t, long double alpha) {
  if (!(t > 0)) return 0;
  if (alpha == 2.0L) return t;
  if (alpha == 1.5L) return t * t;
  return powl(t, 1.0L / (alpha - 1.0L));
}

/* c->d: tau (z units, relative to m); c->s: the largest rho over the candidates;
 * c->logd: G = sum_j ref_j^(2 - alpha) (the bisection bound's row term) */
void ref_sparse_state(ref_ctx *c, double alpha_d) {
  long double alpha = alpha_d, a = alpha - 1.0L;
  ref_row_facts(c);
  c->d = c->s = c->logd = 0;
  if (c->nan || c->kinf || c->masked) return;
  long double *z = malloc((c->n ? c->n : 1) * sizeof *z), rho = 0;
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double v = ref_in(c, 0, i), zi = a * (v - c->m);
    if (zi > -1.0L - 1e-3L) {
      z[k++] = zi;
      long double r = ref_sparse_rho(c, v);
      if (r > rho) rho = r;
    }
  }
  long double tau = -1.0L;
  if (alpha == 2.0L || alpha == 1.5L) {
    qsort(z, k, sizeof *z, cmp_desc);
    long double s = 0, q = 0;
    for (size_t r = 1; r <= k; r++) {
      s += z[r - 1];
      q += z[r - 1] * z[r - 1];
      long double t;
      if (alpha == 2.0L) t = (s - 1) / (long double)r;
      else {
        long double mean = s / (long double)r, ss = q - s * mean, dl = (1 - ss) / (long double)r;
        t = mean - sqrtl(dl > 0 ? dl : 0);
      }
      if (t < z[r - 1] || (alpha == 1.5L && t <= z[r - 1])) tau = t;
      else break;
    }
  } else {
    /* f(tau) = sum pw(z - tau) - 1 is convex and decreasing: Newton steps from the
     * left stay left of the root; a bisection bracket guards them */
    long double lo = -1.0L, hi = 0.0L, e = 1.0L / a;
    tau = lo;
    for (int it = 0; it < 400; it++) {
      long double f = -1, df = 0;
      for (size_t j = 0; j < k; j++)
        if (z[j] > tau) {
          long double u = z[j] - tau, pu = pw(u, alpha);
          f += pu;
          df += e * pu / u;   /* e u^(e-1) */
        }
      if (f >= 0) lo = tau; else hi = tau;
      long double nt = df > 0 ? tau + f / df : hi;
      if (!(nt > lo && nt < hi)) nt = (lo + hi) / 2;
      if (fabsl(nt - tau) <= 1e-19L * (1 + fabsl(tau))) { tau = nt; break; }
      tau = nt;
    }
  }
  c->d = tau;
  c->s = rho;
  long double g = 0;
  for (size_t j = 0; j < k; j++) {
    long double p = pw(z[j] - tau, alpha);
    if (p > 0) g += powl(p, 2.0L - alpha);
  }
  c->logd = g;
  free(z);
}

/* output i; *aux = rho_i */
long double ref_sparse_at(const ref_ctx *c, size_t i, long double *aux, double alpha) {
  long double x = ref_in(c, 0, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) return x == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : 0.0L;
  long double z = (long double)(alpha - 1.0) * (x - c->m);
  /* far below the threshold the output is exactly 0 whatever the rounding (which may overflow) */
  *aux = z > -2.0L ? ref_sparse_rho(c, x) : 0.0L;
  return pw(z - c->d, alpha);
}

static double tail(dtype od, long double ref, double b) {
  double r = (double)ref;
  b += dt_unit(od) * r;
  if (r < dt_arith_tiny(od)) b += dt_arith_tiny(od) * 0x1p-20;
  return r < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

/* the threshold's own error: tau carried in two floats (f32 arithmetic) or one double */
static double eps_t(dtype od) { return od == DT_F64 ? 0x1p-52 : 0x1p-46; }

void ref_sparsemax_row(ref_ctx *c) { ref_sparse_state(c, 2.0); }
long double ref_sparsemax_at(const ref_ctx *c, size_t i, long double *aux) { return ref_sparse_at(c, i, aux, 2.0); }
double bound_sparsemax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  return tail(od, ref, (double)(2.0L * dt_eps(od) * ref + aux + c->s + 4.0L * eps_t(od)));
}

void ref_entmax15_row(ref_ctx *c) { ref_sparse_state(c, 1.5); }
long double ref_entmax15_at(const ref_ctx *c, size_t i, long double *aux) { return ref_sparse_at(c, i, aux, 1.5); }
double bound_entmax15(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)i;
  long double d = aux + c->s + 4.0L * eps_t(od);
  return tail(od, ref, (double)(5.0L * dt_eps(od) * ref + 2.0L * sqrtl(ref) * d + d * d));
}

/* ------------------------------------------------------------- backward */
/* y = the map of the family's row (stored), dy a fixed pattern in [-1, 1] */
void prep_sparse_backward(const double *x, size_t n, dtype dt, void *in0, void *in1, double alpha) {
  ref_ctx c = { 0 };
  c.dt = dt;
  c.in[0] = in0;
  c.n = n;
  for (size_t i = 0; i < n; i++) dt_put(dt, in0, i, x[i]);
  ref_sparse_state(&c, alpha);
  for (size_t i = 0; i < n; i++) {
    long double aux;
    dt_put(dt, in0, i, ref_sparse_at(&c, i, &aux, alpha));
    dt_put(dt, in1, i, (long double)((i * 2654435761u) % 2001u) / 1000.0L - 1.0L);
  }
}

/* c->d: mu = sum g dy / sum g over y > 0, g = y^(2 - alpha); c->s: sum g |dy| / sum g
 * (the scale of the products' roundings in mu); c->nan: some y is NaN */
void ref_sparse_backward_row(ref_ctx *c, double alpha) {
  long double s1 = 0, s2 = 0, s3 = 0;
  c->nan = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double y = ref_in(c, 0, i);
    if (y != y) c->nan = 1;
    if (!(y > 0)) continue;
    long double g = powl(y, 2.0L - (long double)alpha);
    s1 += g * ref_in(c, 1, i);
    s2 += g;
    s3 += g * fabsl(ref_in(c, 1, i));
  }
  c->d = s2 > 0 ? s1 / s2 : 0;
  c->s = s2 > 0 ? s3 / s2 : 0;
}

long double ref_sparse_backward_at(const ref_ctx *c, size_t i, long double *aux, double alpha) {
  long double y = ref_in(c, 0, i), dy = ref_in(c, 1, i);
  *aux = 0;
  if (c->nan) return NAN;
  if (!(y > 0)) return 0;
  long double g = powl(y, 2.0L - (long double)alpha);
  *aux = g * (fabsl(dy) + fabsl(c->d) + c->s);
  return g * (dy - c->d);
}

double bound_sparse_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  double a = (double)fabsl(ref), b = 4.0 * dt_eps(od) * (double)aux + dt_unit(od) * a + dt_arith_tiny(od);
  /* half storage below its normal range: within half its smallest subnormal (smx_sparse.h) */
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

void prep_sparsemax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  (void)o;
  prep_sparse_backward(x, n, dt, in0, in1, 2.0);
}
void ref_sparsemax_backward_row(ref_ctx *c) { ref_sparse_backward_row(c, 2.0); }
long double ref_sparsemax_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  return ref_sparse_backward_at(c, i, aux, 2.0);
}
void prep_entmax15_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  (void)o;
  prep_sparse_backward(x, n, dt, in0, in1, 1.5);
}
void ref_entmax15_backward_row(ref_ctx *c) { ref_sparse_backward_row(c, 1.5); }
long double ref_entmax15_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  return ref_sparse_backward_at(c, i, aux, 1.5);
}
