/*
 * Array walking: see walk.h. Memory is touched only through the strides the caller gave, so any NumPy
 * view (negative, zero or odd strides) is safe.
 */
#include "walk.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Gathered blocks aim at this many bytes (stays in L2), but hold at least SMX_PY_MIN_BLOCK rows (a cache
 * line of each column) while that is below SMX_PY_SCRATCH_MAX. */
#define SMX_PY_SCRATCH_TARGET ((size_t)1 << 20)
#define SMX_PY_SCRATCH_MAX ((size_t)16 << 20)
#define SMX_PY_MIN_BLOCK 16
#define SMX_PY_ROW_PAD 64
/* one-value-per-row results (log-sum-exp) are produced this many rows at a time, then stored */
#define SMX_PY_LSE_CHUNK 1024
/* the axis arrays: read (x, y, dy) and written (out) along the row */
#define SMX_PY_NIN 3

static ptrdiff_t abs_pd(ptrdiff_t v) { return v < 0 ? -v : v; }

size_t smx_py_dtype_size(smx_op_dtype dt) { return dt == SMX_OP_F64 ? 8 : dt == SMX_OP_F32 ? 4 : 2; }

static int has_entry(const smx_op_info *op, smx_op_dtype dt, int backward) {
  return ((backward ? op->bwd_dtypes : op->dtypes) & SMX_OP_BIT(dt)) != 0;
}

/* The type the library computes in: the storage type, or float32 for a half type without its own entry. */
static int compute_dtype(const smx_op_info *op, smx_op_dtype dt, int backward, smx_op_dtype *cdt) {
  *cdt = dt;
  if (has_entry(op, dt, backward)) return 1;
  *cdt = SMX_OP_F32;
  return (dt == SMX_OP_F16 || dt == SMX_OP_BF16) && has_entry(op, SMX_OP_F32, backward);
}

static int is_lse(const smx_py_job *j) { return j->op->sig == SMX_SIG_LSE; }

/* Drops size-1 dims, sorts by |stride| of the first array (largest first, stable) and merges dims that are
 * evenly spaced in every array. Returns 0 if some dim is empty. */
static int simplify(smx_py_job *j, int key) {
  int k = 0;
  for (int d = 0; d < j->outer; d++) {
    if (j->shape[d] == 0) return 0;
    if (j->shape[d] == 1) continue;
    j->shape[k] = j->shape[d];
    for (int a = 0; a < SMX_PY_NARR; a++) j->s[a][k] = j->s[a][d];
    k++;
  }
  for (int a = 1; a < k; a++) { /* insertion sort: at most a few dims */
    size_t sh = j->shape[a];
    ptrdiff_t st[SMX_PY_NARR];
    for (int i = 0; i < SMX_PY_NARR; i++) st[i] = j->s[i][a];
    int b = a;
    for (; b > 0 && abs_pd(j->s[key][b - 1]) < abs_pd(st[key]); b--) {
      j->shape[b] = j->shape[b - 1];
      for (int i = 0; i < SMX_PY_NARR; i++) j->s[i][b] = j->s[i][b - 1];
    }
    j->shape[b] = sh;
    for (int i = 0; i < SMX_PY_NARR; i++) j->s[i][b] = st[i];
  }
  int m = 0;
  for (int d = 1; d < k; d++) {
    size_t inner = j->shape[d];
    int even = 1;
    for (int i = 0; i < SMX_PY_NARR; i++) even &= j->s[i][m] == (ptrdiff_t)inner * j->s[i][d];
    if (even) j->shape[m] *= inner;
    else j->shape[++m] = inner;
    for (int i = 0; i < SMX_PY_NARR; i++) j->s[i][m] = j->s[i][d];
  }
  j->outer = k == 0 ? 0 : m + 1;
  if (j->outer == 0) { /* a single row: one dim of one row */
    j->outer = 1;
    j->shape[0] = 1;
    for (int i = 0; i < SMX_PY_NARR; i++) j->s[i][0] = 0;
  }
  return 1;
}

