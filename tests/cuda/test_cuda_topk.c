/*
 * smx_cuda fused softmax + top-k (and log-softmax + top-k) against the CPU
 * library (the same indices, the same value classes) and a float64
 * reference (the selection by sorting (x descending, index ascending), the
 * values within the softmax / log-softmax bounds of smx_topk.h), on random
 * and special rows (NaN, -inf masks, all masked, +inf, ties, huge spreads),
 * row lengths 1 .. 2^20 + 3 (one block, and segments merged across blocks),
 * k from 1 to 1024 (and k == cols), strided rows, every storage type,
 * temperatures and the masked-row flag; outputs poisoned first (every value
 * and index written, nothing past them) and every case run twice (the same
 * bits).
 *
 * Usage: test_cuda_topk [--smoke]   (--smoke: a few lengths and k, for compute-sanitizer)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define DISPATCH3(dt, f32call, f16call, bf16call) \
  ((dt) == DT_F32 ? (f32call) : (dt) == DT_F16 ? (f16call) : (bf16call))

static smx_status run_topk(int gpu, int dt, int log_form, const void *x, size_t ldx, float *v, int64_t *idx,
                           size_t rows, size_t cols, size_t k, const smx_cuda_exec *ex, const smx_options *o) {
  if (gpu) {
    if (log_form)
      return DISPATCH3(dt, smx_cuda_log_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, k, ex, o),
                       smx_cuda_log_softmax_topk_rows_f16(x, ldx, v, idx, rows, cols, k, ex, o),
                       smx_cuda_log_softmax_topk_rows_bf16(x, ldx, v, idx, rows, cols, k, ex, o));
    return DISPATCH3(dt, smx_cuda_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, k, ex, o),
                     smx_cuda_softmax_topk_rows_f16(x, ldx, v, idx, rows, cols, k, ex, o),
                     smx_cuda_softmax_topk_rows_bf16(x, ldx, v, idx, rows, cols, k, ex, o));
  }
  if (log_form)
    return DISPATCH3(dt, smx_log_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, k, o),
                     smx_log_softmax_topk_rows_f16(x, ldx, v, idx, rows, cols, k, o),
                     smx_log_softmax_topk_rows_bf16(x, ldx, v, idx, rows, cols, k, o));
  return DISPATCH3(dt, smx_softmax_topk_rows_f32(x, ldx, v, idx, rows, cols, k, o),
                   smx_softmax_topk_rows_f16(x, ldx, v, idx, rows, cols, k, o),
                   smx_softmax_topk_rows_bf16(x, ldx, v, idx, rows, cols, k, o));
}

/* the reference order: larger x first, equal x by lower index (NaN rows are not sorted) */
static const mat *sort_m;
static size_t sort_r;
static int by_order(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  float xi = mat_get(sort_m, sort_r, i), xj = mat_get(sort_m, sort_r, j);
  if (xi != xj) return xi > xj ? -1 : 1;
  return i < j ? -1 : 1;
}

static const int64_t POISON_IDX = (int64_t)0x7fc0dead7fc0deadLL;

typedef struct tcase {
  int dt, log_form;
  size_t rows, cols, pad, k;
  double t;
  uint32_t flags;
  uint64_t seed;
} tcase;

