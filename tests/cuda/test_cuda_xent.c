/*
 * smx_cuda fused cross-entropy against a float64 reference (smx_grad.h's
 * formulas and bounds) and, on special rows (NaN, all masked, +inf), against
 * the CPU library: reductions NONE / SUM / MEAN, ignore_index, label
 * smoothing, z-loss, temperature, grad_scale, the gradient in place or into a
 * buffer or not at all, lse, every storage type, rows that fit a warp, a
 * block, or are split across blocks; outputs poisoned first, each case run
 * twice (the same bits); bad targets refused on the device with nothing
 * written; rows == 0.
 *
 * Usage: test_cuda_xent [--quick | --smoke]   (as test_cuda_rows)
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define DISPATCH3(dt, a, b, c) ((dt) == DT_F32 ? (a) : (dt) == DT_F16 ? (b) : (c))

static smx_status run_xent(int dt, const void *x, size_t ld, const int64_t *t, float *loss, void *g, size_t ldg,
                           float *lse, size_t rows, size_t cols, const smx_cuda_exec *ex, const smx_options *o,
                           int gpu) {
  if (gpu)
    return DISPATCH3(dt, smx_cuda_cross_entropy_f32(x, ld, t, loss, g, ldg, lse, rows, cols, ex, o),
                     smx_cuda_cross_entropy_f16(x, ld, t, loss, g, ldg, lse, rows, cols, ex, o),
                     smx_cuda_cross_entropy_bf16(x, ld, t, loss, g, ldg, lse, rows, cols, ex, o));
  return DISPATCH3(dt, smx_cross_entropy_f32(x, ld, t, loss, g, ldg, lse, rows, cols, o),
                   smx_cross_entropy_f16(x, ld, t, loss, g, ldg, lse, rows, cols, o),
                   smx_cross_entropy_bf16(x, ld, t, loss, g, ldg, lse, rows, cols, o));
}

typedef struct xcase {
  int dt;
  size_t rows, cols, pad;
  smx_reduction red;
  double t, eps, z, scale;
  uint32_t flags;
  int grad;         /* 0 none, 1 buffer, 2 in place */
  int want_lse;
  int special;      /* special rows among the others */
  int all_ignored;
  uint64_t seed;
} xcase;

static const double EPS = 0x1p-23;

