/*
 * The smx eval HTML report (programs/report): escaping, sorting, the exact
 * ROC curve and its thinning against brute force, histogram and reliability
 * binning, the page structure for edge cases (no OOD set, one score,
 * constant scores, NaN dropped and counted, 5M scores in a page of bounded
 * size), argument checks, and the atomic write.
 */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "escape.h"
#include "histogram.h"
#include "html_table.h"
#include "reliability.h"
#include "report.h"
#include "roc.h"
#include "score_set.h"
#include "strbuf.h"

/* ------------------------------------------------------------ helpers */
static size_t count_sub(const char *s, const char *sub) {
  size_t n = 0, k = strlen(sub);
  for (const char *p = strstr(s, sub); p; p = strstr(p + k, sub)) n++;
  return n;
}

static char *escaped(const char *s) {
  rep_buf b = { 0 };
  rep_put(&b, "");
  rep_escape(&b, s);
  return b.data;
}

static char *render(const smx_report *r, size_t *len) {
  char *html = NULL, err[256] = "";
  size_t l = 0;
  smx_status st = smx_report_render_html(r, &html, &l, err, sizeof err);
  CHECK(st == SMX_OK, "render: %d %s", (int)st, err);
  if (len) *len = l;
  if (html) CHECK(strlen(html) == l, "length %zu vs %zu", strlen(html), l);
  return html;
}

/* ------------------------------------------------------------ escaping */
static void test_escape(void) {
  static const struct { const char *in, *out; } cases[] = {
    { "plain text", "plain text" },
    { "<a href='x'>&\"", "&lt;a href=&#39;x&#39;&gt;&amp;&quot;" },
    { "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80" },
    { "tab\tnew\nline", "tab\tnew\nline" },
    { "a\x01" "b\x7F" "c", "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c" },
    { "C1 \xC2\x85!", "C1 \xEF\xBF\xBD!" },
    { "bad \xFF byte", "bad \xEF\xBF\xBD byte" },
    { "overlong \xC0\xAF", "overlong \xEF\xBF\xBD\xEF\xBF\xBD" },
    { "surrogate \xED\xA0\x80", "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
    { "above max \xF4\x90\x80\x80", "above max \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
    { "cut \xE2\x82", "cut \xEF\xBF\xBD\xEF\xBF\xBD" },
    { "", "" },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char *e = escaped(cases[k].in);
    CHECK(e && strcmp(e, cases[k].out) == 0, "escape case %zu: got '%s'", k, e ? e : "(null)");
    free(e);
  }
  rep_buf b = { 0 };
  rep_escape_max(&b, "abc<def", 4);
  CHECK(b.data && strcmp(b.data, "abc&lt;\xE2\x80\xA6") == 0, "escape_max: %s", b.data);
  rep_free(&b);
  rep_escape_max(&b, "\xC3\xA9\xC3\xA9\xC3\xA9", 2);
  CHECK(b.data && strcmp(b.data, "\xC3\xA9\xC3\xA9\xE2\x80\xA6") == 0, "escape_max keeps whole characters");
  rep_free(&b);
  rep_escape_max(&b, "short", 5);
  CHECK(b.data && strcmp(b.data, "short") == 0, "escape_max: no ellipsis when it fits");
  rep_free(&b);
}

/* ------------------------------------------------------------ sorting */
static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

static void test_sort(void) {
  tu_rng g = { 7 };
  for (size_t n = 0; n < 20000; n = n * 3 + 1) {
    double *v = malloc((n + 1) * sizeof *v), *w = malloc((n + 1) * sizeof *w);
    for (size_t i = 0; i < n; i++) {
      uint64_t r = tu_next(&g);
      switch (r % 6) {
        case 0: v[i] = (double)tu_normal(&g) * 1e3; break;
        case 1: v[i] = -(double)(r % 7); break;
        case 2: v[i] = (r >> 8) % 2 ? INFINITY : -INFINITY; break;
        case 3: v[i] = (r >> 8) % 2 ? 5e-324 : -DBL_MAX; break;
        default: v[i] = tu_uniform(&g) - 0.5;
      }
      w[i] = v[i];
    }
    CHECK(rep_sort_desc(v, n) == 0, "sort n=%zu", n);
    qsort(w, n, sizeof *w, cmp_desc);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += memcmp(&v[i], &w[i], sizeof(double)) != 0;
    CHECK(bad == 0, "radix sort n=%zu: %zu values differ from qsort", n, bad);
    free(v);
    free(w);
  }
  /* radix passes skipped: keys sharing digits (a narrow range, a constant) */
  for (int kind = 0; kind < 3; kind++) {
    size_t n = 50000;
    double *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
      v[i] = kind == 0 ? 1 + tu_uniform(&g) : kind == 1 ? 7.25 : -(double)(tu_next(&g) % 5);
      w[i] = v[i];
    }
    CHECK(rep_sort_desc(v, n) == 0, "sort kind %d", kind);
    qsort(w, n, sizeof *w, cmp_desc);
    CHECK(memcmp(v, w, n * sizeof *v) == 0, "radix sort with shared digits, kind %d", kind);
    free(v);
    free(w);
  }
  double x[] = { 1, NAN, -0.0, INFINITY, NAN, -INFINITY, 0.0, 2 };
  rep_scores s;
  CHECK(rep_scores_make(&s, x, 8) == 0, "scores_make");
  CHECK(s.n == 6 && s.n_nan == 2 && s.n_posinf == 1 && s.n_neginf == 1, "counts %zu %zu %zu %zu", s.n, s.n_nan,
        s.n_posinf, s.n_neginf);
  CHECK(s.v[0] == INFINITY && s.v[1] == 2 && s.v[5] == -INFINITY, "order");
  CHECK(!signbit(s.v[3]) && !signbit(s.v[4]), "-0 became +0");
  CHECK(rep_scores_finite(&s) == 4, "finite %zu", rep_scores_finite(&s));
  rep_scores_free(&s);
  CHECK(rep_scores_make(&s, NULL, 0) == 0 && s.n == 0 && s.v == NULL, "empty set");
}

/* ------------------------------------------------------------ ROC */
/* Mann-Whitney with half credit for ties, in O(n m). */
static double brute_auroc(const double *a, size_t na, const double *o, size_t no) {
  double s = 0;
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < no; j++) s += a[i] > o[j] ? 1 : a[i] == o[j] ? 0.5 : 0;
  return s / ((double)na * (double)no);
}

/* FPR at the highest threshold t (among all scores) with TPR(t) >= 0.95. */
static void brute_fpr95(const double *a, size_t na, const double *o, size_t no, double *fpr, double *thr) {
  *thr = -INFINITY;
  *fpr = 1;
  int found = 0;
  for (int pass = 0; pass < 2; pass++) {
    const double *c = pass ? o : a;
    size_t nc = pass ? no : na;
    for (size_t k = 0; k < nc; k++) {
      double t = c[k];
      size_t acc = 0;
      for (size_t i = 0; i < na; i++) acc += a[i] >= t;
      if (20 * acc >= 19 * na && (!found || t > *thr)) { *thr = t; found = 1; }
    }
  }
  size_t f = 0;
  for (size_t j = 0; j < no; j++) f += o[j] >= *thr;
  *fpr = (double)f / (double)no;
}

