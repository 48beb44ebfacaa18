/*
 * References and bounds (include/smx/smx_grad.h) of the softmax and
 * log-softmax backward passes and of the fused cross-entropy (reduction NONE,
 * no smoothing, no z-loss: loss and gradient per row). The backward inputs are
 * made from the family's row: y = softmax (or log-softmax) of it, as stored,
 * and a fixed dy in [-1, 1].
 */
#include <float.h>
#include <math.h>

#include "op.h"

static long double temp_of(const smx_options *o) { return o && o->temperature != 0.0 ? o->temperature : 1.0L; }

static void prep(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1, int log_form) {
  ref_ctx c = { 0 };
  c.dt = dt;
  c.in[0] = in0;
  c.n = n;
  c.T = temp_of(o);
  c.flags = o ? o->flags : 0;
  for (size_t i = 0; i < n; i++) dt_put(dt, in0, i, x[i]);
  ref_softmax_state(&c);
  /* element i of y depends on x_i and the row state only, so in0 is rewritten in place */
  for (size_t i = 0; i < n; i++) {
    long double aux;
    dt_put(dt, in0, i, log_form ? ref_log_softmax_at(&c, i, &aux) : ref_softmax_at(&c, i, &aux));
    dt_put(dt, in1, i, (long double)((i * 2654435761u) % 2001u) / 1000.0L - 1.0L);
  }
}

void prep_softmax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  prep(x, n, o, dt, in0, in1, 0);
}

void prep_log_softmax_backward(const double *x, size_t n, const smx_options *o, dtype dt, void *in0, void *in1) {
  prep(x, n, o, dt, in0, in1, 1);
}

/* a += b with its rounding error into *err (TwoSum) */
static void two_sum(long double *a, long double b, long double *err) {
  long double u = *a + b, bp = u - *a;
  *err += (*a - (u - bp)) + (b - bp);
  *a = u;
}

/* d = <dy, y> and S = sum(dy), compensated (Dot2 in long double: products' errors by fmal, sums' by TwoSum):
 * a plain long-double sum is not exact enough when they cancel (the soak's rows of 64032 equal y and a dy
 * pattern of mean 0 put a 1.7e-21 error into a reference d of about 0); ex[0] = sum |dy_j y_j| and
 * ex[1] = sum |dy_j|, the scales of the library's own rounding of the reduction (bound_backward) */
void ref_backward_row(ref_ctx *c) {
  long double d = 0, de = 0, s = 0, se = 0, ad = 0, as = 0;
  for (size_t i = 0; i < c->n; i++) {
    long double y = ref_in(c, 0, i), dy = ref_in(c, 1, i), p = dy * y;
    if (isfinite(p)) de += fmal(dy, y, -p);
    two_sum(&d, p, &de);
    two_sum(&s, dy, &se);
    ad += fabsl(p);
    as += fabsl(dy);
  }
  c->d = isfinite(d) ? d + de : d;
  c->s = isfinite(s) ? s + se : s;
  c->ex[0] = ad;
  c->ex[1] = as;
}

/* aux carries the scale of the bound: |y|(|dy| + |d|) or |dy| + exp(y)|S| */
long double ref_softmax_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double y = ref_in(c, 0, i), dy = ref_in(c, 1, i);
  *aux = fabsl(y) * (fabsl(dy) + fabsl(c->d));
  return y * (dy - c->d) / c->T;
}

long double ref_log_softmax_backward_at(const ref_ctx *c, size_t i, long double *aux) {
  long double y = ref_in(c, 0, i), dy = ref_in(c, 1, i), e = expl(y);
  *aux = fabsl(dy) + e * fabsl(c->s);
  return (dy - e * c->s) / c->T;
}

/* The reduction's own rounding, which the 4 eps terms miss when <dy, y> (or sum dy) cancels: the f32 and
 * half forms sum exact products in double (n 2^-53 of the sum of magnitudes), f64 compensates (Dot2:
 * (n 2^-53)^2 of it) */
static double reduction_error(const ref_ctx *c, dtype od, long double mag) {
  double g = (double)c->n * 0x1p-53;
  return (double)mag * (od == DT_F64 ? 2.0 * g * g : 2.0 * g);
}

/* 4 eps aux / T, for results in the normal range, plus |y_i| times the reduction's error; then the storage rounding */
double bound_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  double a = (double)fabsl(ref), y = (double)fabsl(ref_in(c, 0, i));
  double b = 4.0 * dt_eps(od) * (double)(aux / c->T) + y * reduction_error(c, od, c->ex[0]) / (double)c->T +
             dt_unit(od) * a + dt_arith_tiny(od);
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