static void topk_case(const tcase *c) {
  char name[200];
  snprintf(name, sizeof name, "%s_topk %s %zux%zu ld+%zu k=%zu T=%g flags=%u seed=%llu",
           c->log_form ? "log_softmax" : "softmax", dtype_name[c->dt], c->rows, c->cols, c->pad, c->k, c->t,
           (unsigned)c->flags, (unsigned long long)c->seed);
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = c->t;
  o.flags = c->flags;
  uint64_t seed = c->seed;
  size_t ld = c->cols + c->pad, rk = c->rows * c->k;
  mat x = mat_new(c->dt, c->rows, c->cols, ld);
  for (size_t r = 0; r < c->rows; r++) fill_row(&x, r, r == 0 ? ROW_RANDOM : (int)((r + c->seed) % ROW_KINDS), &seed);
  smx_cuda_exec ex;
  memset(&ex, 0, sizeof ex);
  size_t wsb = 0;
  smx_status wst = smx_cuda_topk_workspace_size(c->rows, c->cols, c->k, &wsb);
  CHECK(wst == SMX_OK, "%s: workspace size %s", name, smx_status_string(wst));
  if (wsb) {
    ex.workspace = dev_alloc(wsb);
    ex.workspace_bytes = wsb;
  }
  /* one value and one index past the outputs, poisoned: never written */
  float *v[2];
  int64_t *ix[2];
  for (int run = 0; run < 2; run++) {
    v[run] = malloc((rk + 1) * sizeof(float));
    ix[run] = malloc((rk + 1) * sizeof(int64_t));
    fill_poison(DT_F32, v[run], rk + 1);
    for (size_t q = 0; q <= rk; q++) ix[run][q] = POISON_IDX;
    void *dx = dev_upload(&x), *dv = dev_alloc((rk + 1) * sizeof(float)), *di = dev_alloc((rk + 1) * sizeof(int64_t));
    dev_copy_from_host(dv, v[run], (rk + 1) * sizeof(float));
    dev_copy_from_host(di, ix[run], (rk + 1) * sizeof(int64_t));
    smx_status st = run_topk(use_gpu, c->dt, c->log_form, dx, ld, dv, di, c->rows, c->cols, c->k, &ex, &o);
    dev_sync(name);
    CHECK(st == SMX_OK, "%s: status %s (%s)", name, smx_status_string(st), smx_cuda_last_error());
    dev_copy_to_host(v[run], dv, (rk + 1) * sizeof(float));
    dev_copy_to_host(ix[run], di, (rk + 1) * sizeof(int64_t));
    dev_free(di);
    dev_free(dv);
    dev_free(dx);
  }
  dev_free(ex.workspace);
  CHECK(memcmp(v[0], v[1], rk * sizeof(float)) == 0 && memcmp(ix[0], ix[1], rk * sizeof(int64_t)) == 0,
        "%s: two runs differ", name);
  CHECK(elem_is_poison(DT_F32, v[0], rk) && ix[0][rk] == POISON_IDX, "%s: written past the outputs", name);
  /* the CPU library */
  float *cv = malloc((rk + 1) * sizeof(float));
  int64_t *ci = malloc((rk + 1) * sizeof(int64_t));
  smx_status cst = run_topk(0, c->dt, c->log_form, x.h, ld, cv, ci, c->rows, c->cols, c->k, NULL, &o);
  CHECK(cst == SMX_OK, "%s: CPU library status %s", name, smx_status_string(cst));
  double *ref = malloc((c->cols + 1) * sizeof(double));
  size_t *order = malloc((c->cols + 1) * sizeof(size_t));
  size_t bad_idx = 0, bad_cpu_idx = 0, bad = 0, bad_cpu = 0, bad_class = 0, unwritten = 0;
  for (size_t r = 0; r < c->rows; r++) {
    int nan = 0;
    double mx = -INFINITY;
    for (size_t q = 0; q < c->cols; q++) {
      float xq = mat_get(&x, r, q);
      nan |= xq != xq;
      if (xq > mx) mx = xq;
      order[q] = q;
    }
    if (!nan) {
      sort_m = &x;
      sort_r = r;
      qsort(order, c->cols, sizeof *order, by_order);
    }
    ref_softmax(&x, r, c->t, c->flags, c->log_form, ref);
    for (size_t q = 0; q < c->k; q++) {
      size_t at = r * c->k + q;
      int64_t want = nan ? -1 : (int64_t)order[q];
      unwritten += elem_is_poison(DT_F32, v[0], at) || ix[0][at] == POISON_IDX;
      bad_idx += ix[0][at] != want;
      bad_cpu_idx += ci[at] != want;
      double wv = nan ? NAN : ref[order[q]];
      double ti = nan ? 0.0 : (mat_get(&x, r, order[q]) - mx) / c->t;
      int ok = c->log_form ? within_log(DT_F32, v[0][at], wv) : within_softmax(DT_F32, v[0][at], wv, ti);
      int ok_cpu = c->log_form ? within_log(DT_F32, cv[at], wv) : within_softmax(DT_F32, cv[at], wv, ti);
      if ((!ok || ix[0][at] != want) && bad + (ix[0][at] != want) < 4)
        fprintf(stderr, "  %s row %zu place %zu: got (%.9g, %lld), want (%.17g, %lld)\n", name, r, q, v[0][at],
                (long long)ix[0][at], wv, (long long)want);
      bad += !ok;
      bad_cpu += !ok_cpu;
      bad_class += !same_class(v[0][at], cv[at]);
    }
  }
  CHECK(unwritten == 0, "%s: %zu outputs not written", name, unwritten);
  CHECK(bad_idx == 0, "%s: %zu indices not the reference's", name, bad_idx);
  CHECK(bad_cpu_idx == 0, "%s: the CPU library has %zu indices not the harness's reference", name, bad_cpu_idx);
  CHECK(bad == 0, "%s: %zu values outside the bound", name, bad);
  CHECK(bad_cpu == 0, "%s: the CPU library has %zu values outside the harness's bound", name, bad_cpu);
  CHECK(bad_class == 0, "%s: %zu values of another class (NaN / inf) than the CPU library's", name, bad_class);
  free(order);
  free(ref);
  free(cv);
  free(ci);
  for (int run = 0; run < 2; run++) {
    free(v[run]);
    free(ix[run]);
  }
  mat_free(&x);
}