/* Leading dimension in elements for rows `stride` bytes apart, or 0 when the rows API cannot take them
 * (negative, odd or overlapping). */
static size_t leading_dim(ptrdiff_t stride, size_t es, size_t n, size_t rows) {
  if (rows == 1) return n;
  if (stride <= 0 || (size_t)stride % es != 0) return 0;
  size_t ld = (size_t)stride / es;
  return ld >= n ? ld : 0;
}

typedef struct walker {
  smx_py_job *j;
  smx_options opt;   /* the job's, or one thread each when the walker is one of a team */
  smx_op_dtype cdt;  /* the type the library computes in                           */
  size_t es, ces;    /* bytes per element: storage, compute                          */
  char *lse;         /* SMX_PY_LSE_CHUNK values of one per row                       */
  char *buf[SMX_PY_NIN + 1]; /* gathered rows of x, y, dy, and the computed out     */
  char *stage;       /* one block in the storage type, where it differs              */
  int64_t *lens;     /* the block's counts                                          */
  size_t block;      /* rows per gathered block                                     */
  size_t nblk;       /* blocks per innermost outer dim                              */
  size_t ldb;        /* elements from one buffered row to the next                  */
} walker;

/* One library call on `rows` rows: in[a] ld[a] apart (NULL: absent), out ldo apart (LSE: one per row). */
static smx_status call(walker *w, char *const in[SMX_PY_NIN + 1], const size_t ld[SMX_PY_NIN + 1],
                       const int64_t *lens, size_t rows) {
  smx_py_job *j = w->j;
  smx_op_call c;
  memset(&c, 0, sizeof c);
  c.dtype = w->cdt;
  c.backward = j->backward;
  c.rows = rows;
  c.cols = j->n;
  c.x = in[SMX_PY_X], c.ldx = ld[SMX_PY_X];
  c.y = in[SMX_PY_Y], c.ldy = ld[SMX_PY_Y];
  c.dy = in[SMX_PY_DY], c.lddy = ld[SMX_PY_DY];
  c.out = in[SMX_PY_OUT], c.ldo = ld[SMX_PY_OUT];
  c.params = j->params;
  c.nparams = j->nparams;
  c.lens = lens;
  return smx_op_rows(j->op, &c, &w->opt);
}

/* n values of the compute type at src to the storage type at dst (or back: widen). */
static void convert(smx_op_dtype dt, int widen, const void *src, void *dst, size_t n) {
  if (widen) {
    if (dt == SMX_OP_F16) smx_f16_to_f32_n(src, dst, n);
    else smx_bf16_to_f32_n(src, dst, n);
  } else {
    if (dt == SMX_OP_F16) smx_f32_to_f16_n(src, dst, n);
    else smx_f32_to_bf16_n(src, dst, n);
  }
}

/* One per-row result (the compute type's LSE value: double for f64 rows, float otherwise) stored at dst. */
static void store_value(const walker *w, const char *v, char *dst) {
  smx_op_dtype dt = w->j->dtype;
  if (dt == SMX_OP_F64 || dt == SMX_OP_F32) {
    memcpy(dst, v, w->es);
    return;
  }
  uint16_t h;
  convert(dt, 0, v, &h, 1);
  memcpy(dst, &h, sizeof h);
}

/* LSE of `rows` rows (x ldx apart), stored `ostride` bytes apart at o; lens as for call(). */
static smx_status lse_rows(walker *w, char *x, size_t ldx, char *o, ptrdiff_t ostride, size_t rows) {
  size_t vs = w->cdt == SMX_OP_F64 ? sizeof(double) : sizeof(float);
  for (size_t r0 = 0; r0 < rows; r0 += SMX_PY_LSE_CHUNK) {
    size_t b = rows - r0 < SMX_PY_LSE_CHUNK ? rows - r0 : SMX_PY_LSE_CHUNK;
    char *in[SMX_PY_NIN + 1] = {x + r0 * ldx * w->ces, NULL, NULL, w->lse};
    size_t ld[SMX_PY_NIN + 1] = {ldx, 0, 0, 0};
    smx_status s = call(w, in, ld, NULL, b);
    if (s != SMX_OK) return s;
    for (size_t i = 0; i < b; i++) store_value(w, w->lse + i * vs, o + (ptrdiff_t)(r0 + i) * ostride);
  }
  return SMX_OK;
}

