/*
 * Array walking: see walk.h. Memory is touched only through the strides the
 * caller gave, so any NumPy view (negative, zero or odd strides) is safe.
 */
#include "walk.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Gathered blocks aim at this many bytes (stays in L2), but hold at least
 * SMX_PY_MIN_BLOCK rows (a cache line of each column) while that is below
 * SMX_PY_SCRATCH_MAX. */
#define SMX_PY_SCRATCH_TARGET ((size_t)1 << 20)
#define SMX_PY_SCRATCH_MAX ((size_t)16 << 20)
#define SMX_PY_MIN_BLOCK 16
#define SMX_PY_ROW_PAD 64
/* log-sum-exp values are produced this many rows at a time, then stored */
#define SMX_PY_LSE_CHUNK 1024

static ptrdiff_t abs_pd(ptrdiff_t v) { return v < 0 ? -v : v; }

/* Drops size-1 dims, sorts by |x stride| (largest first, stable) and merges
 * dims that are evenly spaced in x and y. Returns 0 if some dim is empty. */
static int simplify(smx_py_job *j) {
  int k = 0;
  for (int d = 0; d < j->outer; d++) {
    if (j->shape[d] == 0) return 0;
    if (j->shape[d] == 1) continue;
    j->shape[k] = j->shape[d];
    j->xs[k] = j->xs[d];
    j->ys[k] = j->ys[d];
    k++;
  }
  for (int a = 1; a < k; a++) { /* insertion sort: at most a few dims */
    size_t sh = j->shape[a];
    ptrdiff_t xs = j->xs[a], ys = j->ys[a];
    int b = a;
    while (b > 0 && abs_pd(j->xs[b - 1]) < abs_pd(xs)) {
      j->shape[b] = j->shape[b - 1];
      j->xs[b] = j->xs[b - 1];
      j->ys[b] = j->ys[b - 1];
      b--;
    }
    j->shape[b] = sh;
    j->xs[b] = xs;
    j->ys[b] = ys;
  }
  int m = 0;
  for (int d = 1; d < k; d++) {
    size_t inner = j->shape[d];
    if (j->xs[m] == (ptrdiff_t)inner * j->xs[d] && j->ys[m] == (ptrdiff_t)inner * j->ys[d]) {
      j->shape[m] *= inner;
      j->xs[m] = j->xs[d];
      j->ys[m] = j->ys[d];
    } else {
      m++;
      j->shape[m] = j->shape[d];
      j->xs[m] = j->xs[d];
      j->ys[m] = j->ys[d];
    }
  }
  j->outer = k == 0 ? 0 : m + 1;
  if (j->outer == 0) { /* a single row: one dim of one row */
    j->outer = 1;
    j->shape[0] = 1;
    j->xs[0] = 0;
    j->ys[0] = 0;
  }
  return 1;
}

/* Leading dimension in elements for rows `stride` bytes apart, or 0 when the
 * rows API cannot take them (negative, odd or overlapping). */
static size_t leading_dim(ptrdiff_t stride, size_t es, size_t n, size_t rows) {
  if (rows == 1) return n;
  if (stride <= 0 || (size_t)stride % es != 0) return 0;
  size_t ld = (size_t)stride / es;
  return ld >= n ? ld : 0;
}

typedef struct walker {
  smx_py_job *j;
  smx_options opt; /* the job's, or one thread each when the walker is one of a team */
  size_t es;
  void *lse;       /* SMX_PY_LSE_CHUNK values (log-sum-exp)  */
  char *buf;       /* gathered rows (non-unit-stride axis)   */
  size_t block;    /* rows per gathered block                */
  size_t nblk;     /* blocks per innermost outer dim         */
  size_t ldb;      /* elements from one buffered row to the next */
} walker;

/* Log-sum-exp of `rows` unit-stride rows ldx apart, stored `ystride` apart. */
static smx_status lse_rows(walker *w, const char *x, size_t ldx, char *y, ptrdiff_t ystride, size_t rows) {
  smx_py_job *j = w->j;
  size_t es = w->es;
  for (size_t r0 = 0; r0 < rows; r0 += SMX_PY_LSE_CHUNK) {
    size_t b = rows - r0 < SMX_PY_LSE_CHUNK ? rows - r0 : SMX_PY_LSE_CHUNK;
    smx_status s = smx_py_rows(j->op, j->dtype, x + r0 * ldx * es, ldx, w->lse, 0, b, j->n, &w->opt);
    if (s != SMX_OK) return s;
    for (size_t i = 0; i < b; i++) smx_py_store_lse(j->dtype, w->lse, i, y + (ptrdiff_t)(r0 + i) * ystride);
  }
  return SMX_OK;
}

