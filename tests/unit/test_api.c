/*
 * API contract: status codes, argument checks (nothing written on error),
 * empty inputs, the special-value policy for every algorithm, in-place and
 * strided rows, and thread-count independence, at the one kernel set
 * SMX_MAX_ISA names (ctest runs it once per level, tests/common/test_isa.h).
 */
#include "../common/test_isa.h"

static const float SENT = 12345.0f;

static void fill(float *p, size_t n, float v) { for (size_t i = 0; i < n; i++) p[i] = v; }
static int untouched(const float *p, size_t n) {
  for (size_t i = 0; i < n; i++) if (!tu_same(p[i], SENT)) return 0;
  return 1;
}

static void test_status_and_version(void) {
  CHECK(strcmp(smx_status_string(SMX_OK), "ok") == 0, "ok string");
  smx_status all[] = { SMX_OK, SMX_E_INVALID_ARG, SMX_E_UNSUPPORTED, SMX_E_NOMEM, SMX_E_WORKSPACE_TOO_SMALL,
                       SMX_E_PARSE, SMX_E_IO, SMX_E_THREAD, SMX_E_INTERNAL };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    CHECK(strcmp(smx_status_string(all[i]), "unknown status") != 0, "status %d has a string", all[i]);
  CHECK(strcmp(smx_status_string((smx_status)12345), "unknown status") == 0, "unknown status");
  CHECK(SMX_OK == 0 && SMX_E_INVALID_ARG == 10 && SMX_E_UNSUPPORTED == 20 && SMX_E_NOMEM == 30, "stable numbers");
  CHECK(smx_version_number() == SMX_VERSION_NUMBER, "version number");
  CHECK(strlen(smx_version_string()) >= 5, "version string");
  const char *isa = smx_isa();
  CHECK(!strcmp(isa, "scalar") || !strcmp(isa, "avx2") || !strcmp(isa, "avx512") || !strcmp(isa, "avx512bf16"),
        "isa %s", isa);
  CHECK(smx_set_max_isa((smx_isa_level)7) == SMX_E_INVALID_ARG, "bad isa level");
  CHECK(smx_set_max_isa(SMX_ISA_SCALAR) == SMX_OK && !strcmp(smx_isa(), "scalar"), "cap to scalar");
  CHECK(smx_set_max_isa(SMX_ISA_AVX512) == SMX_OK, "uncap");
  /* avx512bf16 ranks above avx512 (its number 4 is above NEON's 3); on x86 a NEON cap is no cap */
  CHECK(smx_set_max_isa(SMX_ISA_AVX512BF16) == SMX_OK &&
            !strcmp(smx_isa(), tu_isa_names[tu_isa_top()]),
        "avx512bf16 cap gives the CPU's best, %s", smx_isa());
#if !defined(__aarch64__)
  if (smx_cpu_isa() == SMX_ISA_AVX512BF16) {
    CHECK(smx_set_max_isa(SMX_ISA_AVX512) == SMX_OK && !strcmp(smx_isa(), "avx512"), "cap below avx512bf16");
    CHECK(smx_set_max_isa(SMX_ISA_NEON) == SMX_OK && !strcmp(smx_isa(), "avx512bf16"), "NEON is no cap on x86");
  }
#endif
  smx_set_max_isa(tu_isas[tu_isa_at]);
}

