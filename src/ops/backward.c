/*
 * Softmax and log-softmax backward (vector-Jacobian products) over rows:
 * options, arguments and rows through the engine (src/core/), and per row the
 * two passes (a reduction in double, then the elementwise kernel of
 * src/kernels/f32-xent/). f16 / bf16 rows go through the half adaptor; f64
 * rows are plain double loops with a compensated reduction (no f64 kernel
 * family for the backward yet).
 */
#include <float.h>
#include <math.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "kernels/f32-xent/ukernels.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct bwd_job {
  int logsm;             /* 1: log-softmax backward, 0: softmax backward */
  smx_elem elem;
  const void *y, *dy;
  void *dx;
  size_t ldy, lddy, lddx, cols;
  float s;               /* 1/T */
  double t_div;          /* T when 1/T overflows float (then used as a divisor), else 0 */
  const smx_xent_ukernels *k;
  double t64;            /* T, the divisor of the f64 rows */
} bwd_job;

/* double to float without undefined behaviour beyond the float range */
static float to_float(double v) { return v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v; }

/* The elementwise step for a T so small that 1/T overflows float: each value
 * is formed in double and divided by T, so a zero numerator (a masked entry)
 * stays 0 instead of becoming 0 * inf = NaN. */
static void bwd_div(const bwd_job *j, size_t n, const float *y, const float *dy, float *dx, double red) {
  for (size_t i = 0; i < n; i++) {
    double v;
    if (j->logsm) {
      double yi = y[i] > 200.0f ? 200.0 : (double)y[i];   /* as the kernels: y_i above 88 only needs to be large */
      v = (double)dy[i] - exp(yi) * red;
    } else {
      v = (double)y[i] * ((double)dy[i] - red);
    }
    dx[i] = to_float(v / j->t_div);
  }
}

static void bwd_step(const bwd_job *j, size_t n, const float *y, const float *dy, float *dx, double red) {
  if (j->t_div != 0.0) bwd_div(j, n, y, dy, dx, red);
  else if (j->logsm) j->k->vlogsoftmax_bwd(n, y, dy, dx, (float)red, j->s);
  else j->k->vsoftmax_bwd(n, y, dy, dx, (float)red, j->s);
}

static void row_f32(const bwd_job *j, const float *y, const float *dy, float *dx) {
  size_t n = j->cols;
  bwd_step(j, n, y, dy, dx, j->logsm ? j->k->rsum(n, dy) : j->k->rdot(n, y, dy));
}

/* f16 / bf16 rows through the half-precision adaptor: two passes of blocks */
static void row_half(const bwd_job *j, const smx_elem_io *io, const uint16_t *y, const uint16_t *dy, uint16_t *dx) {
  float a[SMX_HALF_BLOCK], b[SMX_HALF_BLOCK];
  size_t n = j->cols;
  double red = 0.0;   /* block partial sums in a fixed order */
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io->load(len, dy + i, b);
    if (j->logsm) red += j->k->rsum(len, b);
    else { io->load(len, y + i, a); red += j->k->rdot(len, a, b); }
  }
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK) {
    size_t len = n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK;
    io->load(len, y + i, a);
    io->load(len, dy + i, b);
    bwd_step(j, len, a, b, b, red);
    io->store(len, b, dx + i);
  }
}

/* f64: the reduction compensated (Ogita, Rump and Oishi's Dot2: each
 * product's rounding error from fma, each sum's from two-sum), so that the
 * dot is as good as the float kernels' exact-product double sums; then the
 * elementwise step in double */
static void row_f64(const bwd_job *j, const double *y, const double *dy, double *dx) {
  size_t n = j->cols;
  double s = 0.0, c = 0.0;
  for (size_t i = 0; i < n; i++) {
    double t = j->logsm ? dy[i] : y[i] * dy[i], u = s + t, bp = u - s;
    if (!j->logsm) c += fma(y[i], dy[i], -t);
    c += (s - (u - bp)) + (t - bp);
    s = u;
  }
  double red = s - s == 0.0 ? s + c : s, tt = j->t64;   /* an infinite or NaN sum as the plain sum gives it */
  for (size_t i = 0; i < n; i++) {
    double v = j->logsm ? dy[i] - exp(y[i]) * red : y[i] * (dy[i] - red);
    dx[i] = v / tt;
  }
}