/* The innermost outer dim at (x, y), with a unit-stride axis. */
static smx_status run_direct(walker *w, const char *x, char *y) {
  smx_py_job *j = w->j;
  int r = j->outer - 1;
  size_t rows = j->shape[r], n = j->n, es = w->es;
  int lse = j->op == SMX_PY_LOGSUMEXP;
  size_t ldx = leading_dim(j->xs[r], es, n, rows);
  size_t ldy = lse ? n : leading_dim(j->ys[r], es, n, rows);
  if (ldx && ldy) {
    if (lse) return lse_rows(w, x, ldx, y, j->ys[r], rows);
    return smx_py_rows(j->op, j->dtype, x, ldx, y, ldy, rows, n, &w->opt);
  }
  for (size_t i = 0; i < rows; i++) { /* rows the rows API cannot express: one at a time */
    const char *xi = x + (ptrdiff_t)i * j->xs[r];
    char *yi = y + (ptrdiff_t)i * j->ys[r];
    smx_status s = lse ? lse_rows(w, xi, n, yi, 0, 1) : smx_py_rows(j->op, j->dtype, xi, n, yi, n, 1, n, &w->opt);
    if (s != SMX_OK) return s;
  }
  return SMX_OK;
}

/* Copies elements of size es at (a, b) offsets a*so + b*si (source) and
 * a*dO + b*di (destination), 0 <= a < na, 0 <= b < nb. */
static void copy_tile(size_t es, size_t na, size_t nb, char *dst, ptrdiff_t dO, ptrdiff_t di, const char *src,
                      ptrdiff_t so, ptrdiff_t si) {
  for (size_t a = 0; a < na; a++) {
    const char *s = src + (ptrdiff_t)a * so;
    char *d = dst + (ptrdiff_t)a * dO;
    switch (es) { /* fixed-size memcpy: one load and one store */
    case 2:
      for (size_t b = 0; b < nb; b++) memcpy(d + (ptrdiff_t)b * di, s + (ptrdiff_t)b * si, 2);
      break;
    case 4:
      for (size_t b = 0; b < nb; b++) memcpy(d + (ptrdiff_t)b * di, s + (ptrdiff_t)b * si, 4);
      break;
    default:
      for (size_t b = 0; b < nb; b++) memcpy(d + (ptrdiff_t)b * di, s + (ptrdiff_t)b * si, 8);
      break;
    }
  }
}

/* Tile edge of the blocked transpose: the lines of one tile stay in L1. */
#define SMX_PY_TILE 32

/* Copies a rows x n block between the caller's strided memory and the
 * (padded) buffer, in tiles: a transpose when the axis is the slow dimension.
 * The inner loop runs along the caller's smaller stride (whole cache lines);
 * the buffer's rows are padded so that its side never shares cache sets. */
static void copy_block(size_t es, size_t rows, size_t n, char *dst, ptrdiff_t d_row, ptrdiff_t d_col,
                       const char *src, ptrdiff_t s_row, ptrdiff_t s_col, int dst_is_buffer) {
  ptrdiff_t u_row = dst_is_buffer ? s_row : d_row, u_col = dst_is_buffer ? s_col : d_col;
  int rows_inner = abs_pd(u_row) < abs_pd(u_col);
  size_t na = rows_inner ? n : rows, nb = rows_inner ? rows : n;
  ptrdiff_t so = rows_inner ? s_col : s_row, si = rows_inner ? s_row : s_col;
  ptrdiff_t dO = rows_inner ? d_col : d_row, di = rows_inner ? d_row : d_col;
  for (size_t a0 = 0; a0 < na; a0 += SMX_PY_TILE) {
    size_t ta = na - a0 < SMX_PY_TILE ? na - a0 : SMX_PY_TILE;
    for (size_t b0 = 0; b0 < nb; b0 += SMX_PY_TILE) {
      size_t tb = nb - b0 < SMX_PY_TILE ? nb - b0 : SMX_PY_TILE;
      copy_tile(es, ta, tb, dst + (ptrdiff_t)a0 * dO + (ptrdiff_t)b0 * di, dO, di,
                src + (ptrdiff_t)a0 * so + (ptrdiff_t)b0 * si, so, si);
    }
  }
}

