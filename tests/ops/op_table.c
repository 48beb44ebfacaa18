/*
 * The table: one row per (operation, storage type). An adapter maps the
 * driver's op_call onto one public function; the reference and the bound are
 * the documented ones (ref_*.c). Rows forms without a one-row twin leave .row
 * NULL and the driver calls .rows with one row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

size_t op_k(size_t n) { return n < OPS_KMAX ? n : OPS_KMAX; }
int64_t op_target(size_t n) { return n ? (int64_t)((n * 5 + 3) / 7 % n) : 0; }

/* ------------------------------------------------------------- adapters */
#define ELEM(fn, T)                                                                          \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], (T *)c->out, c->cols, c->opt);                            \
  }
#define ELEM_ROWS(fn, T)                                                                     \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows, c->cols, c->opt); \
  }
#define LSE(fn, T, O)                                                                        \
  static smx_status a_##fn(const op_call *c) { return fn((const T *)c->in[0], (O *)c->out, c->cols, c->opt); }
#define LSE_ROWS(fn, T, O)                                                                   \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], (O *)c->out, c->rows, c->cols, c->opt);      \
  }
#define BWD(fn, T)                                                                           \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], (const T *)c->in[1], (T *)c->out, c->cols, c->opt);       \
  }
#define BWD_ROWS(fn, T)                                                                      \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], (const T *)c->in[1], c->ld_in[1], (T *)c->out, c->ld_out, \
              c->rows, c->cols, c->opt);                                                     \
  }
#define TOPK(fn, T)                                                                          \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], (float *)c->out, c->idx, c->cols, c->k, c->opt);          \
  }
#define TOPK_ROWS(fn, T)                                                                     \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], (float *)c->out, c->idx, c->rows, c->cols, c->k, c->opt); \
  }

#define FORWARD(sfx, T, O)                                                                   \
  ELEM(smx_softmax_##sfx, T) ELEM(smx_log_softmax_##sfx, T) LSE(smx_logsumexp_##sfx, T, O)  \
  ELEM_ROWS(smx_softmax_rows_##sfx, T) ELEM_ROWS(smx_log_softmax_rows_##sfx, T)              \
  LSE_ROWS(smx_logsumexp_rows_##sfx, T, O)
FORWARD(f32, float, float)
FORWARD(f64, double, double)
FORWARD(f16, uint16_t, float)
FORWARD(bf16, uint16_t, float)

BWD(smx_softmax_backward_f32, float)
BWD(smx_log_softmax_backward_f32, float)
BWD(smx_softmax_backward_f64, double)
BWD(smx_log_softmax_backward_f64, double)
#define BACKWARD(sfx, T) BWD_ROWS(smx_softmax_backward_rows_##sfx, T) BWD_ROWS(smx_log_softmax_backward_rows_##sfx, T)
BACKWARD(f32, float)
BACKWARD(f64, double)
BACKWARD(f16, uint16_t)
BACKWARD(bf16, uint16_t)

#define TOPKS(sfx, T)                                                                        \
  TOPK(smx_softmax_topk_##sfx, T) TOPK(smx_log_softmax_topk_##sfx, T)                        \
  TOPK_ROWS(smx_softmax_topk_rows_##sfx, T) TOPK_ROWS(smx_log_softmax_topk_rows_##sfx, T)
TOPK(smx_topk_f32, float) TOPK(smx_topk_f16, uint16_t) TOPK(smx_topk_bf16, uint16_t)
TOPK_ROWS(smx_topk_rows_f32, float) TOPK_ROWS(smx_topk_rows_f16, uint16_t) TOPK_ROWS(smx_topk_rows_bf16, uint16_t)
/* f64 rows write double values */
#define TOPK64(fn)                                                                           \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const double *)c->in[0], (double *)c->out, c->idx, c->cols, c->k, c->opt);    \
  }
#define TOPK64_ROWS(fn)                                                                      \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const double *)c->in[0], c->ld_in[0], (double *)c->out, c->idx, c->rows, c->cols, c->k, c->opt); \
  }
TOPK64(smx_softmax_topk_f64) TOPK64(smx_log_softmax_topk_f64) TOPK64(smx_topk_f64)
TOPK64_ROWS(smx_softmax_topk_rows_f64) TOPK64_ROWS(smx_log_softmax_topk_rows_f64) TOPK64_ROWS(smx_topk_rows_f64)
TOPKS(f32, float)
TOPKS(f16, uint16_t)
TOPKS(bf16, uint16_t)

ELEM(smx_sigmoid_f32, float) ELEM(smx_sigmoid_f64, double)
ELEM_ROWS(smx_sigmoid_rows_f32, float) ELEM_ROWS(smx_sigmoid_rows_f64, double)
ELEM_ROWS(smx_sigmoid_rows_f16, uint16_t) ELEM_ROWS(smx_sigmoid_rows_bf16, uint16_t)

/* ------------------------------------------------ row variants (vnorm) */
#define VN_ELEM(fn, T, ...)                                                                  \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], (T *)c->out, c->cols, __VA_ARGS__, c->opt);               \
  }
#define VN_ROWS(fn, T, ...)                                                                  \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows, c->cols, __VA_ARGS__, c->opt); \
  }
/* backward rows: x = in[0], y absent, dy = in[1] */
#define VN_BWD_ROWS(fn, T, ...)                                                              \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], NULL, 0, (const T *)c->in[1], c->ld_in[1], (T *)c->out, c->ld_out, \
              c->rows, c->cols, __VA_ARGS__, c->opt);                                        \
  }
VN_ELEM(smx_softpick_f32, float, (double)VN_SOFTPICK_EPS) VN_ELEM(smx_softpick_f64, double, (double)VN_SOFTPICK_EPS)
VN_ROWS(smx_softpick_rows_f32, float, (double)VN_SOFTPICK_EPS)
VN_ROWS(smx_softpick_rows_f64, double, (double)VN_SOFTPICK_EPS)
VN_ROWS(smx_softpick_rows_f16, uint16_t, (double)VN_SOFTPICK_EPS)
VN_ROWS(smx_softpick_rows_bf16, uint16_t, (double)VN_SOFTPICK_EPS)
VN_BWD_ROWS(smx_softpick_backward_rows_f32, float, (double)VN_SOFTPICK_EPS)
VN_BWD_ROWS(smx_softpick_backward_rows_f64, double, (double)VN_SOFTPICK_EPS)
VN_BWD_ROWS(smx_softpick_backward_rows_f16, uint16_t, (double)VN_SOFTPICK_EPS)
VN_BWD_ROWS(smx_softpick_backward_rows_bf16, uint16_t, (double)VN_SOFTPICK_EPS)
#define VN_SS (double)VN_SSMAX_S, (const int64_t *)NULL
VN_ELEM(smx_ssmax_f32, float, VN_SS) VN_ELEM(smx_ssmax_f64, double, VN_SS)
VN_ROWS(smx_ssmax_rows_f32, float, VN_SS) VN_ROWS(smx_ssmax_rows_f64, double, VN_SS)
/* backward rows whose VJP reads y (in[0]) and dy (in[1]) */
#define VN_BWD_Y_ROWS(fn, T, ...)                                                            \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn(NULL, 0, (const T *)c->in[0], c->ld_in[0], (const T *)c->in[1], c->ld_in[1], (T *)c->out, c->ld_out, \
              c->rows, c->cols, __VA_ARGS__);                                                \
  }