static void xent_case(const xcase *c) {
  char name[220];
  snprintf(name, sizeof name, "xent %s %zux%zu ld+%zu red=%d T=%g e=%g z=%g s=%g flags=%u grad=%d lse=%d seed=%llu",
           dtype_name[c->dt], c->rows, c->cols, c->pad, (int)c->red, c->t, c->eps, c->z, c->scale, (unsigned)c->flags,
           c->grad, c->want_lse, (unsigned long long)c->seed);
  smx_loss_ext le = SMX_LOSS_EXT_INIT;
  le.reduction = c->red;
  le.label_smoothing = c->eps;
  le.z_loss = c->z;
  le.grad_scale = c->scale;
  smx_options o;
  memset(&o, 0, sizeof o);
  o.temperature = c->t;
  o.flags = c->flags;
  o.loss = &le;
  uint64_t seed = c->seed;
  size_t ld = c->cols + c->pad, rows = c->rows, n = c->cols, nloss = c->red == SMX_REDUCTION_NONE ? rows : 1;
  mat x = mat_new(c->dt, rows, n, ld);
  int64_t *tg = malloc(rows * sizeof(int64_t));
  int *kind = malloc(rows * sizeof(int));
  for (size_t r = 0; r < rows; r++) {
    kind[r] = c->special && r % 4 == 3 ? (int)(1 + (r / 4) % 4) : ROW_RANDOM;   /* nan, masked, all-masked, +inf */
    fill_row(&x, r, kind[r], &seed);
    tg[r] = (int64_t)(rng_next(&seed) % n);
    if (c->all_ignored || r % 5 == 4) tg[r] = -100;
  }
  smx_cuda_exec ex;
  exec_with_workspace(&ex, SMX_CUDA_CROSS_ENTROPY, rows, n);
  mat g[2] = { mat_new(c->dt, rows, n, ld), mat_new(c->dt, rows, n, ld) };
  float *loss[2], *lse[2];
  for (int run = 0; run < 2; run++) {
    loss[run] = malloc((nloss + 1) * sizeof(float));
    lse[run] = malloc((rows + 1) * sizeof(float));
    fill_poison(DT_F32, loss[run], nloss);
    fill_poison(DT_F32, lse[run], rows);
    void *dx = dev_upload(&x), *dg = c->grad == 2 ? dx : c->grad == 1 ? dev_upload(&g[run]) : NULL;
    int64_t *dt_ = dev_alloc(rows * sizeof(int64_t));
    float *dl = dev_alloc(nloss * sizeof(float)), *dlse = c->want_lse ? dev_alloc(rows * sizeof(float)) : NULL;
    dev_copy_from_host(dt_, tg, rows * sizeof(int64_t));
    dev_copy_from_host(dl, loss[run], nloss * sizeof(float));
    if (dlse) dev_copy_from_host(dlse, lse[run], rows * sizeof(float));
    smx_status st = run_xent(c->dt, dx, ld, dt_, dl, dg, ld, dlse, rows, n, &ex, &o, use_gpu);
    dev_sync(name);
    CHECK(st == SMX_OK, "%s: status %s (%s)", name, smx_status_string(st), smx_cuda_last_error());
    if (use_gpu) {
      st = smx_cuda_cross_entropy_status(&ex);
      CHECK(st == SMX_OK, "%s: targets status %s", name, smx_status_string(st));
    }
    dev_copy_to_host(loss[run], dl, nloss * sizeof(float));
    if (dlse) dev_copy_to_host(lse[run], dlse, rows * sizeof(float));
    if (dg) dev_download(&g[run], dg);
    if (dg && dg != dx) dev_free(dg);
    dev_free(dx);
    dev_free(dt_);
    dev_free(dl);
    dev_free(dlse);
  }
  exec_free(&ex);
  CHECK(memcmp(loss[0], loss[1], nloss * sizeof(float)) == 0, "%s: two runs differ (loss)", name);
  if (c->want_lse) CHECK(memcmp(lse[0], lse[1], rows * sizeof(float)) == 0, "%s: two runs differ (lse)", name);
  if (c->grad)
    CHECK(memcmp(g[0].h, g[1].h, ((rows - 1) * ld + n) * dtype_size(c->dt)) == 0, "%s: two runs differ (grad)", name);

  /* the CPU library on the same input (the reference of the special rows) */
  mat cg = mat_new(c->dt, rows, n, ld);
  float *closs = malloc((nloss + 1) * sizeof(float)), *clse = malloc((rows + 1) * sizeof(float));
  smx_status cst = run_xent(c->dt, x.h, ld, tg, closs, cg.h, ld, clse, rows, n, NULL, &o, 0);
  CHECK(cst == SMX_OK, "%s: CPU library status %s", name, smx_status_string(cst));

  /* float64 reference of the other rows */
  size_t count = 0;
  for (size_t r = 0; r < rows; r++) count += tg[r] != -100;
  double s = c->scale == 0.0 ? 1.0 : c->scale;
  if (c->red == SMX_REDUCTION_MEAN) s = count ? s / (double)count : 0.0;
  double total = 0.0;
  int total_special = 0;
  size_t bad = 0, bad_special = 0;
  double u = c->dt == DT_F16 ? 0x1p-11 : c->dt == DT_BF16 ? 0x1p-8 : 0.0;
  double tiny = c->dt == DT_F16 ? 0x1p-24 : 0.0;
  for (size_t r = 0; r < rows; r++) {
    int ign = tg[r] == -100;
    double lse_ref = ref_lse(&x, r, c->t, c->flags);
    if (c->want_lse) bad += !within_log(DT_F32, lse[0][r], lse_ref);
    if (kind[r] == ROW_NAN || kind[r] == ROW_ALL_MASKED || kind[r] == ROW_POSINF) {   /* the CPU library's values */
      total_special |= !ign;
      if (c->red == SMX_REDUCTION_NONE) bad_special += !same_class(loss[0][r], closs[r]) ||
                                                        (isfinite(closs[r]) && fabs(loss[0][r] - closs[r]) > 8 * EPS * fmax(1, fabs(closs[r])));
      if (c->grad)
        for (size_t k = 0; k < n; k++) {
          double a = mat_get(&g[0], r, k), b = mat_get(&cg, r, k);
          bad_special += !same_class(a, b) || (isfinite(b) && fabs(a - b) > 8 * EPS * fabs(b) + u * fabs(b) + tiny);
        }
      continue;
    }
    double l = 0.0, xt = ign ? 0.0 : mat_get(&x, r, (size_t)tg[r]);
    if (!ign) {
      long double sx = 0.0L;
      for (size_t k = 0; k < n; k++) sx += mat_get(&x, r, k);
      if (c->eps < 1.0) l += (1.0 - c->eps) * (lse_ref - xt / c->t);
      if (c->eps > 0.0) l += c->eps * (lse_ref - (double)(sx / n) / c->t);
      if (c->z > 0.0) l += c->z * lse_ref * lse_ref;
    }
    total += l;
    if (c->red == SMX_REDUCTION_NONE && !within_log(DT_F32, loss[0][r], l)) {
      if (bad < 4) fprintf(stderr, "  %s row %zu: loss %.9g, want %.17g\n", name, r, loss[0][r], l);
      bad++;
    }
    if (!c->grad) continue;
    double mx = -INFINITY;
    for (size_t k = 0; k < n; k++) mx = fmax(mx, mat_get(&x, r, k));
    for (size_t k = 0; k < n; k++) {
      double got = mat_get(&g[0], r, k), want = 0.0, bound = 0.0;
      if (!ign) {
        double xk = mat_get(&x, r, k), p = exp(xk / c->t - lse_ref), zf = 1.0 + 2.0 * c->z * lse_ref;
        double q = s / c->t * zf * p, rest = s / c->t * (-c->eps / n - ((int64_t)k == tg[r] ? 1.0 - c->eps : 0.0));
        want = q + rest;
        bound = (q != 0.0 ? (6.0 + fabs(xk - mx) / (2 * c->t)) * EPS * fabs(q) : 0.0) + 2 * EPS * fabs(rest) +
                s / c->t * fabs(zf) * FLT_MIN;
      }
      bound += u * fabs(want) + tiny;
      int ok = ign ? got == 0.0 : same_class(got, want) && (!isfinite(want) || fabs(got - want) <= bound);
      if (!ok && bad < 4)
        fprintf(stderr, "  %s row %zu col %zu: grad %.9g, want %.17g (bound %.3g)\n", name, r, k, got, want, bound);
      bad += !ok;
    }
  }
  if (c->red != SMX_REDUCTION_NONE) {
    if (total_special) {   /* a special row reaches the reduction: the CPU library's value class */
      bad_special += !same_class(loss[0][0], closs[0]);
    } else {
      double want = c->red == SMX_REDUCTION_SUM ? total : (count ? total / (double)count : NAN);
      int ok = within_log(DT_F32, loss[0][0], want);
      if (!ok) fprintf(stderr, "  %s: reduced loss %.9g, want %.17g\n", name, loss[0][0], want);
      bad += !ok;
    }
  }
  CHECK(bad == 0, "%s: %zu values outside the bounds", name, bad);
  CHECK(bad_special == 0, "%s: %zu values of special rows unlike the CPU library's", name, bad_special);
  size_t unwritten = 0;
  for (size_t i = 0; i < nloss; i++) unwritten += elem_is_poison(DT_F32, loss[0], i);
  if (c->want_lse)
    for (size_t i = 0; i < rows; i++) unwritten += elem_is_poison(DT_F32, lse[0], i);
  CHECK(unwritten == 0, "%s: %zu loss / lse values not written", name, unwritten);
  if (c->grad == 1) {
    size_t un = 0, pad = 0;
    for (size_t r = 0; r < rows; r++) {
      for (size_t k = 0; k < n; k++) un += elem_is_poison(c->dt, g[0].h, r * ld + k);
      if (r + 1 < rows)
        for (size_t k = n; k < ld; k++) pad += !elem_is_poison(c->dt, g[0].h, r * ld + k);
    }
    CHECK(un == 0 && pad == 0, "%s: %zu gradient elements not written, %zu past the rows written", name, un, pad);
  }
  free(closs);
  free(clse);
  mat_free(&cg);
  for (int i = 0; i < 2; i++) {
    mat_free(&g[i]);
    free(loss[i]);
    free(lse[i]);
  }
  free(tg);
  free(kind);
  mat_free(&x);
}