/* refusals that need no device */
static void host_rules(void) {
  size_t b = 1;
  float *p = (float *)(uintptr_t)64;   /* never dereferenced: refused first */
  float *vals = (float *)(uintptr_t)128;
  int64_t *idx = (int64_t *)(uintptr_t)256;
  CHECK(smx_cuda_topk_workspace_size(8, 1000, 50, &b) == SMX_OK && b == 0, "one block per row: no workspace");
  CHECK(smx_cuda_topk_workspace_size(8, 128000, 50, &b) == SMX_OK && b == 8 * 8 * (40 + 8 * 50), "8 segments");
  CHECK(smx_cuda_topk_workspace_size(8, 100, 101, &b) == SMX_E_INVALID_ARG, "k > cols");
  CHECK(smx_cuda_topk_workspace_size(8, 4096, 1025, &b) == SMX_E_UNSUPPORTED, "k > 1024");
  CHECK(smx_cuda_topk_workspace_size(8, 100, 5, NULL) == SMX_E_INVALID_ARG, "NULL bytes");
  CHECK(smx_cuda_topk_workspace_size(SIZE_MAX / 4, 1u << 26, 1024, &b) == SMX_E_INVALID_ARG, "overflow");
  CHECK(smx_cuda_softmax_topk_rows_f32(p, 8, vals, idx, 2, 8, 9, NULL, NULL) == SMX_E_INVALID_ARG, "k > cols");
  CHECK(smx_cuda_softmax_topk_rows_f32(p, 7, vals, idx, 2, 8, 2, NULL, NULL) == SMX_E_INVALID_ARG, "ldx < cols");
  CHECK(smx_cuda_softmax_topk_rows_f32(p, 4096, vals, idx, 2, 4096, 1025, NULL, NULL) == SMX_E_UNSUPPORTED,
        "k > SMX_CUDA_MAX_TOPK");
  CHECK(smx_cuda_softmax_topk_rows_f32(NULL, 8, NULL, NULL, 2, 8, 0, NULL, NULL) == SMX_OK, "k == 0: nothing");
  CHECK(smx_cuda_log_softmax_topk_rows_bf16(NULL, 8, NULL, NULL, 0, 8, 3, NULL, NULL) == SMX_OK, "rows == 0");
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = -2.0;
  CHECK(smx_cuda_softmax_topk_rows_f32(p, 8, vals, idx, 2, 8, 2, NULL, &o) == SMX_E_INVALID_ARG, "temperature");
  o.temperature = 1e-35;
  CHECK(smx_cuda_softmax_topk_rows_f32(p, 8, vals, idx, 2, 8, 2, NULL, &o) == SMX_E_UNSUPPORTED, "tiny temperature");
  o.temperature = 0.0;
  o.flags = 0x100;
  CHECK(smx_cuda_softmax_topk_rows_f16((const uint16_t *)(const void *)p, 8, vals, idx, 2, 8, 2, NULL, &o) == SMX_E_INVALID_ARG, "unknown flag");
}

