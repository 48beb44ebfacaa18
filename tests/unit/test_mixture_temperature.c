/*
 * mixture_log_softmax at a temperature (include/smx/smx_multi.h): the
 * components are softmax(x / T), w is not tempered, and the backward pass
 * carries the chain rule's 1 / T. It used to ignore opt->temperature.
 *  - at T = 2 and 1/4 (powers of two, so x / T is exact) the forward equals
 *    the T = 1 forward of x / T bitwise, dx the T = 1 dx of x / T over T, dw
 *    that dw (f32 and f64);
 *  - at T = 0.7 and 3 the f64 gradients match central differences of the
 *    f64 forward;
 *  - a bad temperature is refused with nothing written.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "smx/smx.h"

static int fails;
#define CHECK(c, ...)                                                           \
  do {                                                                          \
    if (!(c)) {                                                                 \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);             \
      fprintf(stderr, __VA_ARGS__);                                             \
      fprintf(stderr, "\n");                                                    \
      fails++;                                                                  \
    }                                                                           \
  } while (0)

enum { R = 2, K = 3, N = 7 };

static double X[R * K * N], W[R * K], DY[R * N];

static void fill(void) {
  unsigned s = 12345;
  for (size_t i = 0; i < R * K * N; i++) { s = s * 1103515245u + 12345u; X[i] = ((double)(s >> 8) / 16777216.0 - 0.5) * 6.0; }
  for (size_t i = 0; i < R * K; i++) { s = s * 1103515245u + 12345u; W[i] = ((double)(s >> 8) / 16777216.0 - 0.5) * 2.0; }
  for (size_t i = 0; i < R * N; i++) { s = s * 1103515245u + 12345u; DY[i] = ((double)(s >> 8) / 16777216.0 - 0.5); }
  X[3] = -INFINITY;   /* a masked entry in one component */
}

static smx_options at(double t) {
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = t;
  return o;
}

/* forward and backward at T against T = 1 on x / T (exact for a power of two) */
static void scaled(double t) {
  double xs[R * K * N], y[R * N], ys[R * N], dx[R * K * N], dxs[R * K * N], dw[R * K], dws[R * K];
  for (size_t i = 0; i < R * K * N; i++) xs[i] = X[i] / t;
  smx_options o = at(t), o1 = at(1.0);
  CHECK(smx_mixture_log_softmax_rows_f64(X, N, W, K, y, N, R, K, N, &o) == SMX_OK, "T=%g", t);
  CHECK(smx_mixture_log_softmax_rows_f64(xs, N, W, K, ys, N, R, K, N, &o1) == SMX_OK, "T=1");
  CHECK(!memcmp(y, ys, sizeof y), "f64 forward at T=%g differs from x / T at T = 1 (y0 %.17g vs %.17g)", t, y[0], ys[0]);
  CHECK(smx_mixture_log_softmax_backward_rows_f64(X, N, W, K, DY, N, dx, N, dw, K, R, K, N, &o) == SMX_OK, "bwd");
  CHECK(smx_mixture_log_softmax_backward_rows_f64(xs, N, W, K, DY, N, dxs, N, dws, K, R, K, N, &o1) == SMX_OK, "bwd");
  int same = 1;
  for (size_t i = 0; i < R * K * N; i++) same &= dx[i] == dxs[i] / t;
  CHECK(same, "f64 dx at T=%g is not dx(x / T, 1) / T", t);
  CHECK(!memcmp(dw, dws, sizeof dw), "f64 dw at T=%g differs from dw(x / T, 1)", t);

  float xf[R * K * N], xsf[R * K * N], wf[R * K], dyf[R * N], yf[R * N], ysf[R * N], dxf[R * K * N], dxsf[R * K * N];
  for (size_t i = 0; i < R * K * N; i++) { xf[i] = (float)X[i]; xsf[i] = xf[i] / (float)t; }
  for (size_t i = 0; i < R * K; i++) wf[i] = (float)W[i];
  for (size_t i = 0; i < R * N; i++) dyf[i] = (float)DY[i];
  CHECK(smx_mixture_log_softmax_rows_f32(xf, N, wf, K, yf, N, R, K, N, &o) == SMX_OK, "f32");
  CHECK(smx_mixture_log_softmax_rows_f32(xsf, N, wf, K, ysf, N, R, K, N, &o1) == SMX_OK, "f32");
  CHECK(!memcmp(yf, ysf, sizeof yf), "f32 forward at T=%g differs from x / T at T = 1", t);
  CHECK(smx_mixture_log_softmax_backward_rows_f32(xf, N, wf, K, dyf, N, dxf, N, NULL, 0, R, K, N, &o) == SMX_OK, "f32");
  CHECK(smx_mixture_log_softmax_backward_rows_f32(xsf, N, wf, K, dyf, N, dxsf, N, NULL, 0, R, K, N, &o1) == SMX_OK, "f32");
  same = 1;
  for (size_t i = 0; i < R * K * N; i++) same &= dxf[i] == (float)((double)dxsf[i] / t) || dxf[i] == dxsf[i] / (float)t;
  CHECK(same, "f32 dx at T=%g is not dx(x / T, 1) / T", t);
}

