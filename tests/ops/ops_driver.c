/*
 * The op test driver: every row of the op table (op_table.c) through every
 * row family (families.c) with inputs and outputs flush against guard pages,
 * every algorithm (for the ops that have a choice), thread counts 1..5 with
 * bitwise-equal outputs where a row can be split (thread_plan), the rows form with gaps between rows, the in-place
 * form, and the bad arguments (bad_args.c). The ISA is the one the library
 * picks: ctest runs this once per SMX_MAX_ISA value. Prints, per family, the
 * worst error over all rows in units of the bound, then the summary table.
 *
 * SMX_TEST_LONG_LOG2 sets the long N(0,1) row: 2^26 (f32) and 2^24 (f64) by
 * default; 0 leaves it out; 22 or less also leaves out the window edge row
 * (64 * 2^16 + 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "families.h"
#include "guard.h"
#include "op.h"
#include "report.h"

void bad_args_run(size_t op);

#define MAX_THREADS 5
#define ROWS_FORM_MAX ((size_t)1 << 17)   /* rows and in-place forms up to this length */

static const smx_algo algos[4] = { SMX_ALGO_AUTO, SMX_ALGO_THREE_PASS, SMX_ALGO_TWO_PASS, SMX_ALGO_ONLINE };
static const char *const algo_names[4] = { "auto", "three-pass", "two-pass", "online" };
static double fam_worst;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t out_elem_size(const op_row *r) { return r->shape == OUT_TOPK ? sizeof(float) : dt_size(r->out_dt); }
static size_t out_count(const op_row *r, size_t n) {
  return r->shape == OUT_ELEM ? n : r->shape == OUT_SCALAR ? 1 : op_k(n);
}
static size_t check_count(const op_row *r, size_t n) {
  return r->shape == OUT_ELEM ? n : r->shape == OUT_SCALAR ? 1 : 2 * op_k(n);
}

static long double actual(const op_row *r, const void *out, const int64_t *idx, size_t k, size_t i) {
  if (r->shape == OUT_TOPK) return i < k ? dt_get(DT_F32, out, i) : (long double)idx[i - k];
  return dt_get(r->out_dt, out, i);
}

/* The references of one case, computed once for its many checks when the row
 * is not too long for memory. The rows beyond REF_CACHE_MAX (the 2^26 / 2^24
 * rows, the window edge) compute them at each check: the first algorithm's
 * check reads every element, the others a sparse set (check_row), so a cache
 * would cost more than it saves. */
typedef struct refs {
  long double *ref, *aux;
} refs;
#define REF_CACHE_MAX ((size_t)1 << 22)
#define CHUNK_N ((size_t)1 << 16)   /* SMX_CHUNK of src/api/softmax_row.h */

static refs refs_make(size_t op, const ref_ctx *c) {
  const op_row *r = &op_table[op];
  size_t nc = check_count(r, c->n);
  refs v = { NULL, NULL };
  if (nc > REF_CACHE_MAX) return v;
  v.ref = malloc((nc + 1) * sizeof(long double));
  v.aux = malloc((nc + 1) * sizeof(long double));
  if (!v.ref || !v.aux) { perror("malloc"); exit(2); }
  for (size_t i = 0; i < nc; i++) v.ref[i] = r->ref_at(c, i, &v.aux[i]);
  return v;
}
static void refs_free(refs *v) { free(v->ref); free(v->aux); }

/* Compares one row's outputs with the reference; returns the number outside. */
/* sparse: the long rows' second and later algorithms, whose per-element error
 * (the exponential) the shorter rows already check at every element, and whose
 * length-dependent error (the sum over the row, a chunk's rescale) shows in
 * every element of the row or of the chunk: every 8th element, the first and
 * last 64 of each chunk and the row's last 64. */
static int sparse_keep(size_t i, size_t n) {
  size_t q = i % CHUNK_N;
  return (i & 7) == 0 || q < 64 || q >= CHUNK_N - 64 || i + 64 >= n;
}