/* the same for log-softmax: exp(y_i) times the error of sum dy */
double bound_log_backward(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  double a = (double)fabsl(ref), e = (double)expl(ref_in(c, 0, i));
  double b = 4.0 * dt_eps(od) * (double)(aux / c->T) + (isfinite(e) ? e : 0) * reduction_error(c, od, c->ex[1]) / (double)c->T +
             dt_unit(od) * a + dt_arith_tiny(od);
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

long double ref_xent_loss_at(const ref_ctx *c, size_t i, long double *aux) {
  (void)i;
  *aux = 0;
  if (c->nan || c->n == 0) return NAN;   /* n == 0 is refused: never compared */
  long double xt = ref_in(c, 0, (size_t)c->target);
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : INFINITY;
  if (c->kinf) return xt == INFINITY ? logl((long double)c->kinf) : INFINITY;
  return (c->m - xt) / c->T + c->logd;
}

long double ref_xent_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  long double onehot = (int64_t)i == c->target ? 1.0L : 0.0L, p;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -onehot / c->T;
  if (c->kinf) p = ref_in(c, 0, i) == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  else p = ref_softmax_at(c, i, aux);
  return (p - onehot) / c->T;
}

/* The loss: log-softmax's 4 eps max(1, |ref|); f64 rows 8 eps (smx_grad.h: the smoothing mean is of n
 * log-softmax values, each within the log-softmax bound, f64 having no wider type to carry them in) */
double bound_xent_loss(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  double b = bound_log(c, od, i, ref, aux);
  return od == DT_F64 ? 2.0 * b : b;
}

/* (6 + |t_j|/2) eps |q_j| + 2 eps |r_j| + FLT_MIN / T, q_j = p_j / T, r_j the one-hot term */
double bound_xent_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  long double onehot = (int64_t)i == c->target ? 1.0L : 0.0L;
  long double q = fabsl(ref + onehot / c->T), r = onehot / c->T;
  double eps = dt_eps(od), a = (double)fabsl(ref);
  /* q == 0 (a masked entry, whose t is -inf) adds nothing */
  double b = (double)((q > 0 ? (6.0L + fabsl(aux) / 2.0L) * eps * q : 0.0L) + 2.0L * eps * r + FLT_MIN / c->T);
  b += dt_unit(od) * a;
  /* as for softmax, below the normal range of the arithmetic only [0, FLT_MIN) is promised */
  if (a < dt_arith_tiny(od)) b += dt_arith_tiny(od);
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}

/* With label smoothing e (OPS_SMOOTHING) over V = n classes:
 * loss = (1 - e)(lse - x_t/T) + e (lse - mean_j x_j/T), grad_j = (p_j - e/V - (1 - e)[j == t]) / T. */
static int any_ninf(const ref_ctx *c) {
  for (size_t i = 0; i < c->n; i++)
    if (ref_in(c, 0, i) == -INFINITY) return 1;
  return 0;
}

long double ref_xent_ls_loss_at(const ref_ctx *c, size_t i, long double *aux) {
  const long double e = OPS_SMOOTHING;
  (void)i;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : INFINITY;
  /* every entry +inf: the limit of a row of equal entries, log(n) (smx_grad.h's wording says +inf
   * for any smoothing; the library gives the limit, and the limit is what this reference takes) */
  if (c->kinf == c->n) return logl((long double)c->n);
  if (c->kinf || any_ninf(c)) return INFINITY;
  long double mean = 0;
  for (size_t j = 0; j < c->n; j++) mean += (c->m - ref_in(c, 0, j)) / c->T;
  mean /= (long double)c->n;
  long double xt = ref_in(c, 0, (size_t)c->target);
  return (1 - e) * ((c->m - xt) / c->T + c->logd) + e * (mean + c->logd);
}

static long double ls_rest(const ref_ctx *c, size_t i) {
  const long double e = OPS_SMOOTHING;
  return -(e / (long double)c->n + ((int64_t)i == c->target ? 1 - e : 0)) / c->T;
}

long double ref_xent_ls_grad_at(const ref_ctx *c, size_t i, long double *aux) {
  long double p;
  *aux = 0;
  if (c->nan) return NAN;
  if (c->masked) return (c->flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : ls_rest(c, i);
  if (c->kinf) p = ref_in(c, 0, i) == INFINITY ? 1.0L / (long double)c->kinf : 0.0L;
  else p = ref_softmax_at(c, i, aux);
  return p / c->T + ls_rest(c, i);
}

double bound_xent_ls_grad(const ref_ctx *c, dtype od, size_t i, long double ref, long double aux) {
  long double r = fabsl(ls_rest(c, i)), q = fabsl(ref - ls_rest(c, i));
  double eps = dt_eps(od), a = (double)fabsl(ref);
  double b = (double)((q > 0 ? (6.0L + fabsl(aux) / 2.0L) * eps * q : 0.0L) + 2.0L * eps * r + FLT_MIN / c->T);
  b += dt_unit(od) * a;
  if (a < dt_arith_tiny(od)) b += dt_arith_tiny(od);
  return a < dt_tiny(od) ? b + dt_half_sub(od) : b;
}