/* L = sum_i dy_i y_i at T */
static double loss(const double *x, const double *w, double t) {
  double y[R * N], l = 0.0;
  smx_options o = at(t);
  if (smx_mixture_log_softmax_rows_f64(x, N, w, K, y, N, R, K, N, &o) != SMX_OK) return NAN;
  for (size_t i = 0; i < R * N; i++) if (y[i] > -INFINITY) l += DY[i] * y[i];
  return l;
}

static void central(double t) {
  double dx[R * K * N], dw[R * K], x[R * K * N], w[R * K];
  smx_options o = at(t);
  CHECK(smx_mixture_log_softmax_backward_rows_f64(X, N, W, K, DY, N, dx, N, dw, K, R, K, N, &o) == SMX_OK, "bwd");
  memcpy(x, X, sizeof x);
  memcpy(w, W, sizeof w);
  double worst = 0.0;
  for (size_t i = 0; i < R * K * N; i++) {
    if (X[i] == -INFINITY) continue;
    double h = 1e-5 * t;
    x[i] = X[i] + h;
    double lp = loss(x, w, t);
    x[i] = X[i] - h;
    double lm = loss(x, w, t);
    x[i] = X[i];
    double e = fabs((lp - lm) / (2 * h) - dx[i]) / (fabs(dx[i]) + 1e-3);
    if (e > worst) worst = e;
  }
  for (size_t i = 0; i < R * K; i++) {
    double h = 1e-5;
    w[i] = W[i] + h;
    double lp = loss(x, w, t);
    w[i] = W[i] - h;
    double lm = loss(x, w, t);
    w[i] = W[i];
    double e = fabs((lp - lm) / (2 * h) - dw[i]) / (fabs(dw[i]) + 1e-3);
    if (e > worst) worst = e;
  }
  CHECK(worst < 1e-6, "T=%g: gradient vs central differences, worst relative error %.3g", t, worst);
}

int main(void) {
  fill();
  scaled(2.0);
  scaled(0.25);
  central(0.7);
  central(3.0);
  double y[R * N];
  for (size_t i = 0; i < R * N; i++) y[i] = 7.0;
  smx_options bad = at(-1.0);
  CHECK(smx_mixture_log_softmax_rows_f64(X, N, W, K, y, N, R, K, N, &bad) == SMX_E_INVALID_ARG, "T = -1");
  bad = at(NAN);
  CHECK(smx_mixture_log_softmax_rows_f64(X, N, W, K, y, N, R, K, N, &bad) == SMX_E_INVALID_ARG, "T = NaN");
  int untouched = 1;
  for (size_t i = 0; i < R * N; i++) untouched &= y[i] == 7.0;
  CHECK(untouched, "a refused call wrote y");
  if (fails) fprintf(stderr, "test_mixture_temperature: %d failed\n", fails);
  else printf("test_mixture_temperature: ok\n");
  return fails != 0;
}
