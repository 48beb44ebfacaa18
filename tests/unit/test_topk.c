/*
 * Fused softmax + top-k (include/smx/smx_topk.h) against a long-double
 * reference: indices exactly, values within the softmax bound of smx.h, on
 * every ISA and several thread counts; the special-value policy; bad
 * arguments with nothing written; f16 / bf16 (guard pages: tests/ops/).
 */
#include "../common/test_isa.h"
#include "kernels/f32-topk/ukernels.h"
#include "math/half_scalar.h"
#include "smx/smx_topk.h"

#define EPS ((long double)FLT_EPSILON)

enum { OP_SOFT, OP_LOG, OP_RAW };
static const char *const op_names[3] = { "softmax_topk", "log_softmax_topk", "topk" };

typedef smx_status (*rows_fn)(const float *, size_t, float *, int64_t *, size_t, size_t, size_t,
                              const smx_options *);
static const rows_fn rows_fns[3] = { smx_softmax_topk_rows_f32, smx_log_softmax_topk_rows_f32, smx_topk_rows_f32 };

/* the reference order: larger x first, then lower index */
static const float *sort_x;
static int cmp_order(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  float xi = sort_x[i], xj = sort_x[j];
  if (xi > xj) return -1;
  if (xi < xj) return 1;
  return i < j ? -1 : 1;
}

static size_t *ref_order(const float *x, size_t n) {
  size_t *o = malloc(n * sizeof(size_t));
  for (size_t i = 0; i < n; i++) o[i] = i;
  sort_x = x;
  qsort(o, n, sizeof(size_t), cmp_order);
  return o;
}

/* Checks one row's k results against the long-double reference (finite rows). */
static void check_row(int op, const float *x, size_t n, size_t k, float t, const float *v, const int64_t *idx,
                      const char *what) {
  size_t *o = ref_order(x, n);
  long double m, T = t == 0.0f ? 1.0L : (long double)t;
  long double ld = tu_ref_logd(x, n, t, &m);
  for (size_t j = 0; j < k; j++) {
    CHECK(idx[j] == (int64_t)o[j], "%s: n=%zu k=%zu j=%zu index %lld, want %zu", what, n, k, j, (long long)idx[j],
          o[j]);
    float xi = x[o[j]];
    if (op == OP_RAW) {
      CHECK(tu_same(v[j], xi), "%s: j=%zu raw value %g, want %g", what, j, v[j], xi);
      continue;
    }
    if (m == -INFINITY) {   /* all -inf: the policy's values */
      CHECK(op == OP_SOFT ? v[j] == 0.0f : v[j] == -INFINITY, "%s: all -inf row value %g", what, v[j]);
      continue;
    }
    long double tt = ((long double)xi - m) / T;
    if (op == OP_SOFT) {
      long double ref = expl(tt - ld);
      if (ref >= FLT_MIN) {
        long double bound = (4.0L + fabsl(tt) / 2.0L) * EPS * ref;
        CHECK(fabsl((long double)v[j] - ref) <= bound, "%s: n=%zu j=%zu value %.9g ref %.9Lg (%.2Lf bounds)", what,
              n, j, v[j], ref, fabsl((long double)v[j] - ref) / bound);
      } else {
        CHECK(v[j] >= 0.0f && v[j] < FLT_MIN, "%s: j=%zu tiny value %g ref %Lg", what, j, v[j], ref);
      }
    } else {
      long double ref = tt - ld;
      if (ref < -FLT_MAX) {
        CHECK(v[j] == -INFINITY || (long double)v[j] <= -FLT_MAX * (1.0L - 4.0L * EPS), "%s: log value %g", what,
              v[j]);
        continue;
      }
      long double bound = 4.0L * EPS * (fabsl(ref) > 1.0L ? fabsl(ref) : 1.0L);
      CHECK(fabsl((long double)v[j] - ref) <= bound, "%s: n=%zu j=%zu log value %.9g ref %.9Lg", what, n, j, v[j],
            ref);
    }
  }
  free(o);
}

