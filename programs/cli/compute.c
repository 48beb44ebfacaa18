/* The library call of softmax, log-softmax, logsumexp, sigmoid, sparsemax and entmax for a
 * block of rows, by the type computed in; see stream.h. */
#include "cli/stream.h"

/* the row variants, by the type computed in */
#define VN_CALL(sfx)                                                                                         \
  switch (c->op) {                                                                                           \
  case CLI_SOFTPICK: return smx_softpick_rows_##sfx(x, n, y, n, rows, n, c->p, o);                          \
  case CLI_SSMAX: return smx_ssmax_rows_##sfx(x, n, y, n, rows, n, c->p, NULL, o);                          \
  case CLI_SA_SOFTMAX: return smx_sa_softmax_rows_##sfx(x, n, y, n, rows, n, (int)c->k, o);                 \
  case CLI_ADAPTIVE_SOFTMAX: return smx_adaptive_softmax_rows_##sfx(x, n, y, n, rows, n, o);                \
  case CLI_TOPK_SOFTMAX: return smx_topk_softmax_rows_##sfx(x, n, y, n, rows, n, c->k, o);                  \
  case CLI_SOFTPLUS_L1: return smx_softplus_l1_rows_##sfx(x, n, y, n, rows, n, o);                          \
  case CLI_STANDARDIZE_SOFTMAX: return smx_standardize_softmax_rows_##sfx(x, n, y, n, rows, n, c->p, o);    \
  default: return smx_sigmoid_bias_rows_##sfx(x, n, y, n, rows, n, c->p, o);                                \
  }

static smx_status variant_rows(const cli_op_ctx *c, const void *x, void *y, size_t rows, size_t n) {
  const smx_options *o = &c->opt;
  if (c->t == CLI_F64) { VN_CALL(f64) }
  if (c->t == CLI_F16) { VN_CALL(f16) }
  VN_CALL(f32)
}

static smx_status op_rows(void *ctx, const void *x, void *const *yv, size_t rows, size_t n, uint64_t row0) {
  const cli_op_ctx *c = ctx;
  const smx_options *o = &c->opt;
  void *y = yv[0];
  (void)row0;
  if (c->op == CLI_SPARSEMAX) {
    if (c->t == CLI_F64) return smx_sparsemax_rows_f64(x, n, y, n, rows, n, o);
    if (c->t == CLI_F16) return smx_sparsemax_rows_f16(x, n, y, n, rows, n, o);
    return smx_sparsemax_rows_f32(x, n, y, n, rows, n, o);
  }
  if (c->op == CLI_ENTMAX15) {
    if (c->t == CLI_F64) return smx_entmax15_rows_f64(x, n, y, n, rows, n, o);
    if (c->t == CLI_F16) return smx_entmax15_rows_f16(x, n, y, n, rows, n, o);
    return smx_entmax15_rows_f32(x, n, y, n, rows, n, o);
  }
  if (c->op == CLI_ENTMAX) {
    if (c->t == CLI_F64) return smx_entmax_rows_f64(x, n, y, n, rows, n, c->alpha, o);
    if (c->t == CLI_F16) return smx_entmax_rows_f16(x, n, y, n, rows, n, c->alpha, o);
    return smx_entmax_rows_f32(x, n, y, n, rows, n, c->alpha, o);
  }
  if (c->op >= CLI_SOFTPICK || (c->op == CLI_SIGMOID && c->p != 0.0)) return variant_rows(c, x, y, rows, n);
  if (c->op == CLI_SIGMOID) {
    if (c->t == CLI_F64) return smx_sigmoid_rows_f64(x, n, y, n, rows, n, o);
    if (c->t == CLI_F16) return smx_sigmoid_rows_f16(x, n, y, n, rows, n, o);
    return smx_sigmoid_rows_f32(x, n, y, n, rows, n, o);
  }
  if (c->t == CLI_F64) {
    if (c->op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f64(x, n, y, rows, n, o);
    if (c->op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f64(x, n, y, n, rows, n, o);
    return smx_softmax_rows_f64(x, n, y, n, rows, n, o);
  }
  if (c->t == CLI_F16) {
    if (c->op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f16(x, n, y, rows, n, o);
    if (c->op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f16(x, n, y, n, rows, n, o);
    return smx_softmax_rows_f16(x, n, y, n, rows, n, o);
  }
  if (c->op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f32(x, n, y, rows, n, o);
  if (c->op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f32(x, n, y, n, rows, n, o);
  return smx_softmax_rows_f32(x, n, y, n, rows, n, o);
}

cli_kernel cli_op_kernel(cli_op_ctx *ctx, uint64_t n) {
  int lse = ctx->op == CLI_LOGSUMEXP;
  cli_kernel k = { ctx->t, 1, { lse ? 1 : n, 0 }, { CLI_F32, CLI_F32 }, !lse, lse, op_rows, ctx };
  /* float16 logsumexp comes out in float32: the library keeps its range */
  k.vt[0] = lse && ctx->t == CLI_F16 ? CLI_F32 : ctx->t;
  return k;
}