/* refusals on device pointers: nothing written */
static void device_rules(void) {
  const size_t rows = 4, cols = 64, k = 5;
  float *x = dev_alloc(rows * cols * 4), *v = dev_alloc(rows * k * 4 + 64);
  int64_t *ix = dev_alloc(rows * k * 8 + 64);
  float hv[64];
  int64_t hi[64];
  smx_status st;
  st = smx_cuda_softmax_topk_rows_f32(NULL, cols, v, ix, rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "NULL x: %s", smx_status_string(st));
  st = smx_cuda_softmax_topk_rows_f32(x, cols, hv, ix, rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "host values: %s", smx_status_string(st));
  st = smx_cuda_softmax_topk_rows_f32(x, cols, v, hi, rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "host indices: %s", smx_status_string(st));
  st = smx_cuda_softmax_topk_rows_f32(x, cols, v, (int64_t *)(void *)((char *)ix + 4), rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "misaligned indices: %s", smx_status_string(st));
  st = smx_cuda_softmax_topk_rows_f32(x, cols, x + 8, ix, rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "values inside x: %s", smx_status_string(st));
  st = smx_cuda_softmax_topk_rows_f32(x, cols, v, (int64_t *)(void *)v, rows, cols, k, NULL, NULL);
  CHECK(st == SMX_E_INVALID_ARG, "values and indices overlapping: %s", smx_status_string(st));
  size_t big = 40000;
  float *bx = dev_alloc(big * 4);
  st = smx_cuda_softmax_topk_rows_f32(bx, big, v, ix, 1, big, k, NULL, NULL);
  CHECK(st == SMX_E_WORKSPACE_TOO_SMALL, "a long row without a workspace: %s", smx_status_string(st));
  dev_sync("refusals");
  dev_free(bx);
  dev_free(x);
  dev_free(v);
  dev_free(ix);
}

int main(int argc, char **argv) {
  int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  backend_init("test_cuda_topk");
  host_rules();
  if (use_gpu) device_rules();
  static const size_t lengths[] = { 1, 2, 31, 32, 33, 1023, 1024, 1025, 16384, 16385, 40000, (1u << 20) + 3 };
  static const size_t ks[] = { 1, 5, 50, 1024, 0 /* cols */ };
  uint64_t seed = 0x70c0001;
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    size_t cols = lengths[li];
    /* the CPU stand-in checks the harness on the short rows (this machine's time) */
    if (!use_gpu && cols > 1025) break;
    if (smoke && cols != 33 && cols != 1025 && cols != 40000) continue;
    size_t rows = cols <= 2048 ? 14 : cols <= 40000 ? 8 : 3;
    for (int dt = DT_F32; dt <= DT_BF16; dt++) {
      if ((smoke || cols > 40000) && dt == DT_F16) continue;
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        size_t k = ks[ki] ? ks[ki] : cols;
        if (k > cols || k > SMX_CUDA_MAX_TOPK || (ks[ki] == 0 && cols > SMX_CUDA_MAX_TOPK)) continue;
        if ((smoke || cols > 40000) && k != 5 && k != 1024) continue;   /* 2^20 + 3: the reference sorts */
        for (int log_form = 0; log_form < 2; log_form++) {
          tcase c = { dt, log_form, rows, cols, 0, k, 1.0, 0, seed++ };
          topk_case(&c);
          if (cols > 40000 || smoke) continue;
          tcase s = { dt, log_form, rows, cols, 3, k, 0.7, SMX_FLAG_MASKED_ROW_NAN, seed++ };
          topk_case(&s);
        }
      }
    }
  }
  return finish("test_cuda_topk");
}