/* a target out of range: refused (on the device), nothing written */
static void bad_targets(int dt, size_t rows, size_t cols) {
  char name[80];
  snprintf(name, sizeof name, "xent bad target %s %zux%zu", dtype_name[dt], rows, cols);
  uint64_t seed = 99;
  mat x = mat_new(dt, rows, cols, cols), g = mat_new(dt, rows, cols, cols);
  int64_t *tg = malloc(rows * sizeof(int64_t));
  for (size_t r = 0; r < rows; r++) {
    fill_row(&x, r, ROW_RANDOM, &seed);
    tg[r] = (int64_t)(r % cols);
  }
  tg[rows / 2] = (int64_t)cols;   /* one past the end */
  smx_cuda_exec ex;
  exec_with_workspace(&ex, SMX_CUDA_CROSS_ENTROPY, rows, cols);
  void *dx = dev_upload(&x), *dg = dev_upload(&g);
  int64_t *dt_ = dev_alloc(rows * sizeof(int64_t));
  float *dl = dev_alloc(rows * sizeof(float)), *dlse = dev_alloc(rows * sizeof(float));
  float *l = malloc(rows * sizeof(float)), *ls = malloc(rows * sizeof(float));
  fill_poison(DT_F32, l, rows);
  fill_poison(DT_F32, ls, rows);
  dev_copy_from_host(dt_, tg, rows * sizeof(int64_t));
  dev_copy_from_host(dl, l, rows * sizeof(float));
  dev_copy_from_host(dlse, ls, rows * sizeof(float));
  smx_loss_ext le = SMX_LOSS_EXT_INIT;
  le.reduction = SMX_REDUCTION_NONE;
  smx_options o;
  memset(&o, 0, sizeof o);
  o.loss = &le;
  smx_status st = run_xent(dt, dx, cols, dt_, dl, dg, cols, dlse, rows, cols, &ex, &o, use_gpu);
  if (use_gpu) {
    CHECK(st == SMX_OK, "%s: the call itself: %s", name, smx_status_string(st));
    st = smx_cuda_cross_entropy_status(&ex);
  }
  CHECK(st == SMX_E_INVALID_ARG, "%s: status %s, want invalid argument", name, smx_status_string(st));
  dev_copy_to_host(l, dl, rows * sizeof(float));
  dev_copy_to_host(ls, dlse, rows * sizeof(float));
  dev_download(&g, dg);
  size_t written = 0;
  for (size_t r = 0; r < rows; r++) {
    written += !elem_is_poison(DT_F32, l, r) + !elem_is_poison(DT_F32, ls, r);
    for (size_t k = 0; k < cols; k++) written += !elem_is_poison(dt, g.h, r * cols + k);
  }
  CHECK(written == 0, "%s: %zu values written", name, written);
  /* the same workspace, good targets: the record is cleared */
  tg[rows / 2] = 0;
  dev_copy_from_host(dt_, tg, rows * sizeof(int64_t));
  st = run_xent(dt, dx, cols, dt_, dl, dg, cols, dlse, rows, cols, &ex, &o, use_gpu);
  if (use_gpu && st == SMX_OK) st = smx_cuda_cross_entropy_status(&ex);
  CHECK(st == SMX_OK, "%s: good targets after bad: %s", name, smx_status_string(st));
  dev_sync(name);
  exec_free(&ex);
  dev_free(dx);
  dev_free(dg);
  dev_free(dt_);
  dev_free(dl);
  dev_free(dlse);
  free(l);
  free(ls);
  free(tg);
  mat_free(&x);
  mat_free(&g);
}

