/*
 * smx_cuda sampling against the CPU library (smx_sample_rows_*) and a
 * float64 reference of the filters, on random and special rows (NaN, -inf
 * masks, all masked, +inf, ties, huge spreads), row lengths 1 .. 2^20 + 3,
 * every storage type, strided rows, temperatures, and every method and
 * filter: greedy, multinomial, Gumbel-max, top-k (1 .. 1024), top-p, min-p
 * and their combinations. Tokens are poisoned first (every row written,
 * nothing past them) and every case runs twice (the same tokens).
 *
 * What must equal the CPU's token (smx_cuda.h): greedy, Gumbel-max without
 * top-p, top-k sampling without top-p, and the special rows; elsewhere (the
 * fixed-point multinomial of the row path, top-p) the token may differ when
 * a draw falls within about 1e-7 of a boundary, so at most 1 row in 100 may
 * differ, and every token must pass the float64 reference's filters (with a
 * slack of 1e-6 at their edges). A frequency check draws one short row
 * 20000 times (20000 rows, one stream each) and compares the counts with
 * the probabilities of the kept set.
 *
 * Usage: test_cuda_sample [--smoke]   (--smoke: a few lengths, for compute-sanitizer)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define DISPATCH3(dt, f32call, f16call, bf16call) \
  ((dt) == DT_F32 ? (f32call) : (dt) == DT_F16 ? (f16call) : (bf16call))

static smx_status run_sample(int gpu, int dt, const void *x, size_t ldx, int64_t *tok, size_t rows, size_t cols,
                             const smx_sample_params *p, uint64_t seed, uint64_t step, const smx_cuda_exec *ex) {
  if (gpu)
    return DISPATCH3(dt, smx_cuda_sample_rows_f32(x, ldx, tok, rows, cols, p, seed, step, ex, NULL),
                     smx_cuda_sample_rows_f16(x, ldx, tok, rows, cols, p, seed, step, ex, NULL),
                     smx_cuda_sample_rows_bf16(x, ldx, tok, rows, cols, p, seed, step, ex, NULL));
  return DISPATCH3(dt, smx_sample_rows_f32(x, ldx, tok, rows, cols, p, seed, step, NULL),
                   smx_sample_rows_f16(x, ldx, tok, rows, cols, p, seed, step, NULL),
                   smx_sample_rows_bf16(x, ldx, tok, rows, cols, p, seed, step, NULL));
}

static const int64_t POISON_TOK = (int64_t)0x7fc0dead7fc0deadLL;

typedef struct pcase {
  const char *name;
  smx_sample_params p;
  int exact;   /* the CPU's token, always */
} pcase;

#define MULTI SMX_SAMPLE_MULTINOMIAL
#define GUMBEL SMX_SAMPLE_GUMBEL_MAX
static const pcase params[] = {
  { "greedy", { 0.0, 0, 1.0, 0.0, 0, MULTI, 0 }, 1 },
  { "multinomial", { 1.0, 0, 1.0, 0.0, 0, MULTI, 0 }, 0 },
  { "gumbel", { 1.0, 0, 1.0, 0.0, 0, GUMBEL, 0 }, 1 },
  { "top-k 5", { 1.0, 5, 1.0, 0.0, 0, MULTI, 0 }, 1 },
  { "top-k 50 gumbel T=0.7", { 0.7, 50, 1.0, 0.0, 0, GUMBEL, 3 }, 1 },
  { "top-k 1024 T=1.3", { 1.3, 1024, 1.0, 0.0, 0, MULTI, 0 }, 1 },
  { "top-k 50 min-p 0.05", { 1.0, 50, 1.0, 0.05, 0, MULTI, 0 }, 1 },
  { "top-p 0.9", { 1.0, 0, 0.9, 0.0, 0, MULTI, 0 }, 0 },
  { "top-p 0.9 gumbel", { 1.0, 0, 0.9, 0.0, 0, GUMBEL, 0 }, 0 },
  { "min-p 0.1", { 1.0, 0, 1.0, 0.1, 0, MULTI, 7 }, 0 },
  { "min-p 0.1 gumbel T=2", { 2.0, 0, 1.0, 0.1, 0, GUMBEL, 0 }, 1 },
  { "top-p 0.5 min-p 0.2", { 1.0, 0, 0.5, 0.2, 0, MULTI, 0 }, 0 },
  { "top-k 50 top-p 0.8", { 1.0, 50, 0.8, 0.0, 0, MULTI, 0 }, 0 },
};
#define NPARAMS (sizeof params / sizeof params[0])

static int by_weight(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y;
}

