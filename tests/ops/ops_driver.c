/*
 * The op test driver: every row of the op table (op_table.c) through every
 * row family (families.c) with inputs and outputs flush against guard pages,
 * on every kernel set from scalar up to the cap (SMX_MAX_ISA, else the CPU's
 * best), every algorithm (for the ops that have a choice), thread counts
 * 1..5 with bitwise-equal outputs where the engine splits the work
 * (thread_plan), the rows form with gaps between rows, the in-place form,
 * and the bad arguments (bad_args.c). Each input, its storage form and its
 * long-double expectations are made once and compared with the outputs of
 * every kernel set, algorithm and thread count. Prints, per family, the worst
 * error over all rows in units of the bound, then the summary table.
 *
 * SMX_TEST_LONG_LOG2 sets the long N(0,1) row: 2^26 (f32) and 2^24 (f64) by
 * default; 0 leaves it out; 22 or less also leaves out the window edge row
 * (64 * 2^16 + 1). SMX_OPS_PROFILE=1 prints where the CPU time goes.
 * SMX_OPS_QUICK=1 (CI's ASan, TSan and qemu runs) checks values on a sparse
 * set of elements instead of all of them, and trims nothing else (quick).
 * SMX_OPS_ONLY=text runs only the table rows whose name contains text (while
 * developing an operation).
 * SMX_OPS_DTYPES=f32[,f64,f16,bf16] runs only the table rows of those input
 * types (CI's qemu run: f32, as its accuracy suite always was there; the
 * long-double references are software quad precision on AArch64).
 * SMX_OPS_FAMILY=text runs only the families whose name contains text (and
 * no bad-argument cases): one family, while fixing what it found.
 * `test_ops soak` is the random-argument soak of the same table (soak.c).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "families.h"
#include "guard.h"
#include "op.h"
#include "report.h"
#include "soak.h"

void bad_args_run(size_t op);

#define MAX_THREADS 5
#define ROWS_FORM_MAX ((size_t)1 << 17)   /* rows and in-place forms up to this length */

static const smx_algo algos[4] = { SMX_ALGO_AUTO, SMX_ALGO_THREE_PASS, SMX_ALGO_TWO_PASS, SMX_ALGO_ONLINE };
static const char *const algo_names[4] = { "auto", "three-pass", "two-pass", "online" };
static double fam_worst;

/* SMX_OPS_PROFILE=1: where the time goes, per family and in total */
enum { P_GEN, P_INPUT, P_REFROW, P_REFCACHE, P_CALL, P_CHECK, P_ALLOC, P_ROWS, P_INPLACE, P_N };
static const char *const prof_names[P_N] = { "gen", "input", "refrow", "refcache", "call", "check", "alloc", "rowsform", "inplace" };
static double prof[P_N], prof_total[P_N];
static int profiling;
/* SMX_OPS_QUICK=1, for the sanitizer builds: the values are checked on the
 * sparse set of sparse_keep (every 8th element, the ends of each chunk and of
 * the row; rows up to 128 whole) instead of at every element. Nothing else
 * changes: every op, dtype, kernel set, algorithm, thread count, length,
 * family and guard placement still runs, and whole outputs are still compared
 * bitwise across thread counts, placements and the in-place form. The
 * Release runs check every element. */
static int quick;
/* SMX_OPS_THREADED: only the cases that call with more than one thread (the TSan run: a one-thread call
 * starts no worker, so it has nothing to race, and TSan's cost is in the arithmetic it instruments) */
static int threaded_only;

/* CPU time of the process (every thread), what a test costs on shared cores */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define PROF(b, stmt)                              \
  do {                                             \
    double t0_ = profiling ? now() : 0;            \
    stmt;                                          \
    if (profiling) prof[b] += now() - t0_;         \
  } while (0)

static size_t out_elem_size(const op_row *r) { return dt_size(r->out_dt); }   /* OUT_TOPK: its values' type */
static size_t out_count(const op_row *r, size_t n) {
  return r->shape == OUT_ELEM ? n : r->shape == OUT_SCALAR ? 1 : op_k(n);
}
static size_t check_count(const op_row *r, size_t n) {
  return r->shape == OUT_ELEM ? n : r->shape == OUT_SCALAR ? 1 : 2 * op_k(n);
}

/* output i as the check reads it (f32 and f64 read here: the checks' inner loop) */
static inline long double actual(const op_row *r, const void *out, const int64_t *idx, size_t k, size_t i) {
  if (r->shape == OUT_TOPK) return i < k ? dt_get(r->out_dt, out, i) : (long double)idx[i - k];
  if (r->out_dt == DT_F32) { float v; memcpy(&v, (const char *)out + 4 * i, 4); return v; }
  if (r->out_dt == DT_F64) { double v; memcpy(&v, (const char *)out + 8 * i, 8); return v; }
  return dt_get(r->out_dt, out, i);
}

/* The kernel sets this process walks: every distinct level from scalar up to
 * the cap in force at start (SMX_MAX_ISA, else the CPU's best), switched with
 * smx_set_max_isa. One process covers every ISA, so each input, its
 * references and its inputs in storage form are made once and compared with
 * the outputs of every kernel set. */