/* Row families: the adversarial ones of the accuracy contract. */
static void fill(int fam, float *x, size_t n, tu_rng *r) {
  for (size_t i = 0; i < n; i++) {
    switch (fam) {
      case 0: x[i] = 3.0f * tu_normal(r); break;                                   /* LM-like          */
      case 1: x[i] = (float)(tu_next(r) % 7);  break;                              /* many ties        */
      case 2: x[i] = tu_uniform_f(r, -1e30f, 1e30f); break;                        /* huge             */
      case 3: x[i] = tu_uniform_f(r, -1e-30f, 1e-30f); break;                      /* tiny             */
      case 4: x[i] = tu_next(r) % 3 == 0 ? -INFINITY : tu_normal(r); break;        /* -inf masks       */
      case 5: x[i] = tu_normal(r) - 100.0f; break;                                 /* shifted          */
      default: x[i] = (float)i * 1e-3f; break;                                     /* rising: many inserts */
    }
  }
  if (fam == 5 && n > 3) x[n / 3] = 80.0f;                                          /* a spike          */
}

static void test_values(void) {
  static const size_t ns[] = { 1, 2, 7, 17, 64, 100, 2047, 2049, 4100, 70001 };
  static const float temps[] = { 0.0f, 0.5f, 3.0f };
  tu_rng r = { 42 };
  {
    const int isa = tu_isa_at;
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
      size_t n = ns[a];
      float *x = malloc(n * sizeof(float));
      for (int fam = 0; fam < 7; fam++) {
        fill(fam, x, n, &r);
        size_t ks[5] = { 1, 5, 50, n, 1 + tu_next(&r) % n };
        for (int q = 0; q < 5; q++) {
          size_t k = ks[q] > n ? n : ks[q];
          float *v = malloc(k * sizeof(float));
          int64_t *idx = malloc(k * sizeof(int64_t));
          for (int op = 0; op < 3; op++) {
            float t = temps[(fam + q + op) % 3];
            smx_options o = { SMX_ALGO_AUTO, t, 0, 1, NULL };
            char what[96];
            snprintf(what, sizeof what, "%s %s fam=%d T=%g", op_names[op], tu_isa_names[isa], fam, t);
            CHECK(rows_fns[op](x, n, v, idx, 1, n, k, &o) == SMX_OK, "%s", what);
            check_row(op, x, n, k, t, v, idx, what);
          }
          free(v);
          free(idx);
        }
      }
      free(x);
    }
  }
}

/* Rows form with a leading dimension; 1, 2, 3, 8 threads give the same bits. */
static void test_rows_threads(void) {
  size_t rows = 37, cols = 3001, ldx = 3010, k = 9;
  float *x = malloc(rows * ldx * sizeof(float));
  tu_rng r = { 7 };
  for (size_t i = 0; i < rows * ldx; i++) x[i] = 2.0f * tu_normal(&r);
  float *v1 = malloc(rows * k * sizeof(float)), *v2 = malloc(rows * k * sizeof(float));
  int64_t *i1 = malloc(rows * k * sizeof(int64_t)), *i2 = malloc(rows * k * sizeof(int64_t));
  for (int op = 0; op < 3; op++) {
    smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
    CHECK(rows_fns[op](x, ldx, v1, i1, rows, cols, k, &o) == SMX_OK, "rows");
    for (size_t rr = 0; rr < rows; rr++) check_row(op, x + rr * ldx, cols, k, 0.0f, v1 + rr * k, i1 + rr * k, "rows");
    static const int th[] = { 2, 3, 8 };
    for (int q = 0; q < 3; q++) {
      o.threads = th[q];
      CHECK(rows_fns[op](x, ldx, v2, i2, rows, cols, k, &o) == SMX_OK, "rows threads");
      int same = 1;
      for (size_t j = 0; j < rows * k; j++) same &= tu_same(v1[j], v2[j]) && i1[j] == i2[j];
      CHECK(same, "%s: threads=%d differs from 1 thread", op_names[op], th[q]);
    }
  }
  free(x);
  free(v1);
  free(v2);
  free(i1);
  free(i2);
}

/* A row long enough to be split across threads (fixed chunks, fixed merge order). */
static void test_split_row(void) {
  size_t n = ((size_t)1 << 21) + 12345, k = 50;
  float *x = malloc(n * sizeof(float));
  tu_rng r = { 99 };
  for (size_t i = 0; i < n; i++) x[i] = 4.0f * tu_normal(&r);
  x[n - 1] = 30.0f;   /* the max at the very end */
  x[5] = 30.0f;       /* and a tie with it near the start */
  float v[2][50];
  int64_t idx[2][50];
  for (int op = 0; op < 2; op++) {
    smx_options o1 = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL }, o3 = { SMX_ALGO_AUTO, 0.0, 0, 3, NULL };
    CHECK(rows_fns[op](x, n, v[0], idx[0], 1, n, k, &o1) == SMX_OK, "split 1");
    CHECK(rows_fns[op](x, n, v[1], idx[1], 1, n, k, &o3) == SMX_OK, "split 3");
    int same = 1;
    for (size_t j = 0; j < k; j++) same &= tu_same(v[0][j], v[1][j]) && idx[0][j] == idx[1][j];
    CHECK(same, "%s: split row differs across thread counts", op_names[op]);
    CHECK(idx[0][0] == 5 && idx[0][1] == (int64_t)(n - 1), "tie order on a long row: %lld %lld",
          (long long)idx[0][0], (long long)idx[0][1]);
    check_row(op, x, n, k, 0.0f, v[1], idx[1], "split row");
  }
  free(x);
}

