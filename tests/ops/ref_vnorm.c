/*
 * References and bounds of the row variants of include/smx/smx_variants.h
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