VN_BWD_Y_ROWS(smx_ssmax_backward_rows_f32, float, VN_SS, c->opt)
VN_BWD_Y_ROWS(smx_ssmax_backward_rows_f64, double, VN_SS, c->opt)
VN_BWD_Y_ROWS(smx_ssmax_backward_rows_f16, uint16_t, VN_SS, c->opt)
VN_BWD_Y_ROWS(smx_ssmax_backward_rows_bf16, uint16_t, VN_SS, c->opt)
static smx_status a_smx_adaptive_softmax_f32(const op_call *c) {
  return smx_adaptive_softmax_f32((const float *)c->in[0], (float *)c->out, c->cols, c->opt);
}
static smx_status a_smx_adaptive_softmax_f64(const op_call *c) {
  return smx_adaptive_softmax_f64((const double *)c->in[0], (double *)c->out, c->cols, c->opt);
}
ELEM_ROWS(smx_adaptive_softmax_rows_f32, float) ELEM_ROWS(smx_adaptive_softmax_rows_f64, double)
/* standardize_softmax: its T (VN_STD_T) is the options' temperature; the driver's bad temperatures (negative,
 * NaN, inf) are passed on, to be refused */
static smx_options std_opt(const op_call *c) {
  smx_options o;
  if (c->opt) o = *c->opt;
  else memset(&o, 0, sizeof o);
  if (o.temperature >= 0.0 && o.temperature < INFINITY) o.temperature = (double)VN_STD_T;
  return o;
}
#define STD_FORMS(sfx, T)                                                                    \
  static smx_status a_smx_standardize_softmax_##sfx(const op_call *c) {                      \
    smx_options o = std_opt(c);                                                              \
    return smx_standardize_softmax_##sfx((const T *)c->in[0], (T *)c->out, c->cols, &o);     \
  }                                                                                          \
  static smx_status a_smx_standardize_softmax_rows_##sfx(const op_call *c) {                 \
    smx_options o = std_opt(c);                                                              \
    return smx_standardize_softmax_rows_##sfx((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows, \
                                              c->cols, &o);                                  \
  }
STD_FORMS(f32, float) STD_FORMS(f64, double)
/* the half-precision rows forms of these variants (f32 arithmetic, one rounding to the storage) */
#define STD_ROWS_HALF(sfx)                                                                   \
  static smx_status a_smx_standardize_softmax_rows_##sfx(const op_call *c) {                 \
    smx_options o = std_opt(c);                                                              \
    return smx_standardize_softmax_rows_##sfx((const uint16_t *)c->in[0], c->ld_in[0], (uint16_t *)c->out, c->ld_out, \
                                              c->rows, c->cols, &o);                         \
  }
STD_ROWS_HALF(f16) STD_ROWS_HALF(bf16)
VN_ROWS(smx_ssmax_rows_f16, uint16_t, VN_SS) VN_ROWS(smx_ssmax_rows_bf16, uint16_t, VN_SS)
ELEM_ROWS(smx_adaptive_softmax_rows_f16, uint16_t) ELEM_ROWS(smx_adaptive_softmax_rows_bf16, uint16_t)
VN_ELEM(smx_sa_softmax_f32, float, 0) VN_ELEM(smx_sa_softmax_f64, double, 0)
VN_ROWS(smx_sa_softmax_rows_f32, float, 0) VN_ROWS(smx_sa_softmax_rows_f64, double, 0)
VN_ROWS(smx_sa_softmax_rows_f16, uint16_t, 0) VN_ROWS(smx_sa_softmax_rows_bf16, uint16_t, 0)
static smx_status a_sa_norm_f32(const op_call *c) {
  return smx_sa_softmax_rows_f32(c->in[0], c->ld_in[0], c->out, c->ld_out, c->rows, c->cols, 1, c->opt);
}
static smx_status a_sa_norm_f64(const op_call *c) {
  return smx_sa_softmax_rows_f64(c->in[0], c->ld_in[0], c->out, c->ld_out, c->rows, c->cols, 1, c->opt);
}
static smx_status a_sa_bwd_f32(const op_call *c) {
  return smx_sa_softmax_backward_rows_f32(c->in[0], c->ld_in[0], NULL, 0, c->in[1], c->ld_in[1], c->out, c->ld_out,
                                          c->rows, c->cols, 0, c->opt);
}
static smx_status a_sa_bwd_f64(const op_call *c) {
  return smx_sa_softmax_backward_rows_f64(c->in[0], c->ld_in[0], NULL, 0, c->in[1], c->ld_in[1], c->out, c->ld_out,
                                          c->rows, c->cols, 0, c->opt);
}
static smx_status a_sa_norm_bwd_f32(const op_call *c) {
  return smx_sa_softmax_backward_rows_f32(c->in[0], c->ld_in[0], NULL, 0, c->in[1], c->ld_in[1], c->out, c->ld_out,
                                          c->rows, c->cols, 1, c->opt);
}
static smx_status a_sa_norm_bwd_f64(const op_call *c) {
  return smx_sa_softmax_backward_rows_f64(c->in[0], c->ld_in[0], NULL, 0, c->in[1], c->ld_in[1], c->out, c->ld_out,
                                          c->rows, c->cols, 1, c->opt);
}
VN_ELEM(smx_topk_softmax_f32, float, (size_t)VN_TOPK_K) VN_ELEM(smx_topk_softmax_f64, double, (size_t)VN_TOPK_K)
VN_ROWS(smx_topk_softmax_rows_f32, float, (size_t)VN_TOPK_K)
VN_ROWS(smx_topk_softmax_rows_f64, double, (size_t)VN_TOPK_K)
VN_ROWS(smx_topk_softmax_rows_f16, uint16_t, (size_t)VN_TOPK_K)
VN_ROWS(smx_topk_softmax_rows_bf16, uint16_t, (size_t)VN_TOPK_K)
VN_BWD_Y_ROWS(smx_topk_softmax_backward_rows_f32, float, (size_t)VN_TOPK_K, c->opt)
VN_BWD_Y_ROWS(smx_topk_softmax_backward_rows_f64, double, (size_t)VN_TOPK_K, c->opt)
VN_BWD_Y_ROWS(smx_topk_softmax_backward_rows_f16, uint16_t, (size_t)VN_TOPK_K, c->opt)
VN_BWD_Y_ROWS(smx_topk_softmax_backward_rows_bf16, uint16_t, (size_t)VN_TOPK_K, c->opt)
VN_ELEM(smx_sigmoid_bias_f32, float, (double)VN_SIGMOID_BIAS) VN_ELEM(smx_sigmoid_bias_f64, double, (double)VN_SIGMOID_BIAS)
VN_ROWS(smx_sigmoid_bias_rows_f32, float, (double)VN_SIGMOID_BIAS)
VN_ROWS(smx_sigmoid_bias_rows_f64, double, (double)VN_SIGMOID_BIAS)
VN_ROWS(smx_sigmoid_bias_rows_f16, uint16_t, (double)VN_SIGMOID_BIAS)
VN_ROWS(smx_sigmoid_bias_rows_bf16, uint16_t, (double)VN_SIGMOID_BIAS)
VN_BWD_Y_ROWS(smx_sigmoid_backward_rows_f32, float, c->opt)
VN_BWD_Y_ROWS(smx_sigmoid_backward_rows_f64, double, c->opt)
VN_BWD_Y_ROWS(smx_sigmoid_backward_rows_f16, uint16_t, c->opt)
VN_BWD_Y_ROWS(smx_sigmoid_backward_rows_bf16, uint16_t, c->opt)
static smx_status a_smx_softplus_l1_f32(const op_call *c) {
  return smx_softplus_l1_f32((const float *)c->in[0], (float *)c->out, c->cols, c->opt);
}
static smx_status a_smx_softplus_l1_f64(const op_call *c) {
  return smx_softplus_l1_f64((const double *)c->in[0], (double *)c->out, c->cols, c->opt);
}
ELEM_ROWS(smx_softplus_l1_rows_f32, float) ELEM_ROWS(smx_softplus_l1_rows_f64, double)
ELEM_ROWS(smx_softplus_l1_rows_f16, uint16_t) ELEM_ROWS(smx_softplus_l1_rows_bf16, uint16_t)
/* backward rows without a parameter: x = in[0], y absent, dy = in[1] */
#define VN_BWD_ROWS0(fn, T)                                                                  \
  static smx_status a_##fn(const op_call *c) {                                               \
    return fn((const T *)c->in[0], c->ld_in[0], NULL, 0, (const T *)c->in[1], c->ld_in[1], (T *)c->out, c->ld_out, \
              c->rows, c->cols, c->opt);                                                     \
  }
