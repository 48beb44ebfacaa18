/*
 * Sampling, Philox and Gumbel-softmax (include/smx/smx_topk.h).
 *
 * The statistical tests draw N tokens from rows with a known distribution
 * (each row its own Philox stream) and compare the counts with the
 * long-double expectation by Pearson's chi-square. The seed is fixed, so the
 * outcome is deterministic; the critical value is the 0.999 quantile of the
 * chi-square law with (kept tokens - 1) degrees of freedom (table below), so a
 * correct sampler fails one such check with probability 1/1000 per seed, and
 * a sampler off by a few percent on any token fails it for sure (N = 60000).
 * Tokens outside the kept set must never appear.
 */
#include "../common/test_isa.h"
#include "ops/sample_prefix.h"
#include "ops/sample_row.h"
#include "math/half_scalar.h"
#include "smx/smx_topk.h"

/* chi-square 0.999 quantiles, df = 1..15 */
static const double chi2_999[16] = { 0, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322,
                                     26.124, 27.877, 29.588, 31.264, 32.909, 34.528, 36.123, 37.697 };

#define NTOK 12
#define NDRAW 60000

/* a shuffled, uneven distribution with one tie (0.04 twice) */
static const double probs[NTOK] = { 0.04, 0.22, 0.01, 0.15, 0.04, 0.09, 0.005, 0.3, 0.06, 0.025, 0.045, 0.015 };

/* Long-double expectation of the filters in their documented order. */
static void expected(const float *x, size_t n, const smx_sample_params *p, long double *e) {
  long double T = p->temperature, w[64], wmax = 0.0L;
  int keep[64];
  size_t order[64];
  for (size_t i = 0; i < n; i++) {
    w[i] = expl((long double)x[i] / T);
    keep[i] = 1;
    order[i] = i;
    if (w[i] > wmax) wmax = w[i];
  }
  /* order: larger x first, then lower index (insertion sort, n is small) */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && (x[order[j]] > x[order[j - 1]] ||
                                 (x[order[j]] == x[order[j - 1]] && order[j] < order[j - 1])); j--) {
      size_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  if (p->top_k > 0 && p->top_k < n)
    for (size_t r = p->top_k; r < n; r++) keep[order[r]] = 0;
  if (p->top_p > 0.0 && p->top_p < 1.0) {
    long double tot = 0.0L, cum = 0.0L;
    for (size_t i = 0; i < n; i++) if (keep[i]) tot += w[i];
    int reached = 0;
    for (size_t r = 0; r < n; r++) {
      size_t i = order[r];
      if (!keep[i]) continue;
      if (reached) { keep[i] = 0; continue; }
      cum += w[i];
      if (cum >= (long double)p->top_p * tot) reached = 1;
    }
  }
  if (p->min_p > 0.0)
    for (size_t i = 0; i < n; i++) if (w[i] < (long double)p->min_p * wmax) keep[i] = 0;
  long double s = 0.0L;
  for (size_t i = 0; i < n; i++) s += keep[i] ? w[i] : 0.0L;
  for (size_t i = 0; i < n; i++) e[i] = keep[i] ? w[i] / s : 0.0L;
}

/* Draws NDRAW tokens from identical rows; chi-square against the expectation. */
static void chi_square(const float *row, size_t n, const smx_sample_params *p, uint64_t seed, const char *what) {
  float *x = malloc(NDRAW * n * sizeof(float));
  int64_t *tok = malloc(NDRAW * sizeof(int64_t));
  for (size_t r = 0; r < NDRAW; r++) memcpy(x + r * n, row, n * sizeof(float));
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
  CHECK(smx_sample_rows_f32(x, n, tok, NDRAW, n, p, seed, 0, &o) == SMX_OK, "%s", what);
  long double e[64];
  expected(row, n, p, e);
  long cnt[64] = { 0 };
  int outside = 0;
  for (size_t r = 0; r < NDRAW; r++) {
    if (tok[r] < 0 || tok[r] >= (int64_t)n) { outside++; continue; }
    cnt[tok[r]]++;
  }
  double chi = 0.0;
  int df = -1;
  for (size_t i = 0; i < n; i++) {
    if (e[i] == 0.0L) {
      outside += cnt[i] != 0;
      continue;
    }
    double ex = (double)(e[i] * NDRAW);
    chi += ((double)cnt[i] - ex) * ((double)cnt[i] - ex) / ex;
    df++;
  }
  CHECK(outside == 0, "%s: tokens outside the kept set", what);
  if (df >= 1) CHECK(chi <= chi2_999[df], "%s: chi-square %.2f > %.2f (df %d)", what, chi, chi2_999[df], df);
  else CHECK(df == 0 && cnt[0] + 1 > 0, "%s", what);
  free(x);
  free(tok);
}