#define MAX_LEVELS 4
static smx_isa_level levels[MAX_LEVELS];
static const char *level_names[MAX_LEVELS];
static int nlevels;

static void levels_init(void) {
#if defined(__aarch64__)
  static const smx_isa_level cand[] = { SMX_ISA_SCALAR, SMX_ISA_NEON };
#else
  static const smx_isa_level cand[] = { SMX_ISA_SCALAR, SMX_ISA_AVX2, SMX_ISA_AVX512 };
#endif
  const char *top = smx_isa();   /* the cap in force: SMX_MAX_ISA or the CPU */
  for (size_t i = 0; i < sizeof cand / sizeof cand[0] && nlevels < MAX_LEVELS; i++) {
    if (smx_set_max_isa(cand[i]) != SMX_OK) continue;
    const char *name = smx_isa();
    if (nlevels > 0 && strcmp(name, level_names[nlevels - 1]) == 0) continue;
    levels[nlevels] = cand[i];
    level_names[nlevels++] = name;
    if (strcmp(name, top) == 0) break;
  }
}

/* What one output must be: the reference and its bound, or the exact value
 * (NaN, a policy value, a rounding at the range's end, an index), worked out
 * once per element from the row's reference (ref_at, bound) and then
 * compared with every output of the case: each kernel set, algorithm and
 * thread count. */
enum { K_NAN, K_EXACT, K_PZERO, K_BOUND, K_ANY };   /* K_ANY: the header is silent (a bound of +inf) */
#define E_NONNEG 0x1u   /* a probability: >= 0 */
#define E_TINY 0x2u     /* ... whose reference is below the arithmetic's normal range: at most tiny_cap */
#define E_EDGE 0x4u     /* the reference within its bound of the storage's overflow: the infinity passes too */
typedef struct expect {
  long double v;   /* K_EXACT: the value; K_BOUND: the reference */
  double b;        /* K_BOUND: the bound on |y - v| */
  unsigned char kind, flags;
} expect;

static void expect_of(const op_row *r, const ref_ctx *c, size_t i, expect *e) {
  dtype od = r->out_dt;
  dtype arith = od == DT_F64 ? DT_F64 : DT_F32;
  long double aux, ref = r->ref_at(c, i, &aux);
  double b = r->bound(c, od, i, ref, aux);
  /* the stored reference is only needed when exact or at the range's end (rounding within it is finite) */
  int need_stored = b < 0 || isinf(ref) || fabsl(ref) > dt_max(od);
  long double stored = need_stored ? dt_round(od, ref) : ref;
  e->v = ref;
  e->b = b;
  e->flags = 0;
  if (isinf(b) && b > 0) e->kind = K_ANY;
  else if (ref != ref) e->kind = K_NAN;
  else if ((r->caps & OP_SATURATES) && !isinf(ref) && fabsl(ref) > dt_max(arith)) {
    e->kind = K_EXACT;   /* saturated in the arithmetic, then stored */
    e->v = dt_round(od, copysignl(dt_max(arith), ref));
  } else if (b < 0 || isinf(ref) || (need_stored && isinf(stored))) {
    e->kind = K_EXACT;   /* exact, or beyond the range: its rounding */
    e->v = stored;
  } else if (ref == 0 && (r->caps & OP_SIGNED_ZERO)) e->kind = K_PZERO;
  else e->kind = K_BOUND;
  if (e->kind == K_BOUND && isinf(dt_round(od, fabsl(ref) + (long double)b))) e->flags |= E_EDGE;
  if ((r->caps & OP_NONNEG) && (r->shape != OUT_TOPK || i < c->k)) {
    e->flags |= E_NONNEG;
    /* (not where the bound itself reaches past the normal range: bisection entmax's d^(1/(alpha-1))) */
    if (ref == ref && ref < dt_arith_tiny(od) && !(e->kind == K_BOUND && e->b > dt_arith_tiny(od))) e->flags |= E_TINY;
  }
}

/* A probability whose reference is below the arithmetic's normal range comes
 * out in [0, DBL_MIN) in f64, in [0, FLT_MIN (1 + 8 eps)] in f32 arithmetic
 * (then rounded to f16 / bf16 storage). */
static int tiny_ok(dtype od, long double y) {
  return od == DT_F64 ? y < DBL_MIN : y <= dt_round(od, FLT_MIN * (1.0 + 8.0 * 0x1p-23));
}

/* 1 when y is what e asks; the worst error as a fraction of the bound goes to *worst. */
static int expect_ok(const expect *e, dtype od, long double y, double *worst) {
  int ok;
  switch (e->kind) {
    case K_NAN: ok = y != y; break;
    case K_EXACT: ok = y == e->v; break;
    case K_PZERO: ok = y == 0 && !signbit((double)y); break;
    case K_ANY: ok = 1; break;
    default: {
      if ((e->flags & E_EDGE) && isinf(y) && (y > 0) == (e->v > 0)) { ok = 1; break; }
      double err = (double)fabsl(y - e->v);
      ok = err <= e->b;
      if (e->b > 0 && err / e->b > *worst) *worst = err / e->b;
    }
  }
  if (e->flags & E_NONNEG) {
    if (y < 0) ok = 0;
    if ((e->flags & E_TINY) && !tiny_ok(od, y)) ok = 0;
  }
  return ok;
}

