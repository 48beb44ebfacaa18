/*
 * smx_cuda softmax, log-softmax, log-sum-exp and the two backward passes
 * against float64 references (the bounds of smx.h and smx_grad.h) and the
 * CPU library (the same value classes: NaN, infinities), on random and
 * special rows (NaN, -inf masks, all masked, +inf, ties, huge spreads), row
 * lengths 1 .. 2^26 (across the warp, block and split-row paths), strided and
 * in-place rows, every storage type, temperatures and the masked-row flag;
 * outputs poisoned first (every element written, nothing past a row's end)
 * and every case run twice (the same bits).
 *
 * Usage: test_cuda_rows [--quick | --smoke]   (--quick: row lengths up to 40000; --smoke: a few lengths that
 * take each path, f32 and bf16, for compute-sanitizer)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LSE, OP_SOFTMAX_BWD, OP_LOG_SOFTMAX_BWD };
static const char *const op_name[] = { "softmax", "log_softmax", "logsumexp", "softmax_backward",
                                       "log_softmax_backward" };

/* ------------------------------------------------------- the operations */
#define DISPATCH3(dt, f32call, f16call, bf16call) \
  ((dt) == DT_F32 ? (f32call) : (dt) == DT_F16 ? (f16call) : (bf16call))

static smx_status run_forward(int dt, int op, const void *x, size_t ldx, void *y, size_t ldy, size_t rows,
                              size_t cols, const smx_cuda_exec *ex, const smx_options *o) {
  if (use_gpu) {
    if (op == OP_SOFTMAX)
      return DISPATCH3(dt, smx_cuda_softmax_rows_f32(x, ldx, y, ldy, rows, cols, ex, o),
                       smx_cuda_softmax_rows_f16(x, ldx, y, ldy, rows, cols, ex, o),
                       smx_cuda_softmax_rows_bf16(x, ldx, y, ldy, rows, cols, ex, o));
    if (op == OP_LOG_SOFTMAX)
      return DISPATCH3(dt, smx_cuda_log_softmax_rows_f32(x, ldx, y, ldy, rows, cols, ex, o),
                       smx_cuda_log_softmax_rows_f16(x, ldx, y, ldy, rows, cols, ex, o),
                       smx_cuda_log_softmax_rows_bf16(x, ldx, y, ldy, rows, cols, ex, o));
    return DISPATCH3(dt, smx_cuda_logsumexp_rows_f32(x, ldx, y, rows, cols, ex, o),
                     smx_cuda_logsumexp_rows_f16(x, ldx, y, rows, cols, ex, o),
                     smx_cuda_logsumexp_rows_bf16(x, ldx, y, rows, cols, ex, o));
  }
  if (op == OP_SOFTMAX)
    return DISPATCH3(dt, smx_softmax_rows_f32(x, ldx, y, ldy, rows, cols, o),
                     smx_softmax_rows_f16(x, ldx, y, ldy, rows, cols, o),
                     smx_softmax_rows_bf16(x, ldx, y, ldy, rows, cols, o));
  if (op == OP_LOG_SOFTMAX)
    return DISPATCH3(dt, smx_log_softmax_rows_f32(x, ldx, y, ldy, rows, cols, o),
                     smx_log_softmax_rows_f16(x, ldx, y, ldy, rows, cols, o),
                     smx_log_softmax_rows_bf16(x, ldx, y, ldy, rows, cols, o));
  return DISPATCH3(dt, smx_logsumexp_rows_f32(x, ldx, y, rows, cols, o),
                   smx_logsumexp_rows_f16(x, ldx, y, rows, cols, o),
                   smx_logsumexp_rows_bf16(x, ldx, y, rows, cols, o));
}

/* the CPU library on host buffers, always (the comparison of value classes) */
static smx_status cpu_forward(int dt, int op, const void *x, size_t ldx, void *y, size_t ldy, size_t rows,
                              size_t cols, const smx_options *o) {
  int keep = use_gpu;
  use_gpu = 0;
  smx_status st = run_forward(dt, op, x, ldx, y, ldy, rows, cols, NULL, o);
  use_gpu = keep;
  return st;
}