static void roc_case(const char *what, const double *a, size_t na, const double *o, size_t no) {
  rep_scores sa, so;
  rep_scores_make(&sa, a, na);
  rep_scores_make(&so, o, no);
  rep_roc r;
  CHECK(rep_roc_compute(&r, &sa, &so, 1000) == 0, "%s: compute", what);
  double want = brute_auroc(sa.v, sa.n, so.v, so.n);
  CHECK(r.auroc == want || fabs(r.auroc - want) < 1e-12, "%s: AUROC %.17g want %.17g", what, r.auroc, want);
  double f, t;
  brute_fpr95(sa.v, sa.n, so.v, so.n, &f, &t);
  CHECK(r.fpr95 == f && r.thr95 == t && r.tpr95 >= 0.95, "%s: FPR95 %.17g at %.17g, want %.17g at %.17g", what, r.fpr95,
        r.thr95, f, t);
  CHECK(r.n >= 2 && r.fpr[0] == 0 && r.tpr[0] == 0 && r.fpr[r.n - 1] == 1 && r.tpr[r.n - 1] == 1,
        "%s: ends at (0,0) and (1,1)", what);
  rep_roc_free(&r);
  rep_scores_free(&sa);
  rep_scores_free(&so);
}

static void test_roc(void) {
  tu_rng g = { 11 };
  enum { NA = 400, NO = 300 };
  double a[NA], o[NO];
  for (size_t i = 0; i < NA; i++) a[i] = 1 + (double)tu_normal(&g);
  for (size_t j = 0; j < NO; j++) o[j] = (double)tu_normal(&g);
  roc_case("continuous", a, NA, o, NO);
  for (size_t i = 0; i < NA; i++) a[i] = round(a[i] * 4) / 4;  /* heavy ties, also across the sets */
  for (size_t j = 0; j < NO; j++) o[j] = round(o[j] * 4) / 4;
  roc_case("ties", a, NA, o, NO);
  for (size_t i = 0; i < NA; i++) a[i] = 3;
  for (size_t j = 0; j < NO; j++) o[j] = 3;
  roc_case("all equal", a, NA, o, NO);
  for (size_t i = 0; i < NA; i++) a[i] = 10 + (double)i;
  for (size_t j = 0; j < NO; j++) o[j] = -(double)j;
  roc_case("separated", a, NA, o, NO);
  roc_case("reversed", o, NO, a, NA);
  a[0] = INFINITY;
  o[0] = INFINITY;
  o[1] = -INFINITY;
  roc_case("infinities", a, NA, o, NO);
  roc_case("one each", a, 1, o + 5, 1);

  /* exact values: AUROC 1, 0 and 0.5 */
  rep_scores sa, so;
  rep_roc r;
  double hi[3] = { 5, 6, 7 }, lo[2] = { 1, 2 };
  rep_scores_make(&sa, hi, 3);
  rep_scores_make(&so, lo, 2);
  rep_roc_compute(&r, &sa, &so, 1000);
  CHECK(r.auroc == 1 && r.fpr95 == 0 && r.n_full == 6, "separated: %g %g %zu", r.auroc, r.fpr95, r.n_full);
  rep_roc_free(&r);
  rep_roc_compute(&r, &so, &sa, 1000);
  CHECK(r.auroc == 0 && r.fpr95 == 1, "reversed: %g %g", r.auroc, r.fpr95);
  rep_roc_free(&r);
  rep_scores_free(&sa);
  rep_scores_free(&so);

  /* thinning: 200k + 150k scores give ~350k curve points, drawn with <= 1002,
   * every dropped point within 2/1000 (L1) of the last kept one */
  size_t na = 200000, no = 150000;
  double *x = malloc(na * sizeof *x), *y = malloc(no * sizeof *y);
  for (size_t i = 0; i < na; i++) x[i] = 0.7 + (double)tu_normal(&g);
  for (size_t j = 0; j < no; j++) y[j] = (double)tu_normal(&g);
  rep_scores_make(&sa, x, na);
  rep_scores_make(&so, y, no);
  rep_roc full, thin;
  CHECK(rep_roc_compute(&full, &sa, &so, 100000000) == 0, "full curve");
  CHECK(rep_roc_compute(&thin, &sa, &so, 1000) == 0, "thin curve");
  /* one point per distinct value of the union, plus (0,0) */
  double *u = malloc((na + no) * sizeof *u);
  memcpy(u, x, na * sizeof *u);
  memcpy(u + na, y, no * sizeof *u);
  qsort(u, na + no, sizeof *u, cmp_desc);
  size_t distinct = 1;
  for (size_t k = 1; k < na + no; k++) distinct += u[k] != u[k - 1];
  free(u);
  CHECK(full.n == full.n_full && full.n_full == distinct + 1, "full curve keeps all %zu points (%zu; %zu distinct)",
        full.n_full, full.n, distinct);
  CHECK(thin.n <= 1002 && thin.n >= 500, "thinned to %zu points", thin.n);
  CHECK(thin.auroc == full.auroc && thin.fpr95 == full.fpr95, "area and FPR95 from the exact curve");
  size_t q = 0, far = 0, mono = 0;
  for (size_t k = 0; k < full.n; k++) {
    if (q + 1 < thin.n && full.fpr[k] == thin.fpr[q + 1] && full.tpr[k] == thin.tpr[q + 1]) q++;
    double d = fabs(full.fpr[k] - thin.fpr[q]) + fabs(full.tpr[k] - thin.tpr[q]);
    far += d > 2.0 / 1000 + 1e-12;
  }
  for (size_t k = 1; k < thin.n; k++) mono += thin.fpr[k] < thin.fpr[k - 1] || thin.tpr[k] < thin.tpr[k - 1];
  CHECK(q == thin.n - 1, "thinned points are a subsequence of the exact curve (%zu of %zu)", q + 1, thin.n);
  CHECK(far == 0, "%zu exact points farther than 2/1000 from the drawn curve", far);
  CHECK(mono == 0, "thinned curve monotone");
  double want = 0;
  {
    /* AUROC by ranks (O(n log n)), ties impossible here in practice but handled */
    long double s = 0;
    size_t jj = 0;
    /* both descending: for each ID score, the OOD scores below it */
    for (size_t ii = sa.n; ii-- > 0;) {
      while (jj < so.n && so.v[so.n - 1 - jj] < sa.v[ii]) jj++;
      size_t eq = 0;
      while (jj + eq < so.n && so.v[so.n - 1 - jj - eq] == sa.v[ii]) eq++;
      s += (long double)jj + 0.5L * (long double)eq;
    }
    want = (double)(s / ((long double)sa.n * (long double)so.n));
  }
  CHECK(fabs(full.auroc - want) < 1e-12, "large AUROC %.15g want %.15g", full.auroc, want);
  rep_roc_free(&full);
  rep_roc_free(&thin);
  rep_scores_free(&sa);
  rep_scores_free(&so);
  free(x);
  free(y);
}

