/*
 * lm_topk_bench — fused softmax + top-k and top-p sampling against unfused
 * pipelines built on smx itself.
 *
 *   lm_topk_bench [--rows R] [--cols C] [--srows R] [--scols C] [--reps N]
 *                 [--threads 1,2] [--ks 1,5,50] [--top-p P] [--scale S]
 *
 * Top-k table (R x C logits, default 4096 x 128000 = 2 GiB, LM-like values
 * S * N(0,1) with S = 2.5), per thread count and k:
 *   fused        smx_softmax_topk_rows_f32 (one read, no probability row)
 *   sm+select    smx_softmax_rows_f32 into a probability matrix, then per row
 *                a partial selection of the k largest probabilities:
 *                quickselect of (p, index) pairs (what np.argpartition and
 *                std::nth_element do), then a sort of the k (ties: lower
 *                index). Rows are spread over the same number of threads.
 *   sm+smx_topk  the same softmax, then smx_topk_rows_f32 over the
 *                probabilities: the strongest unfused pipeline we have (our
 *                own vectorised threshold filter), shown for honesty.
 *   ratios are baseline time / fused time, from the same run.
 * Sampling table (default 64 x 256000, top-p 0.9):
 *   smx          smx_sample_rows_f32 (threshold search + mass quickselect, no sort)
 *   sort-ref     per row: smx_softmax_f32, qsort of (p, index) descending,
 *                prefix sum to top-p, inverse CDF with one uniform.
 * Times are medians of N repetitions (default 3) of the whole call.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <smx/smx.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* xorshift-based LM-like logits: scale * (sum of 4 uniforms - 2) * sqrt(3) ~ scale * N(0,1) */
static void fill(float *x, size_t n, float scale, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    float a = 0.0f;
    for (int q = 0; q < 4; q++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      a += (float)(s >> 40) * 0x1p-24f;
    }
    x[i] = scale * (a - 2.0f) * 1.7320508f;
  }
}

/* ------------------------------------------------ rows across pthreads */
typedef void (*row_fn)(void *ctx, size_t r);
typedef struct par { row_fn fn; void *ctx; size_t r0, r1; } par;

static void *par_main(void *p) {
  par *a = p;
  for (size_t r = a->r0; r < a->r1; r++) a->fn(a->ctx, r);
  return NULL;
}

static void par_rows(int threads, size_t rows, row_fn fn, void *ctx) {
  pthread_t th[64];
  par a[64];
  if (threads > 64) threads = 64;
  size_t per = (rows + (size_t)threads - 1) / (size_t)threads;
  for (int t = 0; t < threads; t++) {
    a[t].fn = fn;
    a[t].ctx = ctx;
    a[t].r0 = (size_t)t * per < rows ? (size_t)t * per : rows;
    a[t].r1 = a[t].r0 + per < rows ? a[t].r0 + per : rows;
  }
  for (int t = 1; t < threads; t++) pthread_create(&th[t], NULL, par_main, &a[t]);
  par_main(&a[0]);
  for (int t = 1; t < threads; t++) pthread_join(th[t], NULL);
}

/* ------------------------------------------------ baseline partial selection */
typedef struct pair { float p; int64_t i; } pair;

static int before(const pair *a, const pair *b) { return a->p > b->p || (a->p == b->p && a->i < b->i); }

static void swap_pair(pair *a, pair *b) {
  pair t = *a;
  *a = *b;
  *b = t;
}

/* quickselect: afterwards v[0..k) are the k best (in any order) */
static void select_k(pair *v, size_t n, size_t k) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (before(&v[hi - 1], &v[lo])) swap_pair(&v[lo], &v[hi - 1]);
    if (before(&v[mid], &v[lo])) swap_pair(&v[mid], &v[lo]);
    if (before(&v[hi - 1], &v[mid])) swap_pair(&v[mid], &v[hi - 1]);
    swap_pair(&v[mid], &v[hi - 1]);
    size_t s = lo;
    for (size_t i = lo; i < hi - 1; i++)
      if (before(&v[i], &v[hi - 1])) swap_pair(&v[i], &v[s++]);
    swap_pair(&v[s], &v[hi - 1]);
    if (s == k || s + 1 == k) return;
    if (s > k) hi = s;
    else lo = s + 1;
  }
}

