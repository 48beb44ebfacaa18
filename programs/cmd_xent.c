/*
 * smx xent LOGITS --targets TARGETS [--loss NAME] [-o LOSS] [--grad GRAD] [options]
 *
 * A loss of logits (the class axis: default the last) against integer class targets, and its gradient:
 * the library's fused cross-entropy, or with --loss NAME any loss of the op table whose cli field is
 * "xent --loss NAME" (the TLOSS class: class targets and nothing else; smx_op_rows calls it, and its
 * parameters are options from the table: cli/options.h), so that a new loss of that class needs nothing
 * here. The options the loss does not take are named before anything is read, by asking the library
 * (each alone, on one row of zeros). The targets (the logits' shape without the class axis) are read and
 * checked whole first, so a bad target is reported before anything is computed; the logits are then
 * streamed by the engine, which writes the row losses (--reduction none) and the gradient (the logits'
 * shape) through temporary files renamed only when everything succeeded. Mean and sum are reduced in
 * double, in row order, so the result does not depend on the block size or the thread count. LOGITS and
 * TARGETS are .npy, CSV or TSV; either may be - for stdin.
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

static const smx_op_dtype op_dtype[] = { [CLI_F32] = SMX_OP_F32, [CLI_F64] = SMX_OP_F64, [CLI_F16] = SMX_OP_F16 };

typedef struct xent_ctx {
  const smx_op_info *op;   /* the loss: the cross-entropy (class XENT) or a row of class TLOSS     */
  const double *params;    /* its parameters' values (op->nvalues)                                 */
  cli_ctype ct;            /* the type computed in; the losses are double for f64, float otherwise */
  const int64_t *t;        /* the targets, by C-order row number */
  cli_row_order ro;
  smx_options bo;          /* the options of each block's call, with be as their loss extension */
  smx_loss_ext be;
  int grad;
  double total;            /* the sum of the row losses, in row order */
  int64_t *scratch;        /* the targets of one block, when rows are permuted */
  size_t scratch_len;
} xent_ctx;

/* One call of the loss on rows x n dense logits of type t, through smx_op_rows: the cross-entropy (class XENT,
 * its lse not asked for) or a TLOSS row, with the table's parameters. */
static smx_status loss_call(const xent_ctx *c, cli_ctype t, const void *x, const int64_t *tg, void *loss, void *grad,
                            size_t rows, size_t n, const smx_options *o) {
  smx_op_call a = { .dtype = op_dtype[t], .rows = rows, .cols = n, .x = x, .ldx = n, .out = loss,
                    .params = c->params, .nparams = c->op->nvalues, .targets = tg, .grad = grad, .ldg = n };
  return smx_op_rows(c->op, &a, o);
}

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
  c->bo.loss = &c->be;
  smx_status s = loss_call(c, c->ct, x, t, y[0], c->grad ? y[1] : NULL, rows, n, &c->bo);
  for (size_t i = 0; s == SMX_OK && i < rows; i++)
    c->total += c->ct == CLI_F64 ? ((const double *)y[0])[i] : (double)((const float *)y[0])[i];
  return s;
}

typedef struct xent_args {
  cli_files files;
  cli_common run;
  const char *targets, *grad, *loss;
  int reduction;   /* in the order of the choices: none, mean, sum */
  int dtype;       /* of GRAD; 0: from the logits */
  int64_t ignore_index;
  double label_smoothing, z_loss, temperature;
  cli_params p;    /* the parameters of the loss (its op-table row) */
} xent_args;
static const xent_args xent_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT, .reduction = 1,
                                         .ignore_index = -100 };

/* The options of the blocks' calls, before the gradient's scale is known; option k alone (k < 4: label
 * smoothing, z-loss, temperature, masked rows), or all (k = 4). */