/* The innermost outer dim at the arrays' positions p, every axis unit-stride and no conversion. */
static smx_status run_direct(walker *w, char *const p[SMX_PY_NARR]) {
  smx_py_job *j = w->j;
  int r = j->outer - 1, lse = is_lse(j);
  size_t rows = j->shape[r], n = j->n, es = w->es;
  size_t ld[SMX_PY_NIN + 1];
  int ok = 1;
  for (int a = 0; a <= SMX_PY_NIN; a++) {
    ld[a] = p[a] && !(lse && a == SMX_PY_OUT) ? leading_dim(j->s[a][r], es, n, rows) : 0;
    ok &= !p[a] || (lse && a == SMX_PY_OUT) || ld[a] != 0;
  }
  if (ok && lse) return lse_rows(w, p[SMX_PY_X], ld[SMX_PY_X], p[SMX_PY_OUT], j->s[SMX_PY_OUT][r], rows);
  if (ok && (!p[SMX_PY_LENS] || rows == 1 || j->s[SMX_PY_LENS][r] == (ptrdiff_t)sizeof(int64_t)))
    return call(w, p, ld, (const int64_t *)p[SMX_PY_LENS], rows);
  for (size_t r0 = 0; ok && r0 < rows; r0 += SMX_PY_LSE_CHUNK) { /* strided or broadcast counts: copied */
    size_t b = rows - r0 < SMX_PY_LSE_CHUNK ? rows - r0 : SMX_PY_LSE_CHUNK;
    char *q[SMX_PY_NIN + 1];
    for (int a = 0; a <= SMX_PY_NIN; a++) q[a] = p[a] ? p[a] + (ptrdiff_t)r0 * j->s[a][r] : NULL;
    for (size_t i = 0; i < b; i++)
      memcpy(&w->lens[i], p[SMX_PY_LENS] + (ptrdiff_t)(r0 + i) * j->s[SMX_PY_LENS][r], sizeof(int64_t));
    smx_status s = call(w, q, ld, w->lens, b);
    if (s != SMX_OK) return s;
  }
  if (ok) return SMX_OK;
  for (size_t i = 0; i < rows; i++) { /* rows the rows API cannot express: one at a time */
    char *q[SMX_PY_NARR];
    size_t one[SMX_PY_NIN + 1] = {n, n, n, n};
    for (int a = 0; a < SMX_PY_NARR; a++) q[a] = p[a] ? p[a] + (ptrdiff_t)i * j->s[a][r] : NULL;
    smx_status s = lse ? lse_rows(w, q[SMX_PY_X], n, q[SMX_PY_OUT], 0, 1)
                       : call(w, q, one, (const int64_t *)q[SMX_PY_LENS], 1);
    if (s != SMX_OK) return s;
  }
  return SMX_OK;
}

/* Copies elements of size es at (a, b) offsets a*so + b*si (source) and a*dO + b*di (destination),
 * 0 <= a < na, 0 <= b < nb. */
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

/* Copies a rows x n block between the caller's strided memory and the (padded) buffer, in tiles: a
 * transpose when the axis is the slow dimension. The inner loop runs along the caller's smaller stride
 * (whole cache lines); the buffer's rows are padded so that its side never shares cache sets. */
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

/* b rows of array a at src into its buffer (widened to the compute type where it differs), or back. */
static void gather(walker *w, int a, const char *src, size_t b, ptrdiff_t s_row) {
  smx_py_job *j = w->j;
  int conv = w->cdt != j->dtype;
  ptrdiff_t rb = (ptrdiff_t)(w->ldb * w->es);
  copy_block(w->es, b, j->n, conv ? w->stage : w->buf[a], rb, (ptrdiff_t)w->es, src, s_row, j->axis[a], 1);
  for (size_t i = 0; conv && i < b; i++)
    convert(j->dtype, 1, w->stage + i * w->ldb * w->es, w->buf[a] + i * w->ldb * w->ces, j->n);
}