/* ------------------------------------------------------------ histogram */
static void test_histogram(void) {
  double v[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, NAN, INFINITY };
  rep_scores s;
  rep_scores_make(&s, v, 13);
  double lo, hi;
  CHECK(rep_hist_range(&s, 1, &lo, &hi) && lo == 0 && hi == 10, "range [%g, %g]", lo, hi);
  size_t c[10];
  rep_hist_count(&s, lo, hi, 10, c);
  size_t sum = 0;
  for (int m = 0; m < 10; m++) sum += c[m];
  CHECK(sum == 11 && c[0] == 1 && c[9] == 2, "counts: sum %zu, first %zu, last (closed) %zu", sum, c[0], c[9]);
  rep_scores_free(&s);

  double k[4] = { 0.25, 0.25, 0.25, 0.25 };
  rep_scores_make(&s, k, 4);
  CHECK(rep_hist_range(&s, 1, &lo, &hi) && lo == -0.25 && hi == 0.75, "constant: [%g, %g]", lo, hi);
  rep_scores_free(&s);
  double big[2] = { 1e300, 1e300 };
  rep_scores_make(&s, big, 2);
  CHECK(rep_hist_range(&s, 1, &lo, &hi) && lo < 1e300 && hi > 1e300, "huge constant gets a range");
  rep_scores_free(&s);
  double ext[3] = { -DBL_MAX, 0, DBL_MAX };
  rep_scores_make(&s, ext, 3);
  CHECK(rep_hist_range(&s, 1, &lo, &hi) && lo == -DBL_MAX && hi == DBL_MAX, "extreme range");
  size_t c50[50];
  rep_hist_count(&s, lo, hi, 50, c50);
  CHECK(c50[0] == 1 && c50[25] == 1 && c50[49] == 1, "extreme range: no overflow (%zu %zu %zu)", c50[0], c50[25],
        c50[49]);
  rep_scores_free(&s);
  double inf_only[2] = { INFINITY, NAN };
  rep_scores_make(&s, inf_only, 2);
  CHECK(!rep_hist_range(&s, 1, &lo, &hi), "no finite value: no range");
  rep_scores_free(&s);
}

/* ------------------------------------------------------------ reliability */
static void test_reliability(void) {
  CHECK(rep_rel_bin(0) == 0 && rep_rel_bin(1) == 14, "ends");
  size_t bad = 0;
  for (int k = 1; k <= 15; k++) {
    double e = (double)k / 15;
    bad += rep_rel_bin(e) != (size_t)(k - 1);                   /* (lo, hi]: the edge is in the lower bin */
    if (k < 15) bad += rep_rel_bin(nextafter(e, 2)) != (size_t)k;  /* just above: the next bin */
    bad += rep_rel_bin(nextafter(e, 0)) != (size_t)(k - 1);
  }
  CHECK(bad == 0, "%zu bin-edge mistakes", bad);

  tu_rng g = { 5 };
  enum { N = 5000 };
  static double conf[N];
  static unsigned char ok[N];
  for (size_t i = 0; i < N; i++) {
    conf[i] = tu_uniform(&g);
    ok[i] = tu_uniform(&g) < conf[i] * 0.8;
  }
  conf[0] = NAN;
  conf[1] = -0.01;
  conf[2] = 1.5;
  conf[3] = 1;
  conf[4] = 0;
  conf[5] = 2.0 / 15;
  rep_rel r;
  rep_rel_compute(&r, conf, ok, N);
  CHECK(r.dropped == 3 && r.n == N - 3, "dropped %zu", r.dropped);
  /* brute force with the documented (lo, hi] comparisons */
  size_t cnt[15] = { 0 }, right[15] = { 0 }, tot = 0, cnt_sum = 0;
  double cs[15] = { 0 };
  for (size_t i = 0; i < N; i++) {
    double c = conf[i];
    if (!(c >= 0 && c <= 1)) continue;
    size_t m = 0;
    while (m < 14 && c > (double)(m + 1) / 15) m++;
    cnt[m]++;
    cs[m] += c;
    right[m] += ok[i];
    tot++;
  }
  double ece = 0;
  for (size_t m = 0; m < 15; m++) {
    cnt_sum += r.count[m];
    bad += r.count[m] != cnt[m];
    if (cnt[m]) ece += (double)cnt[m] / (double)tot * fabs((double)right[m] / cnt[m] - cs[m] / cnt[m]);
  }
  CHECK(bad == 0 && cnt_sum == tot, "bin counts agree with brute force");
  CHECK(fabs(r.ece - ece) < 1e-12, "ECE %.15g want %.15g", r.ece, ece);
  rep_rel_compute(&r, conf, ok, 0);
  CHECK(r.n == 0 && r.ece == 0, "no sample");
}