static void block_options(const xent_args *a, int k, smx_options *o, smx_loss_ext *e) {
  *o = (smx_options){ SMX_ALGO_AUTO, 0.0, 0u, a->run.threads, e };
  *e = (smx_loss_ext)SMX_LOSS_EXT_INIT;
  e->reduction = SMX_REDUCTION_NONE;   /* row losses, summed here in row order */
  e->ignore_index = a->ignore_index;
  if (k == 0 || k == 4) e->label_smoothing = a->label_smoothing;
  if (k == 1 || k == 4) e->z_loss = a->z_loss;
  if (k == 2 || k == 4) o->temperature = a->temperature;
  if (k == 3 || k == 4) o->flags = CLI_MASK_FLAGS(a->run);
}

/* Names the first option given that the loss refuses (each tried alone on one row of two zero logits, in
 * a type the op has), before anything is read. Returns 0, or the exit code after the message. */
static int check_options(const xent_args *a, const xent_ctx *c, const char *word) {
  static const char *const names[] = { "--label-smoothing", "--z-loss", "--temperature", "--masked-row nan" };
  const int given[] = { a->label_smoothing != 0.0, a->z_loss != 0.0, a->temperature != 0.0, a->run.masked_nan };
  cli_ctype t = c->op->dtypes & SMX_OP_BIT(SMX_OP_F32) ? CLI_F32 : c->op->dtypes & SMX_OP_BIT(SMX_OP_F64) ? CLI_F64 : CLI_F16;
  for (int k = 0; k < 5; k++) {
    if (k < 4 && !given[k]) continue;
    double x[2] = { 0.0, 0.0 }, loss = 0.0;
    const int64_t target = 0;
    smx_options o;
    smx_loss_ext e;
    block_options(a, k, &o, &e);
    smx_status st = loss_call(c, t, x, &target, &loss, NULL, 1, 2, &o);
    if (st == SMX_E_INVALID_ARG && k < 4)
      return smx_cli_usage_error("%s does not apply to --loss %s; leave it out", names[k], word);
    if (st == SMX_E_INVALID_ARG)
      return smx_cli_usage_error("--loss %s refuses these options together (each alone is taken)", word);
    if (st != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "--loss %s: %s", word, smx_status_string(st));
  }
  return 0;
}

/* The type the loss is computed in: float64 for float64 logits (text too) or --dtype f64, float16 storage
 * for float16 logits with a float16 gradient, else float32; each where the op has it (else float32, else
 * the first it has). */
static cli_ctype compute_type(const smx_op_info *op, smx_dtype idt, smx_dtype gdt) {
  cli_ctype want = idt == SMX_DTYPE_F64 || gdt == SMX_DTYPE_F64   ? CLI_F64
                   : idt == SMX_DTYPE_F16 && gdt == SMX_DTYPE_F16 ? CLI_F16
                                                                  : CLI_F32;
  const cli_ctype order[] = { want, CLI_F32, CLI_F64, CLI_F16 };
  for (int i = 0; i < 4; i++)
    if (op->dtypes & SMX_OP_BIT(op_dtype[order[i]])) return order[i];
  return CLI_F32;
}

