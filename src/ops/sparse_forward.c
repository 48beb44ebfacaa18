/*
 * The entry points of sparsemax, its sort-based oracle, entmax-1.5 and
 * bisection entmax (include/smx/smx_sparse.h): the engine checks the options
 * and arguments and runs the rows, each row with its own scratch for the
 * candidates (sparse_row.c). Half rows are widened into a float row in the
 * scratch, computed there and narrowed back.
 */
#include <math.h>
#include <stdint.h>

#include "core/elem.h"
#include "core/grid.h"
#include "core/operands.h"
#include "core/options.h"
#include "ops/entry_points.h"
#include "ops/sparse_row.h"
#include "smx/smx.h"

typedef struct sparse_job {
  smx_sparse_kind kind;
  double alpha;
  smx_elem_io io;
  const char *x;
  char *y;
  size_t ldx, ldy, cols, es;
  uint32_t flags;
} sparse_job;

static void sparse_rows(void *ctx, size_t r0, size_t r1, void *scratch) {
  const sparse_job *j = ctx;
  float *buf = (float *)(void *)((char *)scratch + smx_sparse_scratch(j->cols));
  for (size_t r = r0; r < r1; r++) {
    const char *x = j->x + r * j->ldx * j->es;
    char *y = j->y + r * j->ldy * j->es;
    if (j->io.elem == SMX_ELEM_F64)
      smx_sparse_row_f64(j->kind, j->alpha, (const double *)(const void *)x, (double *)(void *)y, j->cols, j->flags,
                         scratch, NULL, NULL);
    else if (j->io.elem == SMX_ELEM_F32)
      smx_sparse_row_f32(j->kind, j->alpha, (const float *)(const void *)x, (float *)(void *)y, j->cols, j->flags,
                         scratch, NULL, NULL);
    else {
      j->io.load(j->cols, x, buf);
      smx_sparse_row_f32(j->kind, j->alpha, buf, buf, j->cols, j->flags, scratch, NULL, NULL);
      j->io.store(j->cols, buf, y);
    }
  }
}

/* The options of the sparse operations: a temperature other than 1 is refused. */
smx_status smx_sparse_options(const smx_options *opt, smx_resolved_options *o);
smx_status smx_sparse_options(const smx_options *opt, smx_resolved_options *o) {
  smx_status st = smx_resolve_options(opt, o);
  if (st != SMX_OK) return st;
  return o->temperature == 1.0 ? SMX_OK : SMX_E_INVALID_ARG;
}

static smx_status run_sparse(smx_sparse_kind kind, double alpha, smx_elem elem, const void *x, size_t ldx, void *y,
                             size_t ldy, size_t rows, size_t cols, const smx_options *opt) {
  smx_resolved_options o;
  smx_status st = smx_sparse_options(opt, &o);
  if (st != SMX_OK) return st;
  if (kind == SMX_SPARSE_ENTMAX_BISECT && !(alpha > 1.0 && alpha < INFINITY)) return SMX_E_INVALID_ARG;
  size_t es = smx_elem_size(elem);
  int empty;
  if ((st = smx_check_x_y(x, ldx, y, ldy, rows, cols, es, &empty)) != SMX_OK || empty) return st;
  size_t per = smx_sparse_scratch(1) + (elem == SMX_ELEM_F16 || elem == SMX_ELEM_BF16 ? sizeof(float) : 0);
  if (cols > SIZE_MAX / 2 / per) return SMX_E_NOMEM;
  sparse_job j = { .kind = kind, .alpha = alpha, .io = smx_elem_io_for(elem),
                   .x = x, .y = y, .ldx = ldx, .ldy = ldy, .cols = cols, .es = es, .flags = o.flags };
  smx_plan plan = smx_plan_rows(o.threads, rows, cols, 0);
  return smx_grid_rows(plan.row_threads, rows, cols * per, sparse_rows, &j);
}

/* The public entry points, one (operation, dtype) per line: the contiguous row and the strided rows.
 * OWN is the operation's own parameter (ops/entry_points.h), ALPHA its value. */
#define SPARSE_ROW(NAME, SFX, T, ELEM, KIND, ALPHA, OWN)                                                  \
  smx_status smx_##NAME##_##SFX(const T *x, T *y, size_t n OWN(), const smx_options *opt) {              \
    return run_sparse(KIND, ALPHA, ELEM, x, n, y, n, 1, n, opt);                                        \
  }
#define SPARSE_ROWS(NAME, SFX, T, ELEM, KIND, ALPHA, OWN)                                                 \
  smx_status smx_##NAME##_rows_##SFX(const T *x, size_t ldx, T *y, size_t ldy, size_t rows, size_t cols OWN(), \
                                     const smx_options *opt) {                                          \
    return run_sparse(KIND, ALPHA, ELEM, x, ldx, y, ldy, rows, cols, opt);                              \
  }
/* every dtype of one operation */
#define SPARSE_ENTRIES(NAME, KIND, ALPHA, OWN)                       \
  SPARSE_ROW(NAME, f32, float, SMX_ELEM_F32, KIND, ALPHA, OWN)       \
  SPARSE_ROW(NAME, f64, double, SMX_ELEM_F64, KIND, ALPHA, OWN)      \
  SPARSE_ROWS(NAME, f32, float, SMX_ELEM_F32, KIND, ALPHA, OWN)      \
  SPARSE_ROWS(NAME, f64, double, SMX_ELEM_F64, KIND, ALPHA, OWN)     \
  SPARSE_ROWS(NAME, f16, uint16_t, SMX_ELEM_F16, KIND, ALPHA, OWN)   \
  SPARSE_ROWS(NAME, bf16, uint16_t, SMX_ELEM_BF16, KIND, ALPHA, OWN)

SPARSE_ENTRIES(sparsemax, SMX_SPARSE_SPARSEMAX, 0, NO_PARAM)
SPARSE_ENTRIES(entmax15, SMX_SPARSE_ENTMAX15, 0, NO_PARAM)
SPARSE_ENTRIES(entmax, SMX_SPARSE_ENTMAX_BISECT, alpha, ALPHA_PARAM)
SPARSE_ROWS(sparsemax_sort, f32, float, SMX_ELEM_F32, SMX_SPARSE_SPARSEMAX_SORT, 0, NO_PARAM)
SPARSE_ROWS(sparsemax_sort, f64, double, SMX_ELEM_F64, SMX_SPARSE_SPARSEMAX_SORT, 0, NO_PARAM)