static void test_statistics(void) {
  float row[NTOK];
  for (int i = 0; i < NTOK; i++) row[i] = (float)log(probs[i]) + 3.0f;
  static const struct { double t; size_t k; double p, minp; const char *name; } cfg[] = {
    { 1.0, 0, 1.0, 0.0, "plain" },          { 0.7, 0, 1.0, 0.0, "T=0.7" },
    { 1.0, 5, 1.0, 0.0, "top-k 5" },        { 1.0, 0, 0.8, 0.0, "top-p 0.8" },
    { 1.0, 0, 0.0, 0.12, "min-p 0.12" },    { 1.3, 8, 0.9, 0.05, "T=1.3 top-k 8 top-p 0.9 min-p 0.05" },
    { 2.0, 0, 0.5, 0.0, "T=2 top-p 0.5" },
  };
  {
    const int isa = tu_isa_at;
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
      for (int m = 0; m < 2; m++) {
        smx_sample_params p = { cfg[c].t, cfg[c].k, cfg[c].p, cfg[c].minp, 0, (smx_sample_method)m, 0 };
        char what[128];
        snprintf(what, sizeof what, "%s %s %s", tu_isa_names[isa], cfg[c].name, m ? "gumbel" : "multinomial");
        chi_square(row, NTOK, &p, 1234 + c, what);
      }
  }
  if (!tu_isa_once) return;   /* the long rows: not a kernel set's matter */
  /* a row of several blocks: the hot tokens spread out, the rest far below */
  size_t n = 9001;
  float *big = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) big[i] = -40.0f;
  for (int q = 0; q < NTOK; q++) big[q * 750 + 3] = (float)log(probs[q]);
  float *x = malloc(4000 * n * sizeof(float));
  int64_t tok[4000];
  for (int m = 0; m < 2; m++) {
    for (size_t r = 0; r < 4000; r++) memcpy(x + r * n, big, n * sizeof(float));
    smx_sample_params p = { 1.0, 0, 1.0, 0.0, 0, (smx_sample_method)m, 0 };
    CHECK(smx_sample_rows_f32(x, n, tok, 4000, n, &p, 77, 3, NULL) == SMX_OK, "long rows");
    long cnt[NTOK] = { 0 };
    int other = 0;
    for (int r = 0; r < 4000; r++) {
      if (tok[r] >= 3 && (tok[r] - 3) % 750 == 0 && (tok[r] - 3) / 750 < NTOK) cnt[(tok[r] - 3) / 750]++;
      else other++;
    }
    double chi = 0.0;
    for (int q = 0; q < NTOK; q++) {
      double ex = 4000.0 * probs[q];   /* the rest weighs about 9000 e^-40 / e^-1.2: nothing */
      chi += ((double)cnt[q] - ex) * ((double)cnt[q] - ex) / ex;
    }
    CHECK(other == 0 && chi <= chi2_999[NTOK - 1], "long rows %s: chi-square %.2f, %d others", m ? "gumbel" : "multinomial",
          chi, other);
  }
  free(big);
  free(x);
}

