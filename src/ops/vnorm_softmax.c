/* Softmax of a rescaled row and its VJP (see vnorm_softmax.h). */
#include "ops/vnorm_softmax.h"

#include <float.h>
#include <math.h>

#include "core/op.h"
#include "core/temperature.h"
#include "ops/algo_select.h"
#include "ops/softmax_row_f32.h"
#include "ops/softmax_row_f64.h"

void smx_vn_sm_init(smx_vn_sm *s, size_t rows, size_t cols) {
  s->reg = smx_registry_current();
  s->algo = smx_algo_auto(SMX_OP_SOFTMAX, rows, cols, s->reg->f32->isa);
  s->algo64 = smx_algo_auto_f64(SMX_OP_SOFTMAX, rows, cols, s->reg->f64->isa);
  s->stream = smx_stream_default(rows, cols);
}

/* a = 0: uniform over the entries above -inf (the limit a -> 0+) */
#define UNIFORM(T, x, y, n)                                                              \
  do {                                                                                   \
    size_t live = 0, kinf = 0;                                                           \
    int nan = 0;                                                                         \
    for (size_t i = 0; i < n; i++) {                                                     \
      if (x[i] != x[i]) nan = 1;                                                         \
      else if (x[i] == (T)INFINITY) kinf++;                                              \
      else if (x[i] != -(T)INFINITY) live++;                                             \
    }                                                                                    \
    for (size_t i = 0; i < n; i++) {                                                     \
      if (nan) y[i] = (T)NAN;                                                            \
      else if (kinf) y[i] = x[i] == (T)INFINITY ? (T)(1.0 / (double)kinf) : (T)0;        \
      else y[i] = x[i] != -(T)INFINITY ? (T)(1.0 / (double)live) : (T)0;                 \
    }                                                                                    \
  } while (0)

/* the temperature 1/a inside what the engine takes (finite, > 0) */
static double temp_of(double a) {
  double t = 1.0 / a;
  return t > DBL_MAX ? DBL_MAX : t < SMX_F32_TEMPERATURE_MIN ? SMX_F32_TEMPERATURE_MIN : t;
}

void smx_vn_softmax_f32(const smx_vn_sm *s, const float *x, float *y, size_t n, double a) {
  if (a != a) { for (size_t i = 0; i < n; i++) y[i] = NAN; return; }
  if (a == 0.0) { UNIFORM(float, x, y, n); return; }
  double t = temp_of(a);
  smx_row_params p;
  const smx_f32_ukernels *k = smx_f32_kernels_for(t);
  smx_row_params_init(&p, k, SMX_OP_SOFTMAX, k == s->reg->f32 ? s->algo : SMX_ALGO_THREE_PASS, t, 0, 1);
  p.stream = s->stream;
  smx_row_f32(&p, x, y, n, NULL);
}

void smx_vn_softmax_f64(const smx_vn_sm *s, const double *x, double *y, size_t n, double a) {
  if (a != a) { for (size_t i = 0; i < n; i++) y[i] = NAN; return; }
  if (a == 0.0) { UNIFORM(double, x, y, n); return; }
  double t = temp_of(a);
  smx_row_params_f64 p;
  int extreme = smx_f64_temperature_extreme(t);
  smx_row_params_f64_init(&p, extreme ? &smx_f64_ukernels_scalar : s->reg->f64, SMX_OP_SOFTMAX,
                          extreme ? SMX_ALGO_THREE_PASS : s->algo64, t, 0, 1);
  p.stream = s->stream;
  smx_row_f64(&p, x, y, n, NULL);
}

double smx_vn_softmax_bwd_f32(const smx_vn_sm *s, const float *y, const float *dy, float *dx, size_t n, double a) {
  double d = s->reg->xent->rdot(n, y, dy);
  if (a <= 3e38) {
    s->reg->xent->vsoftmax_bwd(n, y, dy, dx, (float)d, (float)a);
  } else {   /* a beyond float: formed in double (0 stays 0) */
    for (size_t i = 0; i < n; i++) {
      double v = a * ((double)y[i] * ((double)dy[i] - d));
      dx[i] = v > 3.4e38 ? INFINITY : v < -3.4e38 ? -INFINITY : (float)v;
    }
  }
  return d;
}

double smx_vn_softmax_bwd_f64(const double *y, const double *dy, double *dx, size_t n, double a) {
  /* <y, dy> with the products' rounding errors (fma) and a compensated sum:
   * a few ulps at any length, whatever the cancellation */
  double d = 0.0, c = 0.0;
  for (size_t i = 0; i < n; i++) {
    double v = y[i] * dy[i], e = fma(y[i], dy[i], -v), t = d + v;
    c += (fabs(d) >= fabs(v) ? (d - t) + v : (v - t) + d) + e;
    d = t;
  }
  d += c;
  for (size_t i = 0; i < n; i++) dx[i] = a * (y[i] * (dy[i] - d));
  return d;
}
