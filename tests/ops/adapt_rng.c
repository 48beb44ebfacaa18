/*
 * Adapters of the operations that draw noise, for the op test driver (references: ref_rng.c), keyed by
 * OPS_RNG_SEED and OPS_RNG_STEP:
 *  - Gumbel-softmax soft, hard and backward: tau is the driver's temperature (0: 1), passed as the op's own
 *    parameter with the options' temperature left at 0, so that the driver's bad temperatures are bad taus;
 *  - Noisy Softmax with reduction NONE, mode ANNEALED, alpha OPS_NOISY_ALPHA, the norms r = |x_t| + 1
 *    (rounded to the logits' type; 0 where x_t is not finite), so that A = r - x_t is 1 for x_t >= 0 and
 *    grows with |x_t| below: the loss, its gradient with the loss kept aside.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

static double gumbel_tau(const op_call *c, smx_options *o) {
  if (c->opt) *o = *c->opt;
  else memset(o, 0, sizeof *o);
  double tau = o->temperature == 0.0 ? 1.0 : o->temperature;
  o->temperature = 0.0;
  return tau;
}

#define GUMBEL(sfx, T)                                                                                          \
  smx_status a_gumbel_##sfx(const op_call *c) {                                                                 \
    smx_options o;                                                                                              \
    double tau = gumbel_tau(c, &o);                                                                             \
    return smx_gumbel_softmax_rows_##sfx((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, c->rows,    \
                                         c->cols, tau, OPS_RNG_SEED, OPS_RNG_STEP, &o);                         \
  }                                                                                                             \
  smx_status a_gumbel_hard_##sfx(const op_call *c) {                                                            \
    smx_options o;                                                                                              \
    double tau = gumbel_tau(c, &o);                                                                             \
    return smx_gumbel_softmax_hard_rows_##sfx((const T *)c->in[0], c->ld_in[0], (T *)c->out, c->ld_out, NULL,   \
                                              0, c->rows, c->cols, tau, OPS_RNG_SEED, OPS_RNG_STEP, &o);        \
  }                                                                                                             \
  smx_status a_gumbel_backward_##sfx(const op_call *c) {                                                        \
    smx_options o;                                                                                              \
    double tau = gumbel_tau(c, &o);                                                                             \
    return smx_gumbel_softmax_backward_rows_##sfx((const T *)c->in[0], c->ld_in[0], (const T *)c->in[1],        \
                                                  c->ld_in[1], (T *)c->out, c->ld_out, c->rows, c->cols, tau,   \
                                                  &o);                                                          \
  }
GUMBEL(f32, float)
GUMBEL(f16, uint16_t)
GUMBEL(bf16, uint16_t)

/* The norms of a call, or NULL where its arguments are not readable as given (the bad-argument cases: the
 * library refuses NULL norms in ANNEALED mode as it refuses them). */
static void *noisy_norms(const op_call *c, dtype dt) {
  size_t es = dt_size(dt);
  if (!c->in[0] || !c->targets || c->rows == 0 || c->rows > ((size_t)1 << 24) || c->ld_in[0] < c->cols ||
      c->ld_in[0] > ((size_t)1 << 30) / c->rows)
    return NULL;
  void *r = malloc(c->rows * es);
  for (size_t q = 0; r && q < c->rows; q++) {
    int64_t t = c->targets[q];
    long double x = t >= 0 && (size_t)t < c->cols ? dt_get(dt, c->in[0], q * c->ld_in[0] + (size_t)t) : 0.0L;
    dt_put(dt, r, q, isfinite(x) ? fabsl(x) + 1.0L : 0.0L);
  }
  return r;
}

