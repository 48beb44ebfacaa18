/*
 * MultiMax (Zhou, Fritz and Keuper 2024, "MultiMax: Sparse and Multi-Modal
 * Attention Learning", ICML, arXiv 2406.01189, eq. 6 with its second-order
 * terms, as the authors' code applies it): softmax of the modulated scores
 *   s(x) = x + t0 (r0 - x)_+ + t1 (x - r1)_+ + t2 (r2 - x)_+^2 + t3 (x - r3)_+^2
 * (definition, policy and bound in include/smx/smx_multi.h). Each row is
 * one elementwise modulation pass into y and the engine's softmax of y in
 * place. The VJP of an f32 row is two vector passes (<y, dy>, then the
 * vnorm kernels' mm_bwd: the softmax VJP times s'(x) and the eight parameter
 * terms); f64 rows and extreme T or parameters take the engine's softmax
 * backward and a scalar pass. The parameter gradients are summed per row,
 * then in row order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/vnorm_run.h"
#include "registry/registry.h"
#include "smx/smx.h"

typedef struct mm_job {
  int f64, half, bwd;        /* half: f16 / bf16 storage, rows widened to f32 in the task's scratch */
  smx_elem_io io;
  const char *x, *y, *dy;
  char *out;                 /* y (forward) or dx (backward) */
  size_t ldx, ldy, lddy, ldo, cols, es;
  double r[4], t[4];
  smx_options o1;            /* the caller's options on one thread */
  double *prow;              /* backward: 8 parameter-gradient partials per row, or NULL */
  const smx_registry *reg;   /* f32 backward: the fused kernel (rdot, then vnorm's mm_bwd) */
  float s32;                 /* 1/T for it; 0 where 1/T overflows float (then the softmax backward's own path) */
  float p32[8];              /* r0..r3, t0..t3 rounded to float */
  int stream;                /* non-temporal dx stores (f32 rows far beyond the caches) */
  smx_status st;             /* first failure of a row call (cannot happen after the checks) */
} mm_job;

/* Branch-free loops (max, selects) that the compiler vectorises: f32 rows in
 * float (s is rounded to float anyway), f64 rows in double. A NaN x gives a
 * NaN s through the arithmetic; an infinite x is passed through. One body for
 * both, T the element type. */
#define MM_FWD_ROW(T, j, x, y, n)                                                                    \
  do {                                                                                             \
    const T *xs = (const T *)(const void *)(x);                                                    \
    T *ys = (T *)(void *)(y);                                                                      \
    const T r0 = (T)(j)->r[0], r1 = (T)(j)->r[1], r2 = (T)(j)->r[2], r3 = (T)(j)->r[3];            \
    const T t0 = (T)(j)->t[0], t1 = (T)(j)->t[1], t2 = (T)(j)->t[2], t3 = (T)(j)->t[3];            \
    for (size_t i = 0; i < (n); i++) {                                                             \
      T v = xs[i], a = r0 - v, b = v - r1, c = r2 - v, d = v - r3;                                 \
      a = a > (T)0 ? a : (T)0;                                                                     \
      b = b > (T)0 ? b : (T)0;                                                                     \
      c = c > (T)0 ? c : (T)0;                                                                     \
      d = d > (T)0 ? d : (T)0;                                                                     \
      T m = v + t0 * a + t1 * b + t2 * c * c + t3 * d * d;                                         \
      ys[i] = (v == INFINITY || v == -INFINITY) ? v : m;                                           \
    }                                                                                              \
  } while (0)

static void fwd_row(const mm_job *j, const char *x, char *y) {
  size_t n = j->cols;
  if (j->f64) MM_FWD_ROW(double, j, x, y, n);
  else MM_FWD_ROW(float, j, x, y, n);
}

/* dx holds dL/ds (the softmax VJP); turns it into dL/dx and, when pg is not
 * NULL, writes the parameters' partial gradients of the row. Branch-free
 * typed loops (selects instead of branches: the kinks fall anywhere in a
 * row); an infinite x gets 0 (s is the identity there and its entry's VJP
 * is 0), a NaN x the NaN of its row. */