static size_t check_row(size_t op, const ref_ctx *c, const refs *cache, const void *out, const int64_t *idx,
                        double *worst, int sparse) {
  const op_row *r = &op_table[op];
  dtype od = r->shape == OUT_TOPK ? DT_F32 : r->out_dt;
  dtype arith = od == DT_F64 ? DT_F64 : DT_F32;
  size_t bad = 0, nc = check_count(r, c->n);
  long double amax = dt_max(arith), omax = dt_max(od);
  for (size_t i = 0; i < nc; i++) {
    if (sparse && !sparse_keep(i, nc)) continue;
    long double aux, ref = cache->ref ? (aux = cache->aux[i], cache->ref[i]) : r->ref_at(c, i, &aux);
    long double y = actual(r, out, idx, c->k, i);
    double b = r->bound(c, od, i, ref, aux);
    /* the stored reference is only needed when exact or at the range's end (rounding within it is finite) */
    int need_stored = b < 0 || isinf(ref) || fabsl(ref) > omax;
    long double stored = need_stored ? dt_round(od, ref) : ref;
    int ok;
    if (ref != ref) ok = y != y;
    else if ((r->caps & OP_SATURATES) && !isinf(ref) && fabsl(ref) > amax)
      ok = y == dt_round(od, copysignl(amax, ref));   /* saturated in the arithmetic, then stored */
    else if (b < 0 || isinf(ref) || (need_stored && isinf(stored))) ok = y == stored;   /* exact, or beyond the range: its rounding */
    else if (ref == 0 && (r->caps & OP_SIGNED_ZERO)) ok = y == 0 && !signbit((double)y);
    else {
      double err = (double)fabsl(y - ref);
      ok = err <= b;
      if (b > 0 && err / b > *worst) *worst = err / b;
    }
    if ((r->caps & OP_NONNEG) && (r->shape != OUT_TOPK || i < c->k) && y < 0) ok = 0;
    if (!ok && ++bad <= 2)
      fprintf(stderr, "  element %zu: got %.21Lg, reference %.21Lg, bound %.3g\n", i, y, ref, b);
  }
  return bad;
}

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

/* The rows form: three copies of the row with gaps between them, one and three
 * threads; every row against the reference, the gaps untouched. */
static void rows_form(size_t op, const family *f, const ref_ctx *c, const refs *cache, const bufs *one,
                      const int64_t *target) {
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
  for (int threads = 1; threads <= 3; threads += 2) {
    smx_options o = { SMX_ALGO_AUTO, f->T, f->flags, threads };
    op_call cl;
    memset(&cl, 0, sizeof cl);
    for (int j = 0; j < r->n_in; j++) { cl.in[j] = in[j].p; cl.ld_in[j] = ldi; }
    memset(out.p, 0xa5, ocount * oes);
    cl.out = out.p;
    cl.ld_out = ldo;
    cl.idx = idx.p;
    cl.targets = targets;
    cl.rows = R;
    cl.cols = n;
    cl.k = k;
    cl.opt = &o;
    smx_status s = r->rows(&cl);
    rep_check(op, s == SMX_OK, "%s rows form threads=%d: status %d", f->name, threads, (int)s);
    size_t bad = 0, gaps = 0;
    double w = 0;
    for (size_t q = 0; q < R; q++) {
      const char *o_row = (const char *)out.p + q * (r->shape == OUT_ELEM ? ldo : out_count(r, n)) * oes;
      bad += check_row(op, c, cache, o_row, (const int64_t *)idx.p + q * k, &w, 0);
      if (r->shape == OUT_ELEM && q + 1 < R)
        for (size_t g = n * oes; g < ldo * oes; g++) gaps += ((const unsigned char *)o_row)[g] != 0xa5;
    }
    rep_ratio(op, w);
    rep_check(op, bad == 0 && gaps == 0, "%s rows form threads=%d: %zu outside the bound, %zu gap bytes written",
              f->name, threads, bad, gaps);
    if (threads == 1) memcpy(first, out.p, ocount * oes);
    else rep_check(op, memcmp(first, out.p, ocount * oes) == 0, "%s rows form: 1 and 3 threads differ", f->name);
  }
  free(first);
  for (int j = 0; j < r->n_in; j++) guard_free(in[j]);
  guard_free(out);
  guard_free(idx);
}