static void test_specials(void) {
  float v[4];
  int64_t idx[4];
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  /* NaN row: NaN values, -1 indices, every op */
  float xn[5] = { 1.0f, NAN, 3.0f, -INFINITY, INFINITY };
  for (int op = 0; op < 3; op++) {
    CHECK(rows_fns[op](xn, 5, v, idx, 1, 5, 4, &o) == SMX_OK, "nan");
    for (int j = 0; j < 4; j++) CHECK(v[j] != v[j] && idx[j] == -1, "%s NaN row j=%d: %g %lld", op_names[op], j, v[j], (long long)idx[j]);
  }
  /* +inf entries: 1/c each, first, lowest index first; then by x with value 0 */
  float xp[6] = { 1.0f, INFINITY, 5.0f, INFINITY, -INFINITY, 2.0f };
  CHECK(smx_softmax_topk_f32(xp, v, idx, 6, 4, &o) == SMX_OK, "+inf");
  CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 2 && idx[3] == 5, "+inf order %lld %lld %lld %lld",
        (long long)idx[0], (long long)idx[1], (long long)idx[2], (long long)idx[3]);
  CHECK(v[0] == 0.5f && v[1] == 0.5f && v[2] == 0.0f && v[3] == 0.0f, "+inf values %g %g %g %g", v[0], v[1], v[2], v[3]);
  CHECK(smx_log_softmax_topk_f32(xp, v, idx, 6, 3, &o) == SMX_OK, "+inf log");
  CHECK(v[0] == (float)-log(2.0) && v[1] == (float)-log(2.0) && v[2] == -INFINITY, "+inf log values %g %g", v[0], v[2]);
  CHECK(smx_topk_f32(xp, v, idx, 6, 4, &o) == SMX_OK && v[0] == INFINITY && v[2] == 5.0f && idx[3] == 5, "+inf raw");
  /* -inf entries are taken only when needed, lowest index first */
  float xm[5] = { -INFINITY, 2.0f, -INFINITY, -INFINITY, 1.0f };
  CHECK(smx_softmax_topk_f32(xm, v, idx, 5, 4, &o) == SMX_OK, "-inf");
  CHECK(idx[0] == 1 && idx[1] == 4 && idx[2] == 0 && idx[3] == 2, "-inf order");
  CHECK(v[2] == 0.0f && v[3] == 0.0f && fabsf(v[0] + v[1] - 1.0f) < 1e-6f, "-inf values");
  CHECK(smx_log_softmax_topk_f32(xm, v, idx, 5, 3, &o) == SMX_OK && v[2] == -INFINITY, "-inf log");
  /* all -inf: indices 0..k-1, values 0 / -inf, or NaN with the flag */
  float xa[4] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
  CHECK(smx_softmax_topk_f32(xa, v, idx, 4, 3, &o) == SMX_OK, "all -inf");
  CHECK(idx[0] == 0 && idx[1] == 1 && idx[2] == 2 && v[0] == 0.0f && v[2] == 0.0f, "all -inf values");
  CHECK(smx_log_softmax_topk_f32(xa, v, idx, 4, 3, &o) == SMX_OK && v[1] == -INFINITY, "all -inf log");
  smx_options on = { SMX_ALGO_AUTO, 0.0, SMX_FLAG_MASKED_ROW_NAN, 1, NULL };
  CHECK(smx_softmax_topk_f32(xa, v, idx, 4, 3, &on) == SMX_OK && v[0] != v[0] && idx[0] == 0, "masked NaN flag");
  CHECK(smx_topk_f32(xa, v, idx, 4, 2, &on) == SMX_OK && v[0] == -INFINITY && idx[1] == 1, "raw all -inf");
  /* a NaN alone among -inf: still a NaN row */
  float xq[3] = { -INFINITY, NAN, -INFINITY };
  CHECK(smx_softmax_topk_f32(xq, v, idx, 3, 1, &o) == SMX_OK && v[0] != v[0] && idx[0] == -1, "NaN among -inf");
  /* a NaN after the first k entries, found by the vector filter (every ISA) */
  float *xl = malloc(5000 * sizeof(float));
  {
    const int isa = tu_isa_at;
    for (size_t at = 4990; at < 5000; at += 3) {
      for (size_t i = 0; i < 5000; i++) xl[i] = (float)(i % 100);
      xl[at] = NAN;
      CHECK(smx_topk_f32(xl, v, idx, 5000, 2, &o) == SMX_OK && v[0] != v[0] && idx[1] == -1, "%s late NaN at %zu",
            tu_isa_names[isa], at);
    }
  }
  free(xl);
}

