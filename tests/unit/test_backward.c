/*
 * Softmax and log-softmax backward: against long-double references (the
 * bounds of smx_grad.h) for every ISA, row length and temperature; against
 * finite differences of the forward in double; in place (dx == dy, dx == y);
 * thread-count independence; special values; f16 / bf16; log-softmax terms
 * exp(y) below FLT_MIN that a small T makes normal; bad arguments
 * leave dx untouched (guard pages: tests/ops/).
 */
#include "../common/test_isa.h"
#include "math/half_scalar.h"

#define EPS_F 0x1p-23

/* y = softmax(x/T) (or log-softmax) rounded from long double */
static void forward(const float *x, float *y, size_t n, double t, int logsm) {
  long double m;
  long double ld = tu_ref_logd(x, n, (float)t, &m);
  for (size_t i = 0; i < n; i++) {
    long double ls = ((long double)x[i] - m) / (long double)t - ld;
    y[i] = logsm ? (float)ls : (float)expl(ls);
  }
}

/* long-double reference of dx and the per-element bound of the header */
static long check_row(const float *y, const float *dy, const float *dx, size_t n, double t, int logsm, int half_u) {
  long double red = 0.0L;
  for (size_t i = 0; i < n; i++) red += logsm ? (long double)dy[i] : (long double)y[i] * dy[i];
  long bad = 0;
  for (size_t i = 0; i < n; i++) {
    long double ref, bound;
    if (logsm) {
      long double e = expl((long double)y[i]);
      ref = ((long double)dy[i] - e * red) / t;
      bound = 4 * EPS_F * (fabsl(dy[i]) + e * fabsl(red)) / t;
    } else {
      ref = (long double)y[i] * ((long double)dy[i] - red) / t;
      bound = 4 * EPS_F * fabsl(y[i]) * (fabsl(dy[i]) + fabsl(red)) / t;
    }
    bound += FLT_MIN * (1.0L + fabsl(red)) / t;   /* results in the subnormal range */
    if (half_u) bound += (half_u == 1 ? 0x1p-11 : 0x1p-8) * fabsl(ref) + (half_u == 1 ? 0x1p-25 : 0x1p-133);
    if (!(fabsl((long double)dx[i] - ref) <= bound)) {
      if (++bad < 4) fprintf(stderr, "  elem %zu of %zu: dx %.9g ref %.9Lg bound %.3Lg (y %.9g dy %.9g red %.9Lg)\n", i, n, dx[i], ref, bound, y[i], dy[i], red);
    }
  }
  return bad;
}

typedef smx_status (*bwd_rows_fn)(const float *, size_t, const float *, size_t, float *, size_t, size_t, size_t,
                                  const smx_options *);

