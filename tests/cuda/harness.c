/* The shared part of the smx_cuda tests (harness.h). */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

const char *const dtype_name[3] = { "f32", "f16", "bf16" };
const char *const row_kind_name[ROW_KINDS] = { "random", "nan", "masked", "all-masked", "+inf", "ties", "spread" };
int failures = 0, checks = 0;
int use_gpu = 0;

size_t dtype_size(int dt) { return dt == DT_F32 ? 4 : 2; }

uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double rng_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng_next(s) >> 11) * 0x1p-53);
}

float elem_get(int dt, const void *p, size_t i) {
  if (dt == DT_F32) return ((const float *)p)[i];
  float v;
  if (dt == DT_F16) smx_f16_to_f32_n((const uint16_t *)p + i, &v, 1);
  else smx_bf16_to_f32_n((const uint16_t *)p + i, &v, 1);
  return v;
}
void elem_set(int dt, void *p, size_t i, float v) {
  if (dt == DT_F32) ((float *)p)[i] = v;
  else if (dt == DT_F16) smx_f32_to_f16_n(&v, (uint16_t *)p + i, 1);
  else smx_f32_to_bf16_n(&v, (uint16_t *)p + i, 1);
}

static const uint32_t poison32 = 0x7fc0deadu;
static const uint16_t poison16[3] = { 0, 0x7e5bu, 0x7fd5u };
int elem_is_poison(int dt, const void *p, size_t i) {
  if (dt == DT_F32) {
    uint32_t u;
    memcpy(&u, (const char *)p + 4 * i, 4);
    return u == poison32;
  }
  return ((const uint16_t *)p)[i] == poison16[dt];
}
void fill_poison(int dt, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dt == DT_F32) memcpy((char *)p + 4 * i, &poison32, 4);
    else ((uint16_t *)p)[i] = poison16[dt];
  }
}

mat mat_new(int dt, size_t rows, size_t cols, size_t ld) {
  mat m = { dt, rows, cols, ld, NULL };
  size_t n = rows ? (rows - 1) * ld + cols : 0;
  m.h = malloc((n ? n : 1) * dtype_size(dt));
  if (!m.h) {
    fprintf(stderr, "out of host memory (%zu elements)\n", n);
    exit(1);
  }
  fill_poison(dt, m.h, n);
  return m;
}
void mat_free(mat *m) {
  free(m->h);
  m->h = NULL;
}
float mat_get(const mat *m, size_t r, size_t c) { return elem_get(m->dt, m->h, r * m->ld + c); }
void mat_set(mat *m, size_t r, size_t c, float v) { elem_set(m->dt, m->h, r * m->ld + c, v); }

void fill_row(mat *m, size_t r, int kind, uint64_t *seed) {
  size_t n = m->cols;
  double span = kind == ROW_SPREAD ? (m->dt == DT_F16 ? 3.0e4 : 1.0e30) : 10.0;
  for (size_t c = 0; c < n; c++) mat_set(m, r, c, (float)rng_uniform(seed, -span, span));
  size_t a = (size_t)(rng_next(seed) % n), b = (size_t)(rng_next(seed) % n);
  switch (kind) {
    case ROW_NAN: mat_set(m, r, a, NAN); break;
    case ROW_MASKED:
      for (size_t c = 0; c < n; c++)
        if (c % 3 == 1 && c != a) mat_set(m, r, c, -INFINITY);
      break;
    case ROW_ALL_MASKED:
      for (size_t c = 0; c < n; c++) mat_set(m, r, c, -INFINITY);
      break;
    case ROW_POSINF:
      mat_set(m, r, a, INFINITY);
      mat_set(m, r, b, INFINITY);
      if (n > 2) mat_set(m, r, (a + 1) % n, -INFINITY);
      break;
    case ROW_TIES:
      for (size_t c = 0; c < n; c++) mat_set(m, r, c, (float)(int)(c % 4));   /* many equal maxima */
      break;
    default: break;
  }
}

/* ----------------------------------------------------------- references */
typedef struct summary {
  int nan, ninf;
  double m;
} summary;
static summary summarise(const mat *m, size_t r) {
  summary s = { 0, 0, -INFINITY };
  for (size_t c = 0; c < m->cols; c++) {
    double x = mat_get(m, r, c);
    if (x != x) s.nan = 1;
    else if (x == INFINITY) s.ninf++;
    if (x > s.m) s.m = x;
  }
  return s;
}
static long double ref_sum(const mat *m, size_t r, double mx, double t) {
  long double s = 0.0L;
  for (size_t c = 0; c < m->cols; c++) s += expl(((long double)mat_get(m, r, c) - mx) / t);
  return s;
}

