/*
 * smx_cuda timings on the shapes of issue 21 (CUDA events, median of the
 * repeats after warm-ups), and the card's copy roof (a 2 GiB device-to-device
 * copy, bytes read plus bytes written). Prints CSV lines that
 * bench/cuda/report.py joins with bench/cuda/bench_torch.py's:
 *   roof,smx,<GB/s>
 *   <op>,<dtype>,<rows>,<cols>,<us>,<bytes moved at the minimum>
 * Inputs are random normal-ish (never zeros), larger than the L2.
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
  for (int i = 0; i < 2 * reps; i++) cudaEventDestroy(ev[i]);
  free(ev);
  cudaStreamDestroy(st);
  return 0;
}