/* Pre-binned reliability data, as smx eval passes it from smx_calib_result. */
static void test_prebinned(void) {
  smx_report_bin b[4] = {
    { 0.0, 0.25, 0, NAN, NAN },   /* empty: NaN means and all is ignored */
    { 0.25, 0.5, 10, 0.4, 0.2 },
    { 0.5, 0.75, 30, 0.6, 0.7 },
    { 0.75, 1.0, 60, 0.9, 0.9 },
  };
  CHECK(rep_rel_bins_valid(b, 4), "valid bins");
  rep_rel *rr = malloc(sizeof *rr);
  rep_rel_from_bins(rr, b, 4);
  double ece = (10 * 0.2 + 30 * 0.1 + 60 * 0.0) / 100;
  CHECK(rr->n == 100 && fabs(rr->ece - ece) < 1e-15, "ECE %.17g want %.17g, n %llu", rr->ece, ece,
        (unsigned long long)rr->n);
  CHECK(fabs(rr->accuracy - (10 * 0.2 + 30 * 0.7 + 60 * 0.9) / 100) < 1e-15, "accuracy %.17g", rr->accuracy);
  CHECK(rr->conf[0] == 0 && rr->acc[0] == 0, "empty bin's NaN kept out");
  free(rr);
  CHECK(!rep_rel_bins_valid(b, 0) && !rep_rel_bins_valid(NULL, 4), "bin counts");
  /* 2500 bins: drawn as 834 groups of 3, statistics over the 2500 */
  size_t nbig = 2500;
  smx_report_bin *big = malloc(nbig * sizeof *big);
  double e2 = 0;
  uint64_t tot = 0;
  for (size_t m = 0; m < nbig; m++) {
    uint64_t k = m % 7;
    double cf = (m + 0.5) / nbig, ac = (m % 2) ? 1 : 0;
    big[m] = (smx_report_bin){ (double)m / nbig, (double)(m + 1) / nbig, k, k ? cf : NAN, k ? ac : NAN };
    e2 += (double)k * fabs(ac - cf);
    tot += k;
  }
  CHECK(rep_rel_bins_valid(big, nbig), "2500 bins valid");
  rr = malloc(sizeof *rr);
  rep_rel_from_bins(rr, big, nbig);
  uint64_t drawn = 0;
  for (size_t q = 0; q < rr->nb; q++) drawn += rr->count[q];
  CHECK(rr->nb == 834 && rr->merged_from == 2500 && drawn == tot && rr->n == tot, "merged: %zu bins, %llu samples",
        rr->nb, (unsigned long long)drawn);
  CHECK(rr->lo[1] == big[3].lo && rr->hi[1] == big[5].hi && rr->hi[833] == 1, "merged edges");
  CHECK(rr->count[1] == 3 + 4 + 5 && fabs(rr->acc[1] - (3.0 * 1 + 4 * 0 + 5 * 1) / 12) < 1e-15, "merged bin 1");
  CHECK(fabs(rr->ece - e2 / (double)tot) < 1e-12, "ECE over the bins as given: %.15g want %.15g", rr->ece,
        e2 / (double)tot);
  free(rr);
  smx_report_calibration cbig = { .name = "big", .bins_before = big, .n_bins = nbig, .temperature = 1 };
  smx_report rbig = { .title = "merged", .calibration = &cbig, .n_calibration = 1 };
  char *hbig = render(&rbig, NULL);
  CHECK(hbig && strstr(hbig, "samples per bin (834 bins, merged from 2500)"), "merged caption");
  free(hbig);
  free(big);
  smx_report_bin x[2];
  const struct { double lo0, hi0, lo1, hi1, conf, acc; } bad[] = {
    { 0, 0.5, 0.4, 1, 0.5, 0.5 },     /* overlap            */
    { 0.5, 1, 0, 0.5, 0.5, 0.5 },     /* descending         */
    { 0, 0, 0.5, 1, 0.5, 0.5 },       /* empty interval     */
    { -0.1, 0.5, 0.5, 1, 0.5, 0.5 },  /* below 0            */
    { 0, 0.5, 0.5, 1.1, 0.5, 0.5 },   /* above 1            */
    { 0, 0.5, 0.5, 1, NAN, 0.5 },     /* NaN mean, n > 0    */
    { 0, 0.5, 0.5, 1, 0.5, 1.5 },     /* accuracy above 1   */
    { 0, NAN, 0.5, 1, 0.5, 0.5 },     /* NaN edge           */
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    x[0] = (smx_report_bin){ bad[k].lo0, bad[k].hi0, 1, 0.3, 0.3 };
    x[1] = (smx_report_bin){ bad[k].lo1, bad[k].hi1, 1, bad[k].conf, bad[k].acc };
    CHECK(!rep_rel_bins_valid(x, 2), "bad bins case %zu accepted", k);
  }

  /* on the page: 100 bins before and after; 4 bins with no after; refusals */
  smx_report_bin many[100], many_ts[100];
  for (size_t m = 0; m < 100; m++) {
    many[m] = (smx_report_bin){ m / 100.0, (m + 1) / 100.0, m % 3 ? 5 : 0, (m + 0.5) / 100, 0.5 };
    many_ts[m] = (smx_report_bin){ m / 100.0, (m + 1) / 100.0, m % 3 ? 5 : 0, (m + 0.5) / 100, (m + 0.5) / 100 };
  }
  smx_report_calibration c[] = {
    { .name = "binned", .bins_before = many, .bins_after = many_ts, .n_bins = 100, .temperature = 2 },
    { .name = "binned, no T", .bins_before = b, .n_bins = 4, .temperature = NAN, .temperature_note = "no optimum" },
  };
  smx_report r = { .title = "bins", .calibration = c, .n_calibration = 2 };
  char *html = render(&r, NULL);
  if (html) {
    CHECK(count_sub(html, "data-fig=\"reliability-before\" data-name") == 2, "before diagrams");
    CHECK(count_sub(html, "data-fig=\"reliability-after\" data-name") == 1, "after diagram");
    CHECK(count_sub(html, "class=\"smx-missing\" data-fig=\"reliability-after\"") == 1, "no after: a note");
    CHECK(count_sub(html, "<rect class=\"count\"") == 66 * 2 + 3, "count bars %zu", count_sub(html, "<rect class=\"count\""));
    CHECK(strstr(html, "samples per bin (100 bins)") && strstr(html, "samples per bin (4 bins)"), "bin captions");
    CHECK(strstr(html, "ECE 0.0500 \xC2\xB7 accuracy 0.7700") != NULL, "ECE of the 4 bins on the page");
    CHECK(strstr(html, "330 samples binned") != NULL, "100-bin sample count");
    CHECK(strstr(html, "nan") == NULL, "no NaN printed from empty bins");
    free(html);
  }
  char err[200];
  char *out;
  size_t len;
  c[1].bins_after = x;  /* invalid bins after */
  CHECK(smx_report_render_html(&r, &out, &len, err, sizeof err) == SMX_E_INVALID_ARG && strstr(err, "bins"),
        "invalid bins after: %s", err);
  c[1].bins_after = NULL;
  c[1].n_bins = 0;
  CHECK(smx_report_render_html(&r, &out, &len, err, sizeof err) == SMX_E_INVALID_ARG, "n_bins 0");
  c[1].n_bins = 4;
  c[1].bins_before = NULL;
  c[1].bins_after = b;
  CHECK(smx_report_render_html(&r, &out, &len, err, sizeof err) == SMX_E_INVALID_ARG && strstr(err, "none before"),
        "after without before: %s", err);
}


/* ------------------------------------------------------------ reliability geometry */
/* The number after `name="` in the element that starts at p (NAN when absent). */
static double attr(const char *p, const char *name) {
  const char *end = strchr(p, '>');
  char key[40];
  snprintf(key, sizeof key, " %s=\"", name);
  const char *a = strstr(p, key);
  if (!a || (end && a > end)) return NAN;
  return strtod(a + strlen(key), NULL);
}

/* Reads the drawn bars back: every accuracy bar is as tall as its bin's
 * accuracy, nothing overlaps it, and the gap runs from the accuracy to the
 * mean confidence; bins under 10 samples are marked sparse. */
