/*
 * The vector-Jacobian products of sparsemax, entmax-1.5 and alpha-entmax
 * (include/smx/smx_sparse.h), from the outputs y alone. With g_i = y_i^(2-alpha)
 * on the support (y_i > 0) and 0 elsewhere (Peters et al. 2019, Prop. 5),
 *   dx_i = g_i (dy_i - sum_j g_j dy_j / sum_j g_j);
 * for sparsemax g is the support's indicator (Martins & Astudillo 2016, eq. 14):
 * two vector passes (the support's sum of dy, then the subtraction). For entmax
 * the support is gathered by one vector pass and the weights are formed on it.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/entry_points.h"
#include "registry/registry.h"
#include "smx/smx.h"

smx_status smx_sparse_options(const smx_options *opt, smx_resolved_options *o);

typedef struct bwd_job {
  int f64;
  smx_elem elem;  /* F16 / BF16: rows widened into f32 scratch (after the f32 row's own scratch) */
  double alpha;   /* 2: sparsemax */
  const char *y, *dy;
  char *dx;
  size_t ldy, lddy, lddx, cols, es;
} bwd_job;

/* Neumaier's compensated sum */
static void cadd(double *s, double *c, double v) {
  double t = *s + v;
  *c += fabs(*s) >= fabs(v) ? (*s - t) + v : (v - t) + *s;
  *s = t;
}

/* the support's weight y^(2 - alpha) */
static double weight(double y, double alpha) { return alpha == 1.5 ? sqrt(y) : pow(y, 2.0 - alpha); }

#define ENTMAX_ROW(T, SEL, TINY)                                                                         \
  static void entmax_row_##T(const bwd_job *j, const T *y, const T *dy, T *dx, void *scratch) {        \
    const smx_sparse_ukernels *k = smx_registry_current()->sparse;                                      \
    size_t n = j->cols, *idx = scratch;                                                                 \
    double *g = (double *)(void *)(idx + n), *d = g + n;                                                \
    int nan = 0;                                                                                         \
    size_t m = k->SEL(n, y, TINY, idx, &nan, n);                                                            \
    if (nan) {                                                                                           \
      for (size_t i = 0; i < n; i++) dx[i] = NAN;                                                        \
      return;                                                                                            \
    }                                                                                                    \
    double s1 = 0, s2 = 0, c1 = 0, c2 = 0;                                                               \
    for (size_t q = 0; q < m; q++) {                                                                     \
      g[q] = weight((double)y[idx[q]], j->alpha);                                                        \
      d[q] = (double)dy[idx[q]];                                                                         \
      cadd(&s1, &c1, g[q] * d[q]);                                                                       \
      cadd(&s2, &c2, g[q]);                                                                              \
    }                                                                                                    \
    double mu = m ? (s1 + c1) / (s2 + c2) : 0.0;                                                         \
    memset(dx, 0, n * sizeof *dx); /* y and dy were read: dx may be either */                           \
    for (size_t q = 0; q < m; q++) dx[idx[q]] = (T)(g[q] * (d[q] - mu));                                \
  }
ENTMAX_ROW(float, vselect, FLT_TRUE_MIN)
ENTMAX_ROW(double, vselect_f64, DBL_TRUE_MIN)

/* One f32 row (y, dy, dx of cols floats). */
static void row_f32(const bwd_job *j, const float *yy, const float *dd, float *out, void *scratch) {
  const smx_sparse_ukernels *k = smx_registry_current()->sparse;
  if (j->alpha != 2.0) {
    entmax_row_float(j, yy, dd, out, scratch);
    return;
  }
  size_t cnt = 0;
  int nan = 0;
  double s = k->rsupsum(j->cols, yy, dd, &cnt, &nan);
  if (nan) for (size_t i = 0; i < j->cols; i++) out[i] = NAN;
  else k->vsupsub(j->cols, yy, dd, out, (float)(cnt ? s / (double)cnt : 0.0));
}