/* The top-p prefix is exactly the smallest one reaching p, ties by index. */
static void test_top_p_prefix(void) {
  /* internal selection against a full sort, on sets with many ties */
  tu_rng r = { 11 };
  for (int rep = 0; rep < 300; rep++) {
    size_t c = 1 + tu_next(&r) % 400;
    double *w = malloc(c * sizeof(double)), *ws = malloc(c * sizeof(double));
    int64_t *idx = malloc(c * sizeof(int64_t)), *is = malloc(c * sizeof(int64_t));
    for (size_t i = 0; i < c; i++) {
      w[i] = rep % 3 == 0 ? (double)(tu_next(&r) % 5) * 0.25 : tu_uniform(&r);
      idx[i] = (int64_t)i + (int64_t)(tu_next(&r) % 2) * 100000;   /* distinct, out of order */
    }
    memcpy(ws, w, c * sizeof(double));
    memcpy(is, idx, c * sizeof(int64_t));
    /* reference: sort (selection sort is fine here), prefix sums */
    for (size_t i = 0; i < c; i++)
      for (size_t j = i + 1; j < c; j++)
        if (ws[j] > ws[i] || (ws[j] == ws[i] && is[j] < is[i])) {
          double tw = ws[i]; ws[i] = ws[j]; ws[j] = tw;
          int64_t ti = is[i]; is[i] = is[j]; is[j] = ti;
        }
    size_t want = 1 + tu_next(&r) % c;   /* the prefix length we aim at */
    long double before = 0.0L;
    for (size_t i = 0; i + 1 < want; i++) before += ws[i];
    long double at = before + ws[want - 1];
    if (at == before) want = 0;          /* a zero weight: no target separates them */
    double target = (double)((before + at) / 2.0L);
    size_t got = want ? smx_sample_prefix(w, idx, c, target) : 0;
    CHECK(got == want, "prefix length %zu, want %zu (c=%zu)", got, want, c);
    /* the same set: sort the first got entries and compare */
    int same = got == want;
    for (size_t i = 0; same && i < got; i++) {
      int found = 0;
      for (size_t j = 0; j < got; j++) found |= idx[j] == is[i];
      same &= found;
    }
    CHECK(same, "prefix set differs from the sorted prefix (c=%zu)", c);
    free(w);
    free(ws);
    free(idx);
    free(is);
  }
  /* through the API: which tokens can come out at all */
  static const double pr[6] = { 0.05, 0.25, 0.35, 0.1, 0.2, 0.05 };   /* order: 2, 1, 4, 3, 0, 5 */
  static const struct { double p; int keep[6]; } cases[] = {
    { 0.34, { 0, 0, 1, 0, 0, 0 } },    /* 0.35 reaches it                         */
    { 0.59, { 0, 1, 1, 0, 0, 0 } },    /* 0.60                                    */
    { 0.61, { 0, 1, 1, 0, 1, 0 } },    /* 0.80                                    */
    { 0.92, { 1, 1, 1, 1, 1, 0 } },    /* 0.95: the tie at 0.05 goes to index 0   */
    { 0.97, { 1, 1, 1, 1, 1, 1 } },
  };
  size_t rows = 20000;
  float *x = malloc(rows * 6 * sizeof(float));
  int64_t *tok = malloc(rows * sizeof(int64_t));
  for (size_t q = 0; q < rows * 6; q++) x[q] = (float)log(pr[q % 6]);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int m = 0; m < 2; m++) {
      smx_sample_params p = { 1.0, 0, cases[c].p, 0.0, 0, (smx_sample_method)m, 0 };
      CHECK(smx_sample_rows_f32(x, 6, tok, rows, 6, &p, 5, 0, NULL) == SMX_OK, "top-p api");
      int seen[6] = { 0 }, bad = 0;
      for (size_t q = 0; q < rows; q++) {
        if (tok[q] < 0 || tok[q] > 5) { bad = 1; continue; }
        seen[tok[q]] = 1;
      }
      for (int i = 0; i < 6; i++) bad |= seen[i] != cases[c].keep[i];
      CHECK(!bad, "top-p %.2f (%s): kept set is not the smallest prefix", cases[c].p, m ? "gumbel" : "multinomial");
    }
  free(x);
  free(tok);
}

static void test_greedy_and_specials(void) {
  float x[3][6] = { { 1, 5, 2, 5, -INFINITY, 0 },
                    { 1, NAN, 2, 3, 4, 5 },
                    { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY } };
  int64_t t[3];
  smx_sample_params g = { 0.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 };
  for (int m = 0; m < 2; m++) {
    g.method = (smx_sample_method)m;
    g.greedy = 0;
    g.temperature = 0.0;
    CHECK(smx_sample_rows_f32(&x[0][0], 6, t, 3, 6, &g, 1, 2, NULL) == SMX_OK, "greedy");
    CHECK(t[0] == 1 && t[1] == -1 && t[2] == -1, "T=0 greedy: %lld %lld %lld", (long long)t[0], (long long)t[1], (long long)t[2]);
    g.greedy = 1;
    g.temperature = 1.0;
    CHECK(smx_sample_rows_f32(&x[0][0], 6, t, 3, 6, &g, 1, 2, NULL) == SMX_OK && t[0] == 1, "greedy flag");
    g.greedy = 0;
    CHECK(smx_sample_rows_f32(&x[0][0], 6, t, 3, 6, &g, 1, 2, NULL) == SMX_OK, "specials");
    CHECK(t[0] >= 0 && t[0] != 4 && t[1] == -1 && t[2] == -1, "NaN / all -inf rows give -1: %lld %lld", (long long)t[1],
          (long long)t[2]);
  }
  /* +inf entries: uniform among them, nothing else */
  size_t rows = 4000;
  float *xi = malloc(rows * 5 * sizeof(float));
  int64_t *tok = malloc(rows * sizeof(int64_t));
  for (size_t r = 0; r < rows; r++) {
    float row[5] = { 1.0f, INFINITY, 3.0f, INFINITY, 1e30f };
    memcpy(xi + r * 5, row, sizeof row);
  }
  for (int m = 0; m < 2; m++) {
    smx_sample_params p = { 1.0, 2, 0.5, 0.0, 0, (smx_sample_method)m, 0 };
    CHECK(smx_sample_rows_f32(xi, 5, tok, rows, 5, &p, 9, 0, NULL) == SMX_OK, "+inf");
    long c1 = 0, c3 = 0, other = 0;
    for (size_t r = 0; r < rows; r++) { c1 += tok[r] == 1; c3 += tok[r] == 3; other += tok[r] != 1 && tok[r] != 3; }
    double chi = (double)(c1 - c3) * (double)(c1 - c3) / (double)rows;
    CHECK(other == 0 && chi <= chi2_999[1], "+inf entries: %ld %ld %ld", c1, c3, other);
  }
  free(xi);
  free(tok);
}