/* The expectations of one case, worked out once for all its checks. The rows
 * beyond REF_CACHE_MAX (the 2^26 / 2^24 rows, the window edge) keep them only
 * for the sparse set of sparse_keep (their later algorithms' checks); their
 * first algorithm's outputs of every kernel set are held and checked at every
 * element together, each expectation worked out once. */
typedef struct refs {
  expect *e;
  int sparse;   /* entries for the elements sparse_keep keeps, in order */
} refs;
#define REF_CACHE_MAX ((size_t)1 << 22)
#define CHUNK_N ((size_t)1 << 16)   /* SMX_CHUNK of src/core/grid.h */

/* sparse: the long rows' second and later algorithms, whose per-element error
 * (the exponential) the shorter rows already check at every element, and whose
 * length-dependent error (the sum over the row, a chunk's rescale) shows in
 * every element of the row or of the chunk: every 8th element, the first and
 * last 64 of each chunk and the row's last 64. */
static int sparse_keep(size_t i, size_t n) {
  size_t q = i % CHUNK_N;
  return (i & 7) == 0 || q < 64 || q >= CHUNK_N - 64 || i + 64 >= n;
}

static refs refs_make(size_t op, const ref_ctx *c, int sparse) {
  const op_row *r = &op_table[op];
  size_t nc = check_count(r, c->n), m = 0;
  refs v = { NULL, sparse };
  if (!sparse && nc > REF_CACHE_MAX) return v;
  for (size_t i = 0; i < nc; i++) m += !sparse || sparse_keep(i, nc);
  v.e = malloc((m + 1) * sizeof(expect));
  if (!v.e) { perror("malloc"); exit(2); }
  for (size_t i = 0, j = 0; i < nc; i++)
    if (!sparse || sparse_keep(i, nc)) expect_of(r, c, i, &v.e[j++]);
  return v;
}
static void refs_free(refs *v) { free(v->e); }

/* Compares m outputs of one row (one per kernel set, or one) with the
 * expectations; bad[j] gets the number outside, worst[j] the worst error as a
 * fraction of the bound. sparse: only the elements sparse_keep keeps. cache:
 * the expectations, or NULL (then each is worked out here, once). */
static void check_rows(size_t op, const ref_ctx *c, const refs *cache, const void *const *out,
                       const int64_t *const *idx, int m, size_t *bad, double *worst, int sparse) {
  const op_row *r = &op_table[op];
  dtype od = r->out_dt;
  size_t nc = check_count(r, c->n);
  if (cache && cache->e && cache->sparse != sparse) {
    fprintf(stderr, "check_rows: a %s cache for a %s check\n", cache->sparse ? "sparse" : "dense", sparse ? "sparse" : "dense");
    exit(2);
  }
  for (int j = 0; j < m; j++) bad[j] = 0;
  for (size_t i = 0, q = 0; i < nc; i++) {
    if (sparse && !sparse_keep(i, nc)) continue;
    expect own;
    const expect *e = &own;
    if (cache && cache->e) e = &cache->e[cache->sparse ? q++ : i];
    else expect_of(r, c, i, &own);
    for (int j = 0; j < m; j++) {
      long double y = actual(r, out[j], idx[j], c->k, i);
      if (!expect_ok(e, od, y, &worst[j]) && ++bad[j] <= 2)
        fprintf(stderr, "  element %zu: got %.21Lg, %s %.21Lg, bound %.3g\n", i, y,
                e->kind == K_BOUND ? "reference" : "want", e->v, e->b);
    }
  }
}

static size_t check_row(size_t op, const ref_ctx *c, const refs *cache, const void *out, const int64_t *idx,
                        double *worst, int sparse) {
  size_t bad;
  check_rows(op, c, cache, &out, &idx, 1, &bad, worst, sparse);
  return bad;
}

/* for the soak mode (soak.c) */
size_t ops_check_row(size_t op, const ref_ctx *c, const void *out, const int64_t *idx, double *worst) {
  return check_row(op, c, NULL, out, idx, worst, 0);
}
int ops_levels(const smx_isa_level **lv) {
  *lv = levels;
  return nlevels;
}
const char *const *ops_level_names(void) { return level_names; }

typedef struct bufs {
  guard in[2], out, idx;
} bufs;

static bufs bufs_alloc(const op_row *r, size_t n, int at_start) {
  bufs b;
  memset(&b, 0, sizeof b);
  for (int j = 0; j < r->n_in; j++) b.in[j] = guard_alloc(n * dt_size(r->in_dt), at_start);
  b.out = guard_alloc(out_count(r, n) * out_elem_size(r), at_start);
  b.idx = guard_alloc(op_k(n) * sizeof(int64_t), at_start);
  return b;
}
static void bufs_free(const op_row *r, bufs *b) {
  for (int j = 0; j < r->n_in; j++) guard_free(b->in[j]);
  guard_free(b->out);
  guard_free(b->idx);
}