static void test_values(void) {
  tu_rng rng = { 21 };
  static const size_t lens[] = { 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 129, 257, 1000, 4099, 70001 };
  bwd_rows_fn fns[2] = { smx_softmax_backward_rows_f32, smx_log_softmax_backward_rows_f32 };
  {
    const int isa = tu_isa_at;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      size_t n = lens[li];
      float *x = malloc(n * 4), *y = malloc(n * 4), *dy = malloc(n * 4), *dx = malloc(n * 4), *dx2 = malloc(n * 4);
      for (int fam = 0; fam < 3; fam++) {
        for (size_t i = 0; i < n; i++) {
          x[i] = fam == 1 ? tu_uniform_f(&rng, -100.0f, 100.0f) : tu_normal(&rng) * 3.0f;
          if (fam == 2 && tu_uniform(&rng) < 0.3) x[i] = -INFINITY;
          dy[i] = tu_normal(&rng);
        }
        if (fam == 2) x[0] = 1.0f;
        for (int logsm = 0; logsm < 2; logsm++) {
          for (int ti = 0; ti < 2; ti++) {
            double t = ti ? 0.6 : 1.0;
            forward(x, y, n, t, logsm);
            smx_options o = { SMX_ALGO_AUTO, ti ? t : 0.0, 0, 1, NULL };
            CHECK(fns[logsm](y, n, dy, n, dx, n, 1, n, &o) == SMX_OK, "status");
            long bad = check_row(y, dy, dx, n, t, logsm, 0);
            CHECK(bad == 0, "%s %s n %zu fam %d T %g: %ld beyond the bound", tu_isa_names[isa],
                  logsm ? "log-softmax" : "softmax", n, fam, t, bad);
            /* the single-row form and in place (over dy, then over y) give the same bits */
            memcpy(dx2, dy, n * 4);
            smx_status s = logsm ? smx_log_softmax_backward_f32(y, dx2, dx2, n, &o)
                                 : smx_softmax_backward_f32(y, dx2, dx2, n, &o);
            int same = s == SMX_OK;
            for (size_t i = 0; i < n; i++) same &= tu_same(dx[i], dx2[i]);
            memcpy(dx2, y, n * 4);
            s = fns[logsm](dx2, n, dy, n, dx2, n, 1, n, &o);
            same &= s == SMX_OK;
            for (size_t i = 0; i < n; i++) same &= tu_same(dx[i], dx2[i]);
            CHECK(same, "%s n %zu: in place differs", tu_isa_names[isa], n);
            if (fam == 2) {   /* masked entries */
              int ok = 1;
              for (size_t i = 0; i < n; i++)
                if (x[i] == -INFINITY) ok &= logsm ? fabs(dx[i] - dy[i] / t) <= EPS_F * fabs(dy[i] / t) : dx[i] == 0.0f;
              CHECK(ok, "%s n %zu: masked entries", tu_isa_names[isa], n);
            }
          }
        }
      }
      free(x); free(y); free(dy); free(dx); free(dx2);
    }
  }
}