static void test_reliability_geometry(void) {
  smx_report_bin b[6] = {
    { 0.2, 0.4, 3, 0.35, 0.0 },     /* over-confident, accuracy 0, sparse  */
    { 0.4, 0.6, 1, 0.55, 1.0 },     /* under-confident, one sample         */
    { 0.6, 0.7, 40, 0.643, 1.0 },   /* accuracy 1 above confidence 0.643   */
    { 0.7, 0.8, 50, 0.75, 0.62 },   /* over-confident                      */
    { 0.8, 0.9, 0, NAN, NAN },      /* empty: no bar                       */
    { 0.9, 1.0, 80, 0.95, 0.95 },   /* calibrated: no gap                  */
  };
  smx_report_calibration c = { .name = "geometry", .bins_before = b, .n_bins = 6, .temperature = NAN };
  smx_report r = { .title = "g", .calibration = &c, .n_calibration = 1 };
  char *html = render(&r, NULL);
  if (!html) return;
  const char *area = strstr(html, "<rect class=\"plot-area\"");
  CHECK(area != NULL, "plot area marked");
  if (!area) { free(html); return; }
  double ay = attr(area, "y"), ah = attr(area, "height"), ax = attr(area, "x"), aw = attr(area, "width");
  size_t bars = 0, gaps = 0;
  for (const char *p = strstr(html, "<rect class=\"acc"); p; p = strstr(p + 1, "<rect class=\"acc")) {
    int m = (int)attr(p, "data-bin");
    double x = attr(p, "x"), y = attr(p, "y"), w = attr(p, "width"), h = attr(p, "height");
    bars++;
    CHECK(m >= 0 && m < 6 && b[m].n > 0, "bar of bin %d", m);
    if (!(m >= 0 && m < 6)) continue;
    CHECK(fabs(h / ah - b[m].acc) <= 0.1 / ah, "bin %d: bar height %.1f of %.1f, accuracy %.3f", m, h, ah, b[m].acc);
    CHECK(fabs(y + h - (ay + ah)) <= 0.1, "bin %d: bar stands on 0", m);
    CHECK(x >= ax + b[m].lo * aw - 0.1 && x + w <= ax + b[m].hi * aw + 0.1, "bin %d: bar inside its bin", m);
    int sparse = strncmp(p, "<rect class=\"acc sparse\"", 24) == 0;
    CHECK(sparse == (b[m].n < SMX_REPORT_SPARSE_BIN), "bin %d (n %llu): sparse mark %d", m,
          (unsigned long long)b[m].n, sparse);
    /* this bin's gap: beside the bar, from the accuracy to the confidence */
    char key[40];
    snprintf(key, sizeof key, "<rect class=\"gap\" data-bin=\"%d\"", m);
    const char *g = strstr(html, key);
    if (b[m].acc == b[m].conf) {
      CHECK(g == NULL, "bin %d: no gap when calibrated", m);
      continue;
    }
    CHECK(g != NULL, "bin %d: gap drawn", m);
    if (!g) continue;
    gaps++;
    double gx = attr(g, "x"), gy = attr(g, "y"), gw = attr(g, "width"), gh = attr(g, "height");
    CHECK(gx >= x + w - 0.1 || gx + gw <= x + 0.1, "bin %d: the gap [%.1f, %.1f] covers the bar [%.1f, %.1f]", m, gx,
          gx + gw, x, x + w);
    double lo = fmin(b[m].acc, b[m].conf), hi = fmax(b[m].acc, b[m].conf);
    CHECK(fabs((ay + ah - (gy + gh)) / ah - lo) <= 0.1 / ah && fabs((ay + ah - gy) / ah - hi) <= 0.1 / ah,
          "bin %d: gap from %.3f to %.3f", m, lo, hi);
  }
  CHECK(bars == 5 && gaps == 4, "%zu bars, %zu gaps", bars, gaps);
  CHECK(strstr(html, "2 bins with fewer than 10 samples") != NULL, "sparse bins counted under the figure");
  free(html);
}

/* The best value of a column is marked (ties: all) with the direction the
 * column wants shown over its header and explained in the caption, so that
 * a mark never reads as "higher" on a lower-is-better column; a key is never
 * broken; a cell note follows its value. */
static void test_best_marks(void) {
  const char *hdr[] = { "score", "auroc", "fpr_idpos_exact", "thr" };
  const char *txt[] = { "a", NULL, NULL, NULL, "b", NULL, NULL, NULL, "c", NULL, NULL, NULL };
  const char *cnotes[12] = { [11] = "few <samples>" };
  double val[] = { 0, 0.9, 0.30, 5, 0, 0.95, 0.30, 6, 0, NAN, 0.40, 7 };
  const int best[] = { 0, 1, -1, 0 };
  smx_report_table t = { .caption = "t", .ncols = 4, .nrows = 3, .header = hdr, .text = txt, .values = val,
                         .digits = 2, .col_best = best, .cell_notes = cnotes };
  rep_buf b = { 0 };
  rep_html_table(&b, &t);
  CHECK(b.data && count_sub(b.data, "class=\"num best\"") == 3, "best cells %zu", b.data ? count_sub(b.data, "class=\"num best\"") : 0);
  CHECK(b.data && strstr(b.data, "<td class=\"num best\" data-value=\"0.94999999999999996\">0.95<"), "highest auroc");
  CHECK(b.data && count_sub(b.data, "<td class=\"num best\" data-value=\"0.29999999999999999\">0.30<") == 2,
        "both lowest FPRs");
  /* each column's direction over its key, in a row of its own; the keys whole, alone in their <th> */
  CHECK(b.data && strstr(b.data, "<thead><tr class=\"dir\"><td></td><td title=\"higher is better\">\xE2\x96\xB2</td>"
                                 "<td title=\"lower is better\">\xE2\x96\xBC</td><td></td></tr>"
                                 "<tr><th>score</th><th>auroc</th><th>fpr_idpos_exact</th><th>thr</th></tr></thead>"),
        "directions over the keys");
  CHECK(b.data && strstr(b.data, "\xE2\x96\xB2 higher is better, \xE2\x96\xBC lower is better;"), "legend of both marks");
  CHECK(b.data && !strstr(b.data, "<wbr>"), "no break opportunity inside a key");
  CHECK(b.data && count_sub(b.data, "\xE2\x96\xB2") == 2 && count_sub(b.data, "\xE2\x96\xBC") == 2,
        "triangles only over the headers and in the legend");
  CHECK(b.data && strstr(b.data, ">7.00<span class=\"cell-note\">few &lt;samples&gt;</span></td>"), "cell note after the value");
  rep_free(&b);
  {   /* only lower-is-better columns */
    const int down[] = { 0, 0, -1, 0 };
    t.col_best = down;
    rep_html_table(&b, &t);
    CHECK(b.data && strstr(b.data, " <span class=\"best-key\">\xE2\x96\xBC lower is better;") &&
              !strstr(b.data, "higher is better"),
          "only the direction in use is explained");
    rep_free(&b);
  }
  t.col_best = NULL;
  t.cell_notes = NULL;
  rep_html_table(&b, &t);
  CHECK(b.data && !strstr(b.data, "best") && !strstr(b.data, "\xE2\x96"), "nothing marked without col_best");
  rep_free(&b);
}

/* The calibration verdict opens the page: its direction from the mean
 * confidence against the accuracy (over- and under-confident, well
 * calibrated, both ways), the ECE before and after scaling and the fitted T,
 * or why there is no T. */
