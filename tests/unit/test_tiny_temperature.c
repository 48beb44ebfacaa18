/*
 * Extreme temperatures, down to the smallest subnormal double: every dtype
 * (f32, f16, bf16, f64) gives the T -> 0 limit that smx.h promises for any
 * positive finite T. Softmax puts 1/k on the k entries equal to the max and
 * +0 elsewhere; log-softmax and log-sum-exp are the f64 results rounded to
 * float (-log k at the max, -inf or a huge negative elsewhere; max/T + log k,
 * +-inf once that leaves the float range). ctest runs it under every
 * SMX_MAX_ISA, and the f32-arithmetic entry points that take a temperature
 * (top-k, sampling, cross-entropy, backward, Gumbel-softmax) are checked too.
 */
#include "../common/test_util.h"
#include "math/half_scalar.h"

static const double temps[] = { 5e-324, 1e-310, 8e-309, 1e-308, DBL_MIN, 1e-300, 1e-200, 1e-100, 1e-40 };
#define NT (sizeof temps / sizeof temps[0])

/* rows exactly representable in f16 and bf16; the last f32 row has a near-tie */
#define NR 5
#define NC 8
static const float rows_in[NR][NC] = {
  { 1, 3, 3, -2, -INFINITY, 2.75f, -100, 3 },     /* k = 3, max 3 */
  { 0, -1, 0, -5, -0.5f, -INFINITY, -2, -3 },     /* k = 2, max 0: lse = log 2 */
  { -7, -9, -8, -7.5f, -INFINITY, -10, -12, -11 },/* k = 1, max < 0 */
  { 65504, 0, -65504, 1, 2, 65504, 4, 5 },        /* k = 2, the f16 range */
  { 1, 1, 1, 1, 1, 1, 1, 1 },                      /* k = 8 */
};

static int same(double got, double want, double tol) {
  if (want != want) return got != got;
  if (isinf(want) || want == 0.0) return got == want;
  return fabs(got - want) <= tol * fabs(want);
}

static size_t ties(const float *x, size_t n, float *m) {
  float mx = -INFINITY;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
  for (size_t i = 0; i < n; i++) k += x[i] == mx;
  *m = mx;
  return k;
}