#define MM_BWD(NAME, T)                                                                                   \
  static void NAME(const mm_job *j, const T *x, T *dx, size_t n, double *pg) {                            \
    if (!pg) { /* elementwise only, in the row's precision: vectorises */                                 \
      const T r0 = (T)j->r[0], r1 = (T)j->r[1], r2 = (T)j->r[2], r3 = (T)j->r[3];                         \
      const T t0 = (T)j->t[0], t1 = (T)j->t[1], t2 = (T)(2.0 * j->t[2]), t3 = (T)(2.0 * j->t[3]);         \
      for (size_t i = 0; i < n; i++) {                                                                    \
        T v = x[i], c = r2 - v, d = v - r3;                                                               \
        c = c > 0 ? c : 0;                                                                                \
        d = d > 0 ? d : 0;                                                                                \
        T ds = (T)1 - (v < r0 ? t0 : 0) + (v > r1 ? t1 : 0) - t2 * c + t3 * d;                            \
        T o = dx[i] * ds;                                                                                 \
        dx[i] = (v == (T)INFINITY || v == -(T)INFINITY) ? 0 : o;                                          \
      }                                                                                                   \
      return;                                                                                             \
    }                                                                                                     \
    const double r0 = j->r[0], r1 = j->r[1], r2 = j->r[2], r3 = j->r[3];                                  \
    const double t0 = j->t[0], t1 = j->t[1], t2 = j->t[2], t3 = j->t[3];                                  \
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;                                \
    for (size_t i = 0; i < n; i++) {                                                                      \
      double v = x[i], g = dx[i];                                                                         \
      if (v == INFINITY || v == -INFINITY) { /* rare: a branch */                                         \
        dx[i] = 0;                                                                                        \
        continue;                                                                                         \
      }                                                                                                   \
      /* scalar code: (u + |u|) / 2 and a 0/1 factor instead of branches that random data mispredicts */ \
      double a = r0 - v, b = v - r1, c = r2 - v, d = v - r3;                                              \
      a = 0.5 * (a + fabs(a));                                                                            \
      b = 0.5 * (b + fabs(b));                                                                            \
      c = 0.5 * (c + fabs(c));                                                                            \
      d = 0.5 * (d + fabs(d));                                                                            \
      double lo = t0 * (double)(v < r0), hi = t1 * (double)(v > r1);                                      \
      double ds = 1.0 - lo + hi - 2.0 * t2 * c + 2.0 * t3 * d;                                            \
      dx[i] = (T)(g * ds);                                                                                \
      a0 += g * lo;                                                                                       \
      a1 -= g * hi;                                                                                       \
      a2 += g * 2.0 * t2 * c;                                                                             \
      a3 -= g * 2.0 * t3 * d;                                                                             \
      a4 += g * a;                                                                                        \
      a5 += g * b;                                                                                        \
      a6 += g * c * c;                                                                                    \
      a7 += g * d * d;                                                                                    \
    }                                                                                                     \
    pg[0] = a0, pg[1] = a1, pg[2] = a2, pg[3] = a3, pg[4] = a4, pg[5] = a5, pg[6] = a6, pg[7] = a7;         \
  }
MM_BWD(bwd_f32, float)
MM_BWD(bwd_f64, double)
#undef MM_BWD

static void bwd_row(const mm_job *j, const char *x, char *dx, double *pg) {
  if (j->f64) bwd_f64(j, (const double *)(const void *)x, (double *)(void *)dx, j->cols, pg);
  else bwd_f32(j, (const float *)(const void *)x, (float *)(void *)dx, j->cols, pg);
}

/* An f32 row (stored or widened): dx = s'(x) y (dy - <dy, y>) / T with the
 * parameter partials, in two vector passes (the dot, then one fused pass). */
static smx_status bwd_row_f32(const mm_job *j, const float *x, const float *y, const float *dy, float *dx,
                              double *pg, int stream) {
  size_t n = j->cols;
  if (j->s32 == 0.0f) {
    smx_status s = smx_softmax_backward_f32(y, dy, dx, n, &j->o1);
    if (s == SMX_OK) bwd_f32(j, x, dx, n, pg);
    return s;
  }
  double dot = j->reg->xent->rdot(n, y, dy);
  j->reg->vnorm->mm_bwd(n, x, y, dy, dx, (float)dot, j->s32, j->p32, pg, stream);
  return SMX_OK;
}

static void load_row(const smx_elem_io *io, const char *src, float *dst, size_t n) {
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK)
    io->load(n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK, src + 2 * i, dst + i);
}

static void store_row(const smx_elem_io *io, const float *src, char *dst, size_t n) {
  for (size_t i = 0; i < n; i += SMX_HALF_BLOCK)
    io->store(n - i < SMX_HALF_BLOCK ? n - i : SMX_HALF_BLOCK, src + i, dst + 2 * i);
}

/* One f16 / bf16 row through f32 scratch (cols floats forward, 3 cols backward). */
static smx_status half_row(const mm_job *j, size_t r, const char *x, char *o, float *a) {
  size_t n = j->cols;
  smx_status s;
  load_row(&j->io, x, a, n);
  if (!j->bwd) {
    fwd_row(j, (const char *)a, (char *)a);
    s = smx_softmax_f32(a, a, n, &j->o1);
    if (s == SMX_OK) store_row(&j->io, a, o, n);
    return s;
  }
  float *b = a + n, *c = b + n;
  load_row(&j->io, j->y + r * j->ldy * 2, b, n);
  load_row(&j->io, j->dy + r * j->lddy * 2, c, n);
  s = bwd_row_f32(j, a, b, c, c, j->prow ? j->prow + 8 * r : NULL, 0);
  if (s == SMX_OK) store_row(&j->io, c, o, n);
  return s;
}

