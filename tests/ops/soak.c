/*
 * The op driver's soak mode (`test_ops soak`): random calls of the table's
 * rows forms instead of the fixed families. Each case, from one 64-bit seed:
 * a table row (every variant, backward pass, top-k, cross-entropy row of
 * op_table.c), 1..6 rows of 0..70000 columns, padded leading dimensions,
 * a temperature and flags where the row allows them, a kernel set, and rows
 * of values from a mixture of generators: ordinary, shifted far negative
 * (to -1e4: issue 24's softplus_l1 rows) or positive, huge, tiny and
 * subnormal, ties, spikes, -inf masks, all -inf, NaN and +inf sprinkled.
 * The call runs at 1, 2 and 7 threads (bitwise equal), every row checked
 * against the table's long-double reference and documented bound, the gaps
 * between rows untouched, the buffers flush against guard pages. One case in
 * eight is a bad argument instead (NULL input or output, a leading
 * dimension below cols, a bad temperature, flag or algorithm, negative
 * threads): SMX_E_INVALID_ARG and nothing written.
 *
 *   test_ops soak [--seconds S] [--seed S] [--case 0xSEED]
 *
 * SMX_SOAK_SECONDS sets the time when --seconds is not given (default 15).
 * The run prints its seed, each failing case its description and the line
 * that replays it alone; SMX_OPS_ONLY and SMX_OPS_DTYPES select table rows
 * as in the other modes.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/soak_run.h"
#include "guard.h"
#include "op.h"
#include "report.h"
#include "soak.h"

static double uin(tu_rng *r, double lo, double hi) { return lo * (1 - tu_uniform(r)) + hi * tu_uniform(r); }

/* One row of n values for storage type dt; kind names the generator for the report. */
static const char *gen_row(tu_rng *r, dtype dt, double *x, size_t n) {
  double big = dt == DT_F64 ? 1e300 : dt == DT_F16 ? 6e4 : 3e38;
  double tiny = dt == DT_F64 ? 1e-310 : dt == DT_F16 ? 1e-7 : 1e-40;
  const char *kind;
  switch (tu_below(r, 10)) {
    case 0: case 1: {
      double s = pow(10.0, uin(r, -2, 1.5));
      for (size_t i = 0; i < n; i++) x[i] = tu_gauss(r) * s;
      kind = "normal";
      break;
    }
    case 2: {   /* far negative (softplus_l1 on [-90, -91], [-800, -801]: issue 24 item 3) or far positive */
      double off = (tu_chance(r, 0.7) ? -1 : 1) * pow(10.0, uin(r, 1, dt == DT_F16 ? 3.5 : 4));
      double s = tu_chance(r, 0.5) ? 1 : uin(r, 0.01, 3);
      for (size_t i = 0; i < n; i++) x[i] = off + tu_gauss(r) * s;
      kind = "shifted";
      break;
    }
    case 3:
      for (size_t i = 0; i < n; i++) x[i] = uin(r, -1, 1) * (tu_chance(r, 0.2) ? big : 1);
      kind = "huge";
      break;
    case 4:
      for (size_t i = 0; i < n; i++) x[i] = tu_gauss(r) * tiny * pow(10.0, uin(r, 0, 3));
      kind = "tiny";
      break;
    case 5: {   /* ties and near-ties */
      double v = tu_gauss(r) * 3;
      for (size_t i = 0; i < n; i++) x[i] = tu_chance(r, 0.6) ? v : v - (double)tu_below(r, 4) * 0.5;
      kind = "ties";
      break;
    }
    case 6: {   /* a spike over a flat row */
      double s = uin(r, 1, 200);
      for (size_t i = 0; i < n; i++) x[i] = tu_gauss(r) * 0.1;
      if (n) x[tu_below(r, n)] = s;
      kind = "spike";
      break;
    }
    case 7: {   /* -inf masks, sometimes the whole row */
      int all = tu_chance(r, 0.2);
      double p = uin(r, 0.2, 0.9);
      for (size_t i = 0; i < n; i++) x[i] = all || tu_chance(r, p) ? -INFINITY : tu_gauss(r);
      kind = all ? "all -inf" : "-inf mask";
      break;
    }
    default: {   /* special values sprinkled */
      for (size_t i = 0; i < n; i++) x[i] = tu_gauss(r) * 2;
      size_t k = 1 + tu_below(r, 3);
      for (size_t j = 0; j < k && n; j++) {
        size_t w = tu_below(r, 3);
        x[tu_below(r, n)] = w == 0 ? NAN : w == 1 ? INFINITY : -INFINITY;
      }
      kind = "specials";
      break;
    }
  }
  return kind;
}