static smx_status run_backward(int dt, int op, const void *y, size_t ldy, const void *dy, size_t lddy, void *dx,
                               size_t lddx, size_t rows, size_t cols, const smx_cuda_exec *ex, const smx_options *o) {
  if (use_gpu) {
    if (op == OP_SOFTMAX_BWD)
      return DISPATCH3(dt, smx_cuda_softmax_backward_rows_f32(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o),
                       smx_cuda_softmax_backward_rows_f16(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o),
                       smx_cuda_softmax_backward_rows_bf16(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o));
    return DISPATCH3(dt, smx_cuda_log_softmax_backward_rows_f32(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o),
                     smx_cuda_log_softmax_backward_rows_f16(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o),
                     smx_cuda_log_softmax_backward_rows_bf16(y, ldy, dy, lddy, dx, lddx, rows, cols, ex, o));
  }
  if (op == OP_SOFTMAX_BWD)
    return DISPATCH3(dt, smx_softmax_backward_rows_f32(y, ldy, dy, lddy, dx, lddx, rows, cols, o),
                     smx_softmax_backward_rows_f16(y, ldy, dy, lddy, dx, lddx, rows, cols, o),
                     smx_softmax_backward_rows_bf16(y, ldy, dy, lddy, dx, lddx, rows, cols, o));
  return DISPATCH3(dt, smx_log_softmax_backward_rows_f32(y, ldy, dy, lddy, dx, lddx, rows, cols, o),
                   smx_log_softmax_backward_rows_f16(y, ldy, dy, lddy, dx, lddx, rows, cols, o),
                   smx_log_softmax_backward_rows_bf16(y, ldy, dy, lddy, dx, lddx, rows, cols, o));
}

/* --------------------------------------------------------------- a case */
typedef struct rcase {
  int dt, op;
  size_t rows, cols, pad;   /* ld = cols + pad */
  double t;                 /* temperature (1: the default) */
  uint32_t flags;
  int inplace;
  uint64_t seed;
} rcase;

static void describe(const rcase *c, char *buf, size_t n) {
  snprintf(buf, n, "%s %s %zux%zu ld+%zu T=%g flags=%u%s seed=%llu", op_name[c->op], dtype_name[c->dt], c->rows,
           c->cols, c->pad, c->t, (unsigned)c->flags, c->inplace ? " in-place" : "", (unsigned long long)c->seed);
}

static int row_kind_of(const rcase *c, size_t r) {
  if (r == 0) return ROW_RANDOM;
  return (int)((r + c->seed) % ROW_KINDS);
}

/* every element of rows x cols written (no poison left), every pad element untouched */
static void check_poison(const mat *m, const char *what) {
  size_t bad_written = 0, bad_pad = 0;
  for (size_t r = 0; r < m->rows; r++) {
    for (size_t c = 0; c < m->cols; c++) bad_written += elem_is_poison(m->dt, m->h, r * m->ld + c);
    if (r + 1 < m->rows)
      for (size_t c = m->cols; c < m->ld; c++) bad_pad += !elem_is_poison(m->dt, m->h, r * m->ld + c);
  }
  CHECK(bad_written == 0, "%s: %zu elements not written", what, bad_written);
  CHECK(bad_pad == 0, "%s: %zu elements past the rows' ends written", what, bad_pad);
}