static void bwd_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  const bwd_job *j = ctx;
  size_t es = smx_elem_size(j->elem);
  smx_elem_io io = smx_elem_io_for(j->elem);
  (void)scratch;
  for (size_t r = r0; r < r1; r++) {
    const char *y = (const char *)j->y + r * j->ldy * es, *dy = (const char *)j->dy + r * j->lddy * es;
    char *dx = (char *)j->dx + r * j->lddx * es;
    if (j->elem == SMX_ELEM_F32) row_f32(j, (const float *)y, (const float *)dy, (float *)dx);
    else if (j->elem == SMX_ELEM_F64) row_f64(j, (const double *)y, (const double *)dy, (double *)dx);
    else row_half(j, &io, (const uint16_t *)y, (const uint16_t *)dy, (uint16_t *)dx);
  }
}

static smx_status run_bwd(int logsm, smx_elem elem, const void *y, size_t ldy, const void *dy, size_t lddy, void *dx,
                          size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  smx_resolved_options o;   /* the same refusals as every other entry point */
  smx_status st = smx_resolve_options(opt, &o);
  if (st != SMX_OK) return st;
  size_t es = smx_elem_size(elem);
  int empty;
  if ((st = smx_check_y_dy_dx(y, ldy, dy, lddy, dx, lddx, rows, cols, es, &empty)) != SMX_OK || empty) return st;

  double t = o.temperature;
  bwd_job j = { .logsm = logsm, .elem = elem, .y = y, .dy = dy, .dx = dx, .ldy = ldy, .lddy = lddy,
                .lddx = lddx, .cols = cols, .k = smx_registry_current()->xent };
  j.t_div = 1.0 / t > FLT_MAX ? t : 0.0;
  j.t64 = t;
  j.s = j.t_div != 0.0 ? 1.0f : (float)(1.0 / t);
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, 0, bwd_task, &j);
}

/* ---- public forms: (softmax, log-softmax) backward x (one f32 row, f32 / f16 / bf16 rows) */
smx_status smx_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n, const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_F32, y, n, dy, n, dx, n, 1, n, opt);
}

smx_status smx_log_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n,
                                        const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_F32, y, n, dy, n, dx, n, 1, n, opt);
}

smx_status smx_softmax_backward_f64(const double *y, const double *dy, double *dx, size_t n,
                                    const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_F64, y, n, dy, n, dx, n, 1, n, opt);
}

smx_status smx_log_softmax_backward_f64(const double *y, const double *dy, double *dx, size_t n,
                                        const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_F64, y, n, dy, n, dx, n, 1, n, opt);
}

#define SMX_BACKWARD_ROWS(name, logsm, sfx, T, elem)                                                          \
  smx_status smx_##name##_backward_rows_##sfx(const T *y, size_t ldy, const T *dy, size_t lddy, T *dx,       \
                                              size_t lddx, size_t rows, size_t cols, const smx_options *opt) { \
    return run_bwd(logsm, elem, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);                                \
  }
SMX_BACKWARD_ROWS(softmax, 0, f32, float, SMX_ELEM_F32)
SMX_BACKWARD_ROWS(log_softmax, 1, f32, float, SMX_ELEM_F32)
SMX_BACKWARD_ROWS(softmax, 0, f64, double, SMX_ELEM_F64)
SMX_BACKWARD_ROWS(log_softmax, 1, f64, double, SMX_ELEM_F64)
SMX_BACKWARD_ROWS(softmax, 0, f16, uint16_t, SMX_ELEM_F16)
SMX_BACKWARD_ROWS(log_softmax, 1, f16, uint16_t, SMX_ELEM_F16)
SMX_BACKWARD_ROWS(softmax, 0, bf16, uint16_t, SMX_ELEM_BF16)
SMX_BACKWARD_ROWS(log_softmax, 1, bf16, uint16_t, SMX_ELEM_BF16)