/* Block k of the gathered walk (axis not unit-stride): rows block k % nblk
 * of the innermost outer dim, at outer position k / nblk. Gather, compute in
 * the buffer, scatter. */
static smx_status gather_block(walker *w, size_t k) {
  smx_py_job *j = w->j;
  int r = j->outer - 1;
  size_t rows = j->shape[r], n = j->n, es = w->es, pos = k / w->nblk, r0 = (k % w->nblk) * w->block;
  const char *x = j->x;
  char *y = j->y;
  for (int d = r - 1; d >= 0; d--) {
    ptrdiff_t i = (ptrdiff_t)(pos % j->shape[d]);
    pos /= j->shape[d];
    x += i * j->xs[d];
    y += i * j->ys[d];
  }
  size_t b = rows - r0 < w->block ? rows - r0 : w->block;
  ptrdiff_t row_bytes = (ptrdiff_t)(w->ldb * es);
  const char *xb = x + (ptrdiff_t)r0 * j->xs[r];
  char *yb = y + (ptrdiff_t)r0 * j->ys[r];
  copy_block(es, b, n, w->buf, row_bytes, (ptrdiff_t)es, xb, j->xs[r], j->x_axis, 1);
  if (j->op == SMX_PY_LOGSUMEXP) return lse_rows(w, w->buf, w->ldb, yb, j->ys[r], b);
  smx_status s = smx_py_rows(j->op, j->dtype, w->buf, w->ldb, w->buf, w->ldb, b, n, &w->opt);
  if (s == SMX_OK) copy_block(es, b, n, yb, j->ys[r], j->y_axis, w->buf, row_bytes, (ptrdiff_t)es, 0);
  return s;
}

/* Scratch of one walker; SMX_E_NOMEM when it cannot be allocated. */
static smx_status walker_alloc(walker *w, int gather) {
  int lse = w->j->op == SMX_PY_LOGSUMEXP;
  if (lse && !(w->lse = malloc(SMX_PY_LSE_CHUNK * smx_py_lse_size(w->j->dtype)))) return SMX_E_NOMEM;
  if (gather && !(w->buf = malloc(w->block * w->ldb * w->es))) return SMX_E_NOMEM;
  return SMX_OK;
}

static void walker_free(walker *w) {
  free(w->buf);
  free(w->lse);
}

/* Gathered walks with threads > 1: each thread gathers its own share of the
 * blocks into its own buffer (the copies are most of the work), and the
 * library runs each block on that thread. Rows are independent and the
 * library's results do not depend on its thread count, so neither does ours. */
#define SMX_PY_MAX_TEAM 64
#define SMX_PY_TEAM_MIN ((size_t)1 << 16)

typedef struct team {
  walker w[SMX_PY_MAX_TEAM];
  smx_status status[SMX_PY_MAX_TEAM];
  size_t total, size;
} team;

static void team_task(void *ctx, size_t t) {
  team *tm = ctx;
  size_t k0 = t * tm->total / tm->size, k1 = (t + 1) * tm->total / tm->size;
  for (size_t k = k0; k < k1 && tm->status[t] == SMX_OK; k++) tm->status[t] = gather_block(&tm->w[t], k);
}

static smx_status run_team(const walker *proto, size_t total, int threads) {
  team *tm = calloc(1, sizeof *tm);
  if (!tm) return SMX_E_NOMEM;
  tm->total = total;
  tm->size = (size_t)threads < total ? (size_t)threads : total;
  if (tm->size > SMX_PY_MAX_TEAM) tm->size = SMX_PY_MAX_TEAM;
  smx_status s = SMX_OK;
  for (size_t t = 0; t < tm->size && s == SMX_OK; t++) {
    tm->w[t] = *proto;
    tm->w[t].opt.threads = 1;
    s = walker_alloc(&tm->w[t], 1);
  }
  if (s == SMX_OK) s = smx_parallel_for((int)tm->size, tm->size, team_task, tm);
  for (size_t t = 0; t < tm->size; t++) {
    if (s == SMX_OK) s = tm->status[t];
    walker_free(&tm->w[t]);
  }
  free(tm);
  return s;
}

