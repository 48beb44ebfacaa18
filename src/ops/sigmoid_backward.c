/*
 * The sigmoid's VJP, include/smx/smx_elem.h: for y = sigma(x/T + b),
 * dx = y (1 - y) dy / T, from y alone (the vnorm sig_bwd kernel).
 */
#include <math.h>

#include "core/options.h"
#include "ops/vnorm_run.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct sg_ctx {
  const smx_registry *reg;
  double inv_t, t;
  int div;   /* 1/T beyond the arithmetic's range: each value is divided by T in double */
} sg_ctx;

static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scr) {
  const sg_ctx *c = ctx;
  (void)r; (void)scr;
  if (c->div) {
    for (size_t i = 0; i < n; i++) {
      double y = in[1][i], v = y * (1.0 - y) * in[2][i] / c->t;
      dx[i] = v > 3.4e38 ? INFINITY : v < -3.4e38 ? -INFINITY : (float)v;
    }
    return;
  }
  c->reg->vnorm->sig_bwd(n, in[1], in[2], dx, (float)c->inv_t);
}
static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scr) {
  const sg_ctx *c = ctx;
  (void)r; (void)scr;
  if (c->div) {
    for (size_t i = 0; i < n; i++) dx[i] = in[1][i] * (1.0 - in[1][i]) * in[2][i] / c->t;
    return;
  }
  smx_vnorm_sig_bwd_f64(n, in[1], in[2], dx, c->inv_t);
}

static smx_status run(smx_elem e, const void *y, size_t ldy, const void *g, size_t ldg, void *dx, size_t lddx,
                      size_t rows, size_t cols, const smx_options *opt) {
  double t = smx_resolve_temperature(opt ? opt->temperature : 0.0);
  if (!(t > 0.0)) return SMX_E_INVALID_ARG;
  if (rows && cols && (!y || !g)) return SMX_E_INVALID_ARG;
  sg_ctx c = { smx_registry_current(), 1.0 / t, t, 0 };
  c.div = e == SMX_ELEM_F64 ? !(c.inv_t <= 0x1p1000) : !(c.inv_t <= 0x1p100);
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { NULL, y, g }, .ld_in = { 0, ldy, ldg },
                   .out = dx, .ld_out = lddx, .alias = 3, .row32 = bwd32, .row64 = bwd64, .ctx = &c };
  return smx_vn_run(&op, opt);
}

smx_status smx_sigmoid_backward_rows_f32(const float *x, size_t ldx, const float *y, size_t ldy, const float *dy,
                                         size_t lddy, float *dx, size_t lddx, size_t rows, size_t cols,
                                         const smx_options *opt) {
  (void)x; (void)ldx;
  return run(SMX_ELEM_F32, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}
smx_status smx_sigmoid_backward_rows_f64(const double *x, size_t ldx, const double *y, size_t ldy, const double *dy,
                                         size_t lddy, double *dx, size_t lddx, size_t rows, size_t cols,
                                         const smx_options *opt) {
  (void)x; (void)ldx;
  return run(SMX_ELEM_F64, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}
smx_status smx_sigmoid_backward_rows_f16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
                                         const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows,
                                         size_t cols, const smx_options *opt) {
  (void)x; (void)ldx;
  return run(SMX_ELEM_F16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}
smx_status smx_sigmoid_backward_rows_bf16(const uint16_t *x, size_t ldx, const uint16_t *y, size_t ldy,
                                          const uint16_t *dy, size_t lddy, uint16_t *dx, size_t lddx, size_t rows,
                                          size_t cols, const smx_options *opt) {
  (void)x; (void)ldx;
  return run(SMX_ELEM_BF16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}
smx_status smx_sigmoid_backward_f32(const float *x, const float *y, const float *dy, float *dx, size_t n,
                                    const smx_options *opt) {
  return smx_sigmoid_backward_rows_f32(x, n, y, n, dy, n, dx, n, 1, n, opt);
}
smx_status smx_sigmoid_backward_f64(const double *x, const double *y, const double *dy, double *dx, size_t n,
                                    const smx_options *opt) {
  return smx_sigmoid_backward_rows_f64(x, n, y, n, dy, n, dx, n, 1, n, opt);
}
