/*
 * The f64 entry points' contract: argument checks (nothing written on
 * error), empty rows, the special-value policy (exact values), in-place and
 * strided rows and bitwise thread-count independence, for every ISA x
 * algorithm (guard pages: tests/ops/).
 */
#include "../common/test_isa.h"

static const double SENT = 12345.0;

static void fill(double *p, size_t n, double v) { for (size_t i = 0; i < n; i++) p[i] = v; }
static int same_d(double a, double b) { return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0; }
static int untouched(const double *p, size_t n) {
  for (size_t i = 0; i < n; i++) if (!same_d(p[i], SENT)) return 0;
  return 1;
}

static void test_bad_arguments(void) {
  double x[64], y[64], out[4];
  fill(x, 64, 1.0);
  smx_options o = { 0 };
  double bad_t[] = { -1.0, NAN, INFINITY, -INFINITY, -0.5 };
  for (size_t i = 0; i < sizeof bad_t / sizeof bad_t[0]; i++) {
    o.temperature = bad_t[i];
    fill(y, 64, SENT);
    CHECK(smx_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG && untouched(y, 64), "temperature %g", bad_t[i]);
    CHECK(smx_log_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG && untouched(y, 64), "temperature %g", bad_t[i]);
    CHECK(smx_softmax_rows_f64(x, 8, y, 8, 2, 8, &o) == SMX_E_INVALID_ARG && untouched(y, 64), "rows T %g",
          bad_t[i]);
    fill(out, 4, SENT);
    CHECK(smx_logsumexp_f64(x, out, 8, &o) == SMX_E_INVALID_ARG && untouched(out, 4), "temperature %g", bad_t[i]);
    CHECK(smx_logsumexp_rows_f64(x, 8, out, 2, 8, &o) == SMX_E_INVALID_ARG && untouched(out, 4), "rows T %g",
          bad_t[i]);
  }
  o.temperature = 0;
  o.algo = (smx_algo)9;
  CHECK(smx_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG, "bad algo");
  o.algo = SMX_ALGO_AUTO;
  o.flags = 0x80000000u;
  CHECK(smx_log_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG, "unknown flag");
  o.flags = SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES;
  CHECK(smx_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG, "contradictory store flags");
  o.flags = 0;
  o.threads = -1;
  CHECK(smx_softmax_f64(x, y, 8, &o) == SMX_E_INVALID_ARG, "negative threads");

  fill(y, 64, SENT);
  fill(out, 4, SENT);
  CHECK(smx_softmax_f64(NULL, y, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "null x");
  CHECK(smx_softmax_f64(x, NULL, 8, NULL) == SMX_E_INVALID_ARG, "null y");
  CHECK(smx_log_softmax_f64(NULL, y, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "null x");
  CHECK(smx_logsumexp_f64(x, NULL, 8, NULL) == SMX_E_INVALID_ARG, "null out");
  CHECK(smx_logsumexp_f64(NULL, out, 8, NULL) == SMX_E_INVALID_ARG && untouched(out, 4), "null x lse");
  CHECK(smx_logsumexp_rows_f64(NULL, 8, out, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(out, 4), "null x rows");
  /* ld < cols */
  CHECK(smx_softmax_rows_f64(x, 4, y, 8, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "ldx < cols");
  CHECK(smx_log_softmax_rows_f64(x, 8, y, 4, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "ldy < cols");
  CHECK(smx_logsumexp_rows_f64(x, 4, out, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(out, 4), "lse ldx");
  /* partial overlap of x and y (in-place with another stride is also rejected) */
  double buf[64];
  fill(buf, 64, 1.0);
  CHECK(smx_softmax_f64(buf, buf + 1, 8, NULL) == SMX_E_INVALID_ARG && buf[8] == 1.0, "overlap");
  CHECK(smx_softmax_rows_f64(buf, 8, buf, 9, 2, 8, NULL) == SMX_E_INVALID_ARG && buf[0] == 1.0,
        "in place with other ld");
  CHECK(smx_logsumexp_f64(buf, buf + 7, 8, NULL) == SMX_E_INVALID_ARG && buf[7] == 1.0, "lse out overlaps x");
  /* size products that overflow */
  CHECK(smx_softmax_rows_f64(x, SIZE_MAX / 4, y, SIZE_MAX / 4, 3, 8, NULL) == SMX_E_INVALID_ARG, "span overflow");
  CHECK(smx_softmax_f64(x, y, SIZE_MAX / 8 + 1, NULL) == SMX_E_INVALID_ARG, "n * 8 overflows");
  CHECK(smx_logsumexp_rows_f64(x, 8, out, SIZE_MAX / 8 + 1, 8, NULL) == SMX_E_INVALID_ARG, "rows * 8 overflows");
}

static void test_empty(void) {
  double y[4], out[3];
  fill(y, 4, SENT);
  CHECK(smx_softmax_f64(NULL, NULL, 0, NULL) == SMX_OK, "n=0 softmax");
  CHECK(smx_log_softmax_f64(NULL, y, 0, NULL) == SMX_OK && untouched(y, 4), "n=0 log-softmax");
  CHECK(smx_softmax_rows_f64(NULL, 0, NULL, 0, 5, 0, NULL) == SMX_OK, "cols=0");
  CHECK(smx_softmax_rows_f64(NULL, 3, NULL, 3, 0, 3, NULL) == SMX_OK, "rows=0");
  fill(out, 3, SENT);
  CHECK(smx_logsumexp_f64(NULL, out, 0, NULL) == SMX_OK && out[0] == -INFINITY && same_d(out[1], SENT), "lse n=0");
  fill(out, 3, SENT);
  CHECK(smx_logsumexp_rows_f64(NULL, 0, out, 3, 0, NULL) == SMX_OK && out[0] == -INFINITY && out[2] == -INFINITY,
        "lse rows of 0 cols");
}

/* Exact policy outputs on every ISA x algorithm x flag */
static void test_policy(void) {
  {
    const int isa = tu_isa_at;
    for (int a = 0; a < 3; a++) {
      for (size_t n = 1; n <= 40; n += 13) {
        double x[64], y[64], lse;
        smx_options o = { tu_algos[a], 0, 0, 1, NULL };
        /* NaN anywhere: all NaN */
        for (size_t i = 0; i < n; i++) x[i] = (double)i;
        x[n / 2] = NAN;
        CHECK(smx_softmax_f64(x, y, n, &o) == SMX_OK, "nan");
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= y[i] != y[i];
        CHECK(ok, "NaN row softmax %s %s n=%zu", tu_isa_names[isa], tu_algo_names[tu_algos[a]], n);
        smx_log_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= y[i] != y[i];
        CHECK(ok, "NaN row log-softmax");
        smx_logsumexp_f64(x, &lse, n, &o);
        CHECK(lse != lse, "NaN row lse");
        /* +inf entries: 1/k and 0, lse +inf, log-softmax -log k and -inf */
        for (size_t i = 0; i < n; i++) x[i] = (i % 3 == 0) ? INFINITY : -(double)i;
        size_t k = (n + 2) / 3;
        smx_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= (i % 3 == 0) ? y[i] == 1.0 / (double)k : same_d(y[i], 0.0);
        CHECK(ok, "+inf softmax %s %s n=%zu", tu_isa_names[isa], tu_algo_names[tu_algos[a]], n);
        smx_log_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= (i % 3 == 0) ? y[i] == -log((double)k) : y[i] == -INFINITY;
        CHECK(ok, "+inf log-softmax");
        smx_logsumexp_f64(x, &lse, n, &o);
        CHECK(lse == INFINITY, "+inf lse");
        /* all -inf: 0 / -inf / -inf, or NaN with the flag */
        for (size_t i = 0; i < n; i++) x[i] = -INFINITY;
        smx_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= same_d(y[i], 0.0);
        CHECK(ok, "masked softmax");
        smx_log_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= y[i] == -INFINITY;
        CHECK(ok, "masked log-softmax");
        smx_logsumexp_f64(x, &lse, n, &o);
        CHECK(lse == -INFINITY, "masked lse");
        o.flags = SMX_FLAG_MASKED_ROW_NAN;
        smx_softmax_f64(x, y, n, &o);
        ok = 1;
        for (size_t i = 0; i < n; i++) ok &= y[i] != y[i];
        CHECK(ok, "masked NaN flag softmax");
        smx_logsumexp_f64(x, &lse, n, &o);
        CHECK(lse != lse, "masked NaN flag lse");
        /* one -inf entry: exactly +0, the rest as if absent */
        for (size_t i = 0; i < n; i++) x[i] = 0.0;
        x[0] = -INFINITY;
        o.flags = 0;
        smx_softmax_f64(x, y, n, &o);
        ok = same_d(y[0], 0.0);
        for (size_t i = 1; i < n; i++) ok &= fabs(y[i] - 1.0 / (double)(n - 1)) <= 4e-16 / (double)(n - 1);
        if (n > 1) CHECK(ok, "-inf entry %s %s n=%zu", tu_isa_names[isa], tu_algo_names[tu_algos[a]], n);
      }
    }
  }
}

/* In-place, strides and rows forms agree bitwise with the single-row calls. */
static void test_inplace_strides(void) {
  enum { R = 5, C = 37, LD = 41 };
  double x[R * LD], y[R * LD], row[C], ref[C], out[R];
  tu_rng rng = { 7 };
  for (size_t i = 0; i < R * LD; i++) x[i] = tu_uniform(&rng) * 40 - 20;
  {
    const int isa = tu_isa_at;
    for (int a = 0; a < 3; a++) {
      smx_options o = { tu_algos[a], 0.7, 0, 1, NULL };
      fill(y, R * LD, SENT);
      CHECK(smx_softmax_rows_f64(x, LD, y, LD, R, C, &o) == SMX_OK, "rows");
      int ok = 1;
      for (size_t r = 0; r < R; r++) {
        smx_softmax_f64(x + r * LD, ref, C, &o);
        for (size_t i = 0; i < C; i++) ok &= same_d(ref[i], y[r * LD + i]);
        for (size_t i = C; i < LD; i++) ok &= same_d(y[r * LD + i], SENT);   /* the gaps are not ours */
        memcpy(row, x + r * LD, sizeof row);
        smx_softmax_f64(row, row, C, &o);   /* in place */
        for (size_t i = 0; i < C; i++) ok &= same_d(ref[i], row[i]);
      }
      CHECK(ok, "softmax rows/strides/in-place %s %s", tu_isa_names[isa], tu_algo_names[tu_algos[a]]);
      ok = 1;
      smx_log_softmax_rows_f64(x, LD, y, LD, R, C, &o);
      smx_logsumexp_rows_f64(x, LD, out, R, C, &o);
      for (size_t r = 0; r < R; r++) {
        double l;
        smx_log_softmax_f64(x + r * LD, ref, C, &o);
        for (size_t i = 0; i < C; i++) ok &= same_d(ref[i], y[r * LD + i]);
        smx_logsumexp_f64(x + r * LD, &l, C, &o);
        ok &= same_d(l, out[r]);
        memcpy(row, x + r * LD, sizeof row);
        smx_log_softmax_f64(row, row, C, &o);
        for (size_t i = 0; i < C; i++) ok &= same_d(ref[i], row[i]);
      }
      CHECK(ok, "log-softmax / lse rows %s %s", tu_isa_names[isa], tu_algo_names[tu_algos[a]]);
    }
  }
}

/* Bitwise identical for 1..4 threads: a split long row and a batch of rows. */
static void test_threads(void) {
  size_t n = ((size_t)1 << 21) + 12345;
  double *x = malloc(n * sizeof(double)), *y1 = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  tu_rng rng = { 99 };
  for (size_t i = 0; i < n; i++) x[i] = tu_uniform(&rng) * 30 - 15;
  {
    const int isa = tu_isa_at;
    for (int a = 0; a < 3; a++) {
      for (int op = 0; op < 2; op++) {
        double l1 = 0, l;
        for (int t = 1; t <= 4; t++) {
          smx_options o = { tu_algos[a], 0, 0, t, NULL };
          double *dst = t == 1 ? y1 : y;
          if (op == 0) smx_softmax_f64(x, dst, n, &o);
          else smx_log_softmax_f64(x, dst, n, &o);
          smx_logsumexp_f64(x, t == 1 ? &l1 : &l, n, &o);
          if (t > 1)
            CHECK(memcmp(y, y1, n * sizeof(double)) == 0 && same_d(l, l1), "threads=%d %s %s op %d", t,
                  tu_isa_names[isa], tu_algo_names[tu_algos[a]], op);
        }
      }
      /* batch: 300 rows of 1000 */
      for (int t = 1; t <= 3; t++) {
        smx_options o = { tu_algos[a], 0, 0, t, NULL };
        smx_softmax_rows_f64(x, 1000, t == 1 ? y1 : y, 1000, 300, 1000, &o);
        if (t > 1) CHECK(memcmp(y, y1, 300000 * sizeof(double)) == 0, "batch threads=%d", t);
      }
    }
  }
  free(x); free(y1); free(y);
}

int main(void) {
  tu_isa_start(3);
  if (tu_isa_once) {
    test_bad_arguments();
    test_empty();
  }
  test_policy();
  test_inplace_strides();
  test_threads();
  return tu_finish("test_f64");
}