VN_BWD_ROWS0(smx_softplus_l1_backward_rows_f32, float) VN_BWD_ROWS0(smx_softplus_l1_backward_rows_f64, double)
VN_BWD_ROWS0(smx_softplus_l1_backward_rows_f16, uint16_t) VN_BWD_ROWS0(smx_softplus_l1_backward_rows_bf16, uint16_t)
/* self-adjust softmax backward, basic (0) and normalised (1) */
#define SA_BWD(tag, sfx, T, norm)                                                            \
  static smx_status a_sa##tag##_bwd_##sfx(const op_call *c) {                                \
    return smx_sa_softmax_backward_rows_##sfx((const T *)c->in[0], c->ld_in[0], NULL, 0, (const T *)c->in[1],   \
                                              c->ld_in[1], (T *)c->out, c->ld_out, c->rows, c->cols, norm, c->opt); \
  }
SA_BWD(, f16, uint16_t, 0) SA_BWD(, bf16, uint16_t, 0) SA_BWD(_norm, f16, uint16_t, 1) SA_BWD(_norm, bf16, uint16_t, 1)

/* Cross-entropy with reduction NONE, so that each row's loss is checked; the
 * options that matter here are carried over from smx_options. */
static double loss_scratch[64];   /* float or double losses */

/* smoothing: the xent_ls rows, with label smoothing */
static smx_status xent(const op_call *c, dtype dt, int want_grad, int smoothing) {
  smx_loss_ext ext = SMX_LOSS_EXT_INIT;
  smx_options xo = { SMX_ALGO_AUTO, 0.0, 0u, 0, &ext };
  const int64_t *targets = c->targets;
  ext.reduction = SMX_REDUCTION_NONE;
  if (smoothing) ext.label_smoothing = (double)OPS_SMOOTHING;
  if (c->opt) {
    xo.temperature = c->opt->temperature;
    xo.flags = c->opt->flags & SMX_FLAG_MASKED_ROW_NAN;
    xo.threads = c->opt->threads;
  }
  /* the gradient rows keep their loss somewhere; a refused huge count never writes it */
  size_t ls = dt == DT_F64 ? sizeof(double) : sizeof(float);
  void *loss = want_grad ? (c->rows <= 64 || c->rows > ((size_t)1 << 24) ? (void *)loss_scratch : malloc(c->rows * ls))
                         : c->out;
  void *grad = want_grad ? c->out : NULL;
  size_t ldg = want_grad ? c->ld_out : 0;
  smx_status s;
  if (!loss) return SMX_E_NOMEM;
  if (dt == DT_F64)
    s = smx_cross_entropy_f64(c->in[0], c->ld_in[0], targets, loss, grad, ldg, NULL, c->rows, c->cols, &xo);
  else if (dt == DT_F32)
    s = smx_cross_entropy_f32(c->in[0], c->ld_in[0], targets, loss, grad, ldg, NULL, c->rows, c->cols, &xo);
  else if (dt == DT_F16)
    s = smx_cross_entropy_f16(c->in[0], c->ld_in[0], targets, loss, grad, ldg, NULL, c->rows, c->cols, &xo);
  else
    s = smx_cross_entropy_bf16(c->in[0], c->ld_in[0], targets, loss, grad, ldg, NULL, c->rows, c->cols, &xo);
  if (want_grad && loss != (void *)loss_scratch) free(loss);
  return s;
}
static smx_status a_xent_loss_f64(const op_call *c) { return xent(c, DT_F64, 0, 0); }
static smx_status a_xent_ls_loss_f64(const op_call *c) { return xent(c, DT_F64, 0, 1); }
static smx_status a_xent_grad_f64(const op_call *c) { return xent(c, DT_F64, 1, 0); }
static smx_status a_xent_ls_grad_f64(const op_call *c) { return xent(c, DT_F64, 1, 1); }
static smx_status a_xent_loss_f32(const op_call *c) { return xent(c, DT_F32, 0, 0); }
static smx_status a_xent_ls_loss_f32(const op_call *c) { return xent(c, DT_F32, 0, 1); }
static smx_status a_xent_loss_f16(const op_call *c) { return xent(c, DT_F16, 0, 0); }
static smx_status a_xent_ls_loss_f16(const op_call *c) { return xent(c, DT_F16, 0, 1); }
static smx_status a_xent_loss_bf16(const op_call *c) { return xent(c, DT_BF16, 0, 0); }
static smx_status a_xent_ls_loss_bf16(const op_call *c) { return xent(c, DT_BF16, 0, 1); }
static smx_status a_xent_grad_f32(const op_call *c) { return xent(c, DT_F32, 1, 0); }
static smx_status a_xent_ls_grad_f32(const op_call *c) { return xent(c, DT_F32, 1, 1); }
static smx_status a_xent_grad_f16(const op_call *c) { return xent(c, DT_F16, 1, 0); }
static smx_status a_xent_ls_grad_f16(const op_call *c) { return xent(c, DT_F16, 1, 1); }
static smx_status a_xent_grad_bf16(const op_call *c) { return xent(c, DT_BF16, 1, 0); }
static smx_status a_xent_ls_grad_bf16(const op_call *c) { return xent(c, DT_BF16, 1, 1); }

/* sparsemax, entmax15, bisection entmax (alpha 1.5 and 1.7) and their VJPs (from y; x is NULL) */
#define SPARSE_FWD(name, sfx, T) ELEM_ROWS(smx_##name##_rows_##sfx, T)
#define SPARSE_ONE(name, sfx, T) ELEM(smx_##name##_##sfx, T)
SPARSE_ONE(sparsemax, f32, float) SPARSE_ONE(sparsemax, f64, double)
SPARSE_ONE(entmax15, f32, float) SPARSE_ONE(entmax15, f64, double)
SPARSE_FWD(sparsemax, f32, float) SPARSE_FWD(sparsemax, f64, double)
SPARSE_FWD(sparsemax, f16, uint16_t) SPARSE_FWD(sparsemax, bf16, uint16_t)
SPARSE_FWD(entmax15, f32, float) SPARSE_FWD(entmax15, f64, double)
SPARSE_FWD(entmax15, f16, uint16_t) SPARSE_FWD(entmax15, bf16, uint16_t)
#define ENTMAX_AT(tag, alpha, sfx, T)                                                                           \
  static smx_status a_entmax##tag##_rows_##sfx(const op_call *c) {                                              \
    return smx_entmax_rows_##sfx((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows, c->cols,    \
                                 alpha, c->opt);                                                                \
  }
#define ENTMAX_AT_ONE(tag, alpha, sfx, T)                                                                       \
  static smx_status a_entmax##tag##_##sfx(const op_call *c) {                                                   \
    return smx_entmax_##sfx((const T *)c->in[0], (T *)c->out, c->cols, alpha, c->opt);                          \
  }