static void bwd_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const bwd_job *j = ctx;
  const smx_sparse_ukernels *k = smx_registry_current()->sparse;
  smx_elem_io io = smx_elem_io_for(j->elem);
  size_t own = j->alpha == 2.0 ? 0 : j->cols * (sizeof(size_t) + 2 * sizeof(double));
  float *hy = (float *)(void *)((char *)scratch + own), *hd = hy + j->cols, *hx = hd + j->cols;
  for (size_t r = r0; r < r1; r++) {
    const char *y = j->y + r * j->ldy * j->es, *dy = j->dy + r * j->lddy * j->es;
    char *dx = j->dx + r * j->lddx * j->es;
    if (j->elem == SMX_ELEM_F16 || j->elem == SMX_ELEM_BF16) {   /* f32 arithmetic, dx rounded once */
      io.load(j->cols, (const uint16_t *)(const void *)y, hy);
      io.load(j->cols, (const uint16_t *)(const void *)dy, hd);
      row_f32(j, hy, hd, hx, scratch);
      io.store(j->cols, hx, (uint16_t *)(void *)dx);
      continue;
    }
    if (!j->f64) {
      row_f32(j, (const float *)(const void *)y, (const float *)(const void *)dy, (float *)(void *)dx, scratch);
      continue;
    }
    if (j->alpha != 2.0) {
      entmax_row_double(j, (const double *)(const void *)y, (const double *)(const void *)dy, (double *)(void *)dx,
                        scratch);
      continue;
    }
    size_t cnt = 0;
    int nan = 0;
    const double *yy = (const double *)(const void *)y, *dd = (const double *)(const void *)dy;
    double s = k->rsupsum_f64(j->cols, yy, dd, &cnt, &nan);
    double *out = (double *)(void *)dx;
    if (nan) for (size_t i = 0; i < j->cols; i++) out[i] = NAN;
    else k->vsupsub_f64(j->cols, yy, dd, out, cnt ? s / (double)cnt : 0.0);
  }
}

static smx_status run_bwd(double alpha, smx_elem elem, const void *y, size_t ldy, const void *dy, size_t lddy,
                          void *dx, size_t lddx, size_t rows, size_t cols, const smx_options *opt) {
  int f64 = elem == SMX_ELEM_F64, half = elem == SMX_ELEM_F16 || elem == SMX_ELEM_BF16;
  smx_resolved_options o;
  smx_status st = smx_sparse_options(opt, &o);
  if (st != SMX_OK) return st;
  if (!(alpha > 1.0 && alpha < INFINITY)) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  int empty;
  if ((st = smx_check_y_dy_dx(y, ldy, dy, lddy, dx, lddx, rows, cols, es, &empty)) != SMX_OK || empty) return st;
  size_t per = (alpha == 2.0 ? 0 : sizeof(size_t) + 2 * sizeof(double)) + (half ? 3 * sizeof(float) : 0);
  if (per && cols > SIZE_MAX / 2 / per) return SMX_E_NOMEM;
  bwd_job j = { .f64 = f64, .elem = elem, .alpha = alpha, .y = y, .dy = dy, .dx = dx, .ldy = ldy, .lddy = lddy, .lddx = lddx,
                .cols = cols, .es = es };
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, cols * per, bwd_rows, &j);
}

/* The public entry points, one (operation, dtype) per line: x is not needed (the products depend on y
 * only) and is not read. OWN is the operation's own parameter (ops/entry_points.h)
 * and ALPHA its value; f16 / bf16 rows do f32 arithmetic on the widened rows, dx rounded once. */
#define BWD_ROWS(NAME, SFX, T, ELEM, ALPHA, OWN)                                                          \
  smx_status smx_##NAME##_backward_rows_##SFX(const T *x, size_t ldx, const T *y, size_t ldy, const T *dy, \
                                              size_t lddy, T *dx, size_t lddx, size_t rows, size_t cols OWN(), \
                                              const smx_options *opt) {                                   \
    (void)x; (void)ldx;                                                                                   \
    return run_bwd(ALPHA, ELEM, y, ldy, dy, lddy, dx, lddx, rows, cols, opt);                             \
  }
#define BWD_ROW(NAME, SFX, T, ELEM, ALPHA, OWN)                                                           \
  smx_status smx_##NAME##_backward_##SFX(const T *x, const T *y, const T *dy, T *dx, size_t n OWN(),       \
                                         const smx_options *opt) {                                        \
    (void)x;                                                                                              \
    return run_bwd(ALPHA, ELEM, y, n, dy, n, dx, n, 1, n, opt);                                           \
  }

/* every dtype of one operation */
#define BWD_ENTRIES(NAME, ALPHA, OWN)                          \
  BWD_ROWS(NAME, f32, float, SMX_ELEM_F32, ALPHA, OWN)         \
  BWD_ROWS(NAME, f64, double, SMX_ELEM_F64, ALPHA, OWN)        \
  BWD_ROWS(NAME, f16, uint16_t, SMX_ELEM_F16, ALPHA, OWN)      \
  BWD_ROWS(NAME, bf16, uint16_t, SMX_ELEM_BF16, ALPHA, OWN)    \
  BWD_ROW(NAME, f32, float, SMX_ELEM_F32, ALPHA, OWN)          \
  BWD_ROW(NAME, f64, double, SMX_ELEM_F64, ALPHA, OWN)

BWD_ENTRIES(sparsemax, 2.0, NO_PARAM)
BWD_ENTRIES(entmax15, 1.5, NO_PARAM)
BWD_ENTRIES(entmax, alpha, ALPHA_PARAM)