static smx_status call(const op_row *r, const bufs *b, size_t n, const int64_t *target, const smx_options *o) {
  op_call c;
  memset(&c, 0, sizeof c);
  for (int j = 0; j < r->n_in; j++) { c.in[j] = b->in[j].p; c.ld_in[j] = n; }
  c.out = b->out.p;
  c.ld_out = n;
  c.idx = b->idx.p;
  c.targets = target;
  c.rows = 1;
  c.cols = n;
  c.k = op_k(n);
  c.opt = o;
  return r->row ? r->row(&c) : r->rows(&c);
}

static const char *algo_name(smx_algo a) { return algo_names[a]; }

/* Where the engine splits work across threads (mirrors src/): a rows call
 * splits its rows from 2^14 elements in all (SMX_GRID_SMALL, src/core/grid.h);
 * one row is split only when it is an f32 / f64 forward row of
 * at least SMX_SPLIT_ROW_MIN = 2^21 columns, or a top-k row of at least
 * SMX_TOPK_SPLIT_MIN = 2^20 (half-precision forward rows, backward and
 * cross-entropy rows never are). */
#define SPLIT_ROW_MIN ((size_t)1 << 21)
#define TOPK_SPLIT_MIN ((size_t)1 << 20)
#define ROWS_SPLIT_MIN ((size_t)1 << 14)
static int row_splits(const op_row *r, size_t n) {
  if (r->shape == OUT_TOPK) return n >= TOPK_SPLIT_MIN;
  return (r->caps & OP_ALGOS) && (r->in_dt == DT_F32 || r->in_dt == DT_F64) && n >= SPLIT_ROW_MIN;
}

/* The rows form: three copies of the row with gaps between them, one thread
 * (every row against the reference, the gaps untouched) and, where the call
 * splits its rows, three threads (bitwise the one-thread result). */
static void rows_form(size_t op, const family *f, const ref_ctx *c, const refs *cache, const bufs *one,
                      const int64_t *target, const ref_ctx *noise) {
  const op_row *r = &op_table[op];
  size_t n = f->n, R = 3, es = dt_size(r->in_dt), oes = out_elem_size(r), k = op_k(n);
  size_t ldi = n + 3, ldo = r->shape == OUT_ELEM ? n + 5 : 0;
  size_t ocount = r->shape == OUT_ELEM ? (R - 1) * ldo + n : R * out_count(r, n);
  guard in[2], out = guard_alloc(ocount * oes, 0), idx = guard_alloc(R * k * sizeof(int64_t), 0);
  int64_t targets[3] = { *target, *target, *target };
  for (int j = 0; j < r->n_in; j++) {
    in[j] = guard_alloc(((R - 1) * ldi + n) * es, 0);
    memset(in[j].p, 0x7f, ((R - 1) * ldi + n) * es);
    for (size_t q = 0; q < R; q++) memcpy((char *)in[j].p + q * ldi * es, one->in[j].p, n * es);
  }
  unsigned char *first = malloc(ocount * oes + 1);
  int top = R * n >= ROWS_SPLIT_MIN ? 3 : 1;
  for (int threads = 1; threads <= top; threads += 2) {
    smx_options o = { SMX_ALGO_AUTO, f->T, f->flags, threads, NULL };
    op_call cl = { .out = out.p, .ld_out = ldo, .idx = idx.p, .targets = targets, .rows = R, .cols = n, .k = k,
                   .opt = &o };
    for (int j = 0; j < r->n_in; j++) { cl.in[j] = in[j].p; cl.ld_in[j] = ldi; }
    memset(out.p, 0xa5, ocount * oes);
    memset(idx.p, 0xa5, R * k * sizeof(int64_t));
    smx_status s = r->rows(&cl);
    rep_check(op, s == SMX_OK, "%s %s rows form threads=%d: status %d", smx_isa(), f->name, threads, (int)s);
    if (threads > 1) {
      rep_check(op, memcmp(first, out.p, ocount * oes) == 0, "%s %s rows form: 1 and 3 threads differ", smx_isa(),
                f->name);
      continue;
    }
    size_t bad = 0, gaps = 0;
    double w = 0;
    for (size_t q = 0; q < R; q++) {
      const char *o_row = (const char *)out.p + q * (r->shape == OUT_ELEM ? ldo : out_count(r, n)) * oes;
      if ((r->caps & OP_ROW_NOISE) && q > 0)   /* row q draws its own noise: its own reference */
        bad += check_row(op, &noise[q], NULL, o_row, (const int64_t *)idx.p + q * k, &w, quick);
      else
        bad += check_row(op, c, cache, o_row, (const int64_t *)idx.p + q * k, &w, quick);
      if (r->shape == OUT_ELEM && q + 1 < R)
        for (size_t g = n * oes; g < ldo * oes; g++) gaps += ((const unsigned char *)o_row)[g] != 0xa5;
    }
    rep_ratio(op, w);
    rep_check(op, bad == 0 && gaps == 0, "%s %s rows form threads=%d: %zu outside the bound, %zu gap bytes written",
              smx_isa(), f->name, threads, bad, gaps);
    memcpy(first, out.p, ocount * oes);
  }
  free(first);
  for (int j = 0; j < r->n_in; j++) guard_free(in[j]);
  guard_free(out);
  guard_free(idx);
}