static void forward_case(const rcase *c, smx_cuda_op cop) {
  char name[200];
  describe(c, name, sizeof name);
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = c->t;
  o.flags = c->flags;
  uint64_t seed = c->seed;
  size_t ld = c->cols + c->pad;
  mat x = mat_new(c->dt, c->rows, c->cols, ld);
  for (size_t r = 0; r < c->rows; r++) fill_row(&x, r, row_kind_of(c, r), &seed);
  smx_cuda_exec ex;
  exec_with_workspace(&ex, cop, c->rows, c->cols);
  int lse = c->op == OP_LSE;
  mat y[2] = { mat_new(c->dt, c->rows, c->cols, ld), mat_new(c->dt, c->rows, c->cols, ld) };
  float *out[2] = { calloc(c->rows + 1, sizeof(float)), calloc(c->rows + 1, sizeof(float)) };
  for (int run = 0; run < 2; run++) {
    void *dx = dev_upload(&x);
    void *dy = lse ? dev_alloc(c->rows * sizeof(float)) : c->inplace ? dx : dev_upload(&y[run]);
    if (lse) {
      fill_poison(DT_F32, out[run], c->rows);
      dev_copy_from_host(dy, out[run], c->rows * sizeof(float));
    }
    smx_status st = run_forward(c->dt, c->op, dx, ld, dy, ld, c->rows, c->cols, &ex, &o);
    dev_sync(name);
    CHECK(st == SMX_OK, "%s: status %s (%s)", name, smx_status_string(st), smx_cuda_last_error());
    if (lse) dev_copy_to_host(out[run], dy, c->rows * sizeof(float));
    else dev_download(&y[run], dy);
    if (dy != dx) dev_free(dy);
    dev_free(dx);
  }
  exec_free(&ex);
  /* the same bits twice */
  if (lse) CHECK(memcmp(out[0], out[1], c->rows * sizeof(float)) == 0, "%s: two runs differ", name);
  else CHECK(memcmp(y[0].h, y[1].h, ((c->rows - 1) * ld + c->cols) * dtype_size(c->dt)) == 0, "%s: two runs differ", name);
  /* the CPU library on the same rows */
  mat cpu = mat_new(c->dt, c->rows, c->cols, ld);
  float *cpu_out = calloc(c->rows + 1, sizeof(float));
  smx_status cst = cpu_forward(c->dt, c->op, x.h, ld, lse ? (void *)cpu_out : cpu.h, ld, c->rows, c->cols, &o);
  CHECK(cst == SMX_OK, "%s: CPU library status %s", name, smx_status_string(cst));
  double *ref = malloc((c->cols + 1) * sizeof(double));
  size_t bad = 0, bad_cpu = 0, bad_class = 0;
  for (size_t r = 0; r < c->rows; r++) {
    if (lse) {
      double want = ref_lse(&x, r, c->t, c->flags);
      bad += !within_log(DT_F32, out[0][r], want);
      bad_cpu += !within_log(DT_F32, cpu_out[r], want);
      bad_class += !same_class(out[0][r], cpu_out[r]);
      if (!within_log(DT_F32, out[0][r], want) && bad < 4)
        fprintf(stderr, "  %s row %zu (%s): lse %.9g, want %.17g\n", name, r, row_kind_name[row_kind_of(c, r)],
                out[0][r], want);
      continue;
    }
    ref_softmax(&x, r, c->t, c->flags, c->op == OP_LOG_SOFTMAX, ref);
    double mx = -INFINITY;
    for (size_t k = 0; k < c->cols; k++) mx = fmax(mx, mat_get(&x, r, k));
    for (size_t k = 0; k < c->cols; k++) {
      double got = mat_get(&y[0], r, k), mine = mat_get(&cpu, r, k);
      double ti = (mat_get(&x, r, k) - mx) / c->t;
      int ok = c->op == OP_SOFTMAX ? within_softmax(c->dt, got, ref[k], ti) : within_log(c->dt, got, ref[k]);
      int ok_cpu = c->op == OP_SOFTMAX ? within_softmax(c->dt, mine, ref[k], ti) : within_log(c->dt, mine, ref[k]);
      if (!ok && bad < 4)
        fprintf(stderr, "  %s row %zu (%s) col %zu: got %.9g, want %.17g (x %.9g)\n", name, r,
                row_kind_name[row_kind_of(c, r)], k, got, ref[k], mat_get(&x, r, k));
      bad += !ok;
      bad_cpu += !ok_cpu;
      bad_class += !same_class(got, mine);
    }
  }
  CHECK(bad == 0, "%s: %zu values outside the bound", name, bad);
  CHECK(bad_cpu == 0, "%s: the CPU library has %zu values outside the harness's bound", name, bad_cpu);
  CHECK(bad_class == 0, "%s: %zu values of another class (NaN / inf) than the CPU library's", name, bad_class);
  if (lse) {
    size_t unwritten = 0;
    for (size_t r = 0; r < c->rows; r++) unwritten += elem_is_poison(DT_F32, out[0], r);
    CHECK(unwritten == 0, "%s: %zu log-sum-exp values not written", name, unwritten);
  } else {
    check_poison(&y[0], name);
  }
  free(ref);
  free(cpu_out);
  mat_free(&cpu);
  for (int i = 0; i < 2; i++) {
    mat_free(&y[i]);
    free(out[i]);
  }
  mat_free(&x);
}