static int run_xent(const cli_spec *s, int argc, char **argv) {
  xent_args a;
  const char *in;
  int rc = cli_parse(s, argc, argv, &a, &in);
  if (rc) return rc;
  static const smx_reduction reductions[] = { SMX_REDUCTION_NONE, SMX_REDUCTION_MEAN, SMX_REDUCTION_SUM };
  smx_reduction red = reductions[a.reduction];
  int quiet = a.run.quiet;
  const char *tpath = a.targets, *out = a.run.out, *gpath = a.grad;
  if (!in) return smx_cli_usage_error("xent needs a logits file (.npy, .csv or .tsv; - for stdin)");
  if (!tpath) return smx_cli_usage_error("xent needs --targets TARGETS.npy");
  if (!out && red == SMX_REDUCTION_NONE) return smx_cli_usage_error("--reduction none needs -o LOSS.npy");
  if (out && gpath && !strcmp(out, gpath)) return smx_cli_usage_error("-o and --grad name the same file");
  if (!strcmp(tpath, "-") && !strcmp(in, "-")) return smx_cli_usage_error("only one of the inputs can be stdin");
  if (out && gpath && !strcmp(out, "-") && !strcmp(gpath, "-")) return smx_cli_usage_error("only one output can be stdout");
  if ((rc = cli_params_given(s, &a.p)) != 0) return rc;
  xent_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.op = a.p.row;
  ctx.params = a.p.v;
  const char *word = a.loss ? a.loss : ctx.op ? ctx.op->name : "?";
  if (!ctx.op || (ctx.op->sig != SMX_SIG_XENT && ctx.op->sig != SMX_SIG_TLOSS))
    return smx_cli_fail(SMX_CLI_EXIT_USAGE, "--loss %s: xent computes the classes XENT and TLOSS, not %s", word,
                        ctx.op ? smx_op_sig_name(ctx.op->sig) : "none");
  if ((rc = check_options(&a, &ctx, word)) != 0) return rc;

  int ftin, fmt[3];   /* the logits, the loss, the gradient */
  if ((rc = cli_input_format(&a.files, tpath, &ftin)) != 0) return rc;
  cli_job j;
  if ((rc = cli_job_open(&j, s->name, &a.files, in, (const char *[]){ out, gpath }, 2, fmt))) return rc;
  int fin = fmt[0], fl = fmt[1], fg = fmt[2];
  uint64_t rows = cli_job_rows(&j), cols = cli_job_axis_len(&j);
  smx_dtype idt = j.src.dtype;
  smx_dtype gdt = a.dtype ? (smx_dtype)a.dtype : idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
  ctx.ct = compute_type(ctx.op, idt, gdt);
  /* text is read as float64 too, but it holds no float64 precision to lose */
  if (idt == SMX_DTYPE_F64 && ctx.ct != CLI_F64 && fin == CLI_FMT_NPY && !quiet)
    smx_cli_fail(SMX_CLI_EXIT_OK, "note: %s is float64; --loss %s has no float64 entry: computed in float32", in, word);
  if (rows > 0 && cols == 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s has no classes (its axis %d is empty)", in, j.axis);
    return cli_job_end(&j, rc);
  }
  int64_t *t = NULL;
  if ((rc = smx_xent_read_targets(tpath, ftin, rows, &t)) != 0) return cli_job_end(&j, rc);
  uint64_t count = 0;
  for (uint64_t i = 0; i < rows; i++) {
    if (t[i] == a.ignore_index) continue;
    if (t[i] < 0 || (uint64_t)t[i] >= cols) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: target %lld of row %llu is outside [0, %llu) and not the ignore index (%lld)",
                        tpath, (long long)t[i], (unsigned long long)i, (unsigned long long)cols,
                        (long long)a.ignore_index);
      free(t);
      return cli_job_end(&j, rc);
    }
    count++;
  }

  /* the blocks write row losses (summed here in row order) with the global mean's gradient scale */
  ctx.t = t;
  block_options(&a, 4, &ctx.bo, &ctx.be);
  if (red == SMX_REDUCTION_MEAN && count) ctx.be.grad_scale = 1.0 / (double)count;
  ctx.grad = gpath != NULL;
  cli_job_row_order(&j, &ctx.ro);
  int f64 = ctx.ct == CLI_F64;
  smx_dtype ldt = f64 ? SMX_DTYPE_F64 : SMX_DTYPE_F32;
  cli_ctype lt = f64 ? CLI_F64 : CLI_F32;
  cli_kernel kn = { ctx.ct, 2, { 1, cols }, { lt, ctx.ct }, 0, 0, xent_rows, &ctx };
  int per_row = red == SMX_REDUCTION_NONE;
  cli_output outs[2] = { { per_row ? out : NULL, fl, ldt, CLI_AXIS_REMOVE }, { gpath, fg, gdt, CLI_AXIS_KEEP } };
  /* the reduced loss is one value, written after the run */
  cli_sink scalar;
  int scalar_open = 0;
  char err[512];
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc && out && !per_row) {
    smx_status st = cli_sink_open(&scalar, out, (cli_format)fl, ldt, 0, NULL, 0, 0, lt, err, sizeof err);
    if (st != SMX_OK) rc = smx_cli_fail(st == SMX_E_INVALID_ARG ? SMX_CLI_EXIT_USAGE : SMX_CLI_EXIT_OUTPUT, "%s", err);
    else scalar_open = 1;
  }
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  double value = red == SMX_REDUCTION_SUM ? ctx.total : count ? ctx.total / (double)count : NAN;
  float value32 = (float)value;
  if (scalar_open) {
    if (!rc && cli_sink_write(&scalar, lt, 0, f64 ? (const void *)&value : &value32, 1, err, sizeof err) != SMX_OK)
      rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    if (rc) cli_sink_abort(&scalar);
    else if (cli_sink_finish(&scalar, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  rc = cli_job_end(&j, rc);
  free(t);
  free(ctx.scratch);
  if (!rc && !out) printf(f64 ? "%.17g\n" : "%.9g\n", f64 ? value : (double)value32);
  return rc;
}

#define XENT(field) offsetof(xent_args, field)
static const cli_opt xent_opts[] = {
  CLI_PATH("--targets", NULL, "TARGETS", CLI_OPT_FILE, XENT(targets), NULL, 0, "integer .npy, or whole numbers in CSV/TSV"),
  CLI_SELECT("--loss", "NAME", XENT(loss), "the loss, one of those listed below"),
  CLI_PATH("--grad", NULL, "GRAD", CLI_OPT_OUTPUT, XENT(grad), "npy|csv|tsv", 0,
           "the gradient with respect to the logits (their shape)"),
  CLI_CHOICE("--reduction", XENT(reduction), "none|mean|sum", "the loss per row, or their mean or sum (default mean)"),
  CLI_NUM("--ignore-index", NULL, "I", CLI_OPT_INT, XENT(ignore_index), 0, 0, NULL, "targets to skip (default -100)"),
  CLI_NUM("--label-smoothing", NULL, "E", CLI_OPT_DOUBLE, XENT(label_smoothing), 0, 1, NULL, "in [0, 1] (default 0)"),
  CLI_NUM("--z-loss", NULL, "Z", CLI_OPT_DOUBLE, XENT(z_loss), 0, DBL_MAX, NULL,
          "Z * logsumexp^2 added to each loss (default 0)"),
  CLI_TEMPERATURE(XENT(temperature), "logits / T, T > 0 (default 1)"),
  CLI_DTYPE(XENT(dtype), "dtype of GRAD (default: the logits' float type, float32 for\nothers)"),
};

const cli_spec smx_xent_spec = {
  .name = "xent", .run = run_xent,
  .summary = "cross-entropy (or another loss, --loss) of logits against integer targets, and its gradient",
  .usage = "LOGITS --targets TARGETS [--loss NAME] [-o LOSS] [--grad GRAD]",
  .about = "A loss over the class axis (default the last) against integer targets of the\n"
           "logits' shape without that axis: the cross-entropy, or the loss --loss names; without\n"
           "-o the reduced value is printed. A target outside the classes (and not the ignore\n"
           "index) is exit 2. -o LOSS is the loss: a scalar, or per row with --reduction none.\n"
           "--label-smoothing, --z-loss, --temperature and --masked-row nan are refused (exit 1,\n"
           "nothing read or written) by the losses that do not take them.\n",
  .sets = CLI_SETS(CLI_OWN(xent_opts), CLI_SET(xent_args, run, cli_common_opts),
                   CLI_SET(xent_args, files, cli_files_opts), CLI_SET(xent_args, run, cli_masked_opts)),
  .notes = "LOGITS (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
           "memory and computed in float64 when it is float64 or text (or with --dtype f64), in\n"
           "float16 storage when it is float16 and GRAD too, else in float32, each where the loss\n"
           "has that type (smx ops NAME); only TARGETS is read whole.\n",
  .maxpos = 1, .pos_what = "one logits file", .params = offsetof(xent_args, p), CLI_DEFAULTS(xent_defaults) };