/* Same tokens for every thread count and run; f16 / bf16 as f32 on the widened values. */
static void test_reproducible(void) {
  size_t rows = 101, cols = 5003;
  float *x = malloc(rows * cols * sizeof(float)), *xh = malloc(rows * cols * sizeof(float));
  uint16_t *h = malloc(rows * cols * 2), *b = malloc(rows * cols * 2);
  tu_rng r = { 21 };
  for (size_t i = 0; i < rows * cols; i++) x[i] = 2.5f * tu_normal(&r);
  int64_t t1[101], t2[101];
  static const smx_sample_params ps[] = {
    { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 }, { 0.8, 40, 0.9, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 },
    { 1.0, 0, 0.9, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 },  { 1.2, 0, 1.0, 0.02, 0, SMX_SAMPLE_GUMBEL_MAX, 0 },
    { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 },
  };
  for (size_t c = 0; c < sizeof ps / sizeof ps[0]; c++) {
    smx_options o1 = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
    CHECK(smx_sample_rows_f32(x, cols, t1, rows, cols, &ps[c], 42, 7, &o1) == SMX_OK, "repro");
    static const int th[] = { 1, 2, 3, 7 };
    for (int q = 0; q < 4; q++) {
      smx_options o = { SMX_ALGO_AUTO, 0.0, 0, th[q], NULL };
      CHECK(smx_sample_rows_f32(x, cols, t2, rows, cols, &ps[c], 42, 7, &o) == SMX_OK, "repro threads");
      CHECK(!memcmp(t1, t2, sizeof t1), "config %zu: threads=%d changes tokens", c, th[q]);
    }
    /* a batch in two pieces, the second with row_offset, draws as if whole */
    smx_sample_params second = ps[c];
    second.row_offset = 40;
    CHECK(smx_sample_rows_f32(x, cols, t2, 40, cols, &ps[c], 42, 7, &o1) == SMX_OK &&
              smx_sample_rows_f32(x + 40 * cols, cols, t2 + 40, rows - 40, cols, &second, 42, 7, &o1) == SMX_OK &&
              !memcmp(t1, t2, sizeof t1), "config %zu: row_offset pieces differ from the whole batch", c);
    CHECK(smx_sample_rows_f32(x, cols, t2, rows, cols, &ps[c], 42, 8, &o1) == SMX_OK, "step");
    int differ = 0;
    for (size_t q = 0; q < rows; q++) differ += t1[q] != t2[q];
    CHECK(differ > (int)rows / 2, "config %zu: another step gives the same tokens (%d differ)", c, differ);
    for (int fmt = 0; fmt < 2; fmt++) {
      for (size_t i = 0; i < rows * cols; i++) {
        if (fmt == 0) { h[i] = smx_f32_to_f16(x[i]); xh[i] = smx_f16_to_f32(h[i]); }
        else { b[i] = smx_f32_to_bf16(x[i]); xh[i] = smx_bf16_to_f32(b[i]); }
      }
      CHECK(smx_sample_rows_f32(xh, cols, t1, rows, cols, &ps[c], 3, 1, &o1) == SMX_OK, "half ref");
      smx_options o2 = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
      smx_status s = fmt == 0 ? smx_sample_rows_f16(h, cols, t2, rows, cols, &ps[c], 3, 1, &o2)
                              : smx_sample_rows_bf16(b, cols, t2, rows, cols, &ps[c], 3, 1, &o2);
      CHECK(s == SMX_OK && !memcmp(t1, t2, sizeof t1), "config %zu: %s tokens differ from f32", c, fmt ? "bf16" : "f16");
    }
  }
  free(x);
  free(xh);
  free(h);
  free(b);
}

