/*
 * Scalable-Softmax, SSMax (Nakanishi 2025, arXiv 2501.19399),
 * include/smx/smx_norm.h: y = softmax((s log n) x), n the row length or
 * given per row (prefix / causal use: the keys a query sees). It is softmax
 * at temperature 1 / (s log n), run by the softmax engine's row drivers
 * (vnorm_softmax.c); the backward pass is the softmax VJP scaled by s log n.
 */
#include <math.h>

#include "ops/vnorm_run.h"
#include "ops/vnorm_softmax.h"
#include "smx/smx.h"

typedef struct ssmax_ctx {
  smx_vn_sm sm;
  double s;
  const int64_t *n;   /* per row, or NULL: the row length */
} ssmax_ctx;

static double scale_of(const ssmax_ctx *c, size_t r, size_t cols) {
  double n = c->n ? (double)c->n[r] : (double)cols;
  return c->s * log(n);
}

static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *scratch) {
  const ssmax_ctx *c = ctx;
  (void)scratch;
  smx_vn_softmax_f32(&c->sm, in[0], y, n, scale_of(c, r, n));
}
static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *scratch) {
  const ssmax_ctx *c = ctx;
  (void)scratch;
  smx_vn_softmax_f64(&c->sm, in[0], y, n, scale_of(c, r, n));
}
static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scratch) {
  const ssmax_ctx *c = ctx;
  (void)scratch;
  smx_vn_softmax_bwd_f32(&c->sm, in[1], in[2], dx, n, scale_of(c, r, n));
}
static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scratch) {
  const ssmax_ctx *c = ctx;
  (void)scratch;
  smx_vn_softmax_bwd_f64(in[1], in[2], dx, n, scale_of(c, r, n));
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *y, size_t ldy, const void *g,
                      size_t ldg, void *out, size_t ldo, size_t rows, size_t cols, double s, const int64_t *n,
                      const smx_options *opt) {
  if (!(s >= 0.0) || !isfinite(s)) return SMX_E_INVALID_ARG;
  if (rows && cols && (grad ? (!y || !g) : !x)) return SMX_E_INVALID_ARG;
  if (n && cols)
    for (size_t r = 0; r < rows; r++)
      if (n[r] < 1) return SMX_E_INVALID_ARG;
  ssmax_ctx c = { .s = s, .n = n };
  smx_vn_sm_init(&c.sm, rows, cols);
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { grad ? NULL : x, y, g },
                   .ld_in = { ldx, ldy, ldg }, .out = out, .ld_out = ldo, .alias = grad ? 3 : 1,
                   .row32 = grad ? bwd32 : fwd32, .row64 = grad ? bwd64 : fwd64, .ctx = &c };
  return smx_vn_run(&op, opt);
}

#define FWD(sfx, T, E)                                                                                        \
  smx_status smx_ssmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols, double s, \
                                  const int64_t *n, const smx_options *opt) {                                 \
    return run(E, 0, x, ldx, NULL, 0, NULL, 0, y, ldy, rows, cols, s, n, opt);                                \
  }
FWD(f32, float, SMX_ELEM_F32)
FWD(f64, double, SMX_ELEM_F64)
FWD(f16, uint16_t, SMX_ELEM_F16)
FWD(bf16, uint16_t, SMX_ELEM_BF16)

smx_status smx_ssmax_f32(const float *x, float *y, size_t n, double s, const int64_t *len, const smx_options *opt) {
  return smx_ssmax_rows_f32(x, n, y, n, 1, n, s, len, opt);
}
smx_status smx_ssmax_f64(const double *x, double *y, size_t n, double s, const int64_t *len,
                         const smx_options *opt) {
  return smx_ssmax_rows_f64(x, n, y, n, 1, n, s, len, opt);
}

#define BWD_ROWS(sfx, T, E)                                                                                        \
  smx_status smx_ssmax_backward_rows_##sfx(const T *x, size_t ldx, const T *y, size_t ldy, const T *dy,       \
                                           size_t lddy, T *dx, size_t lddx, size_t rows, size_t cols,          \
                                           double s, const int64_t *n, const smx_options *opt) {              \
    (void)x; (void)ldx;                                                                                       \
    return run(E, 1, NULL, 0, y, ldy, dy, lddy, dx, lddx, rows, cols, s, n, opt);                             \
  }
#define BWD(sfx, T, E)                                                                                        \
  BWD_ROWS(sfx, T, E)                                                                                          \
  smx_status smx_ssmax_backward_##sfx(const T *x, const T *y, const T *dy, T *dx, size_t n, double s,         \
                                      const int64_t *len, const smx_options *opt) {                           \
    return smx_ssmax_backward_rows_##sfx(x, n, y, n, dy, n, dx, n, 1, n, s, len, opt);                        \
  }
BWD(f32, float, SMX_ELEM_F32)
BWD(f64, double, SMX_ELEM_F64)
BWD_ROWS(f16, uint16_t, SMX_ELEM_F16)
BWD_ROWS(bf16, uint16_t, SMX_ELEM_BF16)