static void test_bad_arguments(void) {
  float x[64], y[64], out[4];
  fill(x, 64, 1.0f);
  smx_options o = { 0 };
  struct { float t; } bad_t[] = { { -1.0f }, { NAN }, { INFINITY }, { -INFINITY }, { -0.5f } };
  for (size_t i = 0; i < sizeof bad_t / sizeof bad_t[0]; i++) {
    o.temperature = bad_t[i].t;
    fill(y, 64, SENT);
    CHECK(smx_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG && untouched(y, 64), "temperature %g", bad_t[i].t);
    CHECK(smx_log_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG && untouched(y, 64), "temperature %g", bad_t[i].t);
    fill(out, 4, SENT);
    CHECK(smx_logsumexp_f32(x, out, 8, &o) == SMX_E_INVALID_ARG && untouched(out, 4), "temperature %g", bad_t[i].t);
  }
  o.temperature = 0;
  o.algo = (smx_algo)9;
  CHECK(smx_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG, "bad algo");
  o.algo = SMX_ALGO_AUTO;
  o.flags = 0x80000000u;
  CHECK(smx_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG, "unknown flag");
  o.flags = SMX_FLAG_STREAM_STORES | SMX_FLAG_CACHED_STORES;
  CHECK(smx_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG, "contradictory store flags");
  o.flags = 0;
  o.threads = -1;
  CHECK(smx_softmax_f32(x, y, 8, &o) == SMX_E_INVALID_ARG, "negative threads");
  o.threads = 0;

  /* NULL with work to do */
  CHECK(smx_softmax_f32(NULL, y, 8, NULL) == SMX_E_INVALID_ARG, "null x");
  CHECK(smx_softmax_f32(x, NULL, 8, NULL) == SMX_E_INVALID_ARG, "null y");
  CHECK(smx_log_softmax_f32(NULL, y, 8, NULL) == SMX_E_INVALID_ARG, "null x");
  CHECK(smx_logsumexp_f32(NULL, out, 8, NULL) == SMX_E_INVALID_ARG, "null x");
  CHECK(smx_logsumexp_f32(x, NULL, 8, NULL) == SMX_E_INVALID_ARG, "null out");
  CHECK(smx_softmax_rows_f32(NULL, 8, y, 8, 2, 8, NULL) == SMX_E_INVALID_ARG, "null rows x");
  CHECK(smx_logsumexp_rows_f32(x, 8, NULL, 2, 8, NULL) == SMX_E_INVALID_ARG, "null rows out");
  CHECK(smx_logsumexp_rows_f32(x, 0, NULL, 2, 0, NULL) == SMX_E_INVALID_ARG, "empty rows still need out");

  /* ld < cols */
  fill(y, 64, SENT);
  CHECK(smx_softmax_rows_f32(x, 7, y, 8, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "ldx < cols");
  CHECK(smx_softmax_rows_f32(x, 8, y, 7, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "ldy < cols");
  CHECK(smx_log_softmax_rows_f32(x, 8, y, 4, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(y, 64), "ldy < cols");
  fill(out, 4, SENT);
  CHECK(smx_logsumexp_rows_f32(x, 3, out, 2, 8, NULL) == SMX_E_INVALID_ARG && untouched(out, 4), "ldx < cols");

  /* size products that overflow */
  CHECK(smx_softmax_rows_f32(x, SIZE_MAX / 2, y, 8, 3, 8, NULL) == SMX_E_INVALID_ARG, "ldx overflow");
  CHECK(smx_softmax_rows_f32(x, 8, y, SIZE_MAX / 4, 3, 8, NULL) == SMX_E_INVALID_ARG, "ldy overflow");
  CHECK(smx_softmax_f32(x, y, SIZE_MAX, NULL) == SMX_E_INVALID_ARG, "n overflow");
  CHECK(smx_softmax_rows_f32(x, SIZE_MAX, y, SIZE_MAX, SIZE_MAX, SIZE_MAX, NULL) == SMX_E_INVALID_ARG, "all max");
  CHECK(smx_logsumexp_rows_f32(x, 8, out, SIZE_MAX / 2, 8, NULL) == SMX_E_INVALID_ARG, "rows overflow");

  /* overlap other than exact aliasing */
  float buf[64];
  fill(buf, 64, 1.0f);
  CHECK(smx_softmax_f32(buf, buf + 1, 8, NULL) == SMX_E_INVALID_ARG, "shifted overlap");
  CHECK(smx_softmax_f32(buf + 3, buf, 8, NULL) == SMX_E_INVALID_ARG, "shifted overlap");
  CHECK(smx_log_softmax_f32(buf, buf + 7, 8, NULL) == SMX_E_INVALID_ARG, "tail overlap");
  CHECK(smx_softmax_f32(buf, buf + 8, 8, NULL) == SMX_OK, "adjacent is fine");
  CHECK(smx_softmax_rows_f32(buf, 8, buf, 9, 2, 8, NULL) == SMX_E_INVALID_ARG, "same base, other ld");
  CHECK(smx_logsumexp_rows_f32(buf, 8, buf + 15, 2, 8, NULL) == SMX_E_INVALID_ARG, "out inside x");
  CHECK(smx_softmax_f32(buf, buf, 8, NULL) == SMX_OK, "in-place is allowed");
}

static void test_empty(void) {
  float y[4], out[3];
  fill(y, 4, SENT);
  CHECK(smx_softmax_f32(NULL, NULL, 0, NULL) == SMX_OK, "n=0");
  CHECK(smx_log_softmax_f32(NULL, y, 0, NULL) == SMX_OK && untouched(y, 4), "n=0 writes nothing");
  CHECK(smx_softmax_rows_f32(NULL, 0, NULL, 0, 0, 5, NULL) == SMX_E_INVALID_ARG, "ld < cols even when rows=0");
  CHECK(smx_softmax_rows_f32(NULL, 5, NULL, 5, 0, 5, NULL) == SMX_OK, "rows=0");
  CHECK(smx_softmax_rows_f32(NULL, 0, y, 0, 3, 0, NULL) == SMX_OK && untouched(y, 4), "cols=0");
  out[0] = SENT;
  CHECK(smx_logsumexp_f32(NULL, out, 0, NULL) == SMX_OK && out[0] == -INFINITY, "lse of empty row is -inf");
  fill(out, 3, SENT);
  CHECK(smx_logsumexp_rows_f32(NULL, 0, out, 3, 0, NULL) == SMX_OK && out[0] == -INFINITY && out[1] == -INFINITY &&
            out[2] == -INFINITY, "lse of empty rows");
  smx_options nanflag = { 0, 0, SMX_FLAG_MASKED_ROW_NAN, 0, NULL };
  CHECK(smx_logsumexp_f32(NULL, out, 0, &nanflag) == SMX_OK && out[0] == -INFINITY, "empty row is not masked");
}

/* Runs all three ops on a row with every ISA and algorithm and checks expected outputs exactly. */
static void expect_row(const char *what, const float *x, size_t n, uint32_t flags, const float *sm, const float *ls,
                       float lse) {
  float y[64], z[64], l;
  {
    const int isa = tu_isa_at;
    for (int a = 0; a < 3; a++) {
      smx_options o = { tu_algos[a], 0, flags, 1, NULL };
      CHECK(smx_softmax_f32(x, y, n, &o) == SMX_OK, "status");
      CHECK(smx_log_softmax_f32(x, z, n, &o) == SMX_OK, "status");
      CHECK(smx_logsumexp_f32(x, &l, n, &o) == SMX_OK, "status");
      for (size_t i = 0; i < n; i++) {
        CHECK(tu_same(y[i], sm[i]), "%s [%s %s] softmax[%zu] = %g, want %g", what, tu_isa_names[isa],
              tu_algo_names[tu_algos[a]], i, y[i], sm[i]);
        /* finite log-softmax values: the two-pass algorithm is within the bound, not exact */
        int close = isfinite(ls[i]) && fabsf(z[i] - ls[i]) <= 4 * FLT_EPSILON * fmaxf(1.0f, fabsf(ls[i]));
        CHECK(tu_same(z[i], ls[i]) || (tu_algos[a] == SMX_ALGO_TWO_PASS && close), "%s [%s %s] log-softmax[%zu] = %g, want %g", what, tu_isa_names[isa],
              tu_algo_names[tu_algos[a]], i, z[i], ls[i]);
      }
      CHECK(tu_same(l, lse), "%s [%s %s] logsumexp = %g, want %g", what, tu_isa_names[isa],
            tu_algo_names[tu_algos[a]], l, lse);
    }
  }
}

static void test_special_values(void) {
  const float ni = -INFINITY, pi = INFINITY, nan = NAN;
  float x[40], sm[40], ls[40];
  /* NaN anywhere: whole row NaN, at several positions and row lengths */
  size_t lens[] = { 1, 5, 17, 33, 40 };
  for (size_t li = 0; li < 5; li++) {
    size_t n = lens[li];
    for (size_t pos = 0; pos < n; pos += (n > 5 ? 7 : 1)) {
      for (size_t i = 0; i < n; i++) x[i] = (float)i * 0.5f;
      x[pos] = nan;
      fill(sm, n, nan);
      fill(ls, n, nan);
      expect_row("NaN", x, n, 0, sm, ls, nan);
      if (n > 2) { x[(pos + 1) % n] = pi; expect_row("NaN and +inf", x, n, 0, sm, ls, nan); }
      if (n > 3) { x[(pos + 2) % n] = ni; expect_row("NaN, +inf and -inf", x, n, 0, sm, ls, nan); }
    }
  }
  /* all -inf */
  for (size_t n = 1; n <= 40; n += 13) {
    fill(x, n, ni);
    fill(sm, n, 0.0f);
    fill(ls, n, ni);
    expect_row("all -inf", x, n, 0, sm, ls, ni);
    fill(sm, n, nan);
    fill(ls, n, nan);
    expect_row("all -inf, MASKED_ROW_NAN", x, n, SMX_FLAG_MASKED_ROW_NAN, sm, ls, nan);
  }
  /* +inf entries: 1/k on them, 0 elsewhere */
  for (size_t k = 1; k <= 3; k++) {
    size_t n = 21;
    for (size_t i = 0; i < n; i++) x[i] = (i % 4 == 3) ? ni : (float)i - 10.0f;
    for (size_t j = 0; j < k; j++) x[2 + 7 * j] = pi;
    for (size_t i = 0; i < n; i++) {
      sm[i] = x[i] == pi ? (float)(1.0 / (double)k) : 0.0f;
      ls[i] = x[i] == pi ? (float)-log((double)k) : ni;
    }
    expect_row("+inf entries", x, n, 0, sm, ls, pi);
  }
  /* n = 1 */
  x[0] = 3.5f; sm[0] = 1.0f; ls[0] = 0.0f;
  expect_row("n=1", x, 1, 0, sm, ls, 3.5f);
  x[0] = -FLT_MAX;
  expect_row("n=1 -FLT_MAX", x, 1, 0, sm, ls, -FLT_MAX);
  /* MASKED_ROW_NAN does not affect rows with a live entry */
  x[0] = ni; x[1] = 2.0f; x[2] = ni;
  sm[0] = 0.0f; sm[1] = 1.0f; sm[2] = 0.0f;
  ls[0] = ni; ls[1] = 0.0f; ls[2] = ni;
  expect_row("one live entry", x, 3, SMX_FLAG_MASKED_ROW_NAN, sm, ls, 2.0f);
}

/* -inf entries: y = +0 exactly and the rest equals the row with them removed. */
static void test_masked_equals_removed(void) {
  tu_rng rng = { 7 };
  for (size_t n = 2; n <= 300; n += 37) {
    float x[300], live[300], y[300], yl[300];
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
      x[i] = (tu_next(&rng) % 3 == 0) ? -INFINITY : tu_uniform_f(&rng, -30, 30);
      if (x[i] != -INFINITY) live[nl++] = x[i];
    }
    if (nl == 0) continue;
    {
      const int isa = tu_isa_at;
      for (int a = 0; a < 3; a++) {
        smx_options o = { tu_algos[a], 0, 0, 1, NULL };
        smx_softmax_f32(x, y, n, &o);
        smx_softmax_f32(live, yl, nl, &o);
        size_t j = 0, bad = 0;
        for (size_t i = 0; i < n; i++) {
          if (x[i] == -INFINITY) bad += !tu_same(y[i], 0.0f);
          else { bad += fabsf(y[i] - yl[j]) > 4e-7f * yl[j] + 1e-37f; j++; }
        }
        CHECK(bad == 0, "n=%zu %s %s: %zu entries differ from the compacted row", n, tu_isa_names[isa],
              tu_algo_names[tu_algos[a]], bad);
      }
    }
  }
}

static void test_inplace_and_strides(void) {
  tu_rng rng = { 11 };
  enum { R = 5, C = 37, LD = 45 };
  float x[R * LD], y[R * LD], ref[R * LD], io[R * LD], out[R], out1[R];
  for (int op = 0; op < 2; op++)
    for (int a = 0; a < 3; a++) {
      for (size_t i = 0; i < R * LD; i++) x[i] = tu_uniform_f(&rng, -8, 8);
      smx_options o = { tu_algos[a], 0.7f, 0, 1, NULL };
      fill(y, R * LD, SENT);
      smx_status s = op ? smx_log_softmax_rows_f32(x, LD, y, LD, R, C, &o) : smx_softmax_rows_f32(x, LD, y, LD, R, C, &o);
      CHECK(s == SMX_OK, "strided status");
      size_t pad_ok = 1, same = 1;
      for (size_t r = 0; r < R; r++) {
        for (size_t c = C; c < LD; c++) pad_ok &= tu_same(y[r * LD + c], SENT);
        if (op) smx_log_softmax_f32(x + r * LD, ref + r * LD, C, &o);
        else smx_softmax_f32(x + r * LD, ref + r * LD, C, &o);
        for (size_t c = 0; c < C; c++) same &= tu_same(y[r * LD + c], ref[r * LD + c]);
      }
      CHECK(pad_ok, "padding between rows untouched");
      CHECK(same, "rows form equals row by row");
      memcpy(io, x, sizeof x);
      s = op ? smx_log_softmax_rows_f32(io, LD, io, LD, R, C, &o) : smx_softmax_rows_f32(io, LD, io, LD, R, C, &o);
      same = 1;
      for (size_t r = 0; r < R; r++) {
        for (size_t c = 0; c < C; c++) same &= tu_same(io[r * LD + c], y[r * LD + c]);
        for (size_t c = C; c < LD; c++) same &= tu_same(io[r * LD + c], x[r * LD + c]);
      }
      CHECK(s == SMX_OK && same, "in-place equals out-of-place (%s)", tu_algo_names[tu_algos[a]]);
      smx_logsumexp_rows_f32(x, LD, out, R, C, &o);
      for (size_t r = 0; r < R; r++) smx_logsumexp_f32(x + r * LD, out1 + r, C, &o);
      CHECK(memcmp(out, out1, sizeof out) == 0, "logsumexp rows");
    }
}

static void test_stream_identical(void) {
  tu_rng rng = { 5 };
  size_t n = 100003;
  float *x = malloc(n * sizeof(float)), *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) x[i] = tu_uniform_f(&rng, -10, 10);
  for (int al = 0; al < 3; al++)
    for (int op = 0; op < 2; op++) {
      smx_options oc = { tu_algos[al], 0, SMX_FLAG_CACHED_STORES, 1, NULL }, os = { tu_algos[al], 0, SMX_FLAG_STREAM_STORES, 1, NULL };
      if (op) { smx_log_softmax_f32(x, a, n - 1, &oc); smx_log_softmax_f32(x + 1, b, n - 1, &os); smx_log_softmax_f32(x, b, n - 1, &os); }
      else { smx_softmax_f32(x, a, n - 1, &oc); smx_softmax_f32(x, b + 1, n - 1, &os); smx_softmax_f32(x, b, n - 1, &os); }
      CHECK(memcmp(a, b, (n - 1) * sizeof(float)) == 0, "streaming stores change results (%s)", tu_algo_names[tu_algos[al]]);
    }
  free(x); free(a); free(b);
}

static void test_threads_identical(void) {
  tu_rng rng = { 3 };
  size_t R = 300, C = 1000;
  float *x = malloc(R * C * sizeof(float)), *y1 = malloc(R * C * sizeof(float)), *y = malloc(R * C * sizeof(float));
  for (size_t i = 0; i < R * C; i++) x[i] = tu_uniform_f(&rng, -10, 10);
  for (int a = 0; a < 3; a++) {
    smx_options o = { tu_algos[a], 0, 0, 1, NULL };
    smx_softmax_rows_f32(x, C, y1, C, R, C, &o);
    for (int t = 2; t <= 5; t++) {
      o.threads = t;
      smx_softmax_rows_f32(x, C, y, C, R, C, &o);
      CHECK(memcmp(y, y1, R * C * sizeof(float)) == 0, "threads=%d differs (%s)", t, tu_algo_names[tu_algos[a]]);
    }
  }
  free(x); free(y1); free(y);
  /* one long row split into chunks across threads (rows this long are split) */
  size_t n = ((size_t)1 << 21) + 12345;
  x = malloc(n * sizeof(float));
  y1 = malloc(n * sizeof(float));
  y = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) x[i] = (i % 7 == 3) ? -INFINITY : tu_normal(&rng) * 4.0f;
  for (int a = 0; a < 3; a++)
    for (int op = 0; op < 3; op++) {
      float l1 = 0, l = 0;
      smx_options o = { tu_algos[a], 0, 0, 1, NULL };
      if (op == 0) smx_softmax_f32(x, y1, n, &o);
      else if (op == 1) smx_log_softmax_f32(x, y1, n, &o);
      else smx_logsumexp_f32(x, &l1, n, &o);
      for (int t = 2; t <= 3; t++) {
        o.threads = t;
        if (op == 0) smx_softmax_f32(x, y, n, &o);
        else if (op == 1) smx_log_softmax_f32(x, y, n, &o);
        else smx_logsumexp_f32(x, &l, n, &o);
        CHECK(op == 2 ? tu_same(l, l1) : memcmp(y, y1, n * sizeof(float)) == 0, "long row, op %d, threads=%d differs (%s)",
              op, t, tu_algo_names[tu_algos[a]]);
      }
    }
  free(x); free(y1); free(y);
}