/* f(x) = sum_i w_i * softmax(x/T)_i (or log-softmax), in double */
static double fwd_dot(const double *x, const double *w, size_t n, double t, int logsm) {
  double m = -INFINITY, d = 0.0, f = 0.0;
  for (size_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  for (size_t i = 0; i < n; i++) d += exp((x[i] - m) / t);
  for (size_t i = 0; i < n; i++) {
    double ls = (x[i] - m) / t - log(d);
    f += w[i] * (logsm ? ls : exp(ls));
  }
  return f;
}

static void test_finite_differences(void) {
  tu_rng rng = { 8 };
  enum { N = 13 };
  float x[N], y[N], dy[N], dx[N];
  double xd[N], w[N];
  for (int v = 0; v < 4; v++) {
    int logsm = v & 1;
    double t = v >= 2 ? 0.7 : 1.0;
    for (int i = 0; i < N; i++) { x[i] = tu_normal(&rng) * 2.0f; dy[i] = tu_normal(&rng); xd[i] = x[i]; w[i] = dy[i]; }
    forward(x, y, N, t, logsm);
    smx_options o = { SMX_ALGO_AUTO, t, 0, 1, NULL };
    CHECK((logsm ? smx_log_softmax_backward_f32(y, dy, dx, N, &o) : smx_softmax_backward_f32(y, dy, dx, N, &o)) ==
              SMX_OK,
          "fd status");
    long bad = 0;
    for (int i = 0; i < N; i++) {
      const double h = 1e-5;
      xd[i] = (double)x[i] + h;
      double up = fwd_dot(xd, w, N, t, logsm);
      xd[i] = (double)x[i] - h;
      double dn = fwd_dot(xd, w, N, t, logsm);
      xd[i] = x[i];
      double fd = (up - dn) / (2 * h);
      if (!(fabs(fd - dx[i]) <= 1e-6 + 1e-5 * fabs(fd))) {
        bad++;
        fprintf(stderr, "  fd %d elem %d: dx %.9g fd %.9g\n", v, i, dx[i], fd);
      }
    }
    CHECK(bad == 0, "variant %d: %ld elements differ from finite differences", v, bad);
  }
}

static void test_threads_and_specials(void) {
  tu_rng rng = { 4 };
  enum { R = 64, C = 1000 };
  float *y = malloc(R * C * 4), *dy = malloc(R * C * 4), *a = malloc(R * C * 4), *b = malloc(R * C * 4);
  for (int r = 0; r < R; r++) {
    for (int j = 0; j < C; j++) { a[j] = tu_normal(&rng); dy[r * C + j] = tu_normal(&rng); }
    forward(a, y + r * C, C, 1.0, 0);
  }
  smx_options o1 = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL }, o2 = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
  for (int logsm = 0; logsm < 2; logsm++) {
    bwd_rows_fn f = logsm ? smx_log_softmax_backward_rows_f32 : smx_softmax_backward_rows_f32;
    CHECK(f(y, C, dy, C, a, C, R, C, &o1) == SMX_OK && f(y, C, dy, C, b, C, R, C, &o2) == SMX_OK, "threads status");
    CHECK(!memcmp(a, b, (size_t)R * C * 4), "threads: 1 and 2 threads differ");
  }
  /* NaN in dy poisons the row through the reduction; other rows unaffected */
  float ys[2][4] = { { 0.1f, 0.2f, 0.3f, 0.4f }, { 0.25f, 0.25f, 0.25f, 0.25f } };
  float dys[2][4] = { { 1, NAN, 0, 0 }, { 1, 2, 3, 4 } }, dxs[2][4];
  CHECK(smx_softmax_backward_rows_f32(&ys[0][0], 4, &dys[0][0], 4, &dxs[0][0], 4, 2, 4, NULL) == SMX_OK &&
            isnan(dxs[0][0]) && isnan(dxs[0][3]) && dxs[1][0] == 0.25f * (1.0f - 2.5f),
        "NaN row: %g %g", dxs[0][0], dxs[1][0]);
  /* NaN in y, on every kernel set: softmax's reduction (y . dy) makes the
   * whole row NaN; log-softmax's reduces dy only, so just that entry is NaN */
  {
    const int isa = tu_isa_at;
    float yn[4] = { -1.0f, NAN, -2.0f, -3.0f }, dyn[4] = { 1, 2, 3, 4 }, dxn[4];
    for (int logsm = 0; logsm < 2; logsm++) {
      smx_status s = logsm ? smx_log_softmax_backward_f32(yn, dyn, dxn, 4, NULL)
                           : smx_softmax_backward_f32(yn, dyn, dxn, 4, NULL);
      CHECK(s == SMX_OK && isnan(dxn[1]) && (logsm ? isfinite(dxn[0]) && isfinite(dxn[3]) : isnan(dxn[0]) && isnan(dxn[3])),
            "NaN in y, %s, %s: dx %g %g %g",
            logsm ? "log-softmax" : "softmax", tu_isa_names[isa], dxn[0], dxn[1], dxn[3]);
    }
  }
  free(y); free(dy); free(a); free(b);
}