/* Bad arguments: the status, and not one output written. */
static void test_bad_args(void) {
  float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  float v[16];
  int64_t idx[16];
  for (int i = 0; i < 16; i++) { v[i] = -7.0f; idx[i] = -7; }
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  smx_options bad_t = { SMX_ALGO_AUTO, -1.0, 0, 1, NULL }, bad_f = { SMX_ALGO_AUTO, 0.0, 0x100, 1, NULL };
  smx_options bad_th = { SMX_ALGO_AUTO, 0.0, 0, -1, NULL }, bad_tn = { SMX_ALGO_AUTO, NAN, 0, 1, NULL };
  for (int op = 0; op < 3; op++) {
    rows_fn f = rows_fns[op];
    CHECK(f(x, 8, v, idx, 1, 8, 9, &o) == SMX_E_INVALID_ARG, "k > n");
    CHECK(f(NULL, 8, v, idx, 1, 8, 2, &o) == SMX_E_INVALID_ARG, "x NULL");
    CHECK(f(x, 8, NULL, idx, 1, 8, 2, &o) == SMX_E_INVALID_ARG, "values NULL");
    CHECK(f(x, 8, v, NULL, 1, 8, 2, &o) == SMX_E_INVALID_ARG, "indices NULL");
    CHECK(f(x, 3, v, idx, 2, 4, 2, &o) == SMX_E_INVALID_ARG, "ldx < cols");
    CHECK(f(x, 8, v, idx, 1, 8, 2, &bad_t) == SMX_E_INVALID_ARG, "T < 0");
    CHECK(f(x, 8, v, idx, 1, 8, 2, &bad_tn) == SMX_E_INVALID_ARG, "T NaN");
    CHECK(f(x, 8, v, idx, 1, 8, 2, &bad_f) == SMX_E_INVALID_ARG, "flag");
    CHECK(f(x, 8, v, idx, 1, 8, 2, &bad_th) == SMX_E_INVALID_ARG, "threads");
    CHECK(f(x, 8, x + 2, idx, 1, 8, 2, &o) == SMX_E_INVALID_ARG, "values overlap x");
    CHECK(f(x, 8, v, (int64_t *)(void *)(v + 1), 1, 8, 2, &o) == SMX_E_INVALID_ARG, "values overlap indices");
    CHECK(f(x, 8, v, idx, SIZE_MAX / 2, 8, 2, &o) == SMX_E_INVALID_ARG, "size overflow");
    CHECK(f(x, 8, v, idx, 1, 8, 0, &o) == SMX_OK, "k = 0");
    CHECK(f(x, 8, v, idx, 0, 8, 2, &o) == SMX_OK, "rows = 0");
    CHECK(f(NULL, 8, NULL, NULL, 0, 8, 2, &o) == SMX_OK, "rows = 0, NULL");
  }
  CHECK(smx_softmax_topk_f32(x, v, idx, 8, 9, &o) == SMX_E_INVALID_ARG, "k > n, row form");
  CHECK(smx_softmax_topk_f16(NULL, v, idx, 8, 2, &o) == SMX_E_INVALID_ARG, "f16 NULL");
  CHECK(smx_topk_bf16((const uint16_t *)(const void *)x, v, idx, 8, 9, &o) == SMX_E_INVALID_ARG, "bf16 k > n");
  int untouched = 1;
  for (int i = 0; i < 16; i++) untouched &= v[i] == -7.0f && idx[i] == -7;
  CHECK(untouched, "an output was written by a refused call");
}

