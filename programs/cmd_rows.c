/*
 * smx softmax | log-softmax | logsumexp | sigmoid | multimax | sparsemax | entmax15 | entmax | the row
 * variants: IN -o OUT [options]
 *
 * Reads the options (the shared ones and the parameters of the command's op-table row, cli/options.h),
 * opens IN (.npy, CSV or TSV; "-" is stdin), decides the axis, the output dtype and the type computed in,
 * and hands the work to the engine (cli/engine.c). OUT is written through a temporary file renamed only
 * when everything succeeded, so an error or Ctrl-C never leaves a half-written OUT and never clobbers an
 * existing one.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>

#include "commands.h"
#include "cli/job.h"
#include "cli/message.h"
#include "cli/options.h"

typedef struct rows_args {
  cli_files files;
  cli_common run;
  double temperature;   /* 0: 1 */
  int algo;             /* smx_algo */
  int dtype;            /* of the output; 0: from the input */
  cli_params p;         /* the op table's parameters */
} rows_args;

/* -t for the operations that read no temperature: 1 only, accepted so that a script may say it */
static int temperature_one(void *args, void *dst, const char *v) {
  return cli_check_temperature(args, dst, v) && *(double *)dst == 1.0;
}

#define ROWS_OPT(field) offsetof(rows_args, field)
#define ROWS_OPTS(check, rule, t_help)                                                                          \
  CLI_CHECKED("--temperature", "-t", "T", ROWS_OPT(temperature), check, rule, t_help),                           \
  CLI_CHECKED("--dtype", NULL, "f32|f64|f16", ROWS_OPT(dtype), cli_check_dtype, CLI_DTYPE_RULE,                  \
              "output dtype (default: the input's float type; float32\nfor integer input, float64 for text input)"), \
  CLI_CHOICE("--algo", ROWS_OPT(algo), "auto|three-pass|two-pass|online", "the softmax algorithm (default auto)")
static const cli_opt tempered_opts[] = {
  ROWS_OPTS(cli_check_temperature, CLI_TEMPERATURE_RULE, "compute softmax(x / T), T > 0 (default 1)"),
};
static const cli_opt untempered_opts[] = {
  ROWS_OPTS(temperature_one, "1 (this operation reads no temperature: its parameters, or a scaled input, set how "
                             "sharp it is)", "must be 1: the operation reads no temperature"),
};
#define SETS(own)                                                                                              \
  { CLI_SET(rows_args, run, cli_common_opts), CLI_SET(rows_args, files, cli_files_opts), CLI_OWN(own),             \
    CLI_SET(rows_args, run, cli_masked_opts) }
static const cli_optset tempered[] = SETS(tempered_opts), untempered[] = SETS(untempered_opts);

#define ROWS_NOTES                                                                                   \
  "IN may be - for stdin. .npy input of any dtype, byte order and C or Fortran order\n"              \
  "is streamed in bounded memory and computed in the wider of its own precision and\n"               \
  "the output's (float16 input: float16; float64: float64; anything else: float32),\n"               \
  "so --dtype f64 computes with the float64 kernels and float16 input with --dtype f32\n"             \
  "in float32; the output keeps the input's order. CSV/TSV: one row per\n"                           \
  "line, ',' or tab between values, nan/inf/-inf accepted, blank and '#' lines skipped;\n"            \
  "written with round-trip digits (%.9g float32, %.17g float64, %.5g float16).\n"
#define VARIANT_NOTE "--algo and --masked-row are accepted and change nothing.\n"

static int run_rows(const cli_spec *s, int argc, char **argv);
static const rows_args rows_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT };
#define ROWS(id, cmd, option_sets, line, text)                                                                 \
  const cli_spec smx_##id##_spec = { .name = cmd, .run = run_rows, .summary = line, .usage = "IN -o OUT",          \
                                     .about = text, .sets = option_sets, .nsets = 4, .notes = ROWS_NOTES,         \
                                     .maxpos = 1, .pos_what = "one input file", .params = offsetof(rows_args, p), \
                                     CLI_DEFAULTS(rows_defaults) }
ROWS(softmax, "softmax", tempered, "softmax over an axis (default the last)",
     "softmax over an axis (default the last): exp(x / T) / sum(exp(x / T)).\n");
ROWS(log_softmax, "log-softmax", tempered, "log-softmax over an axis",
     "log-softmax over an axis (default the last), computed without forming softmax.\n");
ROWS(logsumexp, "logsumexp", tempered, "log-sum-exp over an axis (the axis is removed)",
     "log-sum-exp over an axis (default the last); the axis is removed from the shape.\n");
ROWS(sigmoid, "sigmoid", tempered, "sigmoid, elementwise: 1 / (1 + exp(-x / T))",
     "sigmoid, elementwise: 1 / (1 + exp(-x / T - B)) with --bias B (default 0); --axis,\n"
     "--algo and --masked-row are accepted and change nothing.\n");
ROWS(multimax, "multimax", tempered, "MultiMax (softmax of piecewise-modulated scores) over an axis",
     "MultiMax (Zhou et al. 2024) over an axis (default the last): softmax(s(x) / T) with\n"
     "s(x) = x + T0 (R0 - x)_+ + T1 (x - R1)_+ + T2 (R2 - x)_+^2 + T3 (x - R3)_+^2\n"
     "(the parameters default to 0: softmax).\n");