/* out == in[r->inplace], flush against the trailing or the leading guard
 * page: bitwise the result of the separate output */
static void in_place(size_t op, const family *f, const bufs *b, const void *want, const int64_t *target,
                     smx_algo algo, int at_start) {
  const op_row *r = &op_table[op];
  size_t n = f->n, es = dt_size(r->in_dt);
  bufs w = bufs_alloc(r, n, at_start);
  for (int j = 0; j < r->n_in; j++) memcpy(w.in[j].p, b->in[j].p, n * es);
  guard alias = w.in[r->inplace];
  guard_free(w.out);
  w.out = alias;   /* the output is the input */
  memset(w.idx.p, 0xa5, op_k(n) * sizeof(int64_t));
  smx_options o = { algo, f->T, f->flags, 1, NULL };
  smx_status s = call(r, &w, n, target, &o);
  rep_check(op, s == SMX_OK && memcmp(alias.p, want, n * es) == 0, "%s %s %s in place%s: status %d or result differs",
            smx_isa(), f->name, algo_name(algo), at_start ? " (leading guard)" : "", (int)s);
  for (int j = 0; j < r->n_in; j++) guard_free(w.in[j]);
  guard_free(w.idx);
}

/* The row-level reference state (max, +inf count, log of the sum: one expl per
 * element) of the forward rows is the same for softmax, log-softmax and
 * log-sum-exp on the same family and storage type: computed once, reused. */
static void ref_row_shared(const op_row *r, const family *f, ref_ctx *c) {
  static const family *last_f;
  static dtype last_dt;
  static ref_ctx last;
  if (r->ref_row != ref_sm_row || r->prepare) { r->ref_row(c); return; }
  if (last_f == f && last_dt == c->dt && last.n == c->n) {
    c->nan = last.nan;
    c->kinf = last.kinf;
    c->masked = last.masked;
    c->m = last.m;
    c->logd = last.logd;
    return;
  }
  r->ref_row(c);
  last_f = f;
  last_dt = c->dt;
  last = *c;
}

/* Thread counts, per kernel set. Where the engine splits the row (row_splits)
 * the first algorithm (auto) runs 1..5 threads and the others 1 and 3, all
 * bitwise equal; elsewhere the thread count is ignored, which 1 and 3 threads
 * at the first algorithm show on a few lengths (0, 1, 33, 65, 4103). The
 * rows beyond REF_CACHE_MAX (the 2^26 / 2^24 rows, the window edge: all
 * split) run each algorithm at two thread counts, the first checked against
 * the reference and the second bitwise equal to it (1 and 2, 2 and 5, 5 and
 * 3, 3 and 4); ops without a choice of algorithm run 1 and 5 threads there. */
static int sweep_length(size_t n) { return n <= 1 || n == 33 || n == 65 || n == 4103; }
static int thread_plan(const op_row *r, const family *f, int nalgo, int a, int *list) {
  size_t n = f->n;
  if (n > REF_CACHE_MAX) {
    static const int pair[4][2] = { { 1, 2 }, { 2, 5 }, { 5, 3 }, { 3, 4 } };
    if (nalgo > 1) { list[0] = pair[a][0]; list[1] = pair[a][1]; return 2; }
    list[0] = 1; list[1] = 5; return 2;
  }
  if (row_splits(r, n)) {
    if (a == 0) { for (int t = 0; t < MAX_THREADS; t++) list[t] = t + 1; return MAX_THREADS; }
    list[0] = 1; list[1] = 3; return 2;
  }
  list[0] = 1;
  if (a == 0 && sweep_length(n)) { list[1] = 3; return 2; }
  return 1;
}

