/*
 * Attention options at the edges of float (include/smx/smx_attention.h): the
 * double options are used as floats, so a finite double beyond FLT_MAX, or a
 * nonzero one that would round to 0 where 0 means off, is refused by the
 * plan; the bounds themselves are accepted and give finite results. SSMax's
 * s < 0 is refused as smx_ssmax refuses it. Also the scores far below 0 of
 * the softpick and sigmoid kinds against a long-double reference.
 */
#include "../common/test_isa.h"
#include "smx/smx_attention.h"
#include "smx/smx_norm.h"

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

/*
 * Softpick and sigmoid attention on scores far below 0, against long double: z_ij = <q_i, k_j> with Dqk = 2,
 * row 0 sees scores in [-125, -115] only (softpick: every weight 0, lse about log Lk; sigmoid: weights about
 * e^-120, below float, but their lse is about -120 + log Lk), row 1 sees 100 keys at about -120 and then
 * keys in [0, 3] (a running maximum that starts far below 0), row 2 a mix; Lk = 200 (tiles) and 4500 (the
 * split keys of few rows).
 */
static void test_far_below(smx_attn_kind kind, size_t Lk) {
  enum { LQ = 3, DV = 8 };
  const char *kn = kind == SMX_ATTN_SOFTPICK ? "softpick" : "sigmoid";
  float q[LQ * 2] = { 1, 0, 0, 1, 0.5f, 0.5f }, *k = malloc(Lk * 2 * 4), *v = malloc(Lk * DV * 4);
  float o[LQ * DV], lse[LQ];
  tu_rng r = { 77 };
  for (size_t j = 0; j < Lk; j++) {
    k[j * 2] = tu_uniform_f(&r, -125.0f, -115.0f);
    k[j * 2 + 1] = j < 100 ? tu_uniform_f(&r, -121.0f, -119.0f) : tu_uniform_f(&r, 0.0f, 3.0f);
  }
  for (size_t i = 0; i < Lk * DV; i++) v[i] = tu_normal(&r);
  long double ro[LQ * DV], rl[LQ];
  for (size_t i = 0; i < LQ; i++) {
    long double m = -INFINITY, den = 0, *out = ro + i * DV;
    for (size_t x = 0; x < DV; x++) out[x] = 0;
    for (size_t j = 0; j < Lk; j++) {
      long double z = (long double)q[i * 2] * k[j * 2] + (long double)q[i * 2 + 1] * k[j * 2 + 1];
      if (z > m) m = z;
    }
    for (size_t j = 0; j < Lk; j++) {
      long double z = (long double)q[i * 2] * k[j * 2] + (long double)q[i * 2 + 1] * k[j * 2 + 1], w;
      if (kind == SMX_ATTN_SOFTPICK) {   /* the reference's form: shifted by the max, eps after the shift */
        long double a = expl(z - m) - expl(-m);
        den += fabsl(a);
        w = a > 0 ? a : 0;
      } else {
        w = 1.0L / (1.0L + expl(-z));
        den += w;
      }
      for (size_t x = 0; x < DV; x++) out[x] += w * v[j * DV + x];
    }
    if (kind == SMX_ATTN_SOFTPICK) {
      den += 1e-8L;
      for (size_t x = 0; x < DV; x++) out[x] /= den;
      rl[i] = m + logl(den);
    } else {
      rl[i] = logl(den);
    }
  }
  smx_attention_desc d = { DESC(1, 1, 1, LQ, Lk, 2, DV), .kind = kind, .scale = 1.0 };
  {
    const int isa = tu_isa_at;
    for (int th = 1; th <= 3; th += 2) {
      d.threads = th;
      smx_attention_plan *p = NULL;
      smx_attention_args a = { .q = q, .k = k, .v = v, .o = o, .lse = lse };
      CHECK(smx_attention_plan_create(&d, &p) == SMX_OK && smx_attention_run(p, &a, NULL, 0, NULL) == SMX_OK,
            "%s Lk %zu run", kn, Lk);
      smx_attention_plan_destroy(p);
      for (size_t i = 0; i < LQ; i++) {
        long double mx = 0;
        for (size_t x = 0; x < DV; x++) mx = fmaxl(mx, fabsl(ro[i * DV + x]));
        double err = 0;
        for (size_t x = 0; x < DV; x++) {   /* NaN counts as an infinite error (fmax would drop it) */
          double e = (double)fabsl((long double)o[i * DV + x] - ro[i * DV + x]);
          err = e > err || e != e ? (e != e ? INFINITY : e) : err;
        }
        CHECK(err <= 1e-5 * (double)mx + 1e-37, "%s Lk %zu %s %d threads row %zu: O error %g (max|O| %Lg)", kn, Lk,
              tu_isa_names[isa], th, i, err, mx);
        CHECK(fabsl((long double)lse[i] - rl[i]) <= 1e-5L * fmaxl(1, fabsl(rl[i])),
              "%s Lk %zu %s %d threads row %zu: lse %.9g, reference %.9Lg", kn, Lk, tu_isa_names[isa], th, i, lse[i], rl[i]);
      }
    }
  }
  free(k);
  free(v);
}

int main(void) {
  tu_isa_start(3);
  if (tu_isa_once) test_float_range();
  test_far_below(SMX_ATTN_SOFTPICK, 200);
  test_far_below(SMX_ATTN_SOFTPICK, 4500);
  test_far_below(SMX_ATTN_SIGMOID, 200);
  test_far_below(SMX_ATTN_SIGMOID, 4500);
  return tu_finish("test_attention_options");
}
