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
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/formats.h"
#include "cli/run_opts.h"
#include "cli/job.h"
#include "cli/message.h"
#include "cli/number.h"
#include "commands.h"
#include "xent_targets.h"
#include "smx/smx.h"

const char smx_xent_help[] =
    "usage: smx xent LOGITS --targets TARGETS [-o LOSS] [--grad GRAD] [options]\n"
    "Cross-entropy over the class axis (default the last) against integer targets of\n"
    "the logits' shape without that axis; without -o the reduced value is printed. A\n"
    "target outside the classes (and not the ignore index) is exit 2.\n"
    "  --targets TARGETS      integer .npy, or whole numbers in CSV/TSV\n"
    "  -o, --output LOSS      the loss: a scalar, or per row with --reduction none\n"
    "  --grad GRAD            the gradient with respect to the logits (their shape)\n"
    "  --reduction none|mean|sum  (default mean)\n"
    "  --ignore-index I       targets to skip (default -100)\n"
    "  --label-smoothing E    in [0, 1]\n"
    "  --z-loss Z             Z * logsumexp^2 added to each loss\n"
    "  -a, --axis A           the class axis, negative counts from the end (default -1)\n"
    "  -t, --temperature T    logits / T, T > 0 (default 1)\n"
    "  --format npy|csv|tsv   output format (default: from each output's extension, else\n"
    "                         npy; the input's format for -)\n"
    "  --in-format npy|csv|tsv  format of LOGITS and TARGETS (default: from each extension, else npy)\n"
    "  --threads N, --masked-row zero|nan, -q as for softmax\n"
    "LOGITS (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
    "memory, computed in float32; only TARGETS is read whole.\n";

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

int smx_cmd_xent(int argc, char **argv) {
  const char *in = NULL, *tpath = NULL, *out = NULL, *gpath = NULL;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0u, 0, NULL };
  smx_loss_ext oe = SMX_LOSS_EXT_INIT;
  int quiet = 0;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  cli_run_opts run = CLI_RUN_OPTS_INIT(CLI_RUN_MASKED_ROW);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    took = cli_run_option(&run, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    if (!strcmp(a, "--targets")) {
      if (!v) return smx_cli_usage_error("--targets needs a file name");
      tpath = v; i++;
    } else if (!strcmp(a, "--grad")) {
      if (!v) return smx_cli_usage_error("--grad needs a file name");
      gpath = v; i++;
    } else if (!strcmp(a, "--reduction")) {
      if (v && !strcmp(v, "mean")) oe.reduction = SMX_REDUCTION_MEAN;
      else if (v && !strcmp(v, "sum")) oe.reduction = SMX_REDUCTION_SUM;
      else if (v && !strcmp(v, "none")) oe.reduction = SMX_REDUCTION_NONE;
      else return smx_cli_usage_error("--reduction must be none, mean or sum");
      i++;
    } else if (!strcmp(a, "--ignore-index")) {
      char *end;
      errno = 0;
      long long n = v ? strtoll(v, &end, 10) : 0;
      if (!v || end == v || *end || errno) return smx_cli_usage_error("--ignore-index must be a whole number");
      oe.ignore_index = (int64_t)n; i++;
    } else if (!strcmp(a, "--label-smoothing")) {
      if (!smx_cli_parse_double(v, 0.0, 1.0, &oe.label_smoothing))
        return smx_cli_usage_error("--label-smoothing must be a number from 0 to 1");
      i++;
    } else if (!strcmp(a, "--z-loss")) {
      if (!smx_cli_parse_double(v, 0.0, 1.7e308, &oe.z_loss)) return smx_cli_usage_error("--z-loss must be a number >= 0");
      i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else {
      int prc = cli_run_positional(&run, "xent", "logits file", a);
      if (prc) return prc;
    }
  }
  in = run.in;
  out = run.out;
  quiet = run.quiet;
  o.threads = run.threads;
  o.flags |= run.flags;
  if (!in) return smx_cli_usage_error("xent needs a logits file (.npy, .csv or .tsv; - for stdin)");
  if (!tpath) return smx_cli_usage_error("xent needs --targets TARGETS.npy");
  if (!out && oe.reduction == SMX_REDUCTION_NONE) return smx_cli_usage_error("--reduction none needs -o LOSS.npy");
  if (out && gpath && !strcmp(out, gpath)) return smx_cli_usage_error("-o and --grad name the same file");
  if (!strcmp(tpath, "-") && !strcmp(in, "-")) return smx_cli_usage_error("only one of the inputs can be stdin");

  int fin, ftin, fl = CLI_FMT_NPY, fg = CLI_FMT_NPY, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_input_format(&io, tpath, &ftin)) != 0) return urc;
  if (out && (urc = cli_output_format(&io, out, fin, &fl)) != 0) return urc;
  if (gpath && (urc = cli_output_format(&io, gpath, fin, &fg)) != 0) return urc;
  if (out && gpath && !strcmp(out, "-") && !strcmp(gpath, "-")) return smx_cli_usage_error("only one output can be stdout");

  cli_job j;
  int rc = cli_job_input(&j, "xent", in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
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
  smx_dtype gdt = idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
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