static void run_case(size_t op, const family *f, const double *x) {
  const op_row *r = &op_table[op];
  size_t n = f->n, k = op_k(n);
  size_t obytes = out_count(r, n) * out_elem_size(r), ibytes = k * sizeof(int64_t);
  int64_t target = op_target(n);
  smx_options o = { SMX_ALGO_AUTO, f->T, f->flags, 1, NULL };
  bufs b;
  PROF(P_ALLOC, b = bufs_alloc(r, n, 0));
  PROF(P_INPUT, if (r->prepare) r->prepare(x, n, &o, r->in_dt, b.in[0].p, r->n_in > 1 ? b.in[1].p : NULL);
                else for (size_t i = 0; i < n; i++) dt_put(r->in_dt, b.in[0].p, i, x[i]));

  ref_ctx c;
  memset(&c, 0, sizeof c);
  c.dt = r->in_dt;
  c.in[0] = b.in[0].p;
  c.in[1] = r->n_in > 1 ? b.in[1].p : NULL;
  c.n = n;
  c.k = k;
  c.target = target;
  c.T = f->T != 0.0 ? (long double)f->T : 1.0L;
  c.flags = f->flags;
  PROF(P_REFROW, ref_row_shared(r, f, &c));

  int empty_refused = n == 0 && (r->caps & OP_EMPTY_INVALID);
  int nalgo = (r->caps & OP_ALGOS) ? 4 : 1;
  int long_row = n > REF_CACHE_MAX;
  refs cache, sparse_cache = { NULL, 1 };
  PROF(P_REFCACHE, cache = refs_make(op, &c, quick); if (long_row && nalgo > 1) sparse_cache = refs_make(op, &c, 1));
  /* the rows form's rows 1 and 2 of an op that draws noise per row: their own references, once for every
   * kernel set */
  int rows_form_runs = n > 0 && n <= ROWS_FORM_MAX && !empty_refused;
  ref_ctx noise[3];
  for (size_t q = 1; q < 3 && rows_form_runs && (r->caps & OP_ROW_NOISE); q++) {
    noise[q] = c;
    noise[q].row = q;
    PROF(P_REFROW, r->ref_row(&noise[q]));
  }
  unsigned char *first = malloc(obytes + 1), *auto1 = malloc(obytes + 1);
  int64_t *first_idx = malloc(ibytes + 8);
  /* long rows: the first algorithm's outputs of every kernel set, checked together at the end */
  void *held[MAX_LEVELS] = { NULL };
  int64_t *held_idx[MAX_LEVELS] = { NULL };
  for (int lv = 0; lv < nlevels; lv++) {
    smx_set_max_isa(levels[lv]);
    const char *isa = level_names[lv];
    for (int a = 0; a < nalgo; a++) {
      int plan[MAX_THREADS], np = thread_plan(r, f, nalgo, a, plan);
      for (int ti = 0; ti < np; ti++) {
        int threads = plan[ti];
        o.algo = algos[a];
        o.threads = threads;
        smx_status s;
        PROF(P_ALLOC, memset(b.out.p, 0xa5, obytes); memset(b.idx.p, 0xa5, ibytes));
        PROF(P_CALL, s = call(r, &b, n, &target, &o));
        if (empty_refused) {
          rep_check(op, s == SMX_E_INVALID_ARG, "%s %s: empty row gave status %d", isa, f->name, (int)s);
          continue;
        }
        if (s != SMX_OK) {
          rep_check(op, 0, "%s %s %s threads=%d: status %d", isa, f->name, algo_name(algos[a]), threads, (int)s);
          continue;
        }
        if (ti == 0) {
          if (long_row && a == 0) {
            held[lv] = malloc(obytes + 1);
            held_idx[lv] = malloc(ibytes + 8);
            if (!held[lv] || !held_idx[lv]) { perror("malloc"); exit(2); }
            memcpy(held[lv], b.out.p, obytes);
            memcpy(held_idx[lv], b.idx.p, ibytes);
          } else {
            double w = 0;
            size_t bad;
            PROF(P_CHECK, bad = check_row(op, &c, long_row ? &sparse_cache : &cache, b.out.p, b.idx.p, &w,
                                          long_row || quick));
            rep_ratio(op, w);
            if (w > fam_worst) fam_worst = w;
            rep_check(op, bad == 0, "%s %s %s threads=%d: %zu outputs outside the bound (worst %.3g of it)", isa,
                      f->name, algo_name(algos[a]), threads, bad, w);
          }
          memcpy(first, b.out.p, obytes);
          memcpy(first_idx, b.idx.p, ibytes);
          if (a == 0) memcpy(auto1, b.out.p, obytes);
        } else {
          rep_check(op, memcmp(first, b.out.p, obytes) == 0 && memcmp(first_idx, b.idx.p, ibytes) == 0,
                    "%s %s %s: threads=%d differs from threads=%d", isa, f->name, algo_name(algos[a]), threads,
                    plan[0]);
        }
      }
      /* the same inputs flush against the leading guard page */
      if ((f->kind & FAM_EDGES) && !empty_refused) {
        double t0 = profiling ? now() : 0;
        bufs s = bufs_alloc(r, n, 1);
        memset(s.out.p, 0xa5, obytes);
        memset(s.idx.p, 0xa5, ibytes);
        for (int j = 0; j < r->n_in; j++) memcpy(s.in[j].p, b.in[j].p, n * dt_size(r->in_dt));
        o.threads = 1;
        smx_status st = call(r, &s, n, &target, &o);
        rep_check(op, st == SMX_OK && memcmp(first, s.out.p, obytes) == 0 && memcmp(first_idx, s.idx.p, ibytes) == 0,
                  "%s %s %s: leading-guard placement status %d or result differs", isa, f->name, algo_name(algos[a]),
                  (int)st);
        bufs_free(r, &s);
        if (profiling) prof[P_ALLOC] += now() - t0;
        /* in place on these rows too: every algorithm, either guard page (auto, trailing: below) */
        if (r->inplace >= 0 && n > 0) {
          PROF(P_INPLACE, in_place(op, f, &b, first, &target, algos[a], 1));
          if (a > 0) PROF(P_INPLACE, in_place(op, f, &b, first, &target, algos[a], 0));
        }
      }
    }
    if (rows_form_runs) {
      PROF(P_ROWS, rows_form(op, f, &c, &cache, &b, &target, noise));
      if (r->inplace >= 0) PROF(P_INPLACE, in_place(op, f, &b, auto1, &target, SMX_ALGO_AUTO, 0));
    }
  }
  if (long_row && !empty_refused) {
    const void *outs[MAX_LEVELS];
    const int64_t *idxs[MAX_LEVELS];
    size_t bad[MAX_LEVELS];
    double w[MAX_LEVELS] = { 0 };
    int m = 0;
    while (m < nlevels && held[m]) { outs[m] = held[m]; idxs[m] = held_idx[m]; m++; }
    PROF(P_CHECK, check_rows(op, &c, quick ? &sparse_cache : NULL, outs, idxs, m, bad, w, quick));
    for (int lv = 0; lv < m; lv++) {
      smx_set_max_isa(levels[lv]);   /* the known-issue list is per kernel set */
      rep_ratio(op, w[lv]);
      if (w[lv] > fam_worst) fam_worst = w[lv];
      rep_check(op, bad[lv] == 0, "%s %s %s threads=%d: %zu outputs outside the bound (worst %.3g of it)",
                level_names[lv], f->name, algo_name(algos[0]), 1, bad[lv], w[lv]);
    }
  }
  for (int lv = 0; lv < nlevels; lv++) { free(held[lv]); free(held_idx[lv]); }
  smx_set_max_isa(levels[nlevels - 1]);
  PROF(P_ALLOC, refs_free(&cache); refs_free(&sparse_cache); free(first); free(auto1); free(first_idx);
                bufs_free(r, &b));
}