ROWS(sparsemax, "sparsemax", untempered, "sparsemax over an axis (projection onto the simplex)",
     "sparsemax over an axis (default the last): the Euclidean projection onto the simplex,\n"
     "max(x - tau, 0) summing to 1 (Martins & Astudillo 2016).\n" VARIANT_NOTE);
ROWS(entmax15, "entmax15", untempered, "exact 1.5-entmax over an axis",
     "exact 1.5-entmax over an axis (default the last): max(x/2 - tau, 0)^2 summing to 1\n"
     "(Peters et al. 2019).\n" VARIANT_NOTE);
ROWS(entmax, "entmax", untempered, "alpha-entmax over an axis (--alpha A > 1, bisection)",
     "alpha-entmax over an axis (default the last) for A > 1 (default 1.5), by bisection as\n"
     "the entmax package: max((A-1) x - tau, 0)^(1/(A-1)) summing to 1.\n" VARIANT_NOTE);
ROWS(softpick, "softpick", untempered, "softpick over an axis (rectified, not summing to one)",
     "softpick over an axis (Zuhri et al. 2025): ReLU(e^x - 1) / (sum |e^x - 1| + eps) in the\n"
     "stable form; rectified, not summing to one; -inf entries are masked.\n" VARIANT_NOTE);
ROWS(ssmax, "ssmax", untempered, "Scalable-Softmax over an axis: softmax((s log n) x)",
     "Scalable-Softmax over an axis (Nakanishi 2025): softmax((S log n) x), n the length of\n"
     "the axis.\n" VARIANT_NOTE);
ROWS(sa_softmax, "sa-softmax", untempered, "Self-Adjust Softmax over an axis: x * softmax(x)",
     "Self-Adjust Softmax over an axis (Zheng et al. 2025): x * softmax(x), or with\n"
     "--normalized (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x).\n" VARIANT_NOTE);
ROWS(adaptive_softmax, "adaptive-softmax", untempered, "adaptive-temperature softmax over an axis",
     "adaptive-temperature softmax over an axis (Velickovic et al. 2024): softmax(beta x), beta\n"
     "from the entropy of softmax(x) by the paper's polynomial.\n" VARIANT_NOTE);
ROWS(topk_softmax, "topk-softmax", untempered, "softmax over the K largest entries of an axis",
     "softmax over the K largest entries of an axis, 0 elsewhere (ties: lowest index).\n" VARIANT_NOTE);
ROWS(softplus_l1, "softplus-l1", untempered, "softplus normalised to sum one over an axis",
     "softplus(x) / sum softplus(x) over an axis (stable softplus; -inf entries give 0).\n" VARIANT_NOTE);
ROWS(standardize_softmax, "standardize-softmax", tempered, "softmax of z-scored logits over an axis",
     "logit standardisation over an axis (Sun et al. 2024): softmax(((x - mean) / (std + 1e-7)) / T),\n"
     "std unbiased; -t T is this temperature.\n");

static int run_rows(const cli_spec *s, int argc, char **argv) {
  rows_args a;
  const char *in;
  int rc = cli_parse(s, argc, argv, &a, &in);
  if (rc) return rc;
  if (!in) return smx_cli_usage_error("%s needs an input file (.npy, .csv or .tsv; - for stdin)", s->name);
  if (!a.run.out) return smx_cli_usage_error("%s needs -o OUT (.npy, .csv or .tsv; - for stdout)", s->name);
  if ((rc = cli_params_given(s, &a.p)) != 0) return rc;
  cli_job j;
  int fmt[2];
  if ((rc = cli_job_open(&j, s->name, &a.files, in, &a.run.out, 1, fmt))) return rc;
  /* output dtype: --dtype, else the input's float type (float64 for text, float32 for integers and bool).
   * Computed in the wider of the input's precision (float16, float64, else float32) and the output's:
   * float32 input written as float64 is computed with the float64 kernels. */
  smx_dtype idt = j.src.dtype;
  smx_dtype odt = a.dtype ? (smx_dtype)a.dtype : idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
  smx_options o = { (smx_algo)a.algo, a.temperature, CLI_MASK_FLAGS(a.run), a.run.threads, NULL };
  cli_op_ctx ctx = { CLI_F32, o, s->name, a.p.v, NULL, 0 };
  ctx.t = idt == SMX_DTYPE_F64 || odt == SMX_DTYPE_F64 ? CLI_F64
        : idt == SMX_DTYPE_F16 && odt == SMX_DTYPE_F16 ? CLI_F16 : CLI_F32;
  cli_kernel k = cli_op_kernel(&ctx, cli_job_axis_len(&j));
  int lse = ctx.row && ctx.row->sig == SMX_SIG_LSE;
  cli_output outs[1] = { { a.run.out, fmt[1], odt, lse ? CLI_AXIS_REMOVE : CLI_AXIS_KEEP } };
  rc = cli_job_outputs(&j, &k, outs);
  if (!rc) rc = cli_job_run(&j, &k, a.run.quiet);
  return cli_job_end(&j, rc);
}