/* The float64 reference's verdict on token t of row r: passes every filter (with a slack of 1e-6 at the
 * top-p and min-p edges), and is the first argmax when greedy. Special rows: -1, or a +inf entry. */
static int token_ok(const mat *x, size_t r, const smx_sample_params *p, int64_t t) {
  size_t n = x->cols, ninf = 0;
  double m = -INFINITY;
  int64_t first_max = -1;
  for (size_t c = 0; c < n; c++) {
    double v = mat_get(x, r, c);
    if (v != v) return t == -1;
    if (v == INFINITY) ninf++;
    if (v > m) m = v, first_max = (int64_t)c;
  }
  if (m == -INFINITY) return t == -1;
  if (t < 0 || (size_t)t >= n) return 0;
  double xt = mat_get(x, r, (size_t)t);
  if (p->greedy || p->temperature == 0.0) return t == first_max;
  if (ninf) return xt == INFINITY;
  if (xt == -INFINITY) return 0;
  /* rank of t in the order (x descending, index ascending), the mass ahead of it, and z: the mass of what
   * top-k keeps (ties have equal weights, so the sum of the top_k largest weights is that mass) */
  double T = p->temperature, z = 0.0, before = 0.0, wt = exp((xt - m) / T);
  double *w = malloc(n * sizeof(double));
  size_t rank = 0;
  for (size_t c = 0; c < n; c++) {
    double v = mat_get(x, r, c);
    w[c] = v == -INFINITY ? 0.0 : exp((v - m) / T);
    if (v == -INFINITY) continue;
    if (v > xt || (v == xt && (int64_t)c < t)) {
      rank++;
      before += w[c];
    }
  }
  int use_k = p->top_k && p->top_k < n;
  if (use_k) qsort(w, n, sizeof *w, by_weight);
  for (size_t c = 0; c < (use_k ? p->top_k : n); c++) z += w[c];
  free(w);
  if (use_k && rank >= p->top_k) return 0;
  if (p->top_p > 0.0 && p->top_p < 1.0 && !(before < p->top_p * z * (1.0 + 1e-6))) return 0;
  if (p->min_p > 0.0 && !(wt >= p->min_p * (1.0 - 1e-6))) return 0;
  return 1;
}

static void sample_case(int dt, const pcase *pc, size_t rows, size_t cols, size_t pad, uint64_t seed) {
  char name[200];
  snprintf(name, sizeof name, "sample %s %s %zux%zu ld+%zu seed=%llu", pc->name, dtype_name[dt], rows, cols, pad,
           (unsigned long long)seed);
  size_t ld = cols + pad;
  mat x = mat_new(dt, rows, cols, ld);
  uint64_t s = seed;
  for (size_t r = 0; r < rows; r++) fill_row(&x, r, r % 4 ? ROW_RANDOM : (int)((r / 4 + seed) % ROW_KINDS), &s);
  smx_cuda_exec ex;
  memset(&ex, 0, sizeof ex);
  size_t wsb = 0;
  smx_status wst = smx_cuda_sample_workspace_size(rows, cols, &pc->p, &wsb);
  if (wst == SMX_E_UNSUPPORTED) {   /* top_k above SMX_CUDA_MAX_TOPK: not offered */
    mat_free(&x);
    return;
  }
  CHECK(wst == SMX_OK, "%s: workspace size %s", name, smx_status_string(wst));
  if (wsb) {
    ex.workspace = dev_alloc(wsb);
    ex.workspace_bytes = wsb;
  }
  int64_t *tok[2];
  const uint64_t rng = 0x5a3b1e + seed, step = seed % 5;
  for (int run = 0; run < 2; run++) {
    tok[run] = malloc((rows + 1) * sizeof(int64_t));
    for (size_t r = 0; r <= rows; r++) tok[run][r] = POISON_TOK;
    void *dx = dev_upload(&x), *dt_ = dev_alloc((rows + 1) * sizeof(int64_t));
    dev_copy_from_host(dt_, tok[run], (rows + 1) * sizeof(int64_t));
    smx_status st = run_sample(use_gpu, dt, dx, ld, dt_, rows, cols, &pc->p, rng, step, &ex);
    dev_sync(name);
    CHECK(st == SMX_OK, "%s: status %s (%s)", name, smx_status_string(st), smx_cuda_last_error());
    dev_copy_to_host(tok[run], dt_, (rows + 1) * sizeof(int64_t));
    dev_free(dt_);
    dev_free(dx);
  }
  dev_free(ex.workspace);
  CHECK(memcmp(tok[0], tok[1], rows * sizeof(int64_t)) == 0, "%s: two runs differ", name);
  CHECK(tok[0][rows] == POISON_TOK, "%s: written past the tokens", name);
  int64_t *cpu = malloc((rows + 1) * sizeof(int64_t));
  smx_status cst = run_sample(0, dt, x.h, ld, cpu, rows, cols, &pc->p, rng, step, NULL);
  CHECK(cst == SMX_OK, "%s: CPU library status %s", name, smx_status_string(cst));
  size_t differ = 0, bad = 0, bad_cpu = 0, unwritten = 0;
  for (size_t r = 0; r < rows; r++) {
    unwritten += tok[0][r] == POISON_TOK;
    differ += tok[0][r] != cpu[r];
    int ok = token_ok(&x, r, &pc->p, tok[0][r]);
    if (!ok && bad < 4)
      fprintf(stderr, "  %s row %zu: token %lld fails the reference's filters (CPU: %lld)\n", name, r,
              (long long)tok[0][r], (long long)cpu[r]);
    bad += !ok;
    bad_cpu += !token_ok(&x, r, &pc->p, cpu[r]);
  }
  CHECK(unwritten == 0, "%s: %zu tokens not written", name, unwritten);
  CHECK(bad == 0, "%s: %zu tokens outside the reference's filters", name, bad);
  CHECK(bad_cpu == 0, "%s: the CPU library has %zu tokens outside the harness's filters", name, bad_cpu);
  /* exact only where the path is the CPU's arithmetic: a top_k at or above cols is off (the row path) */
  int exact = pc->exact && (pc->p.method == GUMBEL || pc->p.greedy || pc->p.temperature == 0.0 ||
                            (pc->p.top_k && pc->p.top_k < cols));
  if (exact) CHECK(differ == 0, "%s: %zu tokens differ from the CPU library's", name, differ);
  else CHECK(differ <= rows / 100 + (rows >= 30), "%s: %zu tokens differ from the CPU library's", name, differ);
  free(cpu);
  for (int run = 0; run < 2; run++) free(tok[run]);
  mat_free(&x);
}

