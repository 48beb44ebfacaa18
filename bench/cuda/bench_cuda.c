/*
 * smx_cuda timings on the shapes of issue 21 (CUDA events, median of the
 * repeats after warm-ups), and the card's copy roof (a 2 GiB device-to-device
 * copy, bytes read plus bytes written). Prints CSV lines that
 * bench/cuda/report.py joins with bench/cuda/bench_torch.py's:
 *   roof,smx,<GB/s>
 *   <op>,<dtype>,<rows>,<cols>,<us>,<bytes moved at the minimum>
 * Inputs are random normal-ish (never zeros), larger than the L2. The fused
 * top-k (k = 1, 5, 50) and the sampler (top-k 50, top-p 0.9, min-p 0.1) count
 * one read of the logits as their bytes (their outputs are k or 1 per row).
 *
 * Usage: bench_cuda [repeats]   (default 30)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "smx/smx_cuda.h"

static void die(const char *what, cudaError_t e) {
  fprintf(stderr, "bench_cuda: %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}
#define CK(call)                      \
  do {                                \
    cudaError_t e_ = (call);          \
    if (e_ != cudaSuccess) die(#call, e_); \
  } while (0)

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* random bits shaped as values in [-8, 8) of the storage type, filled on the host once per shape */
static void fill_random(void *d, size_t n, size_t es) {
  size_t chunk = (size_t)1 << 24;
  void *h = malloc(chunk * es);
  if (!h) exit(1);
  uint64_t s = 0x1234567;
  for (size_t i = 0; i < chunk; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float v = (float)((double)(s >> 40) * 0x1p-24 * 16.0 - 8.0);
    if (es == 4) memcpy((char *)h + 4 * i, &v, 4);
    else {
      uint32_t u;
      memcpy(&u, &v, 4);
      ((uint16_t *)h)[i] = (uint16_t)(u >> 16);   /* bf16 by truncation: any value will do */
    }
  }
  for (size_t off = 0; off < n; off += chunk) {
    size_t m = n - off < chunk ? n - off : chunk;
    CK(cudaMemcpy((char *)d + off * es, h, m * es, cudaMemcpyHostToDevice));
  }
  free(h);
}

typedef smx_status (*op_fn)(const void *x, void *y, size_t rows, size_t cols, const smx_cuda_exec *ex, int dt);

static smx_status softmax_op(const void *x, void *y, size_t rows, size_t cols, const smx_cuda_exec *ex, int dt) {
  return dt == 0 ? smx_cuda_softmax_rows_f32(x, cols, y, cols, rows, cols, ex, NULL)
                 : smx_cuda_softmax_rows_bf16(x, cols, y, cols, rows, cols, ex, NULL);
}
static smx_status log_softmax_op(const void *x, void *y, size_t rows, size_t cols, const smx_cuda_exec *ex, int dt) {
  return dt == 0 ? smx_cuda_log_softmax_rows_f32(x, cols, y, cols, rows, cols, ex, NULL)
                 : smx_cuda_log_softmax_rows_bf16(x, cols, y, cols, rows, cols, ex, NULL);
}

/* the language-model head: fused softmax + top-k, and sampling, on rows x cols logits */
enum { LM_TOPK, LM_SAMPLE };
typedef struct lm_case {
  const char *name;
  int kind;
  size_t k;                 /* top-k: k */
  smx_sample_params p;      /* sampling */
} lm_case;

static smx_status lm_run(const lm_case *c, const void *x, void *values, int64_t *idx, size_t rows, size_t cols,
                         const smx_cuda_exec *ex, int dt) {
  if (c->kind == LM_TOPK)
    return dt == 0 ? smx_cuda_softmax_topk_rows_f32(x, cols, values, idx, rows, cols, c->k, ex, NULL)
                   : smx_cuda_softmax_topk_rows_bf16(x, cols, values, idx, rows, cols, c->k, ex, NULL);
  return dt == 0 ? smx_cuda_sample_rows_f32(x, cols, idx, rows, cols, &c->p, 1234, 0, ex, NULL)
                 : smx_cuda_sample_rows_bf16(x, cols, idx, rows, cols, &c->p, 1234, 0, ex, NULL);
}

static float median_us(cudaEvent_t *ev, int reps) {
  float *t = malloc((size_t)reps * sizeof(float));
  for (int i = 0; i < reps; i++) {
    CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
    t[i] *= 1000.0f;
  }
  qsort(t, (size_t)reps, sizeof(float), cmp_float);
  float m = t[reps / 2];
  free(t);
  return m;
}

static void time_op(const char *name, op_fn f, int dt, size_t rows, size_t cols, int reps, cudaEvent_t *ev,
                    cudaStream_t st) {
  size_t es = dt == 0 ? 4 : 2, n = rows * cols;
  void *x, *y;
  CK(cudaMalloc(&x, n * es));
  CK(cudaMalloc(&y, n * es));
  fill_random(x, n, es);
  smx_cuda_exec ex = { st, NULL, 0 };
  size_t ws = 0;
  if (smx_cuda_workspace_size(SMX_CUDA_SOFTMAX, rows, cols, &ws) != SMX_OK) exit(1);
  if (ws) CK(cudaMalloc(&ex.workspace, ws));
  ex.workspace_bytes = ws;
  for (int i = 0; i < 3; i++) {
    smx_status s = f(x, y, rows, cols, &ex, dt);
    if (s != SMX_OK) {
      fprintf(stderr, "bench_cuda: %s: %s %s\n", name, smx_status_string(s), smx_cuda_last_error());
      exit(1);
    }
  }
  for (int i = 0; i < reps; i++) {
    CK(cudaEventRecord(ev[2 * i], st));
    (void)f(x, y, rows, cols, &ex, dt);
    CK(cudaEventRecord(ev[2 * i + 1], st));
  }
  CK(cudaStreamSynchronize(st));
  printf("%s,%s,%zu,%zu,%.2f,%zu\n", name, dt == 0 ? "f32" : "bf16", rows, cols, median_us(ev, reps), 2 * n * es);
  fflush(stdout);
  cudaFree(ex.workspace);
  cudaFree(x);
  cudaFree(y);
}