static void mm_task(void *ctx, size_t r0, size_t r1, void *scratch) {
  mm_job *j = ctx;
  for (size_t r = r0; r < r1; r++) {
    const char *x = j->x + r * j->ldx * j->es;
    char *o = j->out + r * j->ldo * j->es;
    smx_status s;
    if (j->half) {
      s = half_row(j, r, x, o, scratch);
    } else if (!j->bwd) {
      fwd_row(j, x, o);
      s = j->f64 ? smx_softmax_f64((const double *)(void *)o, (double *)(void *)o, j->cols, &j->o1)
                 : smx_softmax_f32((const float *)(void *)o, (float *)(void *)o, j->cols, &j->o1);
    } else {
      const char *y = j->y + r * j->ldy * j->es, *dy = j->dy + r * j->lddy * j->es;
      double *pg = j->prow ? j->prow + 8 * r : NULL;
      if (j->f64) {
        s = smx_softmax_backward_f64((const double *)(const void *)y, (const double *)(const void *)dy,
                                     (double *)(void *)o, j->cols, &j->o1);
        if (s == SMX_OK) bwd_row(j, x, o, pg);
      } else {
        s = bwd_row_f32(j, (const float *)(const void *)x, (const float *)(const void *)y,
                        (const float *)(const void *)dy, (float *)(void *)o, pg, j->stream);
      }
    }
    if (s != SMX_OK) j->st = s;   /* every row would fail the same way */
  }
}

static smx_status check_params(const double ranges[4], const double ts[4]) {
  if (!ranges || !ts) return SMX_E_INVALID_ARG;
  for (int k = 0; k < 4; k++)
    if (!(fabs(ranges[k]) <= 1.7976931348623157e308) || !(fabs(ts[k]) <= 1.7976931348623157e308))
      return SMX_E_INVALID_ARG;
  return SMX_OK;
}

static smx_status setup(mm_job *j, smx_elem elem, const double ranges[4], const double ts[4],
                        const smx_options *opt, int *threads) {
  smx_resolved_options ro;
  smx_status st = smx_resolve_options(opt, &ro);
  if (st != SMX_OK) return st;
  if ((st = check_params(ranges, ts)) != SMX_OK) return st;
  memset(j, 0, sizeof *j);
  j->f64 = elem == SMX_ELEM_F64;
  j->half = elem == SMX_ELEM_F16 || elem == SMX_ELEM_BF16;
  j->io = smx_elem_io_for(elem);
  j->es = smx_elem_size(elem);
  memcpy(j->r, ranges, sizeof j->r);
  memcpy(j->t, ts, sizeof j->t);
  smx_options d;
  memset(&d, 0, sizeof d);   /* all zero: the defaults */
  j->o1 = opt ? *opt : d;
  j->o1.threads = 1;
  *threads = ro.threads;
  j->reg = smx_registry_current();
  int fits = 1.0 / ro.temperature <= 3.4e38;   /* 1/T and the parameters in float: else the double path */
  for (int k = 0; k < 4; k++) fits &= fabs(ranges[k]) <= 3.4e38 && fabs(ts[k]) <= 3.4e38;
  j->s32 = fits ? (float)(1.0 / ro.temperature) : 0.0f;
  for (int k = 0; fits && k < 4; k++) j->p32[k] = (float)ranges[k], j->p32[4 + k] = (float)ts[k];
  return SMX_OK;
}

static smx_status run_fwd(smx_elem elem, const void *x, size_t ldx, void *y, size_t ldy, size_t rows, size_t cols,
                          const double ranges[4], const double ts[4], const smx_options *opt) {
  mm_job j;
  int threads;
  smx_status st = setup(&j, elem, ranges, ts, opt, &threads);
  if (st != SMX_OK) return st;
  if (ldx < cols || ldy < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) return SMX_OK;
  if (!x || !y) return SMX_E_INVALID_ARG;
  smx_arg args[2] = { SMX_ARG_IN(x, rows, cols, ldx, j.es), SMX_ARG_OUT(y, rows, cols, ldy, j.es, 1) };
  if ((st = smx_check_args(args, 2)) != SMX_OK) return st;
  j.x = x;
  j.out = y;
  j.ldx = ldx;
  j.ldo = ldy;
  j.cols = cols;
  smx_plan plan = smx_plan_rows(threads, rows, cols, 0);
  st = smx_grid_rows(plan.row_threads, rows, j.half ? cols * sizeof(float) : 0, mm_task, &j);
  return st != SMX_OK ? st : j.st;
}