static size_t out_elem(const op_row *r) { return dt_size(r->out_dt); }   /* OUT_TOPK: its values' type */
/* outputs of one row, in elements (OUT_ELEM: the row; SCALAR: 1; TOPK: k) */
static size_t out_per_row(const op_row *r, size_t n) { return r->shape == OUT_ELEM ? n : r->shape == OUT_SCALAR ? 1 : op_k(n); }

static const smx_isa_level *levels;
static int nlevels;
static long cases, fails, bad_cases;
static char desc[512];
static uint64_t cur;

static const op_row *cur_row;
/* --row NAME:DTYPE: the case's row, whatever its seed picks. A seed picks its row by place in op_table, so
 * every row added to the table moved the old cases onto other rows (the replays in ctest then checked
 * something else and passed); the replay line names the row, which keeps it. The seed's other draws are the
 * same, as the row is the one it failed on. */
static const char *pinned;

static void fail_case(void) {
  fails++;
  fprintf(stderr, "FAIL soak case 0x%016" PRIx64 ": %s\n  replay: test_ops soak --case 0x%016" PRIx64 " --row %s:%s\n",
          cur, desc, cur, cur_row->name, dt_name(cur_row->in_dt));
}

/* the row that --row names, or op_table_len */
static size_t pinned_row(void) {
  for (size_t i = 0; i < op_table_len; i++) {
    size_t len = strlen(op_table[i].name);
    if (!strncmp(pinned, op_table[i].name, len) && pinned[len] == ':' && !strcmp(pinned + len + 1, dt_name(op_table[i].in_dt)))
      return i;
  }
  return op_table_len;
}