ENTMAX_AT(_a15, 1.5, f32, float) ENTMAX_AT(_a15, 1.5, f64, double) ENTMAX_AT(_a15, 1.5, f16, uint16_t)
ENTMAX_AT(_a15, 1.5, bf16, uint16_t)
ENTMAX_AT(_a17, 1.7, f32, float) ENTMAX_AT(_a17, 1.7, f64, double) ENTMAX_AT(_a17, 1.7, f16, uint16_t)
ENTMAX_AT(_a17, 1.7, bf16, uint16_t)
ENTMAX_AT_ONE(_a15, 1.5, f32, float) ENTMAX_AT_ONE(_a15, 1.5, f64, double)
ENTMAX_AT_ONE(_a17, 1.7, f32, float) ENTMAX_AT_ONE(_a17, 1.7, f64, double)
#define SPARSE_BWD(name, sfx, T)                                                                                \
  static smx_status a_##name##_backward_rows_##sfx(const op_call *c) {                                          \
    return smx_##name##_backward_rows_##sfx(NULL, 0, (const T *)c->in[0], c->ld_in[0], (const T *)c->in[1],     \
                                            c->ld_in[1], (T *)c->out, c->ld_out, c->rows, c->cols, c->opt);     \
  }                                                                                                             \
  static smx_status a_##name##_backward_##sfx(const op_call *c) {                                               \
    return smx_##name##_backward_##sfx(NULL, (const T *)c->in[0], (const T *)c->in[1], (T *)c->out, c->cols,    \
                                       c->opt);                                                                 \
  }
SPARSE_BWD(sparsemax, f32, float) SPARSE_BWD(sparsemax, f64, double)
SPARSE_BWD(entmax15, f32, float) SPARSE_BWD(entmax15, f64, double)
/* f16 / bf16: rows forms only */
#define SPARSE_BWD_ROWS(name, sfx)                                                                              \
  static smx_status a_##name##_backward_rows_##sfx(const op_call *c) {                                          \
    return smx_##name##_backward_rows_##sfx(NULL, 0, (const uint16_t *)c->in[0], c->ld_in[0],                   \
                                            (const uint16_t *)c->in[1], c->ld_in[1], (uint16_t *)c->out,        \
                                            c->ld_out, c->rows, c->cols, c->opt);                               \
  }
SPARSE_BWD_ROWS(sparsemax, f16) SPARSE_BWD_ROWS(sparsemax, bf16) SPARSE_BWD_ROWS(entmax15, f16)
SPARSE_BWD_ROWS(entmax15, bf16)
static smx_status a_entmax_a17_backward_rows_f16(const op_call *c) {
  return smx_entmax_backward_rows_f16(NULL, 0, (const uint16_t *)c->in[0], c->ld_in[0], (const uint16_t *)c->in[1],
                                      c->ld_in[1], (uint16_t *)c->out, c->ld_out, c->rows, c->cols, 1.7, c->opt);
}
static smx_status a_entmax_a17_backward_rows_bf16(const op_call *c) {
  return smx_entmax_backward_rows_bf16(NULL, 0, (const uint16_t *)c->in[0], c->ld_in[0], (const uint16_t *)c->in[1],
                                       c->ld_in[1], (uint16_t *)c->out, c->ld_out, c->rows, c->cols, 1.7, c->opt);
}
#define a_sparsemax_backward_f16 NULL
#define a_sparsemax_backward_bf16 NULL
#define a_entmax15_backward_f16 NULL
#define a_entmax15_backward_bf16 NULL
#define a_entmax_a17_backward_f16 NULL
#define a_entmax_a17_backward_bf16 NULL
#define ENTMAX_BWD(tag, alpha, sfx, T)                                                                          \
  static smx_status a_entmax##tag##_backward_rows_##sfx(const op_call *c) {                                     \
    return smx_entmax_backward_rows_##sfx(NULL, 0, (const T *)c->in[0], c->ld_in[0], (const T *)c->in[1],       \
                                          c->ld_in[1], (T *)c->out, c->ld_out, c->rows, c->cols, alpha, c->opt); \
  }                                                                                                             \
  static smx_status a_entmax##tag##_backward_##sfx(const op_call *c) {                                          \
    return smx_entmax_backward_##sfx(NULL, (const T *)c->in[0], (const T *)c->in[1], (T *)c->out, c->cols,     \
                                     alpha, c->opt);                                                            \
  }
ENTMAX_BWD(_a17, 1.7, f32, float) ENTMAX_BWD(_a17, 1.7, f64, double)

/* ---------------------------------------------------------------- rows */
#define SM(sfx, D, O)                                                                                         \
  { "softmax", D, D, OUT_ELEM, 1, 0, OP_ALGOS | OP_SIGNED_ZERO | OP_NONNEG, a_smx_softmax_##sfx, a_smx_softmax_rows_##sfx, \
    NULL, ref_sm_row, ref_softmax_at, bound_softmax },                                                        \
  { "log_softmax", D, D, OUT_ELEM, 1, 0, OP_ALGOS, a_smx_log_softmax_##sfx, a_smx_log_softmax_rows_##sfx,     \
    NULL, ref_sm_row, ref_log_softmax_at, bound_log },                                                        \
  { "logsumexp", D, O, OUT_SCALAR, 1, -1, OP_ALGOS, a_smx_logsumexp_##sfx, a_smx_logsumexp_rows_##sfx,        \
    NULL, ref_sm_row, ref_lse_at, bound_log }
#define BW(sfx, D, one, logone)                                                                               \
  { "softmax_backward", D, D, OUT_ELEM, 2, 1, 0, one, a_smx_softmax_backward_rows_##sfx,                      \
    prep_softmax_backward, ref_backward_row, ref_softmax_backward_at, bound_backward },                      \
  { "log_softmax_backward", D, D, OUT_ELEM, 2, 1, 0, logone, a_smx_log_softmax_backward_rows_##sfx,           \
    prep_log_softmax_backward, ref_backward_row, ref_log_softmax_backward_at, bound_log_backward }
