/*
 * smx xent LOGITS --targets TARGETS [-o LOSS] [--grad GRAD] [options]
 *
 * Cross-entropy of logits (the class axis: default the last) against integer
 * targets, with the library's fused cross-entropy. The targets (the logits'
 * shape without the class axis) are read and checked whole first, so a bad
 * target is reported before anything is computed; the logits are then
 * streamed by the engine, which writes the row losses (--reduction none)
 * and the gradient (the logits' shape) through temporary files renamed only
 * when everything succeeded. Mean and sum are reduced in double, in row
 * order, so the result does not depend on the block size or the thread
 * count. LOGITS and TARGETS are .npy, CSV or TSV; either may be - for stdin.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/job.h"
#include "cli/message.h"
#include "commands.h"
#include "xent_targets.h"
#include "smx/smx.h"

typedef struct xent_ctx {
  const int64_t *t;        /* the targets, by C-order row number */
  cli_row_order ro;
  smx_options bo;          /* the options of each block's call, with be as their loss extension */
  smx_loss_ext be;
  int grad;
  double total;            /* the sum of the row losses, in row order */
  int64_t *scratch;        /* the targets of one block, when rows are permuted */
  size_t scratch_len;
} xent_ctx;

static smx_status xent_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  xent_ctx *c = ctx;
  const int64_t *t = c->t + row0;
  if (cli_rows_permuted(&c->ro)) {
    if (c->scratch_len < rows) {
      int64_t *p = realloc(c->scratch, rows * sizeof *p);
      if (!p) return SMX_E_NOMEM;
      c->scratch = p;
      c->scratch_len = rows;
    }
    for (size_t i = 0; i < rows; i++) c->scratch[i] = c->t[cli_row_c_index(&c->ro, row0 + i)];
    t = c->scratch;
  }
  float *loss = y[0];
  c->bo.loss = &c->be;
  smx_status s = smx_cross_entropy_f32(x, n, t, loss, c->grad ? y[1] : NULL, n, NULL, rows, n, &c->bo);
  for (size_t i = 0; s == SMX_OK && i < rows; i++) c->total += loss[i];
  return s;
}

typedef struct xent_args {
  cli_files files;
  cli_common run;
  const char *targets, *grad;
  int reduction;   /* in the order of the choices: none, mean, sum */
  int dtype;       /* of GRAD; 0: from the logits */
  int64_t ignore_index;
  double label_smoothing, z_loss, temperature;
} xent_args;
static const xent_args xent_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT, .reduction = 1,
                                         .ignore_index = -100 };