/* One 8-entry row drawn N times: the counts against the kept set's probabilities (5 sigma + 0.002). */
static void frequency_case(int dt, const pcase *pc) {
  enum { N = 20000, C = 8 };
  static const float row[C] = { 0.5f, -1.0f, 2.0f, 1.25f, -INFINITY, 2.0f, 0.0f, -3.0f };
  mat x = mat_new(dt, N, C, C);
  for (size_t r = 0; r < N; r++)
    for (size_t c = 0; c < C; c++) mat_set(&x, r, c, row[c]);
  smx_cuda_exec ex;
  memset(&ex, 0, sizeof ex);
  size_t wsb = 0;
  CHECK(smx_cuda_sample_workspace_size(N, C, &pc->p, &wsb) == SMX_OK, "frequency %s: workspace", pc->name);
  if (wsb) {
    ex.workspace = dev_alloc(wsb);
    ex.workspace_bytes = wsb;
  }
  int64_t *tok = malloc(N * sizeof(int64_t));
  void *dx = dev_upload(&x), *dt_ = dev_alloc(N * sizeof(int64_t));
  smx_status st = run_sample(use_gpu, dt, dx, C, dt_, N, C, &pc->p, 77, 1, &ex);
  dev_sync("frequency");
  CHECK(st == SMX_OK, "frequency %s: status %s", pc->name, smx_status_string(st));
  dev_copy_to_host(tok, dt_, N * sizeof(int64_t));
  dev_free(dt_);
  dev_free(dx);
  dev_free(ex.workspace);
  /* the kept set by the reference (the filters on this row have no edge within 1e-6), its probabilities */
  double prob[C], z = 0.0;
  for (size_t c = 0; c < C; c++) {
    prob[c] = token_ok(&x, 0, &pc->p, (int64_t)c) ? exp((double)row[c] / pc->p.temperature) : 0.0;
    z += prob[c];
  }
  size_t count[C] = { 0 }, out = 0;
  for (size_t r = 0; r < N; r++) {
    if (tok[r] >= 0 && tok[r] < C) count[tok[r]]++;
    else out++;
  }
  CHECK(out == 0, "frequency %s %s: %zu tokens out of range", pc->name, dtype_name[dt], out);
  for (size_t c = 0; c < C; c++) {
    double p = prob[c] / z, f = (double)count[c] / N;
    CHECK(fabs(f - p) <= 5.0 * sqrt(p * (1.0 - p) / N) + 0.002, "frequency %s %s: entry %zu drawn %.4f, p %.4f",
          pc->name, dtype_name[dt], c, f, p);
  }
  free(tok);
  mat_free(&x);
}

