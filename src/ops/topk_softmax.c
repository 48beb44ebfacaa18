/*
 * Top-k softmax ("sparse softmax", Sun et al. 2021, arXiv 2112.12433),
 * include/smx/smx_multi.h: softmax over the k largest entries, 0
 * elsewhere; equal entries go to the lowest index. f32 (and half) rows
 * select with the fused top-k of smx_topk_f32 (src/ops/topk*.c: one read of
 * the row, the same tie and special-value rules); f64 rows sort (value,
 * index) pairs. The softmax over the k selected values is formed in double.
 * The backward pass is the softmax VJP on y (0 off the support).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/vnorm_run.h"
#include "ops/vnorm_softmax.h"
#include "smx/smx.h"

typedef struct tk_ctx {
  smx_vn_sm sm;
  size_t k;
} tk_ctx;

/* y over the selection (values v[0..k) in descending order at idx[0..k)),
 * y zero elsewhere; +inf values: 1/c on them; -inf values: 0 */
#define TK_FILL(T, y, n, v, idx, k)                                                  \
  do {                                                                               \
    memset(y, 0, n * sizeof(T));                                                     \
    size_t kinf = 0;                                                                 \
    for (size_t j = 0; j < k; j++) kinf += v[j] == (T)INFINITY;                      \
    if (kinf) {                                                                      \
      for (size_t j = 0; j < kinf; j++) y[idx[j]] = (T)(1.0 / (double)kinf);         \
      break;                                                                         \
    }                                                                                \
    double m = (double)v[0], sum = 0.0;                                              \
    if (m == -INFINITY) break;                                                       \
    for (size_t j = 0; j < k; j++) sum += exp((double)v[j] - m);                     \
    for (size_t j = 0; j < k; j++) y[idx[j]] = (T)(exp((double)v[j] - m) / sum);     \
  } while (0)

static void fwd32(const void *ctx, size_t r, const float *const *in, float *y, size_t n, float *scr) {
  const tk_ctx *c = ctx;
  const float *x = in[0];
  size_t k = c->k < n ? c->k : n;
  float *v = scr;
  int64_t *idx = (int64_t *)(void *)(scr + n + (n & 1));   /* 8-byte aligned, within the 3 rows */
  (void)r;
  if (smx_topk_f32(x, v, idx, n, k, NULL) != SMX_OK || idx[0] < 0) {   /* NaN in the row */
    for (size_t i = 0; i < n; i++) y[i] = NAN;
    return;
  }
  TK_FILL(float, y, n, v, idx, k);
}

typedef struct vi { double v; size_t i; } vi;
static int by_value(const void *a, const void *b) {
  const vi *p = a, *q = b;
  if (p->v != q->v) return p->v > q->v ? -1 : 1;
  return p->i < q->i ? -1 : p->i > q->i;
}

static void fwd64(const void *ctx, size_t r, const double *const *in, double *y, size_t n, double *scr) {
  const tk_ctx *c = ctx;
  const double *x = in[0];
  size_t k = c->k < n ? c->k : n;
  vi *s = (vi *)(void *)scr;
  (void)r;
  for (size_t i = 0; i < n; i++) {
    if (x[i] != x[i]) {
      for (size_t j = 0; j < n; j++) y[j] = NAN;
      return;
    }
    s[i].v = x[i];
    s[i].i = i;
  }
  qsort(s, n, sizeof *s, by_value);
  /* the selection as (values, indices) in place of the sorted pairs' head */
  double *v = scr + 2 * n;
  size_t *idx = (size_t *)(void *)(scr + 2 * n + k);
  for (size_t j = 0; j < k; j++) { v[j] = s[j].v; idx[j] = s[j].i; }
  TK_FILL(double, y, n, v, idx, k);
}

static void bwd32(const void *ctx, size_t r, const float *const *in, float *dx, size_t n, float *scr) {
  const tk_ctx *c = ctx;
  (void)r; (void)scr;
  smx_vn_softmax_bwd_f32(&c->sm, in[1], in[2], dx, n, 1.0);
}
static void bwd64(const void *ctx, size_t r, const double *const *in, double *dx, size_t n, double *scr) {
  (void)ctx; (void)r; (void)scr;
  smx_vn_softmax_bwd_f64(in[1], in[2], dx, n, 1.0);
}

static smx_status run(smx_elem e, int grad, const void *x, size_t ldx, const void *y, size_t ldy, const void *g,
                      size_t ldg, void *out, size_t ldo, size_t rows, size_t cols, size_t k,
                      const smx_options *opt) {
  if (k == 0) return SMX_E_INVALID_ARG;
  if (rows && cols && (grad ? (!y || !g) : !x)) return SMX_E_INVALID_ARG;
  tk_ctx c = { .k = k };
  smx_vn_sm_init(&c.sm, rows, cols);
  /* f32: k values and k indices (int64); f64: n (value, index) pairs, then k values and k indices */
  size_t scratch = grad ? 0 : 4;
  smx_vn_op op = { .elem = e, .rows = rows, .cols = cols, .in = { grad ? NULL : x, y, g },
                   .ld_in = { ldx, ldy, ldg }, .out = out, .ld_out = ldo, .alias = grad ? 3 : 1,
                   .scratch_rows = scratch, .row32 = grad ? bwd32 : fwd32, .row64 = grad ? bwd64 : fwd64,
                   .ctx = &c };
  return smx_vn_run(&op, opt);
}

#define FWD(sfx, T, E)                                                                                        \
  smx_status smx_topk_softmax_rows_##sfx(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,  \
                                         size_t k, const smx_options *opt) {                                  \
    return run(E, 0, x, ldx, NULL, 0, NULL, 0, y, ldy, rows, cols, k, opt);                                   \
  }
FWD(f32, float, SMX_ELEM_F32)
FWD(f64, double, SMX_ELEM_F64)
FWD(f16, uint16_t, SMX_ELEM_F16)
FWD(bf16, uint16_t, SMX_ELEM_BF16)

smx_status smx_topk_softmax_f32(const float *x, float *y, size_t n, size_t k, const smx_options *opt) {
  return smx_topk_softmax_rows_f32(x, n, y, n, 1, n, k, opt);
}
smx_status smx_topk_softmax_f64(const double *x, double *y, size_t n, size_t k, const smx_options *opt) {
  return smx_topk_softmax_rows_f64(x, n, y, n, 1, n, k, opt);
}

#define BWD_ROWS(sfx, T, E)                                                                                        \
  smx_status smx_topk_softmax_backward_rows_##sfx(const T *x, size_t ldx, const T *y, size_t ldy, const T *dy, \
                                                  size_t lddy, T *dx, size_t lddx, size_t rows, size_t cols,   \
                                                  size_t k, const smx_options *opt) {                         \
    (void)x; (void)ldx;                                                                                       \
    return run(E, 1, NULL, 0, y, ldy, dy, lddy, dx, lddx, rows, cols, k, opt);                                \
  }
#define BWD(sfx, T, E)                                                                                        \
  BWD_ROWS(sfx, T, E)                                                                                          \
  smx_status smx_topk_softmax_backward_##sfx(const T *x, const T *y, const T *dy, T *dx, size_t n, size_t k,  \
                                             const smx_options *opt) {                                        \
    return smx_topk_softmax_backward_rows_##sfx(x, n, y, n, dy, n, dx, n, 1, n, k, opt);                      \
  }
BWD(f32, float, SMX_ELEM_F32)
BWD(f64, double, SMX_ELEM_F64)
BWD_ROWS(f16, uint16_t, SMX_ELEM_F16)
BWD_ROWS(bf16, uint16_t, SMX_ELEM_BF16)