/* backward: y a softmax (log-softmax) output of random rows, some masked; dy random */
static void backward_case(const rcase *c, smx_cuda_op cop) {
  char name[200];
  describe(c, name, sizeof name);
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = c->t;
  uint64_t seed = c->seed;
  size_t ld = c->cols + c->pad, n = c->cols;
  int log_form = c->op == OP_LOG_SOFTMAX_BWD;
  mat x = mat_new(c->dt, c->rows, n, ld), y = mat_new(c->dt, c->rows, n, ld), dy = mat_new(c->dt, c->rows, n, ld);
  double *tmp = malloc((n + 1) * sizeof(double));
  for (size_t r = 0; r < c->rows; r++) {
    int kind = r % 3 == 2 ? ROW_MASKED : ROW_RANDOM;
    fill_row(&x, r, kind, &seed);
    ref_softmax(&x, r, c->t, 0, log_form, tmp);
    for (size_t k = 0; k < n; k++) {
      mat_set(&y, r, k, (float)tmp[k]);
      mat_set(&dy, r, k, (float)rng_uniform(&seed, -2.0, 2.0));
    }
  }
  smx_cuda_exec ex;
  exec_with_workspace(&ex, cop, c->rows, n);
  mat dx[2] = { mat_new(c->dt, c->rows, n, ld), mat_new(c->dt, c->rows, n, ld) };
  for (int run = 0; run < 2; run++) {
    void *d_y = dev_upload(&y), *d_dy = dev_upload(&dy);
    void *d_dx = c->inplace ? d_dy : dev_upload(&dx[run]);
    smx_status st = run_backward(c->dt, c->op, d_y, ld, d_dy, ld, d_dx, ld, c->rows, n, &ex, &o);
    dev_sync(name);
    CHECK(st == SMX_OK, "%s: status %s (%s)", name, smx_status_string(st), smx_cuda_last_error());
    dev_download(&dx[run], d_dx);
    if (d_dx != d_dy) dev_free(d_dx);
    dev_free(d_dy);
    dev_free(d_y);
  }
  exec_free(&ex);
  CHECK(memcmp(dx[0].h, dx[1].h, ((c->rows - 1) * ld + n) * dtype_size(c->dt)) == 0, "%s: two runs differ", name);
  double u = c->dt == DT_F16 ? 0x1p-11 : c->dt == DT_BF16 ? 0x1p-8 : 0.0, eps = 0x1p-23;
  double tiny = c->dt == DT_F16 ? 0x1p-24 : 1.2e-38;
  size_t bad = 0;
  for (size_t r = 0; r < c->rows; r++) {
    long double red = 0.0L;
    double abs_red = 0.0;
    for (size_t k = 0; k < n; k++) {
      double yk = mat_get(&y, r, k), dk = mat_get(&dy, r, k);
      red += log_form ? (long double)dk : (long double)dk * yk;
      abs_red += log_form ? fabs(dk) : fabs(dk * yk);
    }
    for (size_t k = 0; k < n; k++) {
      double yk = mat_get(&y, r, k), dk = mat_get(&dy, r, k), got = mat_get(&dx[0], r, k);
      double want, bound;
      if (log_form) {
        double e = exp(yk);
        want = (double)(((long double)dk - (long double)e * red) / c->t);
        bound = 4 * eps * (fabs(dk) + e * fabs((double)red)) / c->t + e * n * 0x1p-52 * abs_red / c->t;
      } else {
        want = (double)((long double)yk * ((long double)dk - red) / c->t);
        bound = 4 * eps * fabs(yk) * (fabs(dk) + fabs((double)red)) / c->t + fabs(yk) * n * 0x1p-52 * abs_red / c->t;
      }
      bound += u * fabs(want) + tiny;
      int ok = same_class(got, want) && (isinf(want) || want != want || fabs(got - want) <= bound);
      if (!ok && bad < 4)
        fprintf(stderr, "  %s row %zu col %zu: got %.9g, want %.17g (bound %.3g)\n", name, r, k, got, want, bound);
      bad += !ok;
    }
  }
  CHECK(bad == 0, "%s: %zu values outside the bound", name, bad);
  check_poison(&dx[0], name);
  free(tmp);
  for (int i = 0; i < 2; i++) mat_free(&dx[i]);
  mat_free(&x);
  mat_free(&y);
  mat_free(&dy);
}