#define NOISY(sfx, T, DT)                                                                                       \
  static smx_status noisy_##sfx(const op_call *c, int want_grad) {                                              \
    smx_loss_ext e = SMX_LOSS_EXT_INIT;                                                                         \
    smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, &e };                                                           \
    e.reduction = SMX_REDUCTION_NONE;                                                                           \
    if (c->opt) {                                                                                               \
      o.temperature = c->opt->temperature;   /* the library refuses any but 0 and 1 */                          \
      o.threads = c->opt->threads;                                                                              \
    }                                                                                                           \
    T scratch[64];                                                                                              \
    T *loss = !want_grad ? (T *)c->out : c->rows <= 64 || c->rows > ((size_t)1 << 24) ? scratch                \
                                                                : malloc(c->rows * sizeof(T));                  \
    T *norms = noisy_norms(c, DT);                                                                              \
    smx_status s = want_grad && !loss ? SMX_E_NOMEM                                                             \
                   : smx_noisy_softmax_loss_##sfx((const T *)c->in[0], c->ld_in[0], c->targets, norms, loss,    \
                                                  want_grad ? (T *)c->out : NULL, want_grad ? c->ld_out : 0,    \
                                                  NULL, c->rows, c->cols, OPS_NOISY_ALPHA, OPS_RNG_SEED,        \
                                                  OPS_RNG_STEP, 0, SMX_NOISY_ANNEALED, &o);                     \
    if (want_grad && loss != scratch) free(loss);                                                               \
    free(norms);                                                                                                \
    return s;                                                                                                   \
  }                                                                                                             \
  smx_status a_noisy_##sfx##_loss(const op_call *c) { return noisy_##sfx(c, 0); }                               \
  smx_status a_noisy_##sfx##_grad(const op_call *c) { return noisy_##sfx(c, 1); }
NOISY(f32, float, DT_F32)
NOISY(f64, double, DT_F64)

/* The mixture of softmaxes (smx_multi.h) at K = 2: component 0 of a row is in[0], component 1 in[1]
 * (prep_mixture: the row reversed), the mixture logits (OPS_MIX_W0, OPS_MIX_W1). The library reads its
 * rows*K x cols layout from a copy the adapter makes (exact size, so ASan sees an overread); the output is
 * the driver's. Arguments that are not readable as given (the bad-argument cases) go to the library as they
 * are, component 0 standing for x. */
/* whether the output overlaps input k (then the library must see that input itself, to refuse it) */
static int out_overlap(const op_call *c, int k, size_t es, size_t out_span) {
  const char *i0 = c->in[k], *i1 = i0 + ((c->rows - 1) * c->ld_in[k] + c->cols) * es;
  const char *o0 = c->out, *o1 = o0 + out_span * es;
  return o0 && o0 < i1 && i0 < o1;
}
static int mix_overlap(const op_call *c, int k, size_t es) {
  return out_overlap(c, k, es, (c->rows - 1) * c->ld_out + c->cols);
}
#define MIX(sfx, T)                                                                                             \
  smx_status a_mixture_##sfx(const op_call *c) {                                                                \
    size_t R = c->rows, n = c->cols;                                                                            \
    T w[2 * 64];                                                                                                \
    int ok = c->in[0] && c->in[1] && R > 0 && R <= 64 && n <= ((size_t)1 << 24) && c->ld_in[0] >= n &&          \
             c->ld_in[1] >= n && c->ld_in[0] <= ((size_t)1 << 26) && c->ld_in[1] <= ((size_t)1 << 26);          \
    for (int k = 0; ok && k < 2; k++) ok = !mix_overlap(c, k, sizeof(T));                                      \
    for (size_t q = 0; q < 64; q++) { w[2 * q] = (T)OPS_MIX_W0; w[2 * q + 1] = (T)OPS_MIX_W1; }                 \
    if (!ok) return smx_mixture_log_softmax_rows_##sfx(c->in[1] ? (const T *)c->in[0] : NULL, c->ld_in[0], w, 2, (T *)c->out, \
                                                       c->ld_out, R, 2, n, c->opt);                             \
    T *x = malloc(2 * R * n * sizeof(T));                                                                       \
    if (!x) return SMX_E_NOMEM;                                                                                 \
    for (size_t q = 0; q < R; q++)                                                                              \
      for (int k = 0; k < 2; k++) memcpy(x + (2 * q + (size_t)k) * n, (const T *)c->in[k] + q * c->ld_in[k], n * sizeof(T)); \
    smx_status s = smx_mixture_log_softmax_rows_##sfx(x, n, w, 2, (T *)c->out, c->ld_out, R, 2, n, c->opt);     \
    free(x);                                                                                                    \
    return s;                                                                                                   \
  }