static int cmp_pair(const void *a, const void *b) {
  const pair *x = a, *y = b;
  return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

typedef struct sel_ctx {
  const float *y;
  size_t cols, k;
  pair *work;          /* cols pairs per thread slot: indexed by row % slots is unsafe; one per row range */
  float *values;
  int64_t *indices;
  int threads;
  size_t per;
} sel_ctx;

static void select_row(void *c, size_t r) {
  sel_ctx *s = c;
  pair *v = s->work + (r / s->per) * s->cols;   /* this thread's buffer */
  const float *y = s->y + r * s->cols;
  for (size_t i = 0; i < s->cols; i++) {
    v[i].p = y[i];
    v[i].i = (int64_t)i;
  }
  select_k(v, s->cols, s->k);
  qsort(v, s->k, sizeof(pair), cmp_pair);
  for (size_t j = 0; j < s->k; j++) {
    s->values[r * s->k + j] = v[j].p;
    s->indices[r * s->k + j] = v[j].i;
  }
}

/* ------------------------------------------------ sort-based sampling reference */
typedef struct samp_ctx {
  const float *x;
  size_t cols;
  double top_p;
  float *prob;         /* cols floats per thread */
  pair *work;          /* cols pairs per thread  */
  size_t per;
  int64_t *tokens;
} samp_ctx;

static void sample_row_ref(void *c, size_t r) {
  samp_ctx *s = c;
  size_t slot = r / s->per;
  float *p = s->prob + slot * s->cols;
  pair *v = s->work + slot * s->cols;
  smx_softmax_f32(s->x + r * s->cols, p, s->cols, NULL);
  for (size_t i = 0; i < s->cols; i++) {
    v[i].p = p[i];
    v[i].i = (int64_t)i;
  }
  qsort(v, s->cols, sizeof(pair), cmp_pair);
  double cum = 0.0;
  size_t keep = s->cols;
  for (size_t i = 0; i < s->cols; i++) {
    cum += v[i].p;
    if (cum >= s->top_p) { keep = i + 1; break; }
  }
  uint64_t z = (r + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
  double t = (double)(z >> 11) * 0x1p-53 * cum, acc = 0.0;
  int64_t tok = v[keep - 1].i;
  for (size_t i = 0; i < keep; i++) {
    acc += v[i].p;
    if (acc > t) { tok = v[i].i; break; }
  }
  s->tokens[r] = tok;
}

/* ------------------------------------------------ main */
static int parse_list(const char *s, int *out, int max) {
  int n = 0;
  while (*s && n < max) {
    out[n++] = atoi(s);
    const char *c = strchr(s, ',');
    if (!c) break;
    s = c + 1;
  }
  return n;
}

int main(int argc, char **argv) {
  size_t rows = 4096, cols = 128000, srows = 64, scols = 256000;
  int reps = 3, threads[8] = { 1, 2 }, nthreads = 2, ks[8] = { 1, 5, 50 }, nks = 3;
  double top_p = 0.9;
  float scale = 2.5f;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--rows")) rows = strtoull(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--cols")) cols = strtoull(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--srows")) srows = strtoull(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--scols")) scols = strtoull(argv[a + 1], NULL, 10);
    else if (!strcmp(argv[a], "--reps")) reps = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--threads")) nthreads = parse_list(argv[a + 1], threads, 8);
    else if (!strcmp(argv[a], "--ks")) nks = parse_list(argv[a + 1], ks, 8);
    else if (!strcmp(argv[a], "--top-p")) top_p = atof(argv[a + 1]);
    else if (!strcmp(argv[a], "--scale")) scale = (float)atof(argv[a + 1]);
    else { fprintf(stderr, "lm_topk_bench: unknown option %s\n", argv[a]); return 1; }
  }
  if (reps < 1 || reps > 64) reps = 3;
  float *x = malloc(rows * cols * sizeof(float)), *y = malloc(rows * cols * sizeof(float));
  size_t kmax = 0;
  for (int q = 0; q < nks; q++) kmax = (size_t)ks[q] > kmax ? (size_t)ks[q] : kmax;
  float *v1 = malloc(rows * kmax * sizeof(float)), *v2 = malloc(rows * kmax * sizeof(float));
  int64_t *i1 = malloc(rows * kmax * sizeof(int64_t)), *i2 = malloc(rows * kmax * sizeof(int64_t));
  int tmax = 1;
  for (int q = 0; q < nthreads; q++) tmax = threads[q] > tmax ? threads[q] : tmax;
  pair *work = malloc((size_t)tmax * (cols > scols ? cols : scols) * sizeof(pair));
  if (!x || !y || !v1 || !v2 || !i1 || !i2 || !work) { fprintf(stderr, "lm_topk_bench: out of memory\n"); return 1; }
  fill(x, rows * cols, scale, 1);
  printf("smx %s, isa %s; top-k on %zu x %zu f32 (%.2f GiB), logits %.1f*N(0,1); median of %d\n",
         smx_version_string(), smx_isa(), rows, cols, (double)rows * (double)cols * 4 / (1 << 30), scale, reps);
  printf("%-3s %-4s %11s %13s %7s %13s %7s %s\n", "thr", "k", "fused ms", "sm+select ms", "ratio", "sm+smx_topk ms",
         "ratio", "check");
  for (int ti = 0; ti < nthreads; ti++) {
    int T = threads[ti];
    smx_options o = { SMX_ALGO_AUTO, 0.0, 0, T, NULL };
    for (int q = 0; q < nks; q++) {
      size_t k = (size_t)ks[q];
      double tf[64], tb[64], ts[64];
      for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        smx_softmax_topk_rows_f32(x, cols, v1, i1, rows, cols, k, &o);
        tf[r] = now_s() - t0;
        t0 = now_s();
        smx_softmax_rows_f32(x, cols, y, cols, rows, cols, &o);
        sel_ctx s = { y, cols, k, work, v2, i2, T, (rows + (size_t)T - 1) / (size_t)T };
        par_rows(T, rows, select_row, &s);
        tb[r] = now_s() - t0;
        t0 = now_s();
        smx_softmax_rows_f32(x, cols, y, cols, rows, cols, &o);
        smx_topk_rows_f32(y, cols, v2, i2, rows, cols, k, &o);
        ts[r] = now_s() - t0;
      }
      /* the fused indices against the unfused ones (equal probabilities from
       * different logits may legitimately order differently) */
      size_t differ = 0;
      for (size_t j = 0; j < rows * k; j++) differ += i1[j] != i2[j];
      double f = median(tf, reps), b = median(tb, reps), s2 = median(ts, reps);
      printf("%-3d %-4zu %11.1f %13.1f %6.2fx %13.1f %6.2fx %zu/%zu indices differ\n", T, k, 1e3 * f, 1e3 * b, b / f,
             1e3 * s2, s2 / f, differ, rows * k);
      fflush(stdout);
    }
  }
  free(y);
  free(x);

  /* ---- sampling */
  float *sx = malloc(srows * scols * sizeof(float)), *prob = malloc((size_t)tmax * scols * sizeof(float));
  int64_t *tok = malloc(srows * sizeof(int64_t)), *tok2 = malloc(srows * sizeof(int64_t));
  if (!sx || !prob || !tok || !tok2) { fprintf(stderr, "lm_topk_bench: out of memory\n"); return 1; }
  fill(sx, srows * scols, scale, 2);
  printf("\nsampling one token per row on %zu x %zu f32, top-p %.2f; median of %d\n", srows, scols, top_p, reps);
  printf("%-3s %11s %13s %7s\n", "thr", "smx ms", "sort-ref ms", "ratio");
  for (int ti = 0; ti < nthreads; ti++) {
    int T = threads[ti];
    smx_options o = { SMX_ALGO_AUTO, 0.0, 0, T, NULL };
    smx_sample_params p = { 1.0, 0, top_p, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 };
    double ta[64], tb[64];
    for (int r = 0; r < reps; r++) {
      double t0 = now_s();
      smx_sample_rows_f32(sx, scols, tok, srows, scols, &p, 1234, (uint64_t)r, &o);
      ta[r] = now_s() - t0;
      t0 = now_s();
      samp_ctx s = { sx, scols, top_p, prob, work, (srows + (size_t)T - 1) / (size_t)T, tok2 };
      par_rows(T, srows, sample_row_ref, &s);
      tb[r] = now_s() - t0;
    }
    double a = median(ta, reps), b = median(tb, reps);
    printf("%-3d %11.2f %13.2f %6.2fx\n", T, 1e3 * a, 1e3 * b, b / a);
  }
  free(sx);
  free(prob);
  free(tok);
  free(tok2);
  free(v1);
  free(v2);
  free(i1);
  free(i2);
  free(work);
  return 0;
}