static const smx_cuda_op cuda_op_of[] = { SMX_CUDA_SOFTMAX, SMX_CUDA_LOG_SOFTMAX, SMX_CUDA_LOGSUMEXP,
                                          SMX_CUDA_SOFTMAX_BACKWARD, SMX_CUDA_LOG_SOFTMAX_BACKWARD };

static void run_case(const rcase *c) {
  if (c->op == OP_LSE && c->inplace) return;
  if (c->op <= OP_LSE) forward_case(c, cuda_op_of[c->op]);
  else backward_case(c, cuda_op_of[c->op]);
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  backend_init("test_cuda_rows");
  /* the CPU stand-in checks the harness on the short rows only (this machine's time) */
  if (!use_gpu) quick = 1;
  static const size_t lengths[] = { 1, 2, 31, 32, 33, 100, 1023, 1024, 1025, 8191, 8192, 8193,
                                    16383, 16384, 16385, 32000, 40000, (1u << 20) + 3, 1u << 26 };
  uint64_t seed = 0x5eed0001;
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    size_t cols = lengths[li];
    if ((quick || smoke) && cols > 40000) break;
    if (smoke && cols != 1 && cols != 33 && cols != 1025 && cols != 16385 && cols != 40000) continue;
    size_t rows = cols <= 2048 ? 19 : cols <= 40000 ? 8 : cols < (1u << 26) ? 3 : 1;
    for (int dt = DT_F32; dt <= DT_BF16; dt++) {
      if (cols == (1u << 26) && dt != DT_F32) continue;   /* one 2^26 row: f32 */
      if (smoke && dt == DT_F16) continue;
      for (int op = OP_SOFTMAX; op <= OP_LOG_SOFTMAX_BWD; op++) {
        if (cols == (1u << 26) && op > OP_LSE) continue;
        rcase c = { dt, op, rows, cols, 0, 1.0, 0, 0, seed++ };
        run_case(&c);
        if (cols > 40000) continue;
        /* strided (an odd pad: rows not aligned to 16 bytes), a temperature, the flag, in place */
        rcase s = { dt, op, rows, cols, 3, 0.7, SMX_FLAG_MASKED_ROW_NAN, 0, seed++ };
        run_case(&s);
        rcase p = { dt, op, rows, cols, 1, 3.0, 0, 1, seed++ };
        run_case(&p);
      }
    }
  }
  return finish("test_cuda_rows");
}