/* out == in[r->inplace]: bitwise the result of the separate output */
static void in_place(size_t op, const family *f, const bufs *b, const void *expect, const int64_t *target) {
  const op_row *r = &op_table[op];
  size_t n = f->n, es = dt_size(r->in_dt);
  bufs w = bufs_alloc(r, n, 0);
  for (int j = 0; j < r->n_in; j++) memcpy(w.in[j].p, b->in[j].p, n * es);
  guard alias = w.in[r->inplace];
  guard_free(w.out);
  w.out = alias;   /* the output is the input */
  smx_options o = { SMX_ALGO_AUTO, f->T, f->flags, 1 };
  smx_status s = call(r, &w, n, target, &o);
  rep_check(op, s == SMX_OK && memcmp(alias.p, expect, n * es) == 0, "%s in place: status %d or result differs",
            f->name, (int)s);
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

/* Thread counts: a single row is only split across threads when it spans
 * chunks (n > SMX_CHUNK = 2^16), so the full 1..5 sweep runs on the
 * chunk-split rows and on a few short lengths (to show that a thread count
 * is harmless there), at the first algorithm (auto); the other algorithms run
 * 1 and 3 threads on the chunk-split rows, 1 thread elsewhere. The rows
 * beyond 2^22 (the 2^26 / 2^24 rows, the window edge) run each algorithm at
 * one thread count, checked against the reference; ops without a choice of
 * algorithm run 1 and 5 threads there. */
static int sweep_length(size_t n) { return n > CHUNK_N || n <= 1 || n == 33 || n == 65 || n == 4103; }
static int thread_plan(const family *f, int nalgo, int a, int *list) {
  size_t n = f->n;
  if (n > REF_CACHE_MAX) {
    static const int one[4] = { 1, 2, 5, 3 };
    if (nalgo > 1) { list[0] = one[a]; return 1; }
    list[0] = 1; list[1] = 5; return 2;
  }
  if (!sweep_length(n)) { list[0] = 1; return 1; }
  if (a == 0) { for (int t = 0; t < MAX_THREADS; t++) list[t] = t + 1; return MAX_THREADS; }
  if (n > CHUNK_N) { list[0] = 1; list[1] = 3; return 2; }
  list[0] = 1;
  return 1;
}

static void run_case(size_t op, const family *f, const double *x) {
  const op_row *r = &op_table[op];
  size_t n = f->n, k = op_k(n);
  size_t obytes = out_count(r, n) * out_elem_size(r), ibytes = k * sizeof(int64_t);
  int64_t target = op_target(n);
  smx_options o = { SMX_ALGO_AUTO, f->T, f->flags, 1 };
  bufs b = bufs_alloc(r, n, 0);
  if (r->prepare) r->prepare(x, n, &o, r->in_dt, b.in[0].p, r->n_in > 1 ? b.in[1].p : NULL);
  else for (size_t i = 0; i < n; i++) dt_put(r->in_dt, b.in[0].p, i, x[i]);

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
  ref_row_shared(r, f, &c);
  refs cache = refs_make(op, &c);

  int empty_refused = n == 0 && (r->caps & OP_EMPTY_INVALID);
  int nalgo = (r->caps & OP_ALGOS) ? 4 : 1;
  unsigned char *first = malloc(obytes + 1), *auto1 = malloc(obytes + 1);
  int64_t *first_idx = malloc(ibytes + 8);
  for (int a = 0; a < nalgo; a++) {
    int plan[MAX_THREADS], np = thread_plan(f, nalgo, a, plan);
    for (int ti = 0; ti < np; ti++) {
      int threads = plan[ti];
      o.algo = algos[a];
      o.threads = threads;
      memset(b.out.p, 0xa5, obytes);
      smx_status s = call(r, &b, n, &target, &o);
      if (empty_refused) {
        rep_check(op, s == SMX_E_INVALID_ARG, "%s: empty row gave status %d", f->name, (int)s);
        continue;
      }
      if (s != SMX_OK) {
        rep_check(op, 0, "%s %s threads=%d: status %d", f->name, algo_name(algos[a]), threads, (int)s);
        continue;
      }
      if (ti == 0) {
        double w = 0;
        size_t bad = check_row(op, &c, &cache, b.out.p, b.idx.p, &w, a > 0 && n > REF_CACHE_MAX);
        rep_ratio(op, w);
        if (w > fam_worst) fam_worst = w;
        rep_check(op, bad == 0, "%s %s threads=%d: %zu outputs outside the bound (worst %.3g of it)", f->name,
                  algo_name(algos[a]), threads, bad, w);
        memcpy(first, b.out.p, obytes);
        memcpy(first_idx, b.idx.p, ibytes);
        if (a == 0) memcpy(auto1, b.out.p, obytes);
      } else {
        rep_check(op, memcmp(first, b.out.p, obytes) == 0 && memcmp(first_idx, b.idx.p, ibytes) == 0,
                  "%s %s: threads=%d differs from threads=%d", f->name, algo_name(algos[a]), threads, plan[0]);
      }
    }
    /* the same inputs flush against the leading guard page */
    if ((f->kind & FAM_EDGES) && !empty_refused) {
      bufs s = bufs_alloc(r, n, 1);
      for (int j = 0; j < r->n_in; j++) memcpy(s.in[j].p, b.in[j].p, n * dt_size(r->in_dt));
      o.threads = 1;
      smx_status st = call(r, &s, n, &target, &o);
      rep_check(op, st == SMX_OK && memcmp(first, s.out.p, obytes) == 0 && memcmp(first_idx, s.idx.p, ibytes) == 0,
                "%s %s: leading-guard placement status %d or result differs", f->name, algo_name(algos[a]), (int)st);
      bufs_free(r, &s);
    }
  }
  if (n > 0 && n <= ROWS_FORM_MAX && !empty_refused) {
    rows_form(op, f, &c, &cache, &b, &target);
    if (r->inplace >= 0) in_place(op, f, &b, auto1, &target);
  }
  refs_free(&cache);
  free(first);
  free(auto1);
  free(first_idx);
  bufs_free(r, &b);
}

int main(void) {
  size_t nf;
  family *fams = families_build(&nf);
  if (!fams) return 2;
  rep_init(op_table_len);
  printf("ops on %s: worst error per family over every row x algorithm, as a fraction of the bound\n", smx_isa());
  for (size_t fi = 0; fi < nf; fi++) {
    const family *f = &fams[fi];
    double *x = malloc((f->n ? f->n : 1) * sizeof(double));
    if (!x) return 2;
    f->gen(0x5eed0000ull + fi * 7919u, x, f->n, f->a, f->b);
    fam_worst = 0;
    rep_family(f->name);
    double t0 = now();
    for (size_t op = 0; op < op_table_len; op++) {
      dtype d = op_table[op].in_dt;
      unsigned want = d == DT_F64 ? FAM_F64 : d == DT_F32 ? FAM_F32 : FAM_HALF;
      if ((f->kind & FAM_LONG) && !(op_table[op].caps & OP_ALGOS)) continue;
      if (f->kind & want) run_case(op, f, x);
    }
    printf("%-34s %-4s n=%-9zu worst %6.3f  %6.2f s\n", f->name,
           (f->kind & FAM_ALL) == FAM_ALL ? "all" : f->kind & FAM_F64 ? (f->kind & FAM_F32 ? "split" : "f64") : "f32", f->n, fam_worst, now() - t0);
    fflush(stdout);
    free(x);
  }
  free(fams);
  rep_family("bad arguments");
  for (size_t op = 0; op < op_table_len; op++) bad_args_run(op);
  return rep_summary(smx_isa());
}