/* An empty axis: softmax and log-softmax have nothing to write, and each
 * log-sum-exp is that of an empty row (-inf, as the library gives). Written
 * here, one store per output, so that the work never grows with the number
 * of empty rows beyond the outputs themselves. */
static smx_status fill_empty_lse(smx_py_job *j) {
  float f = -INFINITY;
  double d = -INFINITY;
  const void *v = smx_py_lse_size(j->dtype) == sizeof(double) ? (const void *)&d : (const void *)&f;
  size_t idx[SMX_PY_MAX_DIMS] = {0};
  char *y = j->y;
  for (;;) {
    smx_py_store_lse(j->dtype, v, 0, y);
    int d0 = j->outer - 1;
    while (d0 >= 0) {
      y += j->ys[d0];
      if (++idx[d0] < j->shape[d0]) break;
      y -= (ptrdiff_t)j->shape[d0] * j->ys[d0];
      idx[d0] = 0;
      d0--;
    }
    if (d0 < 0) return SMX_OK;
  }
}

smx_status smx_py_run(smx_py_job *j) {
  walker w = {j, j->opt, smx_py_elem_size(j->dtype), NULL, NULL, 0, 0, 0};
  size_t es = w.es, n = j->n;
  if (!simplify(j)) return SMX_OK; /* no rows */
  if (n == 0) return j->op == SMX_PY_LOGSUMEXP ? fill_empty_lse(j) : SMX_OK;
  if (n <= 1) j->x_axis = j->y_axis = (ptrdiff_t)es; /* the stride of a short axis is irrelevant */
  int lse = j->op == SMX_PY_LOGSUMEXP;
  int gather = j->x_axis != (ptrdiff_t)es || (!lse && j->y_axis != (ptrdiff_t)es);
  int od = j->outer - 1;
  smx_status s = SMX_OK;
  if (gather) {
    /* Buffered rows one cache line longer than n: rows a power of two apart
     * would share cache sets, and the transposing copy touches one line per row. */
    if (n > (size_t)PTRDIFF_MAX / es - SMX_PY_ROW_PAD) return SMX_E_NOMEM; /* a broadcast row of 2^60 */
    w.ldb = n + SMX_PY_ROW_PAD / es;
    size_t rows = j->shape[od], row_bytes = w.ldb * es;
    size_t block = SMX_PY_SCRATCH_TARGET / row_bytes;
    if (block < SMX_PY_MIN_BLOCK && row_bytes <= SMX_PY_SCRATCH_MAX / SMX_PY_MIN_BLOCK) block = SMX_PY_MIN_BLOCK;
    if (block < 1) block = 1;
    if (block > rows) block = rows;
    w.block = block;
    w.nblk = (rows + block - 1) / block;
    size_t total = w.nblk;
    for (int d = 0; d < od; d++) total *= j->shape[d];
    size_t elems = total * block * n; /* about: small walks stay on the calling thread */
    if (j->opt.threads > 1 && total > 1 && elems >= SMX_PY_TEAM_MIN) return run_team(&w, total, j->opt.threads);
    s = walker_alloc(&w, 1);
    for (size_t k = 0; k < total && s == SMX_OK; k++) s = gather_block(&w, k);
    walker_free(&w);
    return s;
  }
  if ((s = walker_alloc(&w, 0)) != SMX_OK) {
    walker_free(&w);
    return s;
  }
  /* odometer over every outer dim but the innermost */
  size_t idx[SMX_PY_MAX_DIMS] = {0};
  const char *x = j->x;
  char *y = j->y;
  for (;;) {
    s = run_direct(&w, x, y);
    if (s != SMX_OK) break;
    int d = od - 1;
    while (d >= 0) {
      x += j->xs[d];
      y += j->ys[d];
      if (++idx[d] < j->shape[d]) break;
      x -= (ptrdiff_t)j->shape[d] * j->xs[d];
      y -= (ptrdiff_t)j->shape[d] * j->ys[d];
      idx[d] = 0;
      d--;
    }
    if (d < 0) break;
  }
  walker_free(&w);
  return s;
}