MIX(f32, float)
MIX(f64, double)

/* Its backward at K = 2: in[0] is component 0 (component 1 is it reversed, as the reference reads it), in[1] is dy,
 * the same mixture logits. which: 0 / 1 the dx of that component, 2 / 3 dw_0 / dw_1 (a NULL output: the dx-only
 * call, dw NULL). The library reads x and writes dx and dw in copies of exact size (ASan sees an overrun); dy is
 * the driver's own buffer. Arguments not readable as given go to the library as they are, the output standing
 * for dx (dx rows) or dw (dw rows). */
#define MIX_BWD(sfx, T)                                                                                         \
  static smx_status mix_bwd_##sfx(const op_call *c, int which) {                                                \
    size_t R = c->rows, n = c->cols;                                                                            \
    T w[2 * 64], dwl[2 * 64];                                                                                   \
    for (size_t q = 0; q < 64; q++) { w[2 * q] = (T)OPS_MIX_W0; w[2 * q + 1] = (T)OPS_MIX_W1; }                 \
    int ok = c->in[0] && c->in[1] && R > 0 && R <= 64 && n <= ((size_t)1 << 24) && c->ld_in[0] >= n &&          \
             c->ld_in[1] >= n && c->ld_in[0] <= ((size_t)1 << 26) && c->ld_in[1] <= ((size_t)1 << 26) &&       \
             (which >= 2 || (c->out && c->ld_out >= n));                                                        \
    for (int k = 0; ok && k < 2; k++)                                                                           \
      ok = !out_overlap(c, k, sizeof(T), which < 2 ? (R - 1) * c->ld_out + n : R);                              \
    if (!ok) {                                                                                                  \
      T *dx = which < 2 ? c->out : R <= 64 && n <= 4096 ? malloc(2 * R * n * sizeof(T) + 1) : NULL;            \
      smx_status s = smx_mixture_log_softmax_backward_rows_##sfx(                                               \
          c->in[0], c->ld_in[0], w, 2, c->in[1], c->ld_in[1], dx, which < 2 ? c->ld_out : n,                   \
          which < 2 ? NULL : (T *)c->out, 2, R, 2, n, c->opt);                                                  \
      if (which >= 2) free(dx);                                                                                 \
      return s;                                                                                                 \
    }                                                                                                           \
    T *x = malloc(2 * R * n * sizeof(T) + 1), *dx = malloc(2 * R * n * sizeof(T) + 1);                          \
    if (!x || !dx) { free(x); free(dx); return SMX_E_NOMEM; }                                                   \
    for (size_t q = 0; q < R; q++) {                                                                            \
      const T *r0 = (const T *)c->in[0] + q * c->ld_in[0];                                                      \
      memcpy(x + 2 * q * n, r0, n * sizeof(T));                                                                 \
      for (size_t i = 0; i < n; i++) x[(2 * q + 1) * n + i] = r0[n - 1 - i];                                    \
    }                                                                                                           \
    smx_status s = smx_mixture_log_softmax_backward_rows_##sfx(x, n, w, 2, c->in[1], c->ld_in[1], dx, n,        \
                                                               which < 2 || c->out ? dwl : NULL, 2, R, 2, n,   \
                                                               c->opt);                                        \
    for (size_t q = 0; s == SMX_OK && q < R; q++) {                                                             \
      if (which < 2) memcpy((T *)c->out + q * c->ld_out, dx + (2 * q + (size_t)which) * n, n * sizeof(T));     \
      else if (c->out) ((T *)c->out)[q] = dwl[2 * q + (size_t)which - 2];                                       \
    }                                                                                                           \
    free(x);                                                                                                    \
    free(dx);                                                                                                   \
    return s;                                                                                                   \
  }                                                                                                             \
  smx_status a_mixture_dx0_##sfx(const op_call *c) { return mix_bwd_##sfx(c, 0); }                              \
  smx_status a_mixture_dw1_##sfx(const op_call *c) { return mix_bwd_##sfx(c, 3); }
MIX_BWD(f32, float)
MIX_BWD(f64, double)