/* f64 first: its softmax must be the limit, its log-softmax / lse the oracle */
static void check_row(const float *xf, size_t n, double t, smx_algo algo) {
  smx_options o = { algo, t, 0, 1, NULL };
  double xd[64], yd[64], ld[64], lsed;
  float y[64], l[64], lse;
  uint16_t h[64], hy[64];
  float m;
  size_t k = ties(xf, n, &m);
  for (size_t i = 0; i < n; i++) xd[i] = xf[i];
  CHECK(smx_softmax_f64(xd, yd, n, &o) == SMX_OK, "f64 softmax status");
  CHECK(smx_log_softmax_f64(xd, ld, n, &o) == SMX_OK, "f64 log-softmax status");
  CHECK(smx_logsumexp_f64(xd, &lsed, n, &o) == SMX_OK, "f64 lse status");
  for (size_t i = 0; i < n; i++)
    CHECK(yd[i] == (xf[i] == m ? 1.0 / (double)k : 0.0), "f64 T=%g algo %d softmax[%zu] = %g", t, algo, i, yd[i]);

  CHECK(smx_softmax_f32(xf, y, n, &o) == SMX_OK, "f32 softmax status");
  CHECK(smx_log_softmax_f32(xf, l, n, &o) == SMX_OK, "f32 log-softmax status");
  CHECK(smx_logsumexp_f32(xf, &lse, n, &o) == SMX_OK, "f32 lse status");
  for (size_t i = 0; i < n; i++) {
    CHECK(same(y[i], (float)yd[i], 1e-6), "f32 T=%g algo %d softmax[%zu] = %g, f64 %g", t, algo, i, y[i], yd[i]);
    CHECK(same(l[i], (float)ld[i], 4e-7), "f32 T=%g algo %d log-softmax[%zu] = %g, f64 %g", t, algo, i, l[i], ld[i]);
  }
  CHECK(same(lse, (float)lsed, 4e-7), "f32 T=%g algo %d lse = %g, f64 %g", t, algo, lse, lsed);

  for (int bf = 0; bf < 2; bf++) {
    const char *nm = bf ? "bf16" : "f16";
    for (size_t i = 0; i < n; i++) h[i] = bf ? smx_f32_to_bf16(xf[i]) : smx_f32_to_f16(xf[i]);
    smx_status s1 = bf ? smx_softmax_bf16(h, hy, n, &o) : smx_softmax_f16(h, hy, n, &o);
    CHECK(s1 == SMX_OK, "%s softmax status", nm);
    for (size_t i = 0; i < n; i++) {
      float v = bf ? smx_bf16_to_f32(hy[i]) : smx_f16_to_f32(hy[i]);
      float want = bf ? smx_bf16_to_f32(smx_f32_to_bf16((float)yd[i])) : smx_f16_to_f32(smx_f32_to_f16((float)yd[i]));
      CHECK(v == want, "%s T=%g algo %d softmax[%zu] = %g, want %g", nm, t, algo, i, v, want);
    }
    s1 = bf ? smx_log_softmax_bf16(h, hy, n, &o) : smx_log_softmax_f16(h, hy, n, &o);
    CHECK(s1 == SMX_OK, "%s log-softmax status", nm);
    for (size_t i = 0; i < n; i++) {
      float v = bf ? smx_bf16_to_f32(hy[i]) : smx_f16_to_f32(hy[i]);
      float want = bf ? smx_bf16_to_f32(smx_f32_to_bf16((float)ld[i])) : smx_f16_to_f32(smx_f32_to_f16((float)ld[i]));
      CHECK(same(v, want, bf ? 8e-3 : 1e-3), "%s T=%g algo %d log-softmax[%zu] = %g, want %g", nm, t, algo, i, v, want);
    }
    float hl;
    s1 = bf ? smx_logsumexp_bf16(h, &hl, n, &o) : smx_logsumexp_f16(h, &hl, n, &o);
    CHECK(s1 == SMX_OK && same(hl, (float)lsed, 4e-7), "%s T=%g algo %d lse = %g, f64 %g", nm, t, algo, hl, lsed);
  }
}

static void test_rows(void) {
  for (size_t ti = 0; ti < NT; ti++)
    for (int a = SMX_ALGO_AUTO; a <= SMX_ALGO_ONLINE; a++) {
      for (size_t r = 0; r < NR; r++) check_row(rows_in[r], NC, temps[ti], (smx_algo)a);
      /* f32 only: a near-tie one ulp below the max, and a long row through the chunked kernels */
      float near[3] = { 3.0f, nextafterf(3.0f, 0.0f), -1.0f };
      smx_options o = { (smx_algo)a, temps[ti], 0, 1, NULL };
      float y[3];
      CHECK(smx_softmax_f32(near, y, 3, &o) == SMX_OK && y[0] == 1.0f && y[1] == 0.0f && y[2] == 0.0f,
            "near tie T=%g algo %d: %g %g %g", temps[ti], a, y[0], y[1], y[2]);
      size_t n = 70000;
      float *x = malloc(n * sizeof *x), *yl = malloc(n * sizeof *yl);
      tu_rng g = { 7 + ti };
      for (size_t i = 0; i < n; i++) x[i] = tu_uniform_f(&g, -4.0f, 4.0f);
      x[12345] = 5.0f;
      CHECK(smx_softmax_f32(x, yl, n, &o) == SMX_OK, "long softmax status");
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) bad += yl[i] != (i == 12345 ? 1.0f : 0.0f);
      CHECK(bad == 0, "long row T=%g algo %d: %zu entries off the limit", temps[ti], a, bad);
      free(x);
      free(yl);
    }
}