#define XE(sfx, D, L)                                                                                         \
  { "xent_loss", D, L, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID, NULL, a_xent_loss_##sfx, NULL, ref_sm_row,   \
    ref_xent_loss_at, bound_xent_loss },                                                                      \
  { "xent_grad", D, D, OUT_ELEM, 1, 0, OP_EMPTY_INVALID | OP_OPTIONAL_OUT | OP_SATURATES, NULL, a_xent_grad_##sfx, NULL, ref_sm_row,           \
    ref_xent_grad_at, bound_xent_grad },                                                                      \
  { "xent_ls_loss", D, L, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID, NULL, a_xent_ls_loss_##sfx, NULL,              \
    ref_sm_row, ref_xent_ls_loss_at, bound_xent_loss },                                                       \
  { "xent_ls_grad", D, D, OUT_ELEM, 1, 0, OP_EMPTY_INVALID | OP_OPTIONAL_OUT | OP_SATURATES, NULL,            \
    a_xent_ls_grad_##sfx, NULL, ref_sm_row, ref_xent_ls_grad_at, bound_xent_ls_grad }
#define TK(sfx, D) TKV(sfx, D, DT_F32)
#define TKV(sfx, D, V)                                                                                        \
  { "softmax_topk", D, V, OUT_TOPK, 1, -1, OP_SIGNED_ZERO | OP_NONNEG, a_smx_softmax_topk_##sfx,                     \
    a_smx_softmax_topk_rows_##sfx, NULL, ref_topk_row, ref_softmax_topk_at, bound_topk },                     \
  { "log_softmax_topk", D, V, OUT_TOPK, 1, -1, 0, a_smx_log_softmax_topk_##sfx,                               \
    a_smx_log_softmax_topk_rows_##sfx, NULL, ref_topk_row, ref_log_softmax_topk_at, bound_log_topk },         \
  { "topk", D, V, OUT_TOPK, 1, -1, 0, a_smx_topk_##sfx, a_smx_topk_rows_##sfx, NULL, ref_topk_row,             \
    ref_topk_at, bound_exact }

#define SG(sfx, D, one)                                                                                       \
  { "sigmoid", D, D, OUT_ELEM, 1, 0, OP_SIGNED_ZERO | OP_NONNEG, one, a_smx_sigmoid_rows_##sfx, NULL,              \
    ref_sigmoid_row, ref_sigmoid_at, bound_sigmoid }

#define SPX(sfx, D, one, one15)                                                                               \
  { "sparsemax", D, D, OUT_ELEM, 1, 0, OP_NONNEG | OP_UNIT_TEMP, one, a_smx_sparsemax_rows_##sfx, NULL,        \
    ref_sparsemax_row, ref_sparsemax_at, bound_sparsemax },                                                   \
  { "entmax15", D, D, OUT_ELEM, 1, 0, OP_NONNEG | OP_UNIT_TEMP, one15, a_smx_entmax15_rows_##sfx, NULL,        \
    ref_entmax15_row, ref_entmax15_at, bound_entmax15 }
#define ENT(sfx, D, tag, one)                                                                                 \
  { "entmax" #tag, D, D, OUT_ELEM, 1, 0, OP_NONNEG | OP_UNIT_TEMP, one, a_entmax##tag##_rows_##sfx, NULL,      \
    ref_entmax##tag##_row, ref_entmax##tag##_at, bound_entmax##tag }
#define SPXB(sfx, D)                                                                                          \
  { "sparsemax_backward", D, D, OUT_ELEM, 2, 1, OP_UNIT_TEMP, a_sparsemax_backward_##sfx,                     \
    a_sparsemax_backward_rows_##sfx, prep_sparsemax_backward, ref_sparsemax_backward_row,                     \
    ref_sparsemax_backward_at, bound_sparse_backward },                                                       \
  { "entmax15_backward", D, D, OUT_ELEM, 2, 1, OP_UNIT_TEMP, a_entmax15_backward_##sfx,                       \
    a_entmax15_backward_rows_##sfx, prep_entmax15_backward, ref_entmax15_backward_row,                        \
    ref_entmax15_backward_at, bound_sparse_backward },                                                        \
  { "entmax_a17_backward", D, D, OUT_ELEM, 2, 1, OP_UNIT_TEMP, a_entmax_a17_backward_##sfx,                   \
    a_entmax_a17_backward_rows_##sfx, prep_entmax_a17_backward, ref_entmax_a17_backward_row,                  \
    ref_entmax_a17_backward_at, bound_sparse_backward }

/* MultiMax at the fixed parameters of op.h (MM_R*, MM_T*) */
static const double mm_r[4] = { (double)MM_R0, (double)MM_R1, (double)MM_R2, (double)MM_R3 };
static const double mm_t[4] = { (double)MM_T0, (double)MM_T1, (double)MM_T2, (double)MM_T3 };
#define MM_FWD(sfx, T)                                                                                      \
  static smx_status a_multimax_##sfx(const op_call *c) {                                                    \
    return smx_multimax_f##sfx((const T *)c->in[0], (T *)c->out, c->cols, mm_r, mm_t, c->opt);              \
  }                                                                                                         \
  static smx_status a_multimax_rows_##sfx(const op_call *c) {                                               \
    return smx_multimax_rows_f##sfx((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows,      \
                                    c->cols, mm_r, mm_t, c->opt);                                           \
  }
MM_FWD(32, float)
MM_FWD(64, double)
static smx_status a_multimax_rows_16(const op_call *c) {
  return smx_multimax_rows_f16(c->in[0], c->ld_in[0], c->out, c->ld_out, c->rows, c->cols, mm_r, mm_t, c->opt);
}
static smx_status a_multimax_rows_b16(const op_call *c) {
  return smx_multimax_rows_bf16(c->in[0], c->ld_in[0], c->out, c->ld_out, c->rows, c->cols, mm_r, mm_t, c->opt);
}
/* The backward takes y too: the forward's own output at the same options, in
 * a buffer of the adapter's (the status of a refused or empty call comes
 * from the backward itself, with y = x standing in) */
#define MM_BWD(sfx, T)                                                                                      \
  static smx_status a_multimax_backward_rows_##sfx(const op_call *c) {                                      \
    const T *x = c->in[0];                                                                                  \
    size_t n = c->rows * c->cols;                                                                           \
    T *y = NULL;                                                                                            \
    int own = x && c->rows && c->cols && c->ld_in[0] >= c->cols && n / c->rows == c->cols &&                \
              n < ((size_t)1 << 40) / sizeof(T) && (y = malloc(n * sizeof(T))) != NULL;                    \
    if (own) {                                                                                              \
      smx_status st = smx_multimax_rows_f##sfx(x, c->ld_in[0], y, c->cols, c->rows, c->cols, mm_r, mm_t,     \
                                               c->opt);                                                    \
      if (st != SMX_OK) { free(y); return st; }                                                             \
    }                                                                                                       \
    smx_status st = smx_multimax_backward_rows_f##sfx(x, c->ld_in[0], own ? y : x, own ? c->cols : c->ld_in[0], \
                                                      c->in[1], c->ld_in[1], (T *)c->out, c->ld_out, c->rows, \
                                                      c->cols, mm_r, mm_t, NULL, c->opt);                   \
    free(y);                                                                                                \
    return st;                                                                                              \
  }
MM_BWD(32, float)
MM_BWD(64, double)