static void test_verdict(void) {
  enum { N = 1000 };
  static double over[N], under[N], mixed[N], after[N];
  static unsigned char right[N];
  for (size_t i = 0; i < N; i++) {
    right[i] = i % 10 < 7;                 /* accuracy 0.7 */
    over[i] = 0.9;                          /* confidence above it */
    under[i] = 0.5;
    mixed[i] = right[i] ? 0.95 : 0.05;      /* the gaps cancel in the mean, not per bin */
    after[i] = 0.7;                         /* calibrated: conf = acc in its one bin */
  }
  struct { const double *conf, *after; double T; const char *note, *word; } cases[] = {
    { over, after, 2.5, NULL, "over-confident" },
    { under, NULL, NAN, "no temperature fitted (give --val)", "under-confident" },
    { after, NULL, NAN, NULL, "well calibrated" },
    { mixed, NULL, NAN, NULL, "miscalibrated both ways" },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    smx_report_calibration c = { .name = "set", .n = N, .conf_before = cases[k].conf, .correct_before = right,
                                 .conf_after = cases[k].after, .temperature = cases[k].T,
                                 .temperature_note = cases[k].note };
    double sc[] = { 1, 2 };
    smx_report_ood_set os[] = { { "ood", sc, 2 } };
    smx_report_score s[] = { { "msp", sc, 2, os, 1 } };
    const char *hdr[] = { "k" };
    double v[] = { 1 };
    smx_report_table t = { .ncols = 1, .nrows = 1, .header = hdr, .values = v };
    smx_report r = { .title = "v", .tables = &t, .n_tables = 1, .n_lead_tables = 1, .scores = s, .n_scores = 1,
                     .calibration = &c, .n_calibration = 1 };
    char *html = render(&r, NULL);
    if (!html) continue;
    const char *vd = strstr(html, "<div class=\"verdict\""), *lead = strstr(html, "<section class=\"lead\">"),
               *table = strstr(html, "<table"), *cal = strstr(html, "<h2>Calibration</h2>");
    CHECK(vd && lead && table && cal && lead < vd && vd < table && vd < cal, "case %zu: the verdict leads the page", k);
    char want[160];
    snprintf(want, sizeof want, "<b>Calibration: %s", cases[k].word);
    CHECK(vd && strstr(vd, want), "case %zu: %s", k, cases[k].word);
    if (k == 0) {
      CHECK(vd && strstr(vd, "mean confidence 0.9000 against accuracy 0.7000; ECE 0.2000 at T = 1."), "the numbers at T = 1");
      CHECK(vd && strstr(vd, "with the fitted T = 2.5 (above 1: it softens the probabilities): ECE 0.0000 (lower), "
                             "mean confidence 0.7000: then well calibrated."), "after scaling, with T");
    }
    if (k == 1) CHECK(vd && strstr(vd, "No temperature scaling: no temperature fitted (give --val).</p>"), "why no T");
    free(html);
  }
  /* calibration alone (no OOD set, no table): the verdict still opens the page */
  smx_report_calibration c = { .name = "alone", .n = N, .conf_before = over, .correct_before = right, .temperature = NAN };
  smx_report r = { .title = "v", .calibration = &c, .n_calibration = 1 };
  char *html = render(&r, NULL);
  if (html) {
    const char *vd = strstr(html, "data-verdict=\"over-confident\""), *cal = strstr(html, "<h2>Calibration</h2>");
    CHECK(vd && cal && vd < cal, "calibration only: verdict first");
    free(html);
  }
}

/* The ROC overlay: one curve per score, the legend sorted by AUROC, best first. */
static void test_overlay(void) {
  double id[] = { 3, 4, 5, 6 }, weak[] = { 2, 3.5, 4.5, 7 }, strong[] = { 0, 1, 2, 2.5 };
  double id2[] = { 1, 2, 3, 4 };
  smx_report_ood_set ow[] = { { "ood", weak, 4 } }, os[] = { { "ood", strong, 4 } }, on[] = { { "ood", NULL, 0 } };
  smx_report_score sc[] = { { "weak", id, 4, ow, 1 }, { "none", id2, 4, on, 1 }, { "strong", id, 4, os, 1 } };
  smx_report r = { .title = "o", .scores = sc, .n_scores = 3 };
  char *html = render(&r, NULL);
  if (!html) return;
  const char *ov = strstr(html, "data-fig=\"roc-overlay\"");
  CHECK(ov != NULL && count_sub(html, "data-fig=\"roc-overlay\"") == 1, "one overlay");
  const char *a = strstr(html, ">strong 1.0000<"), *b = strstr(html, ">weak 0.5625<"), *c = strstr(html, ">none (no curve)<");
  CHECK(a && b && c && a < b && b < c, "legend sorted by AUROC: %p %p %p", (const void *)a, (const void *)b, (const void *)c);
  CHECK(count_sub(html, "<polyline class=\"curve\" data-score") == 2, "two overlay curves");
  /* a log-FPR axis (ten curves crowd the top-left corner of a linear one), from 0.01 for 4 OOD samples */
  CHECK(ov && strstr(ov, "<g class=\"axes\" data-xscale=\"log\">") && strstr(ov, ">0.01</text>") &&
            strstr(ov, ">0.1</text>") && strstr(ov, "FPR below 0.01 (0 included) is drawn on the left edge."),
        "overlay on a log-FPR axis");
  /* the overlay comes before the per-score panels */
  CHECK(ov && strstr(html, "data-fig=\"roc\"") > ov, "overlay first");
  free(html);
}

/* ------------------------------------------------------------ tables */
static void test_table_cells(void) {
  char s[400];
  rep_format_value(s, sizeof s, NAN, 3);
  CHECK(strcmp(s, "n/a") == 0, "%s", s);
  rep_format_value(s, sizeof s, -INFINITY, 3);
  CHECK(strcmp(s, "-inf") == 0, "%s", s);
  rep_format_value(s, sizeof s, 0.123456, -4);
  CHECK(strcmp(s, "0") == 0, "digits clamped to 0: %s", s);
  rep_format_value(s, sizeof s, 1.0 / 3, 99);
  CHECK(strcmp(s, "0.33333333333333331") == 0, "digits clamped to 17: %s", s);
  rep_format_value(s, sizeof s, -DBL_MAX, 17);
  CHECK(strlen(s) > 300 && s[0] == '-', "-DBL_MAX with 17 decimals fits");
}

