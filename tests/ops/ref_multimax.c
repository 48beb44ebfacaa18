/*
 * Reference and bounds of MultiMax (include/smx/smx_multi.h) at the op
 * table's fixed parameters (MM_R*, MM_T* in op.h, exact in float): the
 * modulation s(x) in long double from the stored x, then softmax(s / T)
 * with the softmax policy, and the VJP s'(x_i) y_i (dy_i - <dy, y>) / T.
 * The quadratic scales are 0 there: s then grows like x, so that a family's
 * largest entries cannot overflow s in the arithmetic (x^2 would); the
 * quadratic terms are checked by tests/unit/test_multimax.c.
 */
#include <math.h>

#include "op.h"

static long double mm_s(long double x) {
  if (x != x || isinf(x)) return x;   /* s(+-inf) = +-inf, NaN stays */
  long double a = MM_R0 - x, b = x - MM_R1, c = MM_R2 - x, d = x - MM_R3;
  a = a > 0 ? a : 0;
  b = b > 0 ? b : 0;
  c = c > 0 ? c : 0;
  d = d > 0 ? d : 0;
  return x + MM_T0 * a + MM_T1 * b + MM_T2 * c * c + MM_T3 * d * d;
}

/* |x| + the size of each term: the scale of s's absolute rounding */
static long double mm_mag(long double x) {
  if (isinf(x) || x != x) return 0;
  long double a = fabsl(MM_R0 - x), b = fabsl(x - MM_R1), c = fabsl(MM_R2 - x), d = fabsl(x - MM_R3);
  return fabsl(x) + fabsl(MM_T0) * a + fabsl(MM_T1) * b + fabsl(MM_T2) * c * c + fabsl(MM_T3) * d * d + 1;
}

/* s'(x), one-sided at the kinks as the implementation ([x < r0], [x > r1]) */
static long double mm_ds(long double x) {
  long double c = MM_R2 - x, d = x - MM_R3;
  c = c > 0 ? c : 0;
  d = d > 0 ? d : 0;
  return 1 - (x < MM_R0 ? MM_T0 : 0) + (x > MM_R1 ? MM_T1 : 0) - 2 * MM_T2 * c + 2 * MM_T3 * d;
}

/* the forward's relative error of y_i in eps: the softmax's (8 + |t|) and
 * the rounding of s (4 eps mag, moving log y_i by (E_i + sum_j y_j E_j) / T) */
static long double fwd_rel(const ref_ctx *c, long double x, long double t) {
  return 8 + fabsl(t) + 4 * (mm_mag(x) + c->s) / c->T;
}

static long double y_at(const ref_ctx *c, long double x, long double *t) {
  *t = (mm_s(x) - c->m) / c->T;
  return expl(*t - c->logd);
}

/* c->m: max s; c->logd: log sum exp((s - m)/T); c->s: sum_j y_j mag_j;
 * with dy: c->d = <dy, y> and c->ex[0] = sum_j y_j |dy_j| (r_j + 4), the dot's
 * error from y's (r_j: the forward's relative error) and its own */
void ref_multimax_row(ref_ctx *c) {
  c->nan = 0;
  c->kinf = 0;
  c->m = -INFINITY;
  c->logd = -INFINITY;
  c->s = 0;
  c->d = 0;
  c->ex[0] = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double v = ref_in(c, 0, i);
    if (v != v) c->nan = 1;
    else if (v == INFINITY) c->kinf++;
    else if (v != -INFINITY && mm_s(v) > c->m) c->m = mm_s(v);
  }
  c->masked = c->m == -INFINITY && c->kinf == 0;
  if (c->nan || c->kinf || c->masked) return;
  long double s = 0, blk = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double v = ref_in(c, 0, i);
    if (v == -INFINITY) continue;
    blk += expl((mm_s(v) - c->m) / c->T);
    if ((i & 4095) == 4095) { s += blk; blk = 0; }
  }
  c->logd = logl(s + blk);
  long double e = 0, d = 0, de = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double v = ref_in(c, 0, i), t;
    if (v == -INFINITY) continue;
    long double y = y_at(c, v, &t);
    e += y * mm_mag(v);
  }
  c->s = e;
  if (c->in[1])
    for (size_t i = 0; i < c->n; i++) {
      long double v = ref_in(c, 0, i), t;
      if (v == -INFINITY) continue;
      long double y = y_at(c, v, &t), g = ref_in(c, 1, i);
      d += y * g;
      de += y * fabsl(g) * (fwd_rel(c, v, t) + 4);
    }
  c->d = d;
  c->ex[0] = de;
}

long double ref_multimax_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), t;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->kinf) {
    *aux = 4;   /* 1/k, rounded */
    return x == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  }
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : 0.0L;
  if (x == -INFINITY) return 0;
  long double y = y_at(c, x, &t);
  *aux = fwd_rel(c, x, t);
  return y;
}

/* aux in eps: relative (the bound multiplies by eps and |ref|) */
double bound_multimax(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  (void)c; (void)i;
  double r = (double)ref, b = r > 0 ? (double)aux * dt_eps(od) * r : 0.0;
  if (r >= dt_tiny(od)) return b + dt_unit(od) * r;
  return b + dt_half_sub(od) + (r < dt_arith_tiny(od) ? dt_arith_tiny(od) : 0.0);
}

/* ---- backward: in[0] = x, in[1] = dy (prep_vn_backward); y is the
 * implementation's forward (the adapter computes it), whose error moves
 * dx_i by |s'_i| (|dy_i - d| y_i r_i + y_i sum_j y_j |dy_j| r_j) / T,
 * r the forward's relative error; aux carries the absolute scale in eps */
long double ref_multimax_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double x = ref_in(c, 0, i), g = ref_in(c, 1, i), t;
  *aux = 0;
  if (isinf(x)) return 0;   /* s is the identity there: dx = 0, even on a NaN row */
  if (c->nan) return NAN;
  if (c->kinf || c->masked) return 0;
  long double y = y_at(c, x, &t), ds = mm_ds(x);
  long double r = fwd_rel(c, x, t) + 4;
  *aux = fabsl(ds) * y * (fabsl(g - c->d) * r + c->ex[0] + 4 * (fabsl(g) + fabsl(c->d))) / c->T;
  return ds * y * (g - c->d) / c->T;
}

double bound_multimax_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  long double x = ref_in(c, 0, i);
  double b = 2.0 * (double)aux * dt_eps(od) + dt_unit(od) * fabs((double)ref);
  /* y below the normal range: absolute */
  if (isfinite(x)) b += dt_arith_tiny(od) * (double)(fabsl(mm_ds(x)) * (fabsl(ref_in(c, 1, i)) + fabsl(c->d)) / c->T);
  /* dx itself below the normal range (a large T): a few subnormal steps */
  if (fabsl(ref) < dt_tiny(od)) b += 4.0 * dt_arith_tiny(od) * dt_eps(od) + dt_half_sub(od);
  return b;
}