static void test_half(void) {
  tu_rng rng = { 13 };
  enum { R = 3, C = 3001 };
  uint16_t *yh = malloc(R * C * 2), *dyh = malloc(R * C * 2), *dxh = malloc(R * C * 2), *dxi = malloc(R * C * 2);
  float *x = malloc(C * 4), *yf = malloc(R * C * 4), *dyf = malloc(R * C * 4), *dxf = malloc(R * C * 4);
  for (int kind = 0; kind < 2; kind++) {
    for (int logsm = 0; logsm < 2; logsm++) {
      for (int r = 0; r < R; r++) {
        for (int j = 0; j < C; j++) x[j] = tu_normal(&rng) * 2.0f;
        forward(x, yf + r * C, C, 1.0, logsm);
        for (int j = 0; j < C; j++) {
          float dv = tu_normal(&rng);
          yh[r * C + j] = kind ? smx_f32_to_bf16(yf[r * C + j]) : smx_f32_to_f16(yf[r * C + j]);
          dyh[r * C + j] = kind ? smx_f32_to_bf16(dv) : smx_f32_to_f16(dv);
          yf[r * C + j] = kind ? smx_bf16_to_f32(yh[r * C + j]) : smx_f16_to_f32(yh[r * C + j]);
          dyf[r * C + j] = kind ? smx_bf16_to_f32(dyh[r * C + j]) : smx_f16_to_f32(dyh[r * C + j]);
        }
      }
      {
        const int isa = tu_isa_at;
        smx_status s;
        if (kind == 0) s = logsm ? smx_log_softmax_backward_rows_f16(yh, C, dyh, C, dxh, C, R, C, NULL)
                                 : smx_softmax_backward_rows_f16(yh, C, dyh, C, dxh, C, R, C, NULL);
        else s = logsm ? smx_log_softmax_backward_rows_bf16(yh, C, dyh, C, dxh, C, R, C, NULL)
                       : smx_softmax_backward_rows_bf16(yh, C, dyh, C, dxh, C, R, C, NULL);
        CHECK(s == SMX_OK, "half status");
        for (int i = 0; i < R * C; i++) dxf[i] = kind ? smx_bf16_to_f32(dxh[i]) : smx_f16_to_f32(dxh[i]);
        long bad = 0;
        for (int r = 0; r < R; r++) bad += check_row(yf + r * C, dyf + r * C, dxf + r * C, C, 1.0, logsm, kind + 1);
        CHECK(bad == 0, "%s %s %s: %ld beyond the bound", kind ? "bf16" : "f16", logsm ? "log-softmax" : "softmax",
              tu_isa_names[isa], bad);
        memcpy(dxi, dyh, R * C * 2);   /* in place over dy */
        if (kind == 0) s = logsm ? smx_log_softmax_backward_rows_f16(yh, C, dxi, C, dxi, C, R, C, NULL)
                                 : smx_softmax_backward_rows_f16(yh, C, dxi, C, dxi, C, R, C, NULL);
        else s = logsm ? smx_log_softmax_backward_rows_bf16(yh, C, dxi, C, dxi, C, R, C, NULL)
                       : smx_softmax_backward_rows_bf16(yh, C, dxi, C, dxi, C, R, C, NULL);
        CHECK(s == SMX_OK && !memcmp(dxi, dxh, R * C * 2), "half in place");
      }
    }
  }
  free(yh); free(dyh); free(dxh); free(dxi); free(x); free(yf); free(dyf); free(dxf);
}