/* ------------------------------------------------------------ page structure */
static void test_page(void) {
  tu_rng g = { 3 };
  enum { N = 3000 };
  static double id[N], ood[N], cst[N], nanny[N], conf[N], conf2[N];
  static unsigned char ok[N];
  for (size_t i = 0; i < N; i++) {
    id[i] = 1 + (double)tu_normal(&g);
    ood[i] = (double)tu_normal(&g);
    cst[i] = 0.5;
    nanny[i] = i % 10 == 0 ? NAN : (double)tu_normal(&g);
    conf[i] = 0.5 + 0.5 * tu_uniform(&g);
    conf2[i] = conf[i] * 0.9;
    ok[i] = tu_uniform(&g) < 0.8;
  }
  smx_report_ood_set sets[] = { { "ood <one> & \"two\"", ood, N }, { "empty", NULL, 0 } };
  smx_report_ood_set cst_set[] = { { "ood const", cst, N } };
  smx_report_ood_set nan_set[] = { { "ood plain", ood, 100 } };
  smx_report_ood_set inf_set[] = { { "ood inf", (double[]){ INFINITY, NAN, -INFINITY }, 3 } };
  smx_report_score scores[] = {
    { "energy", id, N, sets, 2 },     /* two OOD sets, one empty            */
    { "no-ood", id, N, NULL, 0 },     /* no OOD set: no ROC, a histogram    */
    { "constant", cst, N, cst_set, 1 }, /* constant scores on both sides    */
    { "with NaN", nanny, N, nan_set, 1 }, /* 300 NaN dropped and counted    */
    { "all NaN", (double[]){ NAN, NAN }, 2, inf_set, 1 }, /* nothing finite: no curve, no histogram */
  };
  const char *hdr[] = { "a<b", "value" };
  const char *txt[] = { "x&y", NULL, NULL, "text wins" };
  double val[] = { 0, 0.123456, NAN, 2 };
  smx_report_table t = { .caption = "cap<tion>", .ncols = 2, .nrows = 2, .header = hdr, .text = txt, .values = val,
                         .digits = 3 };
  smx_report_calibration cal[] = {
    { "cal A", N, conf, ok, conf2, NULL, 1.25, NULL, NULL, NULL, 0 },
    { "cal B", N, conf, ok, NULL, NULL, NAN, "no finite optimum <all right>", NULL, NULL, 0 },
    { "cal empty", 0, NULL, NULL, NULL, NULL, NAN, NULL, NULL, NULL, 0 },
  };
  const char *notes[] = { "note <1>" };
  smx_report_item items[] = { { "ID logits", "dir/\xFFodd name.npy" } };
  smx_report r = { "Title <x>", "sub & title", items, 1, notes, 1, &t, 1, scores, 5, cal, 3, NULL, 0 };
  size_t len;
  char *html = render(&r, &len);
  if (!html) return;
  CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0, "doctype");
  CHECK(strstr(html, "</html>\n") == html + len - 8, "ends with </html>");
  CHECK(count_sub(html, "data-fig=\"roc\" data-name") == 4, "ROC figures: %zu", count_sub(html, "data-fig=\"roc\" data-name"));
  CHECK(count_sub(html, "data-fig=\"hist\" data-name") == 4, "histograms: %zu", count_sub(html, "data-fig=\"hist\" data-name"));
  CHECK(count_sub(html, "class=\"smx-missing\" data-fig=\"roc\"") == 1, "no-OOD note");
  CHECK(count_sub(html, "class=\"smx-missing\" data-fig=\"hist\"") == 1, "all-NaN histogram note");
  CHECK(count_sub(html, "data-fig=\"reliability-before\"") == 3, "before diagrams");
  CHECK(count_sub(html, "data-fig=\"reliability-after\" data-name") == 1, "after diagrams");
  CHECK(count_sub(html, "class=\"smx-missing\" data-fig=\"reliability-after\"") == 2, "missing after notes");
  /* 12 figures and one ROC overlay per OOD set position (two: the with-NaN score has two sets) */
  CHECK(count_sub(html, "data-fig=\"roc-overlay\"") == 2, "overlays %zu", count_sub(html, "data-fig=\"roc-overlay\""));
  CHECK(count_sub(html, "<svg ") == 14 && count_sub(html, "</svg>") == 14, "svg open/close %zu %zu",
        count_sub(html, "<svg "), count_sub(html, "</svg>"));
  /* curves: energy 1 (the empty set has none), constant 1, with-NaN 1, all-NaN 0 */
  CHECK(count_sub(html, "<polyline class=\"curve\" fill") == 3, "curves %zu",
        count_sub(html, "<polyline class=\"curve\" fill"));
  CHECK(count_sub(html, "<polyline class=\"curve\" data-score") == 3, "overlay curves %zu",
        count_sub(html, "<polyline class=\"curve\" data-score"));
  /* histogram outlines: energy ID+1, no-ood 1, constant 2, with NaN 2 */
  CHECK(count_sub(html, "<path class=\"bars\"") == 7, "histogram outlines %zu", count_sub(html, "<path class=\"bars\""));
  CHECK(strstr(html, "with NaN</h3>") && strstr(html, "ID: 3000 scores, 300 NaN dropped"), "NaN counted in the summary");
  CHECK(strstr(html, "2700 scores drawn; 300 NaN dropped") != NULL, "NaN counted in the legend");
  CHECK(strstr(html, "ID: 2 scores, 2 NaN dropped") != NULL, "all-NaN summary");
  CHECK(strstr(html, "no ID score: no curve") != NULL, "all-NaN ROC legend");
  CHECK(strstr(html, "no score in this set: no curve") != NULL, "empty OOD set in the legend");
  CHECK(strstr(html, "AUROC 0.5000; FPR 1.0000 at TPR 1.0000<") != NULL, "constant: AUROC 0.5");
  CHECK(strstr(html, "no finite optimum &lt;all right&gt;") != NULL, "temperature note escaped");
  CHECK(strstr(html, "After temperature scaling (T = 1.25)") != NULL, "T in the heading");
  CHECK(strstr(html, "no sample to bin") != NULL, "empty calibration set");
  /* escaping everywhere; nothing raw from the caller */
  CHECK(strstr(html, "<one>") == NULL && strstr(html, "ood &lt;one&gt; &amp; &quot;two&quot;"), "OOD name escaped");
  CHECK(strstr(html, "<title>Title &lt;x&gt;</title>") && strstr(html, "sub &amp; title"), "title escaped");
  CHECK(strstr(html, "<caption>cap&lt;tion&gt;</caption>") && strstr(html, "<th>a&lt;b</th>"), "table escaped");
  CHECK(strstr(html, "<td>x&amp;y</td><td class=\"num\" data-value=\"0.123456\">0.123</td>") != NULL,
        "text and value cells");
  CHECK(strstr(html, "<td class=\"num\">n/a</td><td>text wins</td>") != NULL, "NaN cell and text over value");
  CHECK(strstr(html, "dir/\xEF\xBF\xBDodd name.npy") != NULL, "invalid UTF-8 replaced");
  CHECK(strstr(html, "note &lt;1&gt;") != NULL, "note escaped");
  /* self-contained: no script, no external reference, no number that is not one */
  CHECK(strstr(html, "<script") == NULL && strstr(html, "src=") == NULL && strstr(html, "href") == NULL &&
            strstr(html, "@import") == NULL && strstr(html, "http://") == strstr(html, "http://www.w3.org/2000/svg"),
        "self-contained");
  CHECK(strstr(html, "url(") == NULL || count_sub(html, "url(") == count_sub(html, "url(#"), "only local url(#...)");
  CHECK(strstr(html, "nan") == NULL && strstr(html, "=\"inf") == NULL && strstr(html, ",inf") == NULL, "no nan/inf coordinates");
  free(html);

  /* the smallest page: a title only */
  smx_report tiny = { .title = "t" };
  html = render(&tiny, &len);
  CHECK(html && count_sub(html, "<svg") == 0 && strstr(html, "<h1>t</h1>"), "title-only page");
  free(html);
}