/* The parts ctest runs as separate entries, so that ctest -j spreads them:
 * the long f32 row, the long f64 row with the window edge, and every other
 * family with the bad arguments. No argument: all of them. */
enum { PART_LONG_F32 = 1, PART_LONG_F64 = 2, PART_FAMILIES = 4, PART_ALL = 7 };
static unsigned part_of(const family *f) {
  if (f->n <= REF_CACHE_MAX) return PART_FAMILIES;
  return (f->kind & FAM_F64) ? PART_LONG_F64 : PART_LONG_F32;
}

/* SMX_OPS_ONLY */
int ops_op_wanted(size_t op) {
  const char *only = getenv("SMX_OPS_ONLY");
  return !only || strstr(op_table[op].name, only) != NULL;
}

/* SMX_OPS_FAMILY */
static int family_wanted(const family *f) {
  const char *only = getenv("SMX_OPS_FAMILY");
  return !only || strstr(f->name, only) != NULL;
}

/* Whether op runs on family f (the filters of main's loop). */
static int op_runs(size_t op, const family *f, const int *run_dt) {
  dtype d = op_table[op].in_dt;
  unsigned want = d == DT_F64 ? FAM_F64 : d == DT_F32 ? FAM_F32 : FAM_HALF;
  if ((f->kind & (FAM_LONG | FAM_FWD)) && !(op_table[op].caps & OP_ALGOS)) return 0;
  if ((op_table[op].caps & OP_UNIT_TEMP) && f->T != 0.0 && f->T != 1.0) return 0;
  if ((op_table[op].caps & OP_SHORT_ROWS) && f->n > ((size_t)1 << 14)) return 0;
  if ((op_table[op].caps & OP_INV_TEMP) && f->T != 0.0 && !(1.0 / f->T >= DBL_MIN && 1.0 / f->T <= DBL_MAX)) return 0;
  if (!run_dt[d] || !ops_op_wanted(op)) return 0;
  if (threaded_only) {
    int plan[MAX_THREADS];
    int rows_threaded = f->n > 0 && f->n <= ROWS_FORM_MAX && 3 * f->n >= ROWS_SPLIT_MIN;   /* rows_form */
    if (!rows_threaded && thread_plan(&op_table[op], f, (op_table[op].caps & OP_ALGOS) ? 4 : 1, 0, plan) < 2)
      return 0;
  }
  return (f->kind & want) != 0;
}

/* SMX_OPS_SHARD=i/n: this process runs shard i (from 0) of n, so that n
 * processes share the families (emulated targets run one process per core).
 * The families go to the shards largest first, each to the least loaded,
 * by an estimate of their work (the ops that run on them times the row
 * length); the bad-argument cases run in shard 0. Returns 0 on a malformed
 * value; mine[fi] gets 1 for the families of this process. */
static int shard_plan(const family *fams, size_t nf, const int *run_dt, unsigned char *mine) {
  const char *e = getenv("SMX_OPS_SHARD");
  unsigned si = 0, sn = 1;
  if (e && (sscanf(e, "%u/%u", &si, &sn) != 2 || sn == 0 || sn > 64 || si >= sn)) return 0;
  double load[64] = { 0 }, *w = calloc(nf ? nf : 1, sizeof(double));
  unsigned char *done = calloc(nf ? nf : 1, 1);
  if (!w || !done) { free(w); free(done); return 0; }
  for (size_t fi = 0; fi < nf; fi++) {
    size_t ops = 0;
    for (size_t op = 0; op < op_table_len; op++) ops += (size_t)op_runs(op, &fams[fi], run_dt);
    w[fi] = (double)ops * ((double)fams[fi].n + 256.0);
  }
  for (size_t k = 0; k < nf; k++) {
    size_t big = nf;
    for (size_t fi = 0; fi < nf; fi++)
      if (!done[fi] && (big == nf || w[fi] > w[big])) big = fi;
    unsigned to = 0;
    for (unsigned q = 1; q < sn; q++)
      if (load[q] < load[to]) to = q;
    load[to] += w[big];
    done[big] = 1;
    mine[big] = to == si;
  }
  double total = 0.0;
  for (unsigned q = 0; q < sn; q++) total += load[q];
  if (e) printf("SMX_OPS_SHARD=%u/%u: %.0f%% of the estimated work\n", si, sn, total > 0.0 ? 100.0 * load[si] / total : 0.0);
  free(w);
  free(done);
  return 1;
}