static void test_bad_args(void) {
  float y[8] = { 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f }, dy[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, dx[8];
#define RESET() for (int i = 0; i < 8; i++) dx[i] = -7.0f
#define UNTOUCHED() (dx[0] == -7.0f && dx[7] == -7.0f)
#define BAD(w, call) do { RESET(); smx_status s_ = (call); CHECK(s_ == SMX_E_INVALID_ARG && UNTOUCHED(), "%s: status %d", w, s_); } while (0)
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  for (int logsm = 0; logsm < 2; logsm++) {
    bwd_rows_fn f = logsm ? smx_log_softmax_backward_rows_f32 : smx_softmax_backward_rows_f32;
    BAD("NULL y", f(NULL, 4, dy, 4, dx, 4, 2, 4, &o));
    BAD("NULL dy", f(y, 4, NULL, 4, dx, 4, 2, 4, &o));
    BAD("NULL dx", f(y, 4, dy, 4, NULL, 4, 2, 4, &o));
    BAD("ldy < cols", f(y, 3, dy, 4, dx, 4, 2, 4, &o));
    BAD("lddx < cols", f(y, 4, dy, 4, dx, 3, 2, 4, &o));
    BAD("dx overlaps dy", f(y, 4, dx, 4, dx + 1, 4, 1, 4, &o));
    BAD("dx in place, other ld", f(y, 4, dx, 4, dx, 3, 2, 3, &o));
    smx_options b = o;
    b.temperature = -1.0;
    BAD("T < 0", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    b.temperature = NAN;
    BAD("T NaN", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    b = o;
    b.threads = -2;
    BAD("threads", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    b = o;
    b.algo = (smx_algo)9;
    BAD("algo", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    b = o;
    b.flags = SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES;
    BAD("both store flags", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    b.flags = 0x80000000u;
    BAD("unknown flag", f(y, 4, dy, 4, dx, 4, 2, 4, &b));
    /* y, dy and dx one buffer: in place over both inputs is allowed */
    float one[8] = { 0.25f, 0.25f, 0.25f, 0.25f, 0.5f, 0.5f, 0.0f, 0.0f };
    CHECK(f(one, 4, one, 4, one, 4, 2, 4, &o) == SMX_OK, "dx == y == dy");
    RESET();
    CHECK(f(y, 4, dy, 4, dx, 4, 0, 4, &o) == SMX_OK && f(NULL, 0, NULL, 0, NULL, 0, 3, 0, &o) == SMX_OK && UNTOUCHED(),
          "empty is OK, nothing written");
  }
  uint16_t h[8] = { 0 };
  RESET();
  CHECK(smx_softmax_backward_rows_f16(h, 4, h, 4, h + 1, 4, 1, 4, NULL) == SMX_E_INVALID_ARG, "f16 overlap");
}

/* log-softmax entries whose exp(y_i) is below FLT_MIN (y_i < -87.3) over a long row's large sum at a small T:
 * dx_i = -exp(y_i) S / T is a normal number (the soak's bf16 row: 5.9e-38, returned as 0 by the AVX2 kernel, whose
 * 2^n came from the exponent field and was 0 below 2^-126). The header's bound, without the loose FLT_MIN (1 + |S|)
 * / T of check_row: only FLT_MIN for results below the normal range. */
static void test_tiny_exp_terms(void) {
  enum { N = 4096 };
  static float y[N], dy[N], dx[N];
  for (size_t i = 0; i < N; i++) {
    y[i] = i < N / 2 ? -10.0f : -80.0f - 60.0f * (float)(i - N / 2) / (float)(N / 2);   /* to -140 */
    dy[i] = i < N / 2 ? 1.0f : 0.0f;
  }
  static const double ts[] = { 1.0, 0.01, 1e-3 };
  for (int k = 0; k < 3; k++) {
    smx_options o = { SMX_ALGO_AUTO, ts[k], 0, 1, NULL };
    CHECK(smx_log_softmax_backward_f32(y, dy, dx, N, &o) == SMX_OK, "log-softmax backward");
    long double red = N / 2, t = ts[k];
    long bad = 0, normal = 0;
    for (size_t i = 0; i < N; i++) {
      long double e = expl((long double)y[i]), ref = ((long double)dy[i] - e * red) / t;
      long double bound = 4 * EPS_F * (fabsl(dy[i]) + e * red) / t + FLT_MIN;
      normal += fabsl(ref) >= FLT_MIN && y[i] < -87.4f;
      if (!(fabsl((long double)dx[i] - ref) <= bound) && ++bad < 4)
        fprintf(stderr, "  %s T=%g: y %.9g: dx %.9g ref %.9Lg bound %.3Lg\n", tu_isa_names[tu_isa_at], ts[k], y[i],
                dx[i], ref, bound);
    }
    CHECK(bad == 0, "%s T=%g: %ld of %d log-softmax dx with exp(y) below FLT_MIN outside the bound", tu_isa_names[tu_isa_at],
          ts[k], bad, N);
    CHECK(k == 0 || normal > 0, "the case has normal results from subnormal exp(y)");
  }
}

int main(void) {
  tu_isa_start(3);
  test_tiny_exp_terms();
  test_values();
  test_threads_and_specials();
  test_half();
  if (tu_isa_once) {
    test_finite_differences();
    test_bad_args();
  }
  return tu_finish("test_backward");
}