/* f16 / bf16: exactly the f32 results on the widened values. */
static void test_half(void) {
  size_t rows = 5, cols = 4500, k = 7;
  uint16_t *h = malloc(rows * cols * 2), *b = malloc(rows * cols * 2);
  float *xh = malloc(rows * cols * 4), *xb = malloc(rows * cols * 4);
  tu_rng r = { 3 };
  for (size_t i = 0; i < rows * cols; i++) {
    float f = 3.0f * tu_normal(&r);
    h[i] = smx_f32_to_f16(f);
    b[i] = smx_f32_to_bf16(f);
    xh[i] = smx_f16_to_f32(h[i]);
    xb[i] = smx_bf16_to_f32(b[i]);
  }
  h[cols + 3] = 0x7e00;                       /* a NaN in row 1 (f16) */
  xh[cols + 3] = NAN;
  b[2 * cols] = 0xff80;                       /* -inf in row 2 (bf16) */
  xb[2 * cols] = -INFINITY;
  float v1[35], v2[35];
  int64_t i1[35], i2[35];
  typedef smx_status (*hfn)(const uint16_t *, size_t, float *, int64_t *, size_t, size_t, size_t, const smx_options *);
  const hfn f16s[3] = { smx_softmax_topk_rows_f16, smx_log_softmax_topk_rows_f16, smx_topk_rows_f16 };
  const hfn bf16s[3] = { smx_softmax_topk_rows_bf16, smx_log_softmax_topk_rows_bf16, smx_topk_rows_bf16 };
  {
    const int isa = tu_isa_at;
    for (int op = 0; op < 3; op++) {
      smx_options o = { SMX_ALGO_AUTO, 0.7, 0, 2, NULL };
      CHECK(f16s[op](h, cols, v1, i1, rows, cols, k, &o) == SMX_OK, "f16");
      CHECK(rows_fns[op](xh, cols, v2, i2, rows, cols, k, &o) == SMX_OK, "f16 ref");
      int same = 1;
      for (size_t j = 0; j < rows * k; j++) same &= tu_same(v1[j], v2[j]) && i1[j] == i2[j];
      CHECK(same, "%s %s f16 differs from f32 on the same values", op_names[op], tu_isa_names[isa]);
      CHECK(i1[k] == -1, "f16 NaN row");
      CHECK(bf16s[op](b, cols, v1, i1, rows, cols, k, &o) == SMX_OK, "bf16");
      CHECK(rows_fns[op](xb, cols, v2, i2, rows, cols, k, &o) == SMX_OK, "bf16 ref");
      same = 1;
      for (size_t j = 0; j < rows * k; j++) same &= tu_same(v1[j], v2[j]) && i1[j] == i2[j];
      CHECK(same, "%s %s bf16 differs from f32 on the same values", op_names[op], tu_isa_names[isa]);
      check_row(op, xb, cols, k, 0.7f, v1, i1, "bf16 row 0");
    }
    smx_options o1 = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
    CHECK(smx_softmax_topk_f16(h, v1, i1, cols, 3, &o1) == SMX_OK && smx_softmax_topk_bf16(b, v2, i2, cols, 3, &o1) == SMX_OK,
          "half row forms");
  }
  free(h);
  free(b);
  free(xh);
  free(xb);
}

/* The filter kernels agree with the scalar one (positions and the NaN flag). */
static void test_filter_kernels(void) {
  const smx_topk_ukernels *ks[3] = { &smx_topk_ukernels_scalar, &smx_topk_ukernels_avx2, &smx_topk_ukernels_avx512 };
  int levels = tu_tables_top() + 1;
  tu_rng r = { 5 };
  float x[300];
  uint32_t p0[300], p1[300];
  for (int rep = 0; rep < 200; rep++) {
    size_t n = tu_next(&r) % 300;
    for (size_t i = 0; i < n; i++) x[i] = tu_normal(&r);
    if (rep % 5 == 0 && n) x[tu_next(&r) % n] = NAN;
    float thr = tu_normal(&r) + 1.0f;
    int nan0 = 0;
    size_t c0 = ks[0]->filter_gt(n, x, thr, p0, &nan0);
    for (int q = 1; q < levels; q++) {
      int nan1 = 0;
      size_t c1 = ks[q]->filter_gt(n, x, thr, p1, &nan1);
      CHECK(c0 == c1 && nan0 == nan1 && !memcmp(p0, p1, c0 * sizeof(uint32_t)), "%s filter differs (n=%zu)",
            ks[q]->isa, n);
    }
  }
}

int main(void) {
  tu_isa_start(2);
  test_specials();
  test_values();
  test_half();
  if (tu_isa_once) {
    test_bad_args();
    test_rows_threads();
    test_split_row();
    test_filter_kernels();
  }
  return tu_finish("test_topk");
}