static void host_rules(void) {
  smx_sample_params p = { 1.0, 0, 1.0, 0.0, 0, MULTI, 0 };
  size_t b = 1;
  float *x = (float *)(uintptr_t)64;   /* never dereferenced: refused first */
  int64_t *t = (int64_t *)(uintptr_t)128;
  CHECK(smx_cuda_sample_workspace_size(4, 1000, &p, &b) == SMX_OK && b == 0, "the row path needs no workspace");
  p.top_k = 50;
  CHECK(smx_cuda_sample_workspace_size(4, 1000, &p, &b) == SMX_OK && b == 4 * (40 + 8 * 50), "top-k: one segment");
  p.top_k = 1025;
  CHECK(smx_cuda_sample_workspace_size(4, 4096, &p, &b) == SMX_E_UNSUPPORTED, "top_k above 1024");
  CHECK(smx_cuda_sample_workspace_size(4, 1025, &p, &b) == SMX_OK && b == 0, "top_k >= cols is off");
  p.top_k = 0;
  p.top_p = 1.5;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "top_p 1.5");
  p.top_p = 1.0;
  p.min_p = NAN;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "min_p NaN");
  p.min_p = 0.0;
  p.temperature = -1.0;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "temperature < 0");
  p.temperature = 1.0;
  p.method = (smx_sample_method)5;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "unknown method");
  p.method = MULTI;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, NULL, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "NULL params");
  CHECK(smx_cuda_sample_rows_f32(x, 7, t, 2, 8, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "ldx < cols");
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 0, &p, 1, 0, NULL, NULL) == SMX_E_INVALID_ARG, "cols == 0");
  CHECK(smx_cuda_sample_rows_f32(NULL, 8, NULL, 0, 8, &p, 1, 0, NULL, NULL) == SMX_OK, "rows == 0");
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = 2.0;
  CHECK(smx_cuda_sample_rows_f32(x, 8, t, 2, 8, &p, 1, 0, NULL, &o) == SMX_E_INVALID_ARG, "opt->temperature 2");
}

static void device_rules(void) {
  smx_sample_params p = { 1.0, 0, 1.0, 0.0, 0, MULTI, 0 };
  float *x = dev_alloc(4 * 64 * 4);
  int64_t *t = dev_alloc(64), th[4];
  smx_status st = smx_cuda_sample_rows_f32(x, 64, th, 4, 64, &p, 1, 0, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "host tokens: %s", smx_status_string(st));
  st = smx_cuda_sample_rows_f32(x, 64, (int64_t *)(void *)x, 4, 64, &p, 1, 0, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "tokens inside x: %s", smx_status_string(st));
  st = smx_cuda_sample_rows_f32(x, 64, (int64_t *)(void *)((char *)t + 4), 3, 64, &p, 1, 0, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "misaligned tokens: %s", smx_status_string(st));
  p.top_k = 5;
  st = smx_cuda_sample_rows_f32(x, 64, t, 4, 64, &p, 1, 0, NULL, NULL);
  CHECK(st == SMX_E_WORKSPACE_TOO_SMALL, "top-k without a workspace: %s", smx_status_string(st));
  dev_sync("refusals");
  dev_free(x);
  dev_free(t);
}

int main(int argc, char **argv) {
  int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  backend_init("test_cuda_sample");
  host_rules();
  if (use_gpu) device_rules();
  static const size_t lengths[] = { 1, 2, 31, 32, 33, 1023, 1024, 1025, 16385, 40000, (1u << 20) + 3 };
  uint64_t seed = 0x5a3e0001;
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    size_t cols = lengths[li];
    if (!use_gpu && cols > 1025) break;   /* the CPU stand-in: the harness on short rows */
    if (smoke && cols != 33 && cols != 1025 && cols != 40000) continue;
    size_t rows = cols <= 2048 ? 48 : cols <= 40000 ? 16 : 3;
    for (int dt = DT_F32; dt <= DT_BF16; dt++) {
      if ((smoke || cols > 40000) && dt == DT_F16) continue;
      for (size_t pi = 0; pi < NPARAMS; pi++) sample_case(dt, &params[pi], rows, cols, (pi % 3 == 1) ? 5 : 0, seed++);
    }
  }
  for (size_t pi = 1; pi < NPARAMS && !smoke; pi++) {
    if (params[pi].p.top_k > 8) continue;
    frequency_case(DT_F32, &params[pi]);
  }
  frequency_case(DT_BF16, &params[7]);
  return finish("test_cuda_sample");
}
