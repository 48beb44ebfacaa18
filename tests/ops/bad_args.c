/*
 * Bad arguments, for every row of the op table: NULL pointers with work to do,
 * a leading dimension below cols, outputs that overlap an input other than
 * exactly, bad temperatures, and counts near SIZE_MAX on small real buffers.
 * Each must give a non-OK status and leave every buffer as it was.
 * (tests/unit/test_huge_sizes.c covers the public functions outside the table.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "op.h"
#include "report.h"

#define BUF 64

typedef struct arena {
  guard in[2], out, idx;
  unsigned char snap[4][BUF * 8];
} arena;

static void arm(arena *a, const op_row *r) {
  for (size_t i = 0; i < BUF; i++) {
    dt_put(r->in_dt, a->in[0].p, i, (long double)(i % 5));
    dt_put(r->in_dt, a->in[1].p, i, 0.25L);
  }
  memset(a->out.p, 0xa5, BUF * 8);
  memset(a->idx.p, 0xa5, BUF * 8);
  memcpy(a->snap[0], a->in[0].p, BUF * 8);
  memcpy(a->snap[1], a->in[1].p, BUF * 8);
  memcpy(a->snap[2], a->out.p, BUF * 8);
  memcpy(a->snap[3], a->idx.p, BUF * 8);
}

static int untouched(const arena *a) {
  return !memcmp(a->snap[0], a->in[0].p, BUF * 8) && !memcmp(a->snap[1], a->in[1].p, BUF * 8) &&
         !memcmp(a->snap[2], a->out.p, BUF * 8) && !memcmp(a->snap[3], a->idx.p, BUF * 8);
}

static const int64_t zeros[BUF];

/* a sane call on the arena: rows x cols, dense */
static op_call base(const op_row *r, arena *a, size_t rows, size_t cols, const smx_options *o) {
  op_call c;
  memset(&c, 0, sizeof c);
  for (int j = 0; j < r->n_in; j++) { c.in[j] = a->in[j].p; c.ld_in[j] = cols; }
  c.out = a->out.p;
  c.ld_out = cols;
  c.idx = a->idx.p;
  c.targets = zeros;
  c.rows = rows;
  c.cols = cols;
  c.k = 1;
  c.opt = o;
  return c;
}

/* Runs in a child process, so that a check that reads past the buffers (a
 * size test that wraps) is reported as a failure instead of ending the run. */
/* Bytes spanned by rows x cols with leading dimension ld (long double: no wrap). */
static long double span(size_t rows, size_t cols, size_t ld, size_t es) {
  return ((long double)(rows - 1) * (long double)ld + (long double)cols) * (long double)es;
}

static void expect_refused(size_t op, arena *a, op_call c, int one_row, const char *what) {
  const op_row *r = &op_table[op];
  if (c.rows > BUF || c.cols > BUF || c.ld_in[0] > BUF || c.ld_out > BUF) {
    /* A huge count must be refused when its span cannot exist (beyond PTRDIFF_MAX bytes), the rule of
     * tests/unit/test_huge_sizes.c; a smaller span is the caller's word about its buffer. */
    size_t oes = r->shape == OUT_ELEM ? dt_size(r->out_dt) : 4;
    long double in = span(c.rows, c.cols, c.ld_in[0], dt_size(r->in_dt));
    long double out = r->shape == OUT_ELEM ? span(c.rows, c.cols, c.ld_out, oes) : (long double)c.rows * 8;
    if (in <= (long double)PTRDIFF_MAX && out <= (long double)PTRDIFF_MAX) return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    smx_status s = one_row && r->row ? r->row(&c) : r->rows(&c);
    _exit(s == SMX_OK ? 10 : untouched(a) ? 0 : 11);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) { perror("fork"); exit(2); }
  int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  rep_check(op, ok, "%s%s (rows=%zu cols=%zu ld=%zu): %s", what, one_row ? " (one-row form)" : "", c.rows, c.cols,
            c.ld_in[0],
            WIFSIGNALED(st) ? "crashed" : WEXITSTATUS(st) == 10 ? "accepted" : WEXITSTATUS(st) == 11 ? "buffers written" : "refused");
}

void bad_args_run(size_t op) {
  const op_row *r = &op_table[op];
  arena a;
  /* flush against the trailing guard: reading past what the sizes allow faults */
  a.in[0] = guard_alloc(BUF * 8, 0);
  a.in[1] = guard_alloc(BUF * 8, 0);
  a.out = guard_alloc(BUF * 8, 0);
  a.idx = guard_alloc(BUF * 8, 0);
  arm(&a, r);
  smx_options o = { SMX_ALGO_AUTO, 0, 0, 1, NULL };
  size_t es = dt_size(r->in_dt);
  op_call c;

  for (int one = 0; one <= 1; one++) {
    size_t rows = one ? 1 : 2;
    c = base(r, &a, rows, 8, &o); c.in[0] = NULL; expect_refused(op, &a, c, one, "NULL input");
    if (!(r->caps & OP_OPTIONAL_OUT)) {
      c = base(r, &a, rows, 8, &o); c.out = NULL; expect_refused(op, &a, c, one, "NULL output");
    }
    if (r->n_in > 1) { c = base(r, &a, rows, 8, &o); c.in[1] = NULL; expect_refused(op, &a, c, one, "NULL dy"); }
    if (r->shape == OUT_TOPK) {
      c = base(r, &a, rows, 8, &o); c.idx = NULL; expect_refused(op, &a, c, one, "NULL indices");
      c = base(r, &a, rows, 8, &o); c.k = 9; expect_refused(op, &a, c, one, "k > n");
    }
    /* an output that starts one element into the input (the input is writable here) */
    c = base(r, &a, rows, 8, &o);
    c.out = (char *)a.in[0].p + es;
    expect_refused(op, &a, c, one, "output overlapping the input");
    static const double temps[3] = { -1.0, NAN, INFINITY };
    for (int t = 0; t < 3 && !(r->caps & OP_NO_TEMP); t++) {
      smx_options bt = { SMX_ALGO_AUTO, temps[t], 0, 1, NULL };
      c = base(r, &a, rows, 8, &bt);
      expect_refused(op, &a, c, one, t == 0 ? "temperature -1" : t == 1 ? "temperature NaN" : "temperature inf");
    }
    static const size_t huge[4] = { SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 + 2, SIZE_MAX / 16 + 1 };
    for (int h = 0; h < 4; h++) {
      c = base(r, &a, 1, huge[h], &o);
      c.ld_out = r->shape == OUT_ELEM ? huge[h] : 0;
      expect_refused(op, &a, c, one, "huge cols");
      if (!one) {
        c = base(r, &a, huge[h], 4, &o);
        expect_refused(op, &a, c, 0, "huge rows");
        c = base(r, &a, huge[h], 16, &o);
        expect_refused(op, &a, c, 0, "huge rows x 16");
        c = base(r, &a, 2, 4, &o);
        for (int j = 0; j < r->n_in; j++) c.ld_in[j] = huge[h];
        expect_refused(op, &a, c, 0, "huge ld");
      }
    }
  }
  c = base(r, &a, 2, 8, &o); c.ld_in[0] = 7; expect_refused(op, &a, c, 0, "ld < cols");
  if (r->shape == OUT_ELEM) { c = base(r, &a, 2, 8, &o); c.ld_out = 7; expect_refused(op, &a, c, 0, "output ld < cols"); }
  for (int j = 0; j < 4; j++) guard_free(j < 2 ? a.in[j] : j == 2 ? a.out : a.idx);
}
