/*
 * Softmax and log-softmax backward (vector-Jacobian products) over rows:
 * argument checks, the split of rows across threads, and per row the two
 * passes (a reduction in double, then the elementwise kernel of
 * src/kernels/f32-xent/). f16 / bf16 rows go through small stack buffers.
 */
#include <float.h>
#include <math.h>

#include "api/half_row.h"
#include "api/options.h"
#include "kernels/f32-xent/ukernels.h"
#include "lm/lm_args.h"
#include "registry/registry.h"
#include "runtime/thread_pool.h"
#include "smx/smx.h"

#define SMX_BWD_BLOCK 2048

typedef struct bwd_job {
  int logsm;             /* 1: log-softmax backward, 0: softmax backward */
  smx_elem elem;
  const void *y, *dy;
  void *dx;
  size_t ldy, lddy, lddx, rows, cols, per;
  float s;               /* 1/T */
  double t_div;          /* T when 1/T overflows float (then used as a divisor), else 0 */
  const smx_xent_ukernels *k;
  const smx_cvt_ukernels *cv;
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

static void row_f32(const bwd_job *j, const float *y, const float *dy, float *dx) {
  size_t n = j->cols;
  if (j->t_div != 0.0) bwd_div(j, n, y, dy, dx, j->logsm ? j->k->rsum(n, dy) : j->k->rdot(n, y, dy));
  else if (j->logsm) j->k->vlogsoftmax_bwd(n, y, dy, dx, (float)j->k->rsum(n, dy), j->s);
  else j->k->vsoftmax_bwd(n, y, dy, dx, (float)j->k->rdot(n, y, dy), j->s);
}

static void row_half(const bwd_job *j, const uint16_t *y, const uint16_t *dy, uint16_t *dx) {
  void (*to)(size_t, const uint16_t *, float *) = j->elem == SMX_ELEM_F16 ? j->cv->f16_to_f32 : j->cv->bf16_to_f32;
  void (*from)(size_t, const float *, uint16_t *) = j->elem == SMX_ELEM_F16 ? j->cv->f32_to_f16 : j->cv->f32_to_bf16;
  float a[SMX_BWD_BLOCK], b[SMX_BWD_BLOCK];
  size_t n = j->cols;
  double red = 0.0;   /* block partial sums in a fixed order */
  for (size_t i = 0; i < n; i += SMX_BWD_BLOCK) {
    size_t len = n - i < SMX_BWD_BLOCK ? n - i : SMX_BWD_BLOCK;
    to(len, dy + i, b);
    if (j->logsm) red += j->k->rsum(len, b);
    else { to(len, y + i, a); red += j->k->rdot(len, a, b); }
  }
  for (size_t i = 0; i < n; i += SMX_BWD_BLOCK) {
    size_t len = n - i < SMX_BWD_BLOCK ? n - i : SMX_BWD_BLOCK;
    to(len, y + i, a);
    to(len, dy + i, b);
    if (j->t_div != 0.0) bwd_div(j, len, a, b, b, red);
    else if (j->logsm) j->k->vlogsoftmax_bwd(len, a, b, b, (float)red, j->s);
    else j->k->vsoftmax_bwd(len, a, b, b, (float)red, j->s);
    from(len, b, dx + i);
  }
}

static void bwd_task(void *ctx, size_t t) {
  const bwd_job *j = ctx;
  size_t r0 = t * j->per, r1 = r0 + j->per < j->rows ? r0 + j->per : j->rows;
  size_t es = smx_elem_size(j->elem);
  for (size_t r = r0; r < r1; r++) {
    const char *y = (const char *)j->y + r * j->ldy * es, *dy = (const char *)j->dy + r * j->lddy * es;
    char *dx = (char *)j->dx + r * j->lddx * es;
    if (j->elem == SMX_ELEM_F32) row_f32(j, (const float *)y, (const float *)dy, (float *)dx);
    else row_half(j, (const uint16_t *)y, (const uint16_t *)dy, (uint16_t *)dx);
  }
}

static smx_status run_bwd(int logsm, smx_elem elem, const void *y, size_t ldy, const void *dy, size_t lddy, void *dx,
                          size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  smx_resolved_options o;   /* the same refusals as every other entry point */
  if (smx_resolve_options(opt, &o) != SMX_OK) return SMX_E_INVALID_ARG;
  double t = o.temperature;
  int threads = o.threads;
  if (ldy < cols || lddy < cols || lddx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) return SMX_OK;
  if (!y || !dy || !dx) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  /* sizes are checked as if elements were at least 4 bytes, so half rows keep the float limit */
  size_t cs = es > sizeof(float) ? es : sizeof(float);
  size_t ys = smx_lm_span(rows, cols, ldy, cs), dys = smx_lm_span(rows, cols, lddy, cs);
  size_t dxs = smx_lm_span(rows, cols, lddx, cs);
  if (!ys || !dys || !dxs) return SMX_E_INVALID_ARG;
  /* dx may be exactly y or exactly dy (same leading dimension); nothing else */
  int same_y = dx == y && lddx == ldy, same_dy = dx == dy && lddx == lddy;
  if (!same_y && smx_lm_overlap(dx, dxs * es, y, ys * es)) return SMX_E_INVALID_ARG;
  if (!same_dy && smx_lm_overlap(dx, dxs * es, dy, dys * es)) return SMX_E_INVALID_ARG;

  bwd_job j;
  j.logsm = logsm;
  j.elem = elem;
  j.y = y;
  j.dy = dy;
  j.dx = dx;
  j.ldy = ldy;
  j.lddy = lddy;
  j.lddx = lddx;
  j.rows = rows;
  j.cols = cols;
  j.t_div = 1.0 / t > FLT_MAX ? t : 0.0;
  j.s = j.t_div != 0.0 ? 1.0f : (float)(1.0 / t);
  j.k = smx_registry_current()->xent;
  j.cv = smx_registry_current()->cvt;
  if (rows * cols < ((size_t)1 << 14) || rows < 2) threads = 1;   /* not worth waking the pool */
  size_t ntasks = smx_lm_tasks(threads, rows, &j.per);
  if (threads > 1) smx_parallel_for(threads, ntasks, bwd_task, &j);
  else for (size_t i = 0; i < ntasks; i++) bwd_task(&j, i);
  return SMX_OK;
}

smx_status smx_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n, const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_F32, y, n, dy, n, dx, n, 1, n, opt);
}

smx_status smx_log_softmax_backward_f32(const float *y, const float *dy, float *dx, size_t n,
                                        const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_F32, y, n, dy, n, dx, n, 1, n, opt);
}

smx_status smx_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy, float *dx,
                                         size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_F32, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}

smx_status smx_log_softmax_backward_rows_f32(const float *y, size_t ldy, const float *dy, size_t lddy, float *dx,
                                             size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_F32, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}

smx_status smx_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy, uint16_t *dx,
                                         size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_F16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}

smx_status smx_log_softmax_backward_rows_f16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                             uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                             const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_F16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}

smx_status smx_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                          uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                          const smx_options *opt) {
  return run_bwd(0, SMX_ELEM_BF16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}

smx_status smx_log_softmax_backward_rows_bf16(const uint16_t *y, size_t ldy, const uint16_t *dy, size_t lddy,
                                              uint16_t *dx, size_t lddx, size_t rows, size_t cols,
                                              const smx_options *opt) {
  return run_bwd(1, SMX_ELEM_BF16, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);
}