static void test_bad_args(void) {
  float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  int64_t t[4] = { -7, -7, -7, -7 };
  smx_sample_params ok = { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 };
  smx_sample_params bt = ok, bp = ok, bp2 = ok, bm = ok, bmeth = ok, bn = ok;
  bt.temperature = -1.0;
  bn.temperature = NAN;
  bp.top_p = 1.5;
  bp2.top_p = NAN;
  bm.min_p = -0.1;
  bmeth.method = (smx_sample_method)7;
  smx_options ot = { SMX_ALGO_AUTO, 2.0, 0, 1, NULL }, oth = { SMX_ALGO_AUTO, 0.0, 0, -2, NULL };
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bt, 0, 0, NULL) == SMX_E_INVALID_ARG, "T < 0");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bn, 0, 0, NULL) == SMX_E_INVALID_ARG, "T NaN");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bp, 0, 0, NULL) == SMX_E_INVALID_ARG, "top_p > 1");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bp2, 0, 0, NULL) == SMX_E_INVALID_ARG, "top_p NaN");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bm, 0, 0, NULL) == SMX_E_INVALID_ARG, "min_p < 0");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &bmeth, 0, 0, NULL) == SMX_E_INVALID_ARG, "method");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, NULL, 0, 0, NULL) == SMX_E_INVALID_ARG, "params NULL");
  CHECK(smx_sample_rows_f32(NULL, 4, t, 2, 4, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "x NULL");
  CHECK(smx_sample_rows_f32(x, 4, NULL, 2, 4, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "tokens NULL");
  CHECK(smx_sample_rows_f32(x, 3, t, 2, 4, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "ldx < cols");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 0, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "cols = 0");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &ok, 0, 0, &ot) == SMX_E_INVALID_ARG, "opt temperature");
  CHECK(smx_sample_rows_f32(x, 4, t, 2, 4, &ok, 0, 0, &oth) == SMX_E_INVALID_ARG, "threads < 0");
  CHECK(smx_sample_rows_f32(x, 4, (int64_t *)(void *)(x + 2), 2, 4, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "overlap");
  CHECK(smx_sample_rows_f16(NULL, 4, t, 2, 4, &ok, 0, 0, NULL) == SMX_E_INVALID_ARG, "f16 NULL");
  CHECK(smx_sample_rows_bf16((const uint16_t *)(const void *)x, 4, t, 2, 4, &bp, 0, 0, NULL) == SMX_E_INVALID_ARG, "bf16 top_p");
  CHECK(smx_sample_rows_f32(x, 4, t, 0, 4, &ok, 0, 0, NULL) == SMX_OK, "rows = 0");
  CHECK(t[0] == -7 && t[1] == -7 && t[2] == -7 && t[3] == -7, "a refused call wrote tokens");
  uint32_t c[4] = { 0, 0, 0, 0 };
  CHECK(smx_philox4x32(0, NULL, c) == SMX_E_INVALID_ARG && smx_philox4x32(0, c, NULL) == SMX_E_INVALID_ARG, "philox NULL");
}

/* Random123's known answers for Philox4x32-10 (key words = seed low, high). */
static void test_philox(void) {
  static const struct { uint32_t ctr[4]; uint64_t seed; uint32_t out[4]; } kat[] = {
    { { 0, 0, 0, 0 }, 0, { 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u } },
    { { 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu }, 0xffffffffffffffffull,
      { 0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu } },
    { { 0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u }, 0x299f31d0a4093822ull,
      { 0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u } },
  };
  for (int q = 0; q < 3; q++) {
    uint32_t o[4];
    CHECK(smx_philox4x32(kat[q].seed, kat[q].ctr, o) == SMX_OK && !memcmp(o, kat[q].out, sizeof o),
          "philox known answer %d: %08x %08x %08x %08x", q, o[0], o[1], o[2], o[3]);
  }
}