/* rows == 0: SUM 0, MEAN NaN */
static void empty_rows(void) {
  for (int red = 0; red < 2; red++) {
    smx_loss_ext le = SMX_LOSS_EXT_INIT;
    le.reduction = (smx_reduction)red;
    smx_options o;
    memset(&o, 0, sizeof o);
    o.loss = &le;
    float h = 123.0f;
    float *d = dev_alloc(sizeof(float));
    dev_copy_from_host(d, &h, sizeof h);
    int64_t *t = dev_alloc(sizeof(int64_t));
    float *x = dev_alloc(16);
    smx_status st = run_xent(DT_F32, x, 4, t, d, NULL, 4, NULL, 0, 4, NULL, &o, use_gpu);
    dev_sync("xent rows == 0");
    dev_copy_to_host(&h, d, sizeof h);
    CHECK(st == SMX_OK && (red == SMX_REDUCTION_SUM ? h == 0.0f : h != h), "xent rows == 0, reduction %d: %s, %g", red,
          smx_status_string(st), h);
    dev_free(d);
    dev_free(t);
    dev_free(x);
  }
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
  backend_init("test_cuda_xent");
  if (!use_gpu) quick = 1;
  static const size_t lengths[] = { 1, 2, 33, 1000, 16383, 16384, 16385, 32000, 100003, (1u << 20) + 3 };
  uint64_t seed = 0xce0001;
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    size_t cols = lengths[li];
    if ((quick || smoke) && cols > 40000) break;
    if (smoke && cols != 33 && cols != 16385 && cols != 32000) continue;
    size_t rows = cols <= 2048 ? 23 : cols <= 40000 ? 9 : 5;
    for (int dt = DT_F32; dt <= DT_BF16; dt++) {
      if (cols > 200000 && dt != DT_F32) continue;
      if (smoke && dt == DT_F16) continue;
      xcase a = { dt, rows, cols, 0, SMX_REDUCTION_MEAN, 1.0, 0.0, 0.0, 0.0, 0, 1, 1, 0, 0, seed++ };
      xent_case(&a);
      xcase b = { dt, rows, cols, 5, SMX_REDUCTION_SUM, 1.3, 0.1, 1e-4, 2.0, 0, 2, 1, 0, 0, seed++ };
      xent_case(&b);
      xcase cc = { dt, rows, cols, 1, SMX_REDUCTION_NONE, 0.8, 0.05, 0.0, 0.0, SMX_FLAG_MASKED_ROW_NAN, 1, 1, 1, 0, seed++ };
      xent_case(&cc);
      xcase d = { dt, rows, cols, 0, SMX_REDUCTION_NONE, 1.0, 0.0, 0.0, 0.0, 0, 0, 0, 1, 0, seed++ };
      xent_case(&d);
      xcase e = { dt, rows, cols, 0, SMX_REDUCTION_MEAN, 1.0, 0.0, 0.0, 0.0, 0, 1, 1, 0, 1, seed++ };
      xent_case(&e);
    }
  }
  bad_targets(DT_F32, 37, 100);
  bad_targets(DT_BF16, 5, 40000);
  empty_rows();
  return finish("test_cuda_xent");
}