static void soak_case(uint64_t seed, const int *run_dt) {
  tu_rng r = { seed };
  cur = seed;
  size_t op = tu_below(&r, op_table_len);
  if (pinned) op = pinned_row();
  if (op == op_table_len) {
    fprintf(stderr, "test_ops soak: --row %s: no such row (NAME:DTYPE, e.g. sdpo_grad:f64)\n", pinned);
    fails++;
    return;
  }
  const op_row *row = &op_table[op];
  cur_row = row;
  if (!run_dt[row->in_dt] || !ops_op_wanted(op)) return;
  cases++;
  long fails_before = rep_failures();
  int lv = (int)tu_below(&r, (size_t)nlevels);
  smx_set_max_isa(levels[lv]);
  size_t R = 1 + tu_below(&r, 6), n;
  double u = tu_uniform(&r);
  n = u < 0.1 ? tu_below(&r, 5) : u < 0.6 ? 1 + tu_below(&r, 80) : u < 0.9 ? 80 + tu_below(&r, 3000) : 3000 + tu_below(&r, 67000);
  if (n * R > 140000) R = 1;
  if (n == 0 && (row->caps & OP_EMPTY_INVALID)) n = 1;
  static const double temps[] = { 0, 0, 0, 1, 0.5, 2, 0.01, 30, 1e-6 };
  double T = (row->caps & OP_UNIT_TEMP) ? 0 : temps[tu_below(&r, sizeof temps / sizeof temps[0])];
  uint32_t flags = tu_chance(&r, 0.25) ? SMX_FLAG_MASKED_ROW_NAN : 0;
  smx_algo algo = (row->caps & OP_ALGOS) ? (smx_algo)tu_below(&r, 4) : SMX_ALGO_AUTO;
  size_t pad_in = tu_chance(&r, 0.5) ? tu_below(&r, 9) : 0, pad_out = tu_chance(&r, 0.5) ? tu_below(&r, 9) : 0;
  size_t ldi = n + pad_in, ldo = row->shape == OUT_ELEM ? n + pad_out : 0;
  size_t es = dt_size(row->in_dt), oes = out_elem(row), k = op_k(n);
  size_t ocount = row->shape == OUT_ELEM ? (R - 1) * ldo + n : R * out_per_row(row, n);
  size_t icount = (R - 1) * ldi + n;
  char kinds[128] = "";
  /* inputs: each row made on its own (prepare builds y and dy of a backward pass), then placed */
  guard in[2];
  for (int j = 0; j < row->n_in; j++) {
    in[j] = guard_alloc(icount * es, 0);
    memset(in[j].p, 0x7f, icount * es);
  }
  double *x = malloc((n + 1) * sizeof *x);
  unsigned char *rowbuf[2] = { malloc(n * es + 16), malloc(n * es + 16) };
  ref_ctx *ctx = calloc(R, sizeof *ctx);
  unsigned char **copies = calloc(R * 2, sizeof *copies);
  if (!x || !rowbuf[0] || !rowbuf[1] || !ctx || !copies) { perror("malloc"); exit(2); }
  smx_options o = { algo, T, flags, 1, NULL };
  for (size_t q = 0; q < R; q++) {
    const char *kd = gen_row(&r, row->in_dt, x, n);
    size_t l = strlen(kinds);
    snprintf(kinds + l, sizeof kinds - l, "%s%s", q ? "," : "", kd);
    if (row->prepare) row->prepare(x, n, &o, row->in_dt, rowbuf[0], row->n_in > 1 ? rowbuf[1] : NULL);
    else for (size_t i = 0; i < n; i++) dt_put(row->in_dt, rowbuf[0], i, x[i]);
    for (int j = 0; j < row->n_in; j++) {
      memcpy((char *)in[j].p + q * ldi * es, rowbuf[j], n * es);
      copies[q * 2 + (size_t)j] = malloc(n * es + 1);
      memcpy(copies[q * 2 + (size_t)j], rowbuf[j], n * es);
    }
    ref_ctx *c = &ctx[q];
    c->dt = row->in_dt;
    c->in[0] = copies[q * 2];
    c->in[1] = row->n_in > 1 ? copies[q * 2 + 1] : NULL;
    c->n = n;
    c->k = k;
    c->target = op_target(n);
    c->T = T != 0 ? (long double)T : 1.0L;
    c->flags = flags;
    c->row = q;
    row->ref_row(c);
  }
  snprintf(desc, sizeof desc, "%s %s isa=%d rows=%zu cols=%zu ldi=%zu ldo=%zu T=%g flags=%u algo=%d values=%s",
           row->name, dt_name(row->in_dt), lv, R, n, ldi, ldo, T, (unsigned)flags, (int)algo, kinds);
  rep_family(strstr(kinds, "shifted") ? "soak shifted" : "soak");
  int64_t *targets = malloc((R + 1) * sizeof *targets);
  for (size_t q = 0; q < R; q++) targets[q] = op_target(n);
  guard out = guard_alloc(ocount * oes, 0), idx = guard_alloc(R * k * sizeof(int64_t), 0);
  unsigned char *first = malloc(ocount * oes + 1), *first_idx = malloc(R * k * sizeof(int64_t) + 1);
  op_call cl = { .out = out.p, .ld_out = ldo, .idx = idx.p, .targets = targets, .rows = R, .cols = n, .k = k,
                 .opt = &o };
  for (int j = 0; j < row->n_in; j++) { cl.in[j] = in[j].p; cl.ld_in[j] = ldi; }
  int failed = 0;

  if (tu_chance(&r, 0.125)) {   /* a bad argument: refused, nothing written */
    smx_options bo = o;
    const char *what;
    switch (tu_below(&r, 7)) {
      case 0: cl.in[0] = NULL; what = "NULL input"; break;
      case 1:
        /* (the xent_loss adapters keep the loss in the output: a NULL one is their own SMX_E_NOMEM) */
        if ((row->caps & OP_OPTIONAL_OUT) || !strncmp(row->name, "xent", 4)) { cl.in[0] = NULL; what = "NULL input"; }
        else { cl.out = NULL; what = "NULL output"; }
        break;
      case 2: cl.ld_in[0] = n ? n - 1 : 0; what = "ld < cols"; if (!n || R < 2) { bo.temperature = -1; what = "temperature -1"; } break;
      case 3: bo.temperature = tu_chance(&r, 0.5) ? NAN : INFINITY; what = "temperature NaN / inf"; break;
      case 4: bo.temperature = -uin(&r, 0.1, 10); what = "negative temperature"; break;
      /* (OP_NO_TEMP rows: the adapter sets the temperature itself; the two above are then not bad) */
      case 5: bo.threads = -1 - (int)tu_below(&r, 4); what = "negative threads"; break;
      default: bo.algo = (smx_algo)(4 + tu_below(&r, 10)); what = "unknown algorithm"; break;
    }
    /* rows with nothing to do may legitimately accept */
    int nothing = R == 0 || n == 0;   /* (empty rows: no pointer is read; the header's NULL rule is for work to do) */
    if (!strcmp(what, "unknown algorithm") && !(row->caps & OP_ALGOS)) nothing = 1;   /* ignored where there is no choice */
    if (!strcmp(what, "negative threads")) nothing = 1;
    if ((row->caps & OP_NO_TEMP) && strstr(what, "temperature")) nothing = 1;   /* the header does not say (0 or 1: the calling thread) */
    cl.opt = &bo;
    memset(out.p, 0xa5, ocount * oes);
    smx_status s = row->rows(&cl);
    size_t written = 0;
    for (size_t i = 0; i < ocount * oes; i++) written += ((unsigned char *)out.p)[i] != 0xa5;
    if (!nothing && (s != SMX_E_INVALID_ARG || written)) {
      fprintf(stderr, "  %s: status %d (want SMX_E_INVALID_ARG), %zu bytes written\n", what, (int)s, written);
      rep_check(op, 0, "soak bad argument: %s", what);
      failed = 1;
    }
    bad_cases++;
  } else {
    static const int th[3] = { 1, 2, 7 };
    for (int t = 0; t < 3 && !failed; t++) {
      o.threads = th[t];
      memset(out.p, 0xa5, ocount * oes);
      memset(idx.p, 0xa5, R * k * sizeof(int64_t));
      smx_status s = row->rows(&cl);
      if (s != SMX_OK) {
        rep_check(op, 0, "soak threads=%d: status %d", th[t], (int)s);
        failed = 1;
        break;
      }
      if (t == 0) {
        size_t bad = 0, gaps = 0;
        double w = 0;
        for (size_t q = 0; q < R; q++) {
          const unsigned char *orow = (const unsigned char *)out.p + q * (row->shape == OUT_ELEM ? ldo : out_per_row(row, n)) * oes;
          bad += ops_check_row(op, &ctx[q], orow, (const int64_t *)idx.p + q * k, &w);
          if (row->shape == OUT_ELEM && q + 1 < R)
            for (size_t g = n * oes; g < ldo * oes; g++) gaps += orow[g] != 0xa5;
        }
        rep_ratio(op, w);
        rep_check(op, bad == 0 && gaps == 0, "soak: %zu outputs outside the bound (worst %.3g of it), %zu gap bytes written",
                  bad, w, gaps);
        failed |= bad != 0 || gaps != 0;
        memcpy(first, out.p, ocount * oes);
        memcpy(first_idx, idx.p, R * k * sizeof(int64_t));
      } else if (memcmp(first, out.p, ocount * oes) != 0 || memcmp(first_idx, idx.p, R * k * sizeof(int64_t)) != 0) {
        rep_check(op, 0, "soak: threads=%d differs from 1 thread", th[t]);
        failed = 1;
      }
    }
  }
  if (failed && rep_failures() > fails_before) fail_case();
  for (int j = 0; j < row->n_in; j++) guard_free(in[j]);
  guard_free(out);
  guard_free(idx);
  for (size_t i = 0; i < R * 2; i++) free(copies[i]);
  free(copies); free(ctx); free(x); free(rowbuf[0]); free(rowbuf[1]); free(targets); free(first); free(first_idx);
}