static int run_xent(const cli_spec *s, int argc, char **argv) {
  xent_args a;
  const char *in;
  int rc = cli_parse(s, argc, argv, &a, &in);
  if (rc) return rc;
  static const smx_reduction reductions[] = { SMX_REDUCTION_NONE, SMX_REDUCTION_MEAN, SMX_REDUCTION_SUM };
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0u, 0, NULL };
  smx_loss_ext oe = SMX_LOSS_EXT_INIT;
  oe.reduction = reductions[a.reduction];
  oe.ignore_index = a.ignore_index;
  oe.label_smoothing = a.label_smoothing;
  oe.z_loss = a.z_loss;
  o.temperature = a.temperature;
  o.threads = a.run.threads;
  o.flags |= CLI_MASK_FLAGS(a.run);
  int quiet = a.run.quiet;
  const char *tpath = a.targets, *out = a.run.out, *gpath = a.grad;
  if (!in) return smx_cli_usage_error("xent needs a logits file (.npy, .csv or .tsv; - for stdin)");
  if (!tpath) return smx_cli_usage_error("xent needs --targets TARGETS.npy");
  if (!out && oe.reduction == SMX_REDUCTION_NONE) return smx_cli_usage_error("--reduction none needs -o LOSS.npy");
  if (out && gpath && !strcmp(out, gpath)) return smx_cli_usage_error("-o and --grad name the same file");
  if (!strcmp(tpath, "-") && !strcmp(in, "-")) return smx_cli_usage_error("only one of the inputs can be stdin");

  if (out && gpath && !strcmp(out, "-") && !strcmp(gpath, "-")) return smx_cli_usage_error("only one output can be stdout");
  int ftin, fmt[3];   /* the logits, the loss, the gradient */
  if ((rc = cli_input_format(&a.files, tpath, &ftin)) != 0) return rc;
  cli_job j;
  if ((rc = cli_job_open(&j, s->name, &a.files, in, (const char *[]){ out, gpath }, 2, fmt))) return rc;
  int fin = fmt[0], fl = fmt[1], fg = fmt[2];
  uint64_t rows = cli_job_rows(&j), cols = cli_job_axis_len(&j);
  smx_dtype idt = j.src.dtype;
  /* text is read as float64 too, but it holds no float64 precision to lose */
  if (idt == SMX_DTYPE_F64 && fin == CLI_FMT_NPY && !quiet)
    smx_cli_fail(SMX_CLI_EXIT_OK, "note: %s is float64; it is computed in float32 (float64 kernels are not in this version)",
                 in);
  if (rows > 0 && cols == 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s has no classes (its axis %d is empty)", in, j.axis);
    return cli_job_end(&j, rc);
  }
  int64_t *t = NULL;
  if ((rc = smx_xent_read_targets(tpath, ftin, rows, &t)) != 0) return cli_job_end(&j, rc);
  uint64_t count = 0;
  for (uint64_t i = 0; i < rows; i++) {
    if (t[i] == oe.ignore_index) continue;
    if (t[i] < 0 || (uint64_t)t[i] >= cols) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: target %lld of row %llu is outside [0, %llu) and not the ignore index (%lld)",
                        tpath, (long long)t[i], (unsigned long long)i, (unsigned long long)cols,
                        (long long)oe.ignore_index);
      free(t);
      return cli_job_end(&j, rc);
    }
    count++;
  }

  /* rows use NONE (row losses, summed here in row order) with the global mean's gradient scale */
  xent_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.t = t;
  ctx.bo = o;
  ctx.be = oe;
  ctx.be.reduction = SMX_REDUCTION_NONE;
  if (oe.reduction == SMX_REDUCTION_MEAN && count) ctx.be.grad_scale = 1.0 / (double)count;
  ctx.grad = gpath != NULL;
  cli_job_row_order(&j, &ctx.ro);
  cli_kernel kn = { CLI_F32, 2, { 1, cols }, { CLI_F32, CLI_F32 }, 0, 0, xent_rows, &ctx };
  smx_dtype gdt = a.dtype ? (smx_dtype)a.dtype : idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
  int per_row = oe.reduction == SMX_REDUCTION_NONE;
  cli_output outs[2] = { { per_row ? out : NULL, fl, SMX_DTYPE_F32, CLI_AXIS_REMOVE },
                         { gpath, fg, gdt, CLI_AXIS_KEEP } };
  /* the reduced loss is one value, written after the run */
  cli_sink scalar;
  int scalar_open = 0;
  char err[512];
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc && out && !per_row) {
    smx_status st = cli_sink_open(&scalar, out, (cli_format)fl, SMX_DTYPE_F32, 0, NULL, 0, 0, CLI_F32, err, sizeof err);
    if (st != SMX_OK) rc = smx_cli_fail(st == SMX_E_INVALID_ARG ? SMX_CLI_EXIT_USAGE : SMX_CLI_EXIT_OUTPUT, "%s", err);
    else scalar_open = 1;
  }
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  float value = oe.reduction == SMX_REDUCTION_SUM ? (float)ctx.total : count ? (float)(ctx.total / (double)count) : NAN;
  if (scalar_open) {
    if (!rc && cli_sink_write(&scalar, CLI_F32, 0, &value, 1, err, sizeof err) != SMX_OK)
      rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    if (rc) cli_sink_abort(&scalar);
    else if (cli_sink_finish(&scalar, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  rc = cli_job_end(&j, rc);
  free(t);
  free(ctx.scratch);
  if (!rc && !out) printf("%.9g\n", (double)value);
  return rc;
}

#define XENT(field) offsetof(xent_args, field)
static const cli_opt xent_opts[] = {
  CLI_PATH("--targets", NULL, "TARGETS", CLI_OPT_FILE, XENT(targets), NULL, 0, "integer .npy, or whole numbers in CSV/TSV"),
  CLI_PATH("--grad", NULL, "GRAD", CLI_OPT_OUTPUT, XENT(grad), "npy|csv|tsv", 0,
           "the gradient with respect to the logits (their shape)"),
  CLI_CHOICE("--reduction", XENT(reduction), "none|mean|sum", "the loss per row, or their mean or sum (default mean)"),
  CLI_NUM("--ignore-index", NULL, "I", CLI_OPT_INT, XENT(ignore_index), 0, 0, NULL, "targets to skip (default -100)"),
  CLI_NUM("--label-smoothing", NULL, "E", CLI_OPT_DOUBLE, XENT(label_smoothing), 0, 1, NULL, "in [0, 1] (default 0)"),
  CLI_NUM("--z-loss", NULL, "Z", CLI_OPT_DOUBLE, XENT(z_loss), 0, DBL_MAX, NULL,
          "Z * logsumexp^2 added to each loss (default 0)"),
  CLI_TEMPERATURE(XENT(temperature), "logits / T, T > 0 (default 1)"),
  CLI_DTYPE(XENT(dtype), "dtype of GRAD (default: the logits' float type, float32 for\nothers; computed in float32)"),
};

const cli_spec smx_xent_spec = {
  "xent", run_xent, "cross-entropy of logits against integer targets, and its gradient",
  "LOGITS --targets TARGETS [-o LOSS] [--grad GRAD] [options]",
  "Cross-entropy over the class axis (default the last) against integer targets of\n"
  "the logits' shape without that axis; without -o the reduced value is printed. A\n"
  "target outside the classes (and not the ignore index) is exit 2. -o LOSS is the\n"
  "loss: a scalar, or per row with --reduction none.\n",
  CLI_SETS(CLI_OWN(xent_opts),
           CLI_SET(xent_args, run, cli_common_opts),
           CLI_SET(xent_args, files, cli_files_opts),
           CLI_SET(xent_args, run, cli_masked_opts)),
  "LOGITS (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
  "memory, computed in float32; only TARGETS is read whole.\n", 1, "one logits file", 0, CLI_DEFAULTS(xent_defaults) };