static void scatter(walker *w, char *dst, size_t b, ptrdiff_t d_row) {
  smx_py_job *j = w->j;
  int conv = w->cdt != j->dtype;
  for (size_t i = 0; conv && i < b; i++)
    convert(j->dtype, 0, w->buf[SMX_PY_OUT] + i * w->ldb * w->ces, w->stage + i * w->ldb * w->es, j->n);
  copy_block(w->es, b, j->n, dst, d_row, j->axis[SMX_PY_OUT], conv ? w->stage : w->buf[SMX_PY_OUT],
             (ptrdiff_t)(w->ldb * w->es), (ptrdiff_t)w->es, 0);
}

/* Block k of the gathered walk: rows block k % nblk of the innermost outer dim, at outer position
 * k / nblk. Gather, compute in the buffers, scatter. */
static smx_status gather_block(walker *w, size_t k) {
  smx_py_job *j = w->j;
  int r = j->outer - 1;
  size_t rows = j->shape[r], pos = k / w->nblk, r0 = (k % w->nblk) * w->block;
  char *p[SMX_PY_NARR];
  for (int a = 0; a < SMX_PY_NARR; a++) p[a] = j->p[a];
  for (int d = r - 1; d >= 0; d--) {
    ptrdiff_t i = (ptrdiff_t)(pos % j->shape[d]);
    pos /= j->shape[d];
    for (int a = 0; a < SMX_PY_NARR; a++) p[a] = p[a] ? p[a] + i * j->s[a][d] : NULL;
  }
  size_t b = rows - r0 < w->block ? rows - r0 : w->block;
  for (int a = 0; a < SMX_PY_NARR; a++) p[a] = p[a] ? p[a] + (ptrdiff_t)r0 * j->s[a][r] : NULL;
  for (int a = 0; a < SMX_PY_NIN; a++)
    if (p[a]) gather(w, a, p[a], b, j->s[a][r]);
  if (is_lse(j)) return lse_rows(w, w->buf[SMX_PY_X], w->ldb, p[SMX_PY_OUT], j->s[SMX_PY_OUT][r], b);
  for (size_t i = 0; p[SMX_PY_LENS] && i < b; i++)
    memcpy(&w->lens[i], p[SMX_PY_LENS] + (ptrdiff_t)i * j->s[SMX_PY_LENS][r], sizeof(int64_t));
  char *in[SMX_PY_NIN + 1];
  size_t ld[SMX_PY_NIN + 1];
  for (int a = 0; a <= SMX_PY_NIN; a++) {
    in[a] = p[a] ? w->buf[a] : NULL;
    ld[a] = w->ldb;
  }
  smx_status s = call(w, in, ld, p[SMX_PY_LENS] ? w->lens : NULL, b);
  if (s == SMX_OK) scatter(w, p[SMX_PY_OUT], b, j->s[SMX_PY_OUT][r]);
  return s;
}

/* Scratch of one walker; SMX_E_NOMEM when it cannot be allocated. */
static smx_status walker_alloc(walker *w, int gathered) {
  smx_py_job *j = w->j;
  if (is_lse(j) && !(w->lse = malloc(SMX_PY_LSE_CHUNK * sizeof(double)))) return SMX_E_NOMEM;
  if (!gathered)
    return j->p[SMX_PY_LENS] && !(w->lens = malloc(SMX_PY_LSE_CHUNK * sizeof(int64_t))) ? SMX_E_NOMEM : SMX_OK;
  size_t cells = w->block * w->ldb;
  for (int a = 0; a <= SMX_PY_NIN; a++)
    if (j->p[a] && !(is_lse(j) && a == SMX_PY_OUT) && !(w->buf[a] = malloc(cells * w->ces))) return SMX_E_NOMEM;
  if (w->cdt != j->dtype && !(w->stage = malloc(cells * w->es))) return SMX_E_NOMEM;
  if (j->p[SMX_PY_LENS] && !(w->lens = malloc(w->block * sizeof(int64_t)))) return SMX_E_NOMEM;
  return SMX_OK;
}