int main(int argc, char **argv) {
  unsigned part = PART_ALL;
  int soak = argc > 1 && !strcmp(argv[1], "soak");
  if (argc > 1 && !soak) {
    part = !strcmp(argv[1], "long-f32") ? PART_LONG_F32 : !strcmp(argv[1], "long-f64") ? PART_LONG_F64
         : !strcmp(argv[1], "families") ? PART_FAMILIES : 0;
    if (!part) {
      fprintf(stderr, "usage: test_ops [long-f32 | long-f64 | families | soak [--seconds S] [--seed S] [--case 0xSEED]]\n");
      return 2;
    }
  }
  size_t nf;
  family *fams = families_build(&nf);
  if (!fams) return 2;
  rep_init(op_table_len);
  levels_init();
  profiling = getenv("SMX_OPS_PROFILE") != NULL;
  quick = getenv("SMX_OPS_QUICK") && strcmp(getenv("SMX_OPS_QUICK"), "0") != 0;
  threaded_only = getenv("SMX_OPS_THREADED") && strcmp(getenv("SMX_OPS_THREADED"), "0") != 0;
  if (threaded_only) printf("SMX_OPS_THREADED: only the cases that call with more than one thread\n");
  const char *only = getenv("SMX_OPS_DTYPES");
  int run_dt[4] = { 1, 1, 1, 1 };
  if (only) {
    for (int d = 0; d < 4; d++) {
      const char *name = dt_name((dtype)d), *p = only;
      size_t ln = strlen(name);
      run_dt[d] = 0;
      while ((p = strstr(p, name)) != NULL) {
        if ((p == only || p[-1] == ',') && (p[ln] == ',' || p[ln] == 0)) run_dt[d] = 1;
        p += ln;
      }
    }
    printf("SMX_OPS_DTYPES=%s: only the rows of those input types\n", only);
  }
  if (soak) {
    free(fams);
    return ops_soak_main(argc - 1, argv + 1, run_dt);
  }
  printf("ops on");
  for (int lv = 0; lv < nlevels; lv++) printf(" %s", level_names[lv]);
  printf(": worst error per family over every row x kernel set x algorithm, as a fraction of the bound%s\n",
         quick ? " (SMX_OPS_QUICK: values checked on a sparse set of elements)" : "");
  /* first, while the process is small: each case forks */
  unsigned char *mine = calloc(nf ? nf : 1, 1);
  if (!mine || !shard_plan(fams, nf, run_dt, mine)) {
    fprintf(stderr, "SMX_OPS_SHARD must be i/n with 0 <= i < n <= 64\n");
    return 2;
  }
  const char *shard = getenv("SMX_OPS_SHARD");
  int first_shard = !shard || strncmp(shard, "0/", 2) == 0;
  rep_family("bad arguments");
  double tb = now();
  for (int lv = 0; lv < nlevels && (part & PART_FAMILIES) && first_shard && !getenv("SMX_OPS_FAMILY"); lv++) {
    smx_set_max_isa(levels[lv]);
    for (size_t op = 0; op < op_table_len; op++)
      if (run_dt[op_table[op].in_dt] && ops_op_wanted(op)) bad_args_run(op);
  }
  double bad_args_cpu = now() - tb;
  for (size_t fi = 0; fi < nf; fi++) {
    const family *f = &fams[fi];
    if (!(part_of(f) & part) || !mine[fi] || !family_wanted(f)) continue;
    double *x = malloc((f->n ? f->n : 1) * sizeof(double));
    if (!x) return 2;
    PROF(P_GEN, f->gen(0x5eed0000ull + fi * 7919u, x, f->n, f->a, f->b));
    fam_worst = 0;
    rep_family(f->name);
    double t0 = now();
    for (size_t op = 0; op < op_table_len; op++)
      if (op_runs(op, f, run_dt)) run_case(op, f, x);
    printf("%-34s %-4s n=%-9zu worst %6.3f  %6.2f cpu s\n", f->name,
           (f->kind & FAM_ALL) == FAM_ALL ? "all" : f->kind & FAM_F64 ? (f->kind & FAM_F32 ? "split" : "f64") : "f32", f->n, fam_worst, now() - t0);
    if (profiling) {
      printf("   ");
      for (int p = 0; p < P_N; p++) {
        printf(" %s %.2f", prof_names[p], prof[p]);
        prof_total[p] += prof[p];
        prof[p] = 0;
      }
      printf("\n");
    }
    fflush(stdout);
    free(x);
  }
  free(fams);
  free(mine);
  if (profiling) {
    printf("profile total:");
    for (int p = 0; p < P_N; p++) printf(" %s %.2f", prof_names[p], prof_total[p]);
    printf(" bad-args %.2f\n", bad_args_cpu);
  }
  return rep_summary(level_names, nlevels);
}