/* The Gumbel noise as documented, rebuilt from the public generator. */
static double gumbel_ref(uint64_t seed, uint64_t row, uint64_t step, uint32_t i) {
  uint32_t c[4] = { i, (uint32_t)row, (uint32_t)step, (uint32_t)(step >> 32) }, w[4];
  smx_philox4x32(seed, c, w);
  double u = ((double)((uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32) + 0.5) * 0x1p-53;
  return -log(-log(u));
}

static void test_gumbel_softmax(void) {
  size_t rows = 9, cols = 300, ld = 301;
  float *x = malloc(rows * ld * 4), *y = malloc(rows * ld * 4), *h = malloc(rows * ld * 4), *s = malloc(rows * ld * 4);
  tu_rng r = { 8 };
  for (size_t i = 0; i < rows * ld; i++) x[i] = 2.0f * tu_normal(&r);
  x[ld + 4] = -INFINITY;
  double taus[3] = { 1.0, 0.3, 5.0 };
  for (int q = 0; q < 3; q++) {
    double tau = taus[q];
    smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
    CHECK(smx_gumbel_softmax_rows_f32(x, ld, y, ld, rows, cols, tau, 17, 4, &o) == SMX_OK, "gumbel soft");
    CHECK(smx_gumbel_softmax_hard_rows_f32(x, ld, h, ld, s, ld, rows, cols, tau, 17, 4, NULL) == SMX_OK, "gumbel hard");
    for (size_t rr = 0; rr < rows; rr++) {
      float z[300];
      for (size_t i = 0; i < cols; i++) z[i] = (float)((double)x[rr * ld + i] + gumbel_ref(17, rr, 4, (uint32_t)i));
      long double m;
      long double ld_ = tu_ref_logd(z, cols, (float)tau, &m);
      size_t best = 0;
      int ok = 1, hot = 1;
      for (size_t i = 0; i < cols; i++) {
        if (z[i] > z[best]) best = i;
        long double t = ((long double)z[i] - m) / (long double)tau, ref = expl(t - ld_);
        float v = y[rr * ld + i];
        if (ref >= FLT_MIN) ok &= fabsl((long double)v - ref) <= (4.0L + fabsl(t) / 2.0L) * FLT_EPSILON * ref;
        else ok &= v >= 0.0f && v < FLT_MIN;
        ok &= tu_same(v, s[rr * ld + i]);
      }
      for (size_t i = 0; i < cols; i++) hot &= h[rr * ld + i] == (i == best ? 1.0f : 0.0f);
      CHECK(ok, "gumbel soft row %zu tau %g: outside the softmax bound, or y_soft differs", rr, tau);
      CHECK(hot, "gumbel hard row %zu: not the one-hot of argmax", rr);
      CHECK(x[ld + 4] == -INFINITY && (rr != 1 || y[ld + 4] == 0.0f), "masked entry");
    }
    /* backward against long double, and in place */
    float *g = malloc(rows * ld * 4), *dx = malloc(rows * ld * 4);
    for (size_t i = 0; i < rows * ld; i++) g[i] = tu_normal(&r);
    CHECK(smx_gumbel_softmax_backward_rows_f32(y, ld, g, ld, dx, ld, rows, cols, tau, NULL) == SMX_OK, "backward");
    int ok = 1;
    for (size_t rr = 0; rr < rows; rr++) {
      long double dot = 0.0L;
      for (size_t i = 0; i < cols; i++) dot += (long double)g[rr * ld + i] * y[rr * ld + i];
      for (size_t i = 0; i < cols; i++) {
        long double ref = (long double)y[rr * ld + i] * ((long double)g[rr * ld + i] - dot) / (long double)tau;
        ok &= fabsl((long double)dx[rr * ld + i] - ref) <= 4.0L * FLT_EPSILON * (fabsl(ref) + 1e-30L) + 1e-7L * y[rr * ld + i] / tau;
      }
    }
    CHECK(ok, "gumbel backward tau %g", tau);
    CHECK(smx_gumbel_softmax_backward_rows_f32(y, ld, g, ld, g, ld, rows, cols, tau, NULL) == SMX_OK, "in place");
    int same = 1;
    for (size_t rr = 0; rr < rows; rr++) same &= !memcmp(g + rr * ld, dx + rr * ld, cols * 4);
    CHECK(same, "backward in place differs");
    free(g);
    free(dx);
  }
  /* hard samples follow softmax(x): chi-square over identical rows */
  size_t n = 6, N = 30000;
  float *xr = malloc(N * n * 4), *hh = malloc(N * n * 4);
  static const double pr[6] = { 0.1, 0.3, 0.05, 0.25, 0.2, 0.1 };
  for (size_t q = 0; q < N * n; q++) xr[q] = (float)log(pr[q % n]);
  CHECK(smx_gumbel_softmax_hard_rows_f32(xr, n, hh, n, NULL, 0, N, n, 0.5, 99, 0, NULL) == SMX_OK, "hard N");
  long cnt[6] = { 0 };
  for (size_t q = 0; q < N; q++)
    for (size_t i = 0; i < n; i++) cnt[i] += hh[q * n + i] == 1.0f;
  double chi = 0.0;
  for (size_t i = 0; i < n; i++) chi += ((double)cnt[i] - N * pr[i]) * ((double)cnt[i] - N * pr[i]) / (N * pr[i]);
  CHECK(chi <= chi2_999[5], "hard Gumbel-softmax frequencies: chi-square %.2f", chi);
  free(xr);
  free(hh);
  /* f16 / bf16: the f32 result on the widened values, rounded once */
  {
    size_t hr = 5, hc = 333;
    uint16_t *xh = malloc(hr * hc * 2), *yh1 = malloc(hr * hc * 2), *yh2 = malloc(hr * hc * 2);
    float *xw = malloc(hr * hc * 4), *yw = malloc(hr * hc * 4), *yw2 = malloc(hr * hc * 4);
    for (int fmt = 0; fmt < 2; fmt++) {
      for (size_t i = 0; i < hr * hc; i++) {
        float f = 2.0f * tu_normal(&r);
        xh[i] = fmt ? smx_f32_to_bf16(f) : smx_f32_to_f16(f);
        xw[i] = fmt ? smx_bf16_to_f32(xh[i]) : smx_f16_to_f32(xh[i]);
      }
      smx_options o2 = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
      smx_status s1 = fmt ? smx_gumbel_softmax_hard_rows_bf16(xh, hc, yh1, hc, yh2, hc, hr, hc, 0.6, 4, 9, &o2)
                          : smx_gumbel_softmax_hard_rows_f16(xh, hc, yh1, hc, yh2, hc, hr, hc, 0.6, 4, 9, &o2);
      CHECK(s1 == SMX_OK && smx_gumbel_softmax_hard_rows_f32(xw, hc, yw, hc, yw2, hc, hr, hc, 0.6, 4, 9, NULL) == SMX_OK,
            "gumbel half");
      int same = 1;
      for (size_t i = 0; i < hr * hc; i++) {
        uint16_t h1 = fmt ? smx_f32_to_bf16(yw[i]) : smx_f32_to_f16(yw[i]);
        uint16_t h2 = fmt ? smx_f32_to_bf16(yw2[i]) : smx_f32_to_f16(yw2[i]);
        same &= h1 == yh1[i] && h2 == yh2[i];
      }
      CHECK(same, "gumbel %s differs from f32 on the widened values", fmt ? "bf16" : "f16");
      s1 = fmt ? smx_gumbel_softmax_rows_bf16(xh, hc, xh, hc, hr, hc, 0.6, 4, 9, NULL)
               : smx_gumbel_softmax_rows_f16(xh, hc, xh, hc, hr, hc, 0.6, 4, 9, NULL);
      CHECK(s1 == SMX_OK && !memcmp(xh, yh2, hr * hc * 2), "gumbel %s in place", fmt ? "bf16" : "f16");
      CHECK(smx_gumbel_softmax_rows_f16(xh, hc, xh + 1, hc, hr, hc, 0.6, 4, 9, NULL) == SMX_E_INVALID_ARG, "half overlap");
    }
    free(xh);
    free(yh1);
    free(yh2);
    free(xw);
    free(yw);
    free(yw2);
  }
  /* special rows and bad arguments */
  float sp[2][3] = { { 1.0f, NAN, 2.0f }, { -INFINITY, -INFINITY, -INFINITY } }, yh[6], ys[6];
  smx_options on = { SMX_ALGO_AUTO, 0.0, SMX_FLAG_MASKED_ROW_NAN, 1, NULL };
  CHECK(smx_gumbel_softmax_hard_rows_f32(&sp[0][0], 3, yh, 3, ys, 3, 2, 3, 1.0, 1, 1, NULL) == SMX_OK, "special");
  CHECK(yh[0] != yh[0] && ys[0] != ys[0] && yh[3] == 0.0f && ys[3] == 0.0f, "NaN row / masked row");
  CHECK(smx_gumbel_softmax_hard_rows_f32(&sp[0][0], 3, yh, 3, ys, 3, 2, 3, 1.0, 1, 1, &on) == SMX_OK && yh[3] != yh[3] &&
            ys[3] != ys[3], "masked row NaN flag");
  for (int i = 0; i < 6; i++) yh[i] = -7.0f;
  CHECK(smx_gumbel_softmax_rows_f32(&sp[0][0], 3, yh, 3, 2, 3, 0.0, 1, 1, NULL) == SMX_E_INVALID_ARG, "tau 0");
  CHECK(smx_gumbel_softmax_rows_f32(&sp[0][0], 3, yh, 3, 2, 3, INFINITY, 1, 1, NULL) == SMX_E_INVALID_ARG, "tau inf");
  CHECK(smx_gumbel_softmax_rows_f32(&sp[0][0], 3, yh, 3, 2, 3, NAN, 1, 1, NULL) == SMX_E_INVALID_ARG, "tau NaN");
  CHECK(smx_gumbel_softmax_rows_f32(&sp[0][0], 3, &sp[0][1], 3, 2, 3, 1.0, 1, 1, NULL) == SMX_E_INVALID_ARG, "overlap");
  CHECK(smx_gumbel_softmax_hard_rows_f32(&sp[0][0], 3, NULL, 3, yh, 3, 2, 3, 1.0, 1, 1, NULL) == SMX_E_INVALID_ARG, "hard NULL");
  CHECK(smx_gumbel_softmax_backward_rows_f32(yh, 3, yh, 3, yh, 3, 2, 3, 1.0, NULL) == SMX_E_INVALID_ARG, "dx on y");
  CHECK(smx_gumbel_softmax_backward_rows_f32(yh, 3, ys, 3, ys, 3, 2, 3, -1.0, NULL) == SMX_E_INVALID_ARG, "backward tau");
  int untouched = 1;
  for (int i = 0; i < 6; i++) untouched &= yh[i] == -7.0f;
  CHECK(untouched, "a refused Gumbel call wrote");
  free(x);
  free(y);
  free(h);
  free(s);
}

/* f64 rows: at T = 1 (and greedy) the tokens of the f32 rows for the same (float-valued) logits, with every
 * filter and both methods: x - max is exact in double and rounds to the float difference; the specials; a
 * row spanning more than DBL_MAX, which only a double holds. */
static void test_f64_rows(void) {
  enum { R = 6, C = 3000 };
  static float xf[R * C];
  static double xd[R * C];
  tu_rng rng = { 42 };
  for (size_t i = 0; i < (size_t)R * C; i++) xd[i] = xf[i] = 3.0f * tu_normal(&rng);
  xd[C + 5] = xf[C + 5] = NAN;                                   /* row 1: NaN */
  xd[2 * C + 7] = xf[2 * C + 7] = INFINITY;                      /* row 2: two +inf */
  xd[2 * C + 900] = xf[2 * C + 900] = INFINITY;
  for (size_t j = 0; j < C; j++) xd[3 * C + j] = xf[3 * C + j] = -INFINITY;   /* row 3: no entry */
  int64_t t32[R], t64[R];
  const smx_sample_params ps[5] = { { 1.0, 0, 0.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 },
                                    { 1.0, 40, 0.9, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 3 },
                                    { 1.0, 0, 0.5, 0.01, 0, SMX_SAMPLE_GUMBEL_MAX, 0 },
                                    { 1.0, 7, 0.0, 0.0, 0, SMX_SAMPLE_GUMBEL_MAX, 0 },
                                    { 0.0, 0, 0.0, 0.0, 1, SMX_SAMPLE_MULTINOMIAL, 0 } };
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 2, NULL };
  for (int q = 0; q < 5; q++)
    for (uint64_t step = 0; step < 20; step++) {
      CHECK(smx_sample_rows_f32(xf, C, t32, R, C, &ps[q], 99, step, &o) == SMX_OK &&
                smx_sample_rows_f64(xd, C, t64, R, C, &ps[q], 99, step, &o) == SMX_OK,
            "f64 status");
      int same = 1;
      for (int r = 0; r < R; r++) same &= t32[r] == t64[r];
      CHECK(same, "f64 params %d step %llu: tokens differ from f32's", q, (unsigned long long)step);
    }
  CHECK(t64[1] == -1 && t64[3] == -1 && (t64[2] == 7 || t64[2] == 900), "f64 specials: %lld %lld %lld",
        (long long)t64[1], (long long)t64[3], (long long)t64[2]);
  /* beyond float and beyond DBL_MAX apart: the top entry (and only it) carries the mass at T = 1; at T = 1e308
   * the two ends, 3.4e308 apart, are e^-3.4 apart and both are drawn */
  double wide[3] = { -1.7e308, 1.7e308, -1.0e308 };
  smx_sample_params p1 = { 1.0, 0, 0.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 }, pw = p1;
  pw.temperature = 1e308;
  int64_t tok;
  size_t hits[3] = { 0, 0, 0 };
  for (uint64_t step = 0; step < 400; step++) {
    CHECK(smx_sample_rows_f64(wide, 3, &tok, 1, 3, &p1, 5, step, &o) == SMX_OK && tok == 1, "wide, T = 1");
    CHECK(smx_sample_rows_f64(wide, 3, &tok, 1, 3, &pw, 5, step, &o) == SMX_OK && tok >= 0 && tok < 3,
          "wide, T = 1e308");
    if (tok >= 0 && tok < 3) hits[tok]++;
  }
  CHECK(hits[0] > 0 && hits[1] > hits[0] && hits[2] > 0, "wide rows at T = 1e308: %zu %zu %zu", hits[0], hits[1],
        hits[2]);
}