/* The other f32-arithmetic entry points that take a temperature. */
static void test_lm_paths(void) {
  const float x[6] = { 1, 3, 3, -2, -INFINITY, 2.75f };
  for (size_t ti = 0; ti < NT; ti++) {
    double t = temps[ti];
    smx_options o = { SMX_ALGO_AUTO, t, 0, 1, NULL };
    float v[2];
    int64_t idx[2];
    CHECK(smx_softmax_topk_f32(x, v, idx, 6, 2, &o) == SMX_OK && v[0] == 0.5f && v[1] == 0.5f,
          "softmax_topk T=%g: %g %g", t, v[0], v[1]);
    CHECK(smx_log_softmax_topk_f32(x, v, idx, 6, 2, &o) == SMX_OK && same(v[0], -0.6931472f, 1e-6) &&
              same(v[1], -0.6931472f, 1e-6), "log_softmax_topk T=%g: %g %g", t, v[0], v[1]);

    smx_sample_params sp = { 0 };
    sp.temperature = t;
    sp.method = SMX_SAMPLE_MULTINOMIAL;
    int64_t tok = -1;
    CHECK(smx_sample_rows_f32(x, 6, &tok, 1, 6, &sp, 1, 0, NULL) == SMX_OK && (tok == 1 || tok == 2),
          "sample T=%g: token %lld", t, (long long)tok);

    tu_loss_opts xo = TU_LOSS_OPTS_INIT;
    xo.o.temperature = t;
    int64_t tg[2] = { 1, 0 };
    float loss[2], grad[12], lse[2];
    float x2[12];
    memcpy(x2, x, sizeof x);
    memcpy(x2 + 6, x, sizeof x);
    xo.e.reduction = SMX_REDUCTION_NONE;
    CHECK(smx_cross_entropy_f32(x2, 6, tg, loss, grad, 6, lse, 2, 6, tu_lo(&xo)) == SMX_OK,
          "xent status T=%g", t);
    /* target at one of the two maxima: p = 1/2, loss log 2; off the max: 2/T, beyond the float range */
    CHECK(same(loss[0], 0.6931472f, 1e-6) && loss[1] == INFINITY, "xent T=%g: %g %g", t, loss[0], loss[1]);
    size_t nan = 0;
    for (int i = 0; i < 12; i++) nan += grad[i] != grad[i];
    CHECK(nan == 0, "xent grad T=%g: %zu NaN", t, nan);

    /* backward of a one-hot softmax output: every entry is 0 (masked, or the max with dy = dot) */
    const float yb[4] = { 0, 1, 0, 0 }, dy[4] = { 0.5f, 0.25f, -1, 0 };
    float dx[4];
    CHECK(smx_softmax_backward_f32(yb, dy, dx, 4, &o) == SMX_OK, "backward status");
    CHECK(dx[0] == 0 && dx[1] == 0 && dx[2] == 0 && dx[3] == 0, "softmax backward T=%g: %g %g %g %g", t, dx[0],
          dx[1], dx[2], dx[3]);
    const float lyb[4] = { -INFINITY, 0, -INFINITY, -INFINITY }, ldy[4] = { 0, 0, 0, 0 };
    CHECK(smx_log_softmax_backward_f32(lyb, ldy, dx, 4, &o) == SMX_OK, "log backward status");
    CHECK(dx[0] == 0 && dx[1] == 0 && dx[2] == 0 && dx[3] == 0, "log-softmax backward T=%g: %g %g %g %g", t,
          dx[0], dx[1], dx[2], dx[3]);
    CHECK(smx_gumbel_softmax_backward_rows_f32(yb, 4, dy, 4, dx, 4, 1, 4, t, NULL) == SMX_OK, "gumbel bwd status");
    CHECK(dx[0] == 0 && dx[1] == 0 && dx[2] == 0 && dx[3] == 0, "gumbel backward T=%g: %g %g %g %g", t, dx[0],
          dx[1], dx[2], dx[3]);

    float soft[6];
    CHECK(smx_gumbel_softmax_rows_f32(x, 6, soft, 6, 1, 6, t, 3, 0, NULL) == SMX_OK, "gumbel status");
    size_t ones = 0, zeros = 0;
    for (int i = 0; i < 6; i++) ones += soft[i] == 1.0f, zeros += soft[i] == 0.0f;
    CHECK(ones == 1 && zeros == 5, "gumbel soft T=%g: not one-hot", t);
  }
}

int main(void) {
  test_rows();
  test_lm_paths();
  return tu_finish("test_tiny_temperature");
}