static void time_lm(const lm_case *c, int dt, size_t rows, size_t cols, int reps, cudaEvent_t *ev, cudaStream_t st) {
  size_t es = dt == 0 ? 4 : 2, n = rows * cols, k = c->kind == LM_TOPK ? c->k : 1;
  void *x, *v, *idx;
  CK(cudaMalloc(&x, n * es));
  CK(cudaMalloc(&v, rows * k * sizeof(float)));
  CK(cudaMalloc(&idx, rows * k * sizeof(int64_t)));
  fill_random(x, n, es);
  smx_cuda_exec ex = { st, NULL, 0 };
  size_t ws = 0;
  smx_status s = c->kind == LM_TOPK ? smx_cuda_topk_workspace_size(rows, cols, c->k, &ws)
                                    : smx_cuda_sample_workspace_size(rows, cols, &c->p, &ws);
  if (s != SMX_OK) exit(1);
  if (ws) CK(cudaMalloc(&ex.workspace, ws));
  ex.workspace_bytes = ws;
  for (int i = 0; i < 3; i++) {
    s = lm_run(c, x, v, idx, rows, cols, &ex, dt);
    if (s != SMX_OK) {
      fprintf(stderr, "bench_cuda: %s: %s %s\n", c->name, smx_status_string(s), smx_cuda_last_error());
      exit(1);
    }
  }
  for (int i = 0; i < reps; i++) {
    CK(cudaEventRecord(ev[2 * i], st));
    (void)lm_run(c, x, v, idx, rows, cols, &ex, dt);
    CK(cudaEventRecord(ev[2 * i + 1], st));
  }
  CK(cudaStreamSynchronize(st));
  printf("%s,%s,%zu,%zu,%.2f,%zu\n", c->name, dt == 0 ? "f32" : "bf16", rows, cols, median_us(ev, reps), n * es);
  fflush(stdout);
  cudaFree(ex.workspace);
  cudaFree(x);
  cudaFree(v);
  cudaFree(idx);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 30;
  if (reps < 1 || reps > 1000) reps = 30;
  int ndev = 0;
  if (smx_cuda_device_count(&ndev) != SMX_OK || ndev == 0) {
    fprintf(stderr, "bench_cuda: no GPU\n");
    return 77;
  }
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cudaEvent_t *ev = malloc((size_t)reps * 2 * sizeof(cudaEvent_t));
  for (int i = 0; i < 2 * reps; i++) CK(cudaEventCreate(&ev[i]));
  /* the copy roof */
  size_t bytes = (size_t)2 << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  fill_random(a, bytes / 4, 4);
  for (int i = 0; i < 3; i++) CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st));
  for (int i = 0; i < reps; i++) {
    CK(cudaEventRecord(ev[2 * i], st));
    CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(ev[2 * i + 1], st));
  }
  CK(cudaStreamSynchronize(st));
  printf("roof,smx,%.1f\n", 2.0 * (double)bytes / (median_us(ev, reps) * 1e-6) / 1e9);
  cudaFree(a);
  cudaFree(b);
  static const size_t shapes[][2] = { { 4096, 32000 }, { 512, 256000 }, { 65536, 1000 }, { 16, 4194304 },
                                       { 8192, 128000 } };
  for (int dt = 0; dt < 2; dt++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      time_op("softmax", softmax_op, dt, shapes[i][0], shapes[i][1], reps, ev, st);
  for (int dt = 0; dt < 2; dt++) time_op("log_softmax", log_softmax_op, dt, 4096, 32000, reps, ev, st);
  /* bench_torch.py: topk(softmax(x)), multinomial(softmax(x)) and the sort + cumsum top-p, under the same names */
  static const lm_case lm[] = {
    { "softmax_topk_k1", LM_TOPK, 1, { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "softmax_topk_k5", LM_TOPK, 5, { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "softmax_topk_k50", LM_TOPK, 50, { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "sample_multinomial", LM_SAMPLE, 0, { 1.0, 0, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "sample_top_k50", LM_SAMPLE, 0, { 1.0, 50, 1.0, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "sample_top_p0.9", LM_SAMPLE, 0, { 1.0, 0, 0.9, 0.0, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
    { "sample_min_p0.1", LM_SAMPLE, 0, { 1.0, 0, 1.0, 0.1, 0, SMX_SAMPLE_MULTINOMIAL, 0 } },
  };
  for (int dt = 0; dt < 2; dt++)
    for (size_t i = 0; i < sizeof lm / sizeof lm[0]; i++) time_lm(&lm[i], dt, 256, 128000, reps, ev, st);
  for (int i = 0; i < 2 * reps; i++) cudaEventDestroy(ev[i]);
  free(ev);
  cudaStreamDestroy(st);
  return 0;
}