const op_row op_table[] = {
  SM(f32, DT_F32, DT_F32), SM(f64, DT_F64, DT_F64), SM(f16, DT_F16, DT_F32), SM(bf16, DT_BF16, DT_F32),
  BW(f32, DT_F32, a_smx_softmax_backward_f32, a_smx_log_softmax_backward_f32),
  BW(f16, DT_F16, NULL, NULL), BW(bf16, DT_BF16, NULL, NULL),
  BW(f64, DT_F64, a_smx_softmax_backward_f64, a_smx_log_softmax_backward_f64),
  XE(f32, DT_F32, DT_F32), XE(f16, DT_F16, DT_F32), XE(bf16, DT_BF16, DT_F32), XE(f64, DT_F64, DT_F64),
  TK(f32, DT_F32), TK(f16, DT_F16), TK(bf16, DT_BF16), TKV(f64, DT_F64, DT_F64),
  SG(f32, DT_F32, a_smx_sigmoid_f32), SG(f64, DT_F64, a_smx_sigmoid_f64), SG(f16, DT_F16, NULL),
  SG(bf16, DT_BF16, NULL),
  SPX(f32, DT_F32, a_smx_sparsemax_f32, a_smx_entmax15_f32), SPX(f64, DT_F64, a_smx_sparsemax_f64, a_smx_entmax15_f64),
  SPX(f16, DT_F16, NULL, NULL), SPX(bf16, DT_BF16, NULL, NULL),
  ENT(f32, DT_F32, _a15, a_entmax_a15_f32), ENT(f64, DT_F64, _a15, a_entmax_a15_f64), ENT(f16, DT_F16, _a15, NULL),
  ENT(bf16, DT_BF16, _a15, NULL), ENT(f32, DT_F32, _a17, a_entmax_a17_f32), ENT(f64, DT_F64, _a17, a_entmax_a17_f64),
  ENT(f16, DT_F16, _a17, NULL), ENT(bf16, DT_BF16, _a17, NULL),
  SPXB(f32, DT_F32), SPXB(f64, DT_F64), SPXB(f16, DT_F16), SPXB(bf16, DT_BF16),
  /* row variants (vnorm) */
#define VN_FWD(name, sfx, D, caps, one, ref_row, ref_at, bound) \
  { #name, D, D, OUT_ELEM, 1, 0, caps, one, a_smx_##name##_rows_##sfx, NULL, ref_row, ref_at, bound }
#define VN_BWD(name, sfx, D, ref_row, ref_at, bound) \
  { #name "_backward", D, D, OUT_ELEM, 2, 1, 0, NULL, a_smx_##name##_backward_rows_##sfx, prep_vn_backward, ref_row, ref_at, bound }
  VN_FWD(softpick, f32, DT_F32, OP_NONNEG, a_smx_softpick_f32, ref_softpick_row, ref_softpick_at, bound_vn_8),
  VN_FWD(softpick, f64, DT_F64, OP_NONNEG, a_smx_softpick_f64, ref_softpick_row, ref_softpick_at, bound_vn_8),
  VN_FWD(softpick, f16, DT_F16, OP_NONNEG, NULL, ref_softpick_row, ref_softpick_at, bound_vn_8),
  VN_FWD(softpick, bf16, DT_BF16, OP_NONNEG, NULL, ref_softpick_row, ref_softpick_at, bound_vn_8),
  VN_BWD(softpick, f32, DT_F32, ref_softpick_row, ref_softpick_backward_at, bound_vn_8),
  VN_BWD(softpick, f64, DT_F64, ref_softpick_row, ref_softpick_backward_at, bound_vn_8),
  VN_BWD(softpick, f16, DT_F16, ref_softpick_row, ref_softpick_backward_at, bound_vn_8),
  VN_BWD(softpick, bf16, DT_BF16, ref_softpick_row, ref_softpick_backward_at, bound_vn_8),
#define VN_BWDY(name, sfx, D, prep, ref_row, ref_at, bound) \
  { #name "_backward", D, D, OUT_ELEM, 2, 1, 0, NULL, a_smx_##name##_backward_rows_##sfx, prep, ref_row, ref_at, bound }
  VN_FWD(ssmax, f32, DT_F32, OP_NONNEG, a_smx_ssmax_f32, ref_ssmax_row, ref_ssmax_at, bound_softmax),
  VN_FWD(ssmax, f64, DT_F64, OP_NONNEG, a_smx_ssmax_f64, ref_ssmax_row, ref_ssmax_at, bound_softmax),
  VN_FWD(ssmax, f16, DT_F16, OP_NONNEG, NULL, ref_ssmax_row, ref_ssmax_at, bound_softmax),
  VN_FWD(ssmax, bf16, DT_BF16, OP_NONNEG, NULL, ref_ssmax_row, ref_ssmax_at, bound_softmax),
  VN_BWDY(ssmax, f32, DT_F32, prep_sm_backward, ref_ssmax_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(ssmax, f64, DT_F64, prep_sm_backward, ref_ssmax_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(ssmax, f16, DT_F16, prep_sm_backward, ref_ssmax_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(ssmax, bf16, DT_BF16, prep_sm_backward, ref_ssmax_backward_row, ref_softmax_backward_at, bound_backward),
  VN_FWD(adaptive_softmax, f32, DT_F32, OP_NONNEG, a_smx_adaptive_softmax_f32, ref_adaptive_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(adaptive_softmax, f64, DT_F64, OP_NONNEG, a_smx_adaptive_softmax_f64, ref_adaptive_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(adaptive_softmax, f16, DT_F16, OP_NONNEG, NULL, ref_adaptive_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(adaptive_softmax, bf16, DT_BF16, OP_NONNEG, NULL, ref_adaptive_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(standardize_softmax, f32, DT_F32, OP_NONNEG, a_smx_standardize_softmax_f32, ref_std_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(standardize_softmax, f64, DT_F64, OP_NONNEG, a_smx_standardize_softmax_f64, ref_std_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(standardize_softmax, f16, DT_F16, OP_NONNEG, NULL, ref_std_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(standardize_softmax, bf16, DT_BF16, OP_NONNEG, NULL, ref_std_row, ref_softmax_at, bound_vn_beta),
  VN_FWD(sa_softmax, f32, DT_F32, 0, a_smx_sa_softmax_f32, ref_sa_row, ref_sa_at, bound_vn_sa),
  VN_FWD(sa_softmax, f64, DT_F64, 0, a_smx_sa_softmax_f64, ref_sa_row, ref_sa_at, bound_vn_sa),
  VN_FWD(sa_softmax, f16, DT_F16, 0, NULL, ref_sa_row, ref_sa_at, bound_vn_sa),
  VN_FWD(sa_softmax, bf16, DT_BF16, 0, NULL, ref_sa_row, ref_sa_at, bound_vn_sa),
  { "sa_softmax_norm", DT_F32, DT_F32, OUT_ELEM, 1, 0, OP_NONNEG, NULL, a_sa_norm_f32, NULL, ref_sa_norm_row, ref_sa_at, bound_vn_sa },
  { "sa_softmax_norm", DT_F64, DT_F64, OUT_ELEM, 1, 0, OP_NONNEG, NULL, a_sa_norm_f64, NULL, ref_sa_norm_row, ref_sa_at, bound_vn_sa },
  VN_FWD(topk_softmax, f32, DT_F32, OP_NONNEG, a_smx_topk_softmax_f32, ref_topk_softmax_row, ref_topk_softmax_at, bound_vn_topk),
  VN_FWD(topk_softmax, f64, DT_F64, OP_NONNEG, a_smx_topk_softmax_f64, ref_topk_softmax_row, ref_topk_softmax_at, bound_vn_topk),
  VN_FWD(topk_softmax, f16, DT_F16, OP_NONNEG, NULL, ref_topk_softmax_row, ref_topk_softmax_at, bound_vn_topk),
  VN_FWD(topk_softmax, bf16, DT_BF16, OP_NONNEG, NULL, ref_topk_softmax_row, ref_topk_softmax_at, bound_vn_topk),
  VN_BWDY(topk_softmax, f32, DT_F32, prep_sm_backward, ref_unit_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(topk_softmax, f64, DT_F64, prep_sm_backward, ref_unit_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(topk_softmax, f16, DT_F16, prep_sm_backward, ref_unit_backward_row, ref_softmax_backward_at, bound_backward),
  VN_BWDY(topk_softmax, bf16, DT_BF16, prep_sm_backward, ref_unit_backward_row, ref_softmax_backward_at, bound_backward),
  VN_FWD(sigmoid_bias, f32, DT_F32, OP_NONNEG, a_smx_sigmoid_bias_f32, ref_vn_none_row, ref_sigmoid_bias_at, bound_vn_sigmoid),
  VN_FWD(sigmoid_bias, f64, DT_F64, OP_NONNEG, a_smx_sigmoid_bias_f64, ref_vn_none_row, ref_sigmoid_bias_at, bound_vn_sigmoid),
  VN_FWD(sigmoid_bias, f16, DT_F16, OP_NONNEG, NULL, ref_vn_none_row, ref_sigmoid_bias_at, bound_vn_sigmoid),
  VN_FWD(sigmoid_bias, bf16, DT_BF16, OP_NONNEG, NULL, ref_vn_none_row, ref_sigmoid_bias_at, bound_vn_sigmoid),
  VN_BWDY(sigmoid, f32, DT_F32, prep_sigmoid_backward, ref_vn_none_row, ref_sigmoid_backward_at, bound_vn_abs4),
  VN_BWDY(sigmoid, f64, DT_F64, prep_sigmoid_backward, ref_vn_none_row, ref_sigmoid_backward_at, bound_vn_abs4),
  VN_BWDY(sigmoid, f16, DT_F16, prep_sigmoid_backward, ref_vn_none_row, ref_sigmoid_backward_at, bound_vn_abs4),
  VN_BWDY(sigmoid, bf16, DT_BF16, prep_sigmoid_backward, ref_vn_none_row, ref_sigmoid_backward_at, bound_vn_abs4),
  VN_FWD(softplus_l1, f32, DT_F32, OP_NONNEG, a_smx_softplus_l1_f32, ref_softplus_l1_row, ref_softplus_l1_at, bound_vn_8),
  VN_FWD(softplus_l1, f64, DT_F64, OP_NONNEG, a_smx_softplus_l1_f64, ref_softplus_l1_row, ref_softplus_l1_at, bound_vn_8),
  VN_FWD(softplus_l1, f16, DT_F16, OP_NONNEG, NULL, ref_softplus_l1_row, ref_softplus_l1_at, bound_vn_8),
  VN_FWD(softplus_l1, bf16, DT_BF16, OP_NONNEG, NULL, ref_softplus_l1_row, ref_softplus_l1_at, bound_vn_8),
  VN_BWD(softplus_l1, f32, DT_F32, ref_softplus_l1_row, ref_softplus_l1_backward_at, bound_vn_8),
  VN_BWD(softplus_l1, f64, DT_F64, ref_softplus_l1_row, ref_softplus_l1_backward_at, bound_vn_8),
  VN_BWD(softplus_l1, f16, DT_F16, ref_softplus_l1_row, ref_softplus_l1_backward_at, bound_vn_8),
  VN_BWD(softplus_l1, bf16, DT_BF16, ref_softplus_l1_row, ref_softplus_l1_backward_at, bound_vn_8),
  { "sa_softmax_backward", DT_F32, DT_F32, OUT_ELEM, 2, 1, 0, NULL, a_sa_bwd_f32, prep_vn_backward,
    ref_sa_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_backward", DT_F64, DT_F64, OUT_ELEM, 2, 1, 0, NULL, a_sa_bwd_f64, prep_vn_backward,
    ref_sa_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_norm_backward", DT_F32, DT_F32, OUT_ELEM, 2, 1, 0, NULL, a_sa_norm_bwd_f32, prep_vn_backward,
    ref_sa_norm_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_norm_backward", DT_F64, DT_F64, OUT_ELEM, 2, 1, 0, NULL, a_sa_norm_bwd_f64, prep_vn_backward,
    ref_sa_norm_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_backward", DT_F16, DT_F16, OUT_ELEM, 2, 1, 0, NULL, a_sa_bwd_f16, prep_vn_backward,
    ref_sa_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_backward", DT_BF16, DT_BF16, OUT_ELEM, 2, 1, 0, NULL, a_sa_bwd_bf16, prep_vn_backward,
    ref_sa_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_norm_backward", DT_F16, DT_F16, OUT_ELEM, 2, 1, 0, NULL, a_sa_norm_bwd_f16, prep_vn_backward,
    ref_sa_norm_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  { "sa_softmax_norm_backward", DT_BF16, DT_BF16, OUT_ELEM, 2, 1, 0, NULL, a_sa_norm_bwd_bf16, prep_vn_backward,
    ref_sa_norm_backward_row, ref_sa_backward_at, bound_vn_sa_backward },
  /* the losses, reduction NONE (ref_losses.c): the row losses, then the gradient */
/* (the gradient's NULL is the loss-only call; caps: OP_NO_TEMP where the adapter fixes the temperature (KD's T); gcaps: the
 * gradient's own, OP_SATURATES where values beyond the range saturate) */
#define LOSS_ROWS(name, sfx, D, n_in, caps, gcaps, prep, ref_row, loss_bound, grad_at, grad_bound)               \
  { #name "_loss", D, D, OUT_SCALAR, n_in, -1, OP_EMPTY_INVALID | OP_UNIT_TEMP | (caps), NULL,                    \
    a_##name##_##sfx##_loss, prep, ref_row, ref_loss_at, loss_bound },                                           \
  { #name "_grad", D, D, OUT_ELEM, n_in, 0, OP_EMPTY_INVALID | OP_UNIT_TEMP | OP_OPTIONAL_OUT | (caps) | (gcaps),   \
    NULL, a_##name##_##sfx##_grad, prep, ref_row, grad_at, grad_bound }
/* S-DPO in every dtype (f16 / bf16: float losses), cross-entropy's caps and bounds */
#define SDPO_ROWS(sfx, D, L)                                                                                        \
  { "sdpo_loss", D, L, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID | OP_INV_TEMP, NULL, a_sdpo_loss_##sfx, NULL,          \
    ref_sdpo_row, ref_sdpo_loss_at, bound_xent_loss },                                                           \
  { "sdpo_grad", D, D, OUT_ELEM, 1, 0, OP_EMPTY_INVALID | OP_OPTIONAL_OUT | OP_SATURATES | OP_INV_TEMP, NULL,      \
    a_sdpo_grad_##sfx, NULL, ref_sdpo_row, ref_sdpo_grad_at, bound_xent_grad }
  SDPO_ROWS(f64, DT_F64, DT_F64), SDPO_ROWS(f32, DT_F32, DT_F32), SDPO_ROWS(f16, DT_F16, DT_F32),
  SDPO_ROWS(bf16, DT_BF16, DT_F32),
  LOSS_ROWS(focal, f32, DT_F32, 1, 0, OP_SATURATES, NULL, ref_focal_row, bound_loss, ref_focal_grad_at, bound_loss_grad),
  LOSS_ROWS(focal, f64, DT_F64, 1, 0, 0, NULL, ref_focal_row, bound_loss, ref_focal_grad_at, bound_loss_grad),
  LOSS_ROWS(zloss, f32, DT_F32, 1, 0, OP_SATURATES, NULL, ref_zloss_row, bound_zloss, ref_zloss_grad_at, bound_loss_grad),
  LOSS_ROWS(zloss, f64, DT_F64, 1, 0, OP_SATURATES, NULL, ref_zloss_row, bound_zloss, ref_zloss_grad_at, bound_loss_grad),
  LOSS_ROWS(kd, f32, DT_F32, 2, OP_NO_TEMP, 0, prep_kd, ref_kd_row, bound_loss, ref_kd_grad_at, bound_loss_grad),
  LOSS_ROWS(kd, f64, DT_F64, 2, OP_NO_TEMP, 0, prep_kd, ref_kd_row, bound_loss, ref_kd_grad_at, bound_loss_grad),
  LOSS_ROWS(sparsemax, f32, DT_F32, 1, 0, 0, NULL, ref_fy_sparsemax_row, bound_fy_loss, ref_fy_sparsemax_grad_at,
            bound_fy_sparsemax_grad),
  LOSS_ROWS(sparsemax, f64, DT_F64, 1, 0, 0, NULL, ref_fy_sparsemax_row, bound_fy_loss, ref_fy_sparsemax_grad_at,
            bound_fy_sparsemax_grad),
  LOSS_ROWS(entmax15, f32, DT_F32, 1, 0, 0, NULL, ref_fy_entmax15_row, bound_fy_loss, ref_fy_entmax15_grad_at,
            bound_fy_entmax15_grad),
  LOSS_ROWS(entmax15, f64, DT_F64, 1, 0, 0, NULL, ref_fy_entmax15_row, bound_fy_loss, ref_fy_entmax15_grad_at,
            bound_fy_entmax15_grad),
  LOSS_ROWS(entmax, f32, DT_F32, 1, 0, 0, NULL, ref_fy_entmax_row, bound_fy_loss, ref_fy_entmax_grad_at,
            bound_fy_entmax_grad),
  LOSS_ROWS(entmax, f64, DT_F64, 1, 0, 0, NULL, ref_fy_entmax_row, bound_fy_loss, ref_fy_entmax_grad_at,
            bound_fy_entmax_grad),
  /* InfoNCE (symmetric = 0) at every temperature: the losses' common bound */
#define INFO_NCE_ROWS(sfx, D)                                                                                       \
  { "info_nce_loss", D, D, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID, NULL, a_info_nce_##sfx##_loss, NULL,              \
    ref_info_nce_row, ref_loss_at, bound_loss },                                                                   \
  { "info_nce_grad", D, D, OUT_ELEM, 1, 0, OP_EMPTY_INVALID | OP_OPTIONAL_OUT | OP_SATURATES, NULL,               \
    a_info_nce_##sfx##_grad, NULL, ref_info_nce_row, ref_info_nce_grad_at, bound_loss_grad }
  INFO_NCE_ROWS(f32, DT_F32), INFO_NCE_ROWS(f64, DT_F64),
  /* the sort-based sparsemax, the oracle: the same reference and bound */
  { "sparsemax_sort", DT_F32, DT_F32, OUT_ELEM, 1, 0, OP_NONNEG | OP_UNIT_TEMP, NULL, a_sparsemax_sort_f32, NULL,
    ref_sparsemax_row, ref_sparsemax_at, bound_sparsemax },
  { "sparsemax_sort", DT_F64, DT_F64, OUT_ELEM, 1, 0, OP_NONNEG | OP_UNIT_TEMP, NULL, a_sparsemax_sort_f64, NULL,
    ref_sparsemax_row, ref_sparsemax_at, bound_sparsemax },
  /* the operations that draw noise, keyed by the row (adapt_rng.c, ref_rng.c): Gumbel-softmax at tau = T */
#define GUMBEL_ROWS(sfx, D)                                                                                         \
  { "gumbel_softmax", D, D, OUT_ELEM, 1, 0, OP_SIGNED_ZERO | OP_NONNEG | OP_ROW_NOISE, NULL, a_gumbel_##sfx, NULL,   \
    ref_gumbel_row, ref_gumbel_at, bound_softmax },                                                                \
  { "gumbel_softmax_hard", D, D, OUT_ELEM, 1, -1, OP_SIGNED_ZERO | OP_NONNEG | OP_ROW_NOISE, NULL,                  \
    a_gumbel_hard_##sfx, NULL, ref_gumbel_hard_row, ref_gumbel_hard_at, bound_exact },                             \
  { "gumbel_softmax_backward", D, D, OUT_ELEM, 2, 1, 0, NULL, a_gumbel_backward_##sfx, prep_softmax_backward,        \
    ref_backward_row, ref_softmax_backward_at, bound_backward }
  GUMBEL_ROWS(f32, DT_F32), GUMBEL_ROWS(f16, DT_F16), GUMBEL_ROWS(bf16, DT_BF16),
  /* Noisy Softmax (ANNEALED, reduction NONE): the loss and its gradient */
#define NOISY_ROWS(sfx, D)                                                                                          \
  { "noisy_softmax_loss", D, D, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID | OP_UNIT_TEMP | OP_ROW_NOISE, NULL,            \
    a_noisy_##sfx##_loss, NULL, ref_noisy_row, ref_loss_at, bound_loss },                                          \
  { "noisy_softmax_grad", D, D, OUT_ELEM, 1, 0, OP_EMPTY_INVALID | OP_UNIT_TEMP | OP_OPTIONAL_OUT | OP_ROW_NOISE,    \
    NULL, a_noisy_##sfx##_grad, NULL, ref_noisy_row, ref_noisy_grad_at, bound_loss_grad }
  NOISY_ROWS(f32, DT_F32), NOISY_ROWS(f64, DT_F64),
  /* the mixture of softmaxes at K = 2 (components in[0] and in[1], ref_rng.c), at every temperature */
  { "mixture_log_softmax", DT_F32, DT_F32, OUT_ELEM, 2, -1, OP_SHORT_ROWS, NULL, a_mixture_f32, prep_mixture,
    ref_mixture_row, ref_mixture_at, bound_mixture },
  { "mixture_log_softmax", DT_F64, DT_F64, OUT_ELEM, 2, -1, OP_SHORT_ROWS, NULL, a_mixture_f64, prep_mixture,
    ref_mixture_row, ref_mixture_at, bound_mixture },
  /* its backward (components x and x reversed, dy): dx of component 0, dw_1 (NULL: the documented dx-only call);
   * the other component's dx and dw_0 are the same code at the other index */
#define MIX_BWD(sfx, D)                                                                                             \
  { "mixture_log_softmax_backward_dx0", D, D, OUT_ELEM, 2, -1, OP_SHORT_ROWS, NULL,                  \
    a_mixture_dx0_##sfx, prep_vn_backward, ref_mixture_backward_row, ref_mixture_dx0_at, bound_mixture_backward },  \
  { "mixture_log_softmax_backward_dw1", D, D, OUT_SCALAR, 2, -1, OP_OPTIONAL_OUT | OP_SHORT_ROWS,    \
    NULL, a_mixture_dw1_##sfx, prep_vn_backward, ref_mixture_backward_row, ref_mixture_dw1_at,                     \
    bound_mixture_backward }
  MIX_BWD(f32, DT_F32), MIX_BWD(f64, DT_F64),
  /* sampling: one token per row (as a double), its own random stream per row */
#define SAMPLE_ROW(cfg, sfx, D)                                                                                     \
  { "sample" #cfg, D, DT_F64, OUT_SCALAR, 1, -1, OP_EMPTY_INVALID | OP_ROW_NOISE, NULL, a_sample##cfg##_##sfx, NULL,  \
    ref_sample##cfg##_row, ref_sample_at, bound_sample }
#define SAMPLE_ROWS(cfg) SAMPLE_ROW(cfg, f32, DT_F32), SAMPLE_ROW(cfg, f64, DT_F64), SAMPLE_ROW(cfg, f16, DT_F16), \
  SAMPLE_ROW(cfg, bf16, DT_BF16)
  /* (f16 / bf16 rows are widened exactly into the f32 sampler, and f64 rows rounded into it: the plain and
   * top-k rows show that; the nucleus, Gumbel and greedy paths in f32, and f64 where it differs) */
  SAMPLE_ROWS(), SAMPLE_ROWS(_topk_gumbel), SAMPLE_ROW(_nucleus, f32, DT_F32),
  SAMPLE_ROW(_gumbel, f32, DT_F32), SAMPLE_ROW(_gumbel, f64, DT_F64), SAMPLE_ROW(_greedy, f32, DT_F32),
  SAMPLE_ROW(_greedy, f64, DT_F64), SAMPLE_ROW(_greedy, f16, DT_F16),
  /* MultiMax */
  { "multimax", DT_F32, DT_F32, OUT_ELEM, 1, 0, OP_NONNEG, a_multimax_32, a_multimax_rows_32, NULL,
    ref_multimax_row, ref_multimax_at, bound_multimax },
  { "multimax", DT_F64, DT_F64, OUT_ELEM, 1, 0, OP_NONNEG, a_multimax_64, a_multimax_rows_64, NULL,
    ref_multimax_row, ref_multimax_at, bound_multimax },
  { "multimax", DT_F16, DT_F16, OUT_ELEM, 1, 0, OP_NONNEG, NULL, a_multimax_rows_16, NULL,
    ref_multimax_row, ref_multimax_at, bound_multimax },
  { "multimax", DT_BF16, DT_BF16, OUT_ELEM, 1, 0, OP_NONNEG, NULL, a_multimax_rows_b16, NULL,
    ref_multimax_row, ref_multimax_at, bound_multimax },
  { "multimax_backward", DT_F32, DT_F32, OUT_ELEM, 2, 1, 0, NULL, a_multimax_backward_rows_32, prep_vn_backward,
    ref_multimax_row, ref_multimax_backward_at, bound_multimax_backward },
  { "multimax_backward", DT_F64, DT_F64, OUT_ELEM, 2, 1, 0, NULL, a_multimax_backward_rows_64, prep_vn_backward,
    ref_multimax_row, ref_multimax_backward_at, bound_multimax_backward },
};
const size_t op_table_len = sizeof op_table / sizeof op_table[0];