double ref_lse(const mat *m, size_t r, double t, uint32_t flags) {
  if (m->cols == 0) return -INFINITY;
  summary s = summarise(m, r);
  if (s.nan) return NAN;
  if (s.ninf) return INFINITY;
  if (s.m == -INFINITY) return (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : -INFINITY;
  return (double)((long double)s.m / t + logl(ref_sum(m, r, s.m, t)));
}

void ref_softmax(const mat *m, size_t r, double t, uint32_t flags, int log_form, double *out) {
  summary s = summarise(m, r);
  for (size_t c = 0; c < m->cols; c++) {
    double x = mat_get(m, r, c);
    if (s.nan) out[c] = NAN;
    else if (s.ninf) out[c] = x == INFINITY ? (log_form ? -log((double)s.ninf) : 1.0 / s.ninf) : (log_form ? -INFINITY : 0.0);
    else if (s.m == -INFINITY) out[c] = (flags & SMX_FLAG_MASKED_ROW_NAN) ? NAN : (log_form ? -INFINITY : 0.0);
    else out[c] = NAN;   /* set below */
  }
  if (s.nan || s.ninf || s.m == -INFINITY) return;
  long double sum = ref_sum(m, r, s.m, t), ls = logl(sum);
  for (size_t c = 0; c < m->cols; c++) {
    long double a = ((long double)mat_get(m, r, c) - s.m) / t;
    out[c] = log_form ? (double)(a - ls) : (double)(expl(a) / sum);
  }
}

/* ---------------------------------------------------------------- bounds */
static double unit_roundoff(int dt) { return dt == DT_F16 ? 0x1p-11 : dt == DT_BF16 ? 0x1p-8 : 0.0; }
static double max_finite(int dt) { return dt == DT_F16 ? 65504.0 : FLT_MAX; }
static const double EPS = 0x1p-23;

int same_class(double got, double ref) {
  if (ref != ref || got != got) return ref != ref && got != got;
  if (isinf(ref) || isinf(got)) return got == ref;
  return 1;
}

int within_softmax(int dt, double got, double ref, double ti) {
  if (!same_class(got, ref)) return 0;
  if (ref != ref || isinf(ref)) return 1;
  if (got == ref) return 1;   /* exact (also where ti is not finite: the +inf entries' 1/k) */
  if (ref == 0.0) return got == 0.0;
  if (ti != ti || isinf(ti)) ti = 0.0;
  double u = unit_roundoff(dt), tiny = dt == DT_F16 ? 0x1p-25 : 0.0;
  if (ref < FLT_MIN) return got >= 0.0 && got < FLT_MIN + u * FLT_MIN + tiny;
  if (dt == DT_F16 && ref < 0x1p-14) return fabs(got - ref) <= 0x1p-25 + (4.0 + fabs(ti) / 2) * EPS * ref;
  return fabs(got - ref) <= (4.0 + fabs(ti) / 2) * EPS * ref + u * ref;
}

int within_log(int dt, double got, double ref) {
  if (isinf(got) && !isinf(ref) && fabs(ref) > max_finite(dt)) return (got < 0) == (ref < 0);   /* beyond the range */
  if (!same_class(got, ref)) return 0;
  if (ref != ref || isinf(ref)) return 1;
  double u = unit_roundoff(dt);
  return fabs(got - ref) <= 4.0 * EPS * fmax(1.0, fabs(ref)) + u * fabs(ref);
}

/* --------------------------------------------------------------- backend */
void backend_init(const char *test) {
  int n = 0;
  smx_status st = smx_cuda_device_count(&n);
  use_gpu = st == SMX_OK && n > 0;
  if (use_gpu) {
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
      printf("%s: GPU %s (sm_%d%d, %d SMs)\n", test, p.name, p.major, p.minor, p.multiProcessorCount);
  } else {
    printf("%s: no GPU (%s): the CPU library stands in to check the harness; the GPU is not tested\n", test,
           st == SMX_OK ? "0 devices" : smx_cuda_last_error());
  }
}

static void die_cuda(cudaError_t e, const char *what) {
  fprintf(stderr, "FAIL %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

void *dev_alloc(size_t bytes) {
  void *d = NULL;
  if (!bytes) bytes = 16;
  if (use_gpu) {
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e != cudaSuccess) die_cuda(e, "cudaMalloc");
  } else {
    d = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!d) {
      fprintf(stderr, "out of host memory\n");
      exit(1);
    }
  }
  return d;
}
void dev_copy_to_host(void *h, const void *d, size_t bytes) {
  if (!bytes) return;
  if (!use_gpu) {
    memcpy(h, d, bytes);
    return;
  }
  cudaError_t e = cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) die_cuda(e, "cudaMemcpy to host");
}
void dev_copy_from_host(void *d, const void *h, size_t bytes) {
  if (!bytes) return;
  if (!use_gpu) {
    memcpy(d, h, bytes);
    return;
  }
  cudaError_t e = cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) die_cuda(e, "cudaMemcpy to device");
}
static size_t mat_bytes(const mat *m) { return (m->rows ? (m->rows - 1) * m->ld + m->cols : 0) * dtype_size(m->dt); }
void *dev_upload(const mat *m) {
  void *d = dev_alloc(mat_bytes(m));
  dev_copy_from_host(d, m->h, mat_bytes(m));
  return d;
}
void dev_download(mat *m, const void *d) { dev_copy_to_host(m->h, d, mat_bytes(m)); }
void dev_free(void *d) {
  if (!d) return;
  if (use_gpu) cudaFree(d);
  else free(d);
}
void dev_sync(const char *what) {
  if (!use_gpu) return;
  cudaError_t e = cudaDeviceSynchronize();
  CHECK(e == cudaSuccess, "%s: CUDA error %s", what, cudaGetErrorString(e));
  if (e != cudaSuccess) exit(1);   /* the context is lost: nothing after this can be trusted */
}

void exec_with_workspace(smx_cuda_exec *ex, smx_cuda_op op, size_t rows, size_t cols) {
  memset(ex, 0, sizeof *ex);
  size_t bytes = 0;
  smx_status st = smx_cuda_workspace_size(op, rows, cols, &bytes);
  CHECK(st == SMX_OK, "workspace size of op %d, %zu x %zu: %s", (int)op, rows, cols, smx_status_string(st));
  if (bytes) {
    ex->workspace = dev_alloc(bytes);
    ex->workspace_bytes = bytes;
  }
}
void exec_free(smx_cuda_exec *ex) {
  dev_free(ex->workspace);
  memset(ex, 0, sizeof *ex);
}

int finish(const char *test) {
  printf("%s: %d checks, %d failures (%s)\n", test, checks, failures, use_gpu ? "GPU" : "CPU stand-in, GPU not tested");
  if (failures) return 1;
  return use_gpu ? 0 : SKIP_CODE;
}