/* f16 / bf16 gumbel backward: the f32 backward of the widened rows, rounded once (the same bits). */
static void test_gumbel_backward_half(void) {
  enum { R = 3, C = 257 };
  uint16_t yh[R * C], gh[R * C], dh[R * C];
  float yf[R * C], gf[R * C], df[R * C];
  tu_rng rng = { 8 };
  for (int kind = 0; kind < 2; kind++) {
    for (int i = 0; i < R * C; i++) {
      float a = (float)tu_uniform(&rng) / 64.0f, b = tu_normal(&rng);
      yh[i] = kind ? smx_f32_to_bf16(a) : smx_f32_to_f16(a);
      gh[i] = kind ? smx_f32_to_bf16(b) : smx_f32_to_f16(b);
      yf[i] = kind ? smx_bf16_to_f32(yh[i]) : smx_f16_to_f32(yh[i]);
      gf[i] = kind ? smx_bf16_to_f32(gh[i]) : smx_f16_to_f32(gh[i]);
    }
    smx_status s = kind ? smx_gumbel_softmax_backward_rows_bf16(yh, C, gh, C, dh, C, R, C, 0.7, NULL)
                        : smx_gumbel_softmax_backward_rows_f16(yh, C, gh, C, dh, C, R, C, 0.7, NULL);
    CHECK(s == SMX_OK && smx_gumbel_softmax_backward_rows_f32(yf, C, gf, C, df, C, R, C, 0.7, NULL) == SMX_OK,
          "half gumbel backward status");
    int same = 1;
    for (int i = 0; i < R * C; i++) same &= dh[i] == (kind ? smx_f32_to_bf16(df[i]) : smx_f32_to_f16(df[i]));
    CHECK(same, "%s gumbel backward is not the f32 one rounded once", kind ? "bf16" : "f16");
    CHECK((kind ? smx_gumbel_softmax_backward_rows_bf16(yh, C, gh, C, dh, C, R, C, 0.0, NULL)
                : smx_gumbel_softmax_backward_rows_f16(yh, C, gh, C, dh, C, R, C, 0.0, NULL)) == SMX_E_INVALID_ARG,
          "tau 0");
  }
}

int main(void) {
  tu_isa_start(2);
  test_statistics();
  if (tu_isa_once) {
    test_gumbel_backward_half();
    test_f64_rows();
    test_philox();
    test_bad_args();
    test_greedy_and_specials();
    test_top_p_prefix();
    test_reproducible();
    test_gumbel_softmax();
  }
  return tu_finish("test_sample");
}