int ops_soak_main(int argc, char **argv, const int *run_dt) {
  tu_soak_args a = TU_SOAK_ARGS_INIT;
  for (int i = 1; i < argc; i++) {
    if (tu_soak_arg(&a, argc, argv, &i)) continue;
    if (!strcmp(argv[i], "--row") && i + 1 < argc && a.have_one) pinned = argv[++i];
    else {
      fprintf(stderr, "usage: test_ops soak [--seconds S] [--seed S] [--case 0xSEED [--row NAME:DTYPE]]\n");
      return 2;
    }
  }
  tu_soak_defaults(&a);
  nlevels = ops_levels(&levels);
  if (a.have_one) {
    soak_case(a.one, run_dt);
    if (!fails) printf("case 0x%016" PRIx64 ": %s: passed\n", a.one, desc);
  } else {
    printf("test_ops soak: seed 0x%016" PRIx64 ", %.0f s (replay the run: --seed 0x%016" PRIx64 ")\n", a.seed, a.seconds, a.seed);
    fflush(stdout);
    uint64_t s;
    for (tu_soak_loop l = tu_soak_loop_start(&a); tu_soak_loop_next(&l, &s);) soak_case(s, run_dt);
  }
  smx_set_max_isa(levels[nlevels - 1]);
  printf("test_ops soak: %ld cases (%ld bad arguments), %ld failed\n", cases, bad_cases, fails);
  return rep_summary(ops_level_names(), nlevels) | (fails ? 1 : 0);
}