static void walker_free(walker *w) {
  for (int a = 0; a <= SMX_PY_NIN; a++) free(w->buf[a]);
  free(w->stage);
  free(w->lens);
  free(w->lse);
}

/* Gathered walks with threads > 1: each thread gathers its own share of the blocks into its own buffers
 * (the copies are most of the work), and the library runs each block on that thread. Rows are independent
 * and the library's results do not depend on its thread count, so neither do ours. */
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

/* An empty row: nothing to write but an LSE op's -inf per row, one store per output, so that the work never
 * grows with the number of empty rows beyond the outputs themselves. */
static smx_status fill_empty(walker *w) {
  smx_py_job *j = w->j;
  if (!is_lse(j)) return SMX_OK;
  float f = -INFINITY;
  double d = -INFINITY;
  const char *v = w->cdt == SMX_OP_F64 ? (const char *)&d : (const char *)&f;
  size_t idx[SMX_PY_MAX_DIMS] = {0};
  char *o = j->p[SMX_PY_OUT];
  for (;;) {
    store_value(w, v, o);
    int d0 = j->outer - 1;
    while (d0 >= 0) {
      o += j->s[SMX_PY_OUT][d0];
      if (++idx[d0] < j->shape[d0]) break;
      o -= (ptrdiff_t)j->shape[d0] * j->s[SMX_PY_OUT][d0];
      idx[d0] = 0;
      d0--;
    }
    if (d0 < 0) return SMX_OK;
  }
}

smx_status smx_py_run(smx_py_job *j) {
  walker w;
  memset(&w, 0, sizeof w);
  w.j = j;
  w.opt = j->opt;
  if (!compute_dtype(j->op, j->dtype, j->backward, &w.cdt)) return SMX_E_UNSUPPORTED;
  w.es = smx_py_dtype_size(j->dtype);
  w.ces = smx_py_dtype_size(w.cdt);
  size_t es = w.es, n = j->n;
  int key = 0;
  while (key < SMX_PY_OUT && !j->p[key]) key++;
  if (!simplify(j, key)) return SMX_OK; /* no rows */
  if (n == 0) return fill_empty(&w);
  if (n <= 1) /* the stride of a short axis is irrelevant */
    for (int a = 0; a <= SMX_PY_NIN; a++) j->axis[a] = (ptrdiff_t)es;
  int lse = is_lse(j), gathered = w.cdt != j->dtype;
  for (int a = 0; a <= SMX_PY_NIN; a++) gathered |= j->p[a] && !(lse && a == SMX_PY_OUT) && j->axis[a] != (ptrdiff_t)es;
  int od = j->outer - 1;
  smx_status s = SMX_OK;
  if (gathered) {
    /* Buffered rows one cache line longer than n: rows a power of two apart would share cache sets, and the
     * transposing copy touches one line per row. */
    if (n > (size_t)PTRDIFF_MAX / 8 - SMX_PY_ROW_PAD) return SMX_E_NOMEM; /* a broadcast row of 2^60 */
    w.ldb = n + SMX_PY_ROW_PAD / es;
    size_t rows = j->shape[od], row_bytes = w.ldb * (w.ces > es ? w.ces : es);
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
  char *p[SMX_PY_NARR];
  for (int a = 0; a < SMX_PY_NARR; a++) p[a] = j->p[a];
  for (;;) {
    s = run_direct(&w, p);
    if (s != SMX_OK) break;
    int d = od - 1;
    while (d >= 0) {
      for (int a = 0; a < SMX_PY_NARR; a++) p[a] = p[a] ? p[a] + j->s[a][d] : NULL;
      if (++idx[d] < j->shape[d]) break;
      for (int a = 0; a < SMX_PY_NARR; a++) p[a] = p[a] ? p[a] - (ptrdiff_t)j->shape[d] * j->s[a][d] : NULL;
      idx[d] = 0;
      d--;
    }
    if (d < 0) break;
  }
  walker_free(&w);
  return s;
}