/* The temperature is a double: values beyond the float range are accepted for
 * float data too, and give the limits (uniform, or one-hot on the max). */
static void test_temperature_beyond_float(void) {
  float x[5] = { 1.0f, 3.0f, -2.0f, 3.0f, 0.5f }, y[5], lse;
  smx_options o = { 0 };
  {
    o.temperature = 1e300;
    CHECK(smx_softmax_f32(x, y, 5, &o) == SMX_OK, "T=1e300");
    for (int i = 0; i < 5; i++) CHECK(fabsf(y[i] - 0.2f) <= 1e-7f, "T=1e300 uniform: y[%d]=%g", i, y[i]);
    CHECK(smx_logsumexp_f32(x, &lse, 5, &o) == SMX_OK && fabsf(lse - logf(5.0f)) <= 1e-6f, "T=1e300 lse %g", lse);
    o.temperature = 1e-300;
    CHECK(smx_softmax_f32(x, y, 5, &o) == SMX_OK, "T=1e-300");
    CHECK(y[0] == 0.0f && y[1] == 0.5f && y[2] == 0.0f && y[3] == 0.5f && y[4] == 0.0f, "T=1e-300 one-hot ties");
    CHECK(smx_log_softmax_f32(x, y, 5, &o) == SMX_OK && y[0] == -INFINITY && fabsf(y[1] + logf(2.0f)) <= 1e-6f,
          "T=1e-300 log-softmax %g %g", y[0], y[1]);
  }
}