/* Millions of scores give a page of the same bounded size as thousands. */
static void test_bounded_size(void) {
  size_t sizes[2], ns[2] = { 5000, 5000000 };
  for (int t = 0; t < 2; t++) {
    size_t n = ns[t], no = n / 2;
    double *id = malloc(n * sizeof *id), *ood = malloc(no * sizeof *ood), *conf = malloc(n * sizeof *conf);
    unsigned char *ok = malloc(n);
    tu_rng g = { 99 };
    for (size_t i = 0; i < n; i++) {
      id[i] = 1 + (double)tu_normal(&g);
      conf[i] = tu_uniform(&g);
      ok[i] = (unsigned char)(tu_next(&g) & 1);
    }
    for (size_t j = 0; j < no; j++) ood[j] = (double)tu_normal(&g);
    id[0] = NAN;
    smx_report_ood_set o[] = { { "ood", ood, no } };
    smx_report_score s[] = { { "score", id, n, o, 1 } };
    smx_report_calibration c = { .name = "cal", .n = n, .conf_before = conf, .correct_before = ok, .conf_after = conf, .temperature = 1.0 };
    smx_report r = { .title = "big", .scores = s, .n_scores = 1, .calibration = &c, .n_calibration = 1 };
    size_t len = 0;
    char *html = render(&r, &len);
    sizes[t] = len;
    if (html && t == 1) {
      CHECK(strstr(html, "ID: 5000000 scores, 1 NaN dropped") != NULL, "5M: NaN counted");
      const char *pl = strstr(html, "<polyline class=\"curve\"");
      size_t pts = 0;
      if (pl)
        for (const char *p = strstr(pl, "points=\""); *p != '/'; p++) pts += *p == ',';
      CHECK(pts >= 500 && pts <= SMX_REPORT_ROC_MAX_POINTS + 2, "5M: %zu ROC points drawn", pts);
    }
    free(html);
    free(id);
    free(ood);
    free(conf);
    free(ok);
  }
  CHECK(sizes[1] < 120000, "5M scores: page of %zu bytes", sizes[1]);
  CHECK(sizes[1] < sizes[0] + 8000, "5M scores: %zu bytes vs %zu for 5000", sizes[1], sizes[0]);
  printf("page size: %zu bytes for 5000 ID scores, %zu for 5M\n", sizes[0], sizes[1]);
}

/* ------------------------------------------------------------ arguments */
static void test_arguments(void) {
  char err[200];
  char *html = (char *)1;
  size_t len = 7;
  CHECK(smx_report_render_html(NULL, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG && html == NULL && len == 0,
        "NULL report");
  smx_report r = { 0 };
  err[0] = 0;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG && strstr(err, "title"),
        "no title: %s", err);
  r.title = "t";
  CHECK(smx_report_render_html(&r, NULL, &len, err, sizeof err) == SMX_E_INVALID_ARG, "NULL out");
  smx_report_score s = { "s", NULL, 5, NULL, 0 };
  r.scores = &s;
  r.n_scores = 1;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG && strstr(err, "ID scores"),
        "ID count without array: %s", err);
  double v[2] = { 1, 2 };
  smx_report_ood_set o = { NULL, v, 2 };
  s = (smx_report_score){ "s", v, 2, &o, 1 };
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG && strstr(err, "no name"),
        "unnamed OOD set: %s", err);
  o.name = "o";
  o.scores = NULL;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "OOD count without array");
  o.scores = v;
  CHECK(smx_report_render_html(&r, &html, &len, NULL, 0) == SMX_OK, "valid, err NULL");
  free(html);
  const char *hdr[] = { "a" };
  smx_report_table t = { .ncols = 1, .nrows = 1, .header = hdr, .digits = 2 };
  r.tables = &t;
  r.n_tables = 1;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "table without cells");
  t.ncols = 0;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "table without columns");
  r.n_tables = 0;
  smx_report_calibration c = { .name = "c", .n = 3, .temperature = 1 };
  r.calibration = &c;
  r.n_calibration = 1;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "calibration without arrays");
  r.n_calibration = 0;
  r.n_items = 1;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "items count without array");
  r.n_items = 0;
  r.n_notes = 2;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_E_INVALID_ARG, "notes count without array");
}

/* ------------------------------------------------------------ writing */
static size_t dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  size_t n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  *len = fread(s, 1, (size_t)n, f);
  s[*len] = 0;
  fclose(f);
  return s;
}

static void test_write(void) {
  char dir[] = "/tmp/smx_report_test.XXXXXX";
  if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); return; }
  char path[256], err[300];
  snprintf(path, sizeof path, "%s/out.html", dir);
  double v[3] = { 1, 2, 3 }, w[2] = { 0, 2 };
  smx_report_ood_set o = { "o", w, 2 };
  smx_report_score s = { "s", v, 3, &o, 1 };
  smx_report r = { .title = "written", .scores = &s, .n_scores = 1 };
  CHECK(smx_report_write_html(path, &r, err, sizeof err) == SMX_OK, "write: %s", err);
  char *html;
  size_t len, flen = 0;
  CHECK(smx_report_render_html(&r, &html, &len, err, sizeof err) == SMX_OK, "render");
  char *file = slurp(path, &flen);
  CHECK(file && flen == len && memcmp(file, html, len) == 0, "file holds the page (%zu vs %zu bytes)", flen, len);
  CHECK(dir_entries(dir) == 1, "no temporary file left (%zu entries)", dir_entries(dir));
  free(file);

  /* invalid report: the existing file stays as it was, nothing else appears */
  smx_report bad = { 0 };
  CHECK(smx_report_write_html(path, &bad, err, sizeof err) == SMX_E_INVALID_ARG, "invalid report");
  file = slurp(path, &flen);
  CHECK(file && flen == len && memcmp(file, html, len) == 0, "old file untouched");
  CHECK(dir_entries(dir) == 1, "nothing created");
  free(file);
  free(html);
  CHECK(smx_report_write_html(NULL, &r, err, sizeof err) == SMX_E_INVALID_ARG, "NULL path");
  CHECK(smx_report_write_html("", &r, err, sizeof err) == SMX_E_INVALID_ARG, "empty path");

  /* "-" is standard output: the same bytes, and no file */
  snprintf(path, sizeof path, "%s/stdout.html", dir);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  FILE *cap = fopen(path, "w");
  if (saved >= 0 && cap && dup2(fileno(cap), STDOUT_FILENO) >= 0) {
    smx_status st = smx_report_write_html("-", &r, err, sizeof err);
    dup2(saved, STDOUT_FILENO);
    CHECK(st == SMX_OK, "write to stdout: %s", err);
    file = slurp(path, &flen);
    CHECK(file && flen == len && strncmp(file, "<!DOCTYPE html>", 15) == 0, "stdout got the page (%zu bytes)", flen);
    free(file);
  } else {
    CHECK(0, "cannot redirect stdout for the '-' test");
  }
  if (cap) fclose(cap);
  if (saved >= 0) close(saved);
  unlink(path);

  /* unwritable targets: SMX_E_IO with the reason, no temporary file left */
  snprintf(path, sizeof path, "%s/missing/out.html", dir);
  err[0] = 0;
  CHECK(smx_report_write_html(path, &r, err, sizeof err) == SMX_E_IO && strstr(err, "missing/out.html"),
        "missing directory: %s", err);
  snprintf(path, sizeof path, "%s/sub", dir);
  mkdir(path, 0700);
  CHECK(smx_report_write_html(path, &r, err, sizeof err) == SMX_E_IO && strstr(err, "Is a directory"), "target is a directory: %s",
        err);
  CHECK(dir_entries(dir) == 2 && dir_entries(path) == 0, "no temporary file after refusing a directory");
  rmdir(path);
  snprintf(path, sizeof path, "%s/out.html", dir);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  test_escape();
  test_sort();
  test_roc();
  test_histogram();
  test_reliability();
  test_prebinned();
  test_table_cells();
  test_reliability_geometry();
  test_best_marks();
  test_verdict();
  test_overlay();
  test_page();
  test_arguments();
  test_write();
  test_bounded_size();
  return tu_finish("test_report");
}