static smx_status run_bwd(smx_elem elem, const void *x, size_t ldx, const void *y, size_t ldy, const void *dy, size_t lddy,
                          void *dx, size_t lddx, size_t rows, size_t cols, const double ranges[4], const double ts[4],
                          double *dparams, const smx_options *opt) {
  mm_job j;
  int threads;
  smx_status st = setup(&j, elem, ranges, ts, opt, &threads);
  if (st != SMX_OK) return st;
  if (ldx < cols || ldy < cols || lddy < cols || lddx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) {
    if (dparams) memset(dparams, 0, 8 * sizeof(double));
    return SMX_OK;
  }
  if (!x || !y || !dy || !dx) return SMX_E_INVALID_ARG;
  /* dx may be dy or y exactly (the softmax backward reads each row first); never x */
  int as_y = dx == y && lddx == ldy;
  smx_arg args[5] = { SMX_ARG_IN(x, rows, cols, ldx, j.es), SMX_ARG_IN(y, rows, cols, ldy, j.es),
                      SMX_ARG_IN(dy, rows, cols, lddy, j.es), SMX_ARG_OUT(dx, rows, cols, lddx, j.es, as_y ? 2 : 3),
                      SMX_ARG_OUT(dparams, 1, 8, 8, sizeof(double), 0) };
  if (as_y && dx == dy && lddx == lddy) args[3].out = 0;
  if ((st = smx_check_args(args, 5)) != SMX_OK) return st;
  if (dparams && !(j.prow = malloc(rows * 8 * sizeof(double)))) return SMX_E_NOMEM;
  j.bwd = 1;
  j.stream = smx_vn_stream_out(elem, rows, cols);
  j.x = x;
  j.y = y;
  j.dy = dy;
  j.out = dx;
  j.ldx = ldx;
  j.ldy = ldy;
  j.lddy = lddy;
  j.ldo = lddx;
  j.cols = cols;
  smx_plan plan = smx_plan_rows(threads, rows, cols, 0);
  st = smx_grid_rows(plan.row_threads, rows, j.half ? 3 * cols * sizeof(float) : 0, mm_task, &j);
  if (st == SMX_OK) st = j.st;
  if (st == SMX_OK && dparams) {
    for (int k = 0; k < 8; k++) {
      double s = 0.0;
      for (size_t r = 0; r < rows; r++) s += j.prow[8 * r + k];
      dparams[k] = s;
    }
  }
  free(j.prow);
  return st;
}

/* The public entry points, one dtype per line: the strided rows in every dtype, the contiguous row
 * in f32 / f64. */
#define MM_ROWS(SFX, T, ELEM)                                                                               \
  smx_status smx_multimax_rows_##SFX(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols,   \
                                     const double ranges[4], const double ts[4], const smx_options *opt) { \
    return run_fwd(ELEM, x, ldx, y, ldy, rows, cols, ranges, ts, opt);                                    \
  }                                                                                                       \
  smx_status smx_multimax_backward_rows_##SFX(const T *x, size_t ldx, const T *y, size_t ldy, const T *dy, \
                                              size_t lddy, T *dx, size_t lddx, size_t rows, size_t cols,   \
                                              const double ranges[4], const double ts[4], double *dparams, \
                                              const smx_options *opt) {                                   \
    return run_bwd(ELEM, x, ldx, y, ldy, dy, lddy, dx, lddx, rows, cols, ranges, ts, dparams, opt);       \
  }
#define MM_ROW(SFX, T, ELEM)                                                                                \
  smx_status smx_multimax_##SFX(const T *x, T *y, size_t n, const double ranges[4], const double ts[4],    \
                                const smx_options *opt) {                                                 \
    return run_fwd(ELEM, x, n, y, n, 1, n, ranges, ts, opt);                                              \
  }                                                                                                       \
  smx_status smx_multimax_backward_##SFX(const T *x, const T *y, const T *dy, T *dx, size_t n,             \
                                         const double ranges[4], const double ts[4], double *dparams,      \
                                         const smx_options *opt) {                                        \
    return run_bwd(ELEM, x, n, y, n, dy, n, dx, n, 1, n, ranges, ts, dparams, opt);                       \
  }

MM_ROWS(f32, float, SMX_ELEM_F32)
MM_ROWS(f64, double, SMX_ELEM_F64)
MM_ROWS(f16, uint16_t, SMX_ELEM_F16)
MM_ROWS(bf16, uint16_t, SMX_ELEM_BF16)
MM_ROW(f32, float, SMX_ELEM_F32)
MM_ROW(f64, double, SMX_ELEM_F64)