/* smx_parallel_for: every task once, at any thread count; smx_auto_describe: snprintf-style */
static void count_task(void *ctx, size_t i) { __atomic_fetch_add((int *)ctx + i, 1, __ATOMIC_RELAXED); }
static void test_pool_and_describe(void) {
  static int hits[1000];
  for (int t = 0; t <= 8; t += 4) {
    memset(hits, 0, sizeof hits);
    CHECK(smx_parallel_for(t, 1000, count_task, hits) == SMX_OK, "parallel_for status");
    int once = 1;
    for (int i = 0; i < 1000; i++) once &= hits[i] == 1;
    CHECK(once, "threads %d: every task ran once", t);
  }
  CHECK(smx_parallel_for(2, 5, NULL, NULL) == SMX_E_INVALID_ARG, "NULL fn");
  CHECK(smx_parallel_for(2, 0, NULL, NULL) == SMX_OK, "no tasks");
  char full[8192], part[16];
  size_t n = smx_auto_describe(NULL, 0);
  CHECK(n > 0 && n < sizeof full && smx_auto_describe(full, sizeof full) == n && strlen(full) == n, "describe length");
  CHECK(strncmp(full, "caches (", 8) == 0 && strstr(full, "\nauto (") && full[n - 1] == '\n', "describe text");
  CHECK(smx_auto_describe(part, sizeof part) == n && strlen(part) == 15 && !strncmp(part, full, 15), "truncated");
}

int main(void) {
  tu_isa_start(3);
  test_temperature_beyond_float();
  test_special_values();
  test_masked_equals_removed();
  test_inplace_and_strides();
  test_threads_identical();
  test_stream_identical();
  if (tu_isa_once) {   /* the checks no kernel set changes */
    test_status_and_version();
    test_bad_arguments();
    test_empty();
    test_pool_and_describe();
  }
  return tu_finish("test_api");
}
