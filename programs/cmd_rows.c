/*
 * smx softmax | log-softmax | logsumexp | sigmoid | sparsemax | entmax15 | entmax IN -o OUT [options]
 *
 * Reads the options, opens IN (.npy, CSV or TSV; "-" is stdin), decides the
 * axis, the output dtype and the type computed in, and hands the work to the
 * engine (cli/engine.c). OUT is written through a temporary file renamed only
 * when everything succeeded, so an error or Ctrl-C never leaves a half-written
 * OUT and never clobbers an existing one.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/number.h"
#include "cli/formats.h"
#include "cli/run_opts.h"
#include "cli/job.h"

/* The options and the input rules the three commands share. */
#define ROWS_OPTIONS                                                                             \
  "options:\n"                                                                                   \
  "  -o, --output FILE      output file (- for stdout); a regular file is written whole\n"       \
  "                         or not at all (a temporary renamed over it); a device, FIFO\n"       \
  "                         or socket is written in place, as a stream, never replaced\n"        \
  "  -a, --axis A           the axis, negative counts from the end (default -1)\n"               \
  "  -t, --temperature T    compute softmax(x / T), T > 0 (default 1)\n"                         \
  "  --dtype f32|f64|f16    output dtype (default: the input's float type; float32\n"            \
  "                         for integer input, float64 for text input)\n"                        \
  "  --format npy|csv|tsv   output format (default: from the extension of OUT, else\n"           \
  "                         npy; the input's format for -o -)\n"                                 \
  "  --in-format npy|csv|tsv  input format (default: from the extension of IN, else npy)\n"      \
  "  --algo A               auto, three-pass, two-pass or online (default auto)\n"               \
  "  --threads N            threads to use (default 1)\n"                                        \
  "  --masked-row zero|nan  rows of all -inf: 0 / -inf (default) or NaN\n"                       \
  "  -q, --quiet            no progress line on stderr\n"                                        \
  "IN may be - for stdin. .npy input of any dtype, byte order and C or Fortran order\n"          \
  "is streamed in bounded memory and computed in the wider of its own precision and\n"         \
  "the output's (float16 input: float16; float64: float64; anything else: float32),\n"         \
  "so --dtype f64 computes with the float64 kernels and float16 input with --dtype f32\n"       \
  "in float32; the output keeps the input's order. CSV/TSV: one row per\n"                     \
  "line, ',' or tab between values, nan/inf/-inf accepted, blank and '#' lines skipped;\n"      \
  "written with round-trip digits (%.9g float32, %.17g float64, %.5g float16).\n"

const char smx_softmax_help[] =
    "usage: smx softmax IN -o OUT [options]\n"
    "softmax over an axis (default the last): exp(x / T) / sum(exp(x / T)).\n" ROWS_OPTIONS;
const char smx_log_softmax_help[] =
    "usage: smx log-softmax IN -o OUT [options]\n"
    "log-softmax over an axis (default the last), computed without forming softmax.\n" ROWS_OPTIONS;
const char smx_sigmoid_help[] =
    "usage: smx sigmoid IN -o OUT [options]\n"
    "sigmoid, elementwise: 1 / (1 + exp(-x / T + B)) with --bias B (default 0); --axis,\n"
    "--algo and --masked-row are accepted and change nothing.\n" ROWS_OPTIONS;
const char smx_logsumexp_help[] =
    "usage: smx logsumexp IN -o OUT [options]\n"
    "log-sum-exp over an axis (default the last); the axis is removed from the shape.\n" ROWS_OPTIONS;

const char smx_sparsemax_help[] =
    "usage: smx sparsemax IN -o OUT [options]\n"
    "sparsemax over an axis (default the last): the Euclidean projection onto the simplex,\n"
    "max(x - tau, 0) summing to 1 (Martins & Astudillo 2016). --temperature must be 1;\n"
    "--algo is accepted and changes nothing.\n" ROWS_OPTIONS;
const char smx_entmax15_help[] =
    "usage: smx entmax15 IN -o OUT [options]\n"
    "exact 1.5-entmax over an axis (default the last): max(x/2 - tau, 0)^2 summing to 1\n"
    "(Peters et al. 2019). --temperature must be 1; --algo changes nothing.\n" ROWS_OPTIONS;
const char smx_entmax_help[] =
    "usage: smx entmax IN -o OUT [--alpha A] [options]\n"
    "alpha-entmax over an axis (default the last) for A > 1 (default 1.5), by bisection as\n"
    "the entmax package: max((A-1) x - tau, 0)^(1/(A-1)) summing to 1. --temperature must\n"
    "be 1; --algo changes nothing.\n"
    "  --alpha A              alpha > 1 (default 1.5)\n" ROWS_OPTIONS;
#define VARIANT_NOTE                                                                             \
  "-t/--temperature must be 1 unless said otherwise; --algo and --masked-row are accepted\n"    \
  "and change nothing (the library's row variants take explicit parameters).\n"
const char smx_softpick_help[] =
    "usage: smx softpick IN -o OUT [--eps E] [options]\n"
    "softpick over an axis (Zuhri et al. 2025): ReLU(e^x - 1) / (sum |e^x - 1| + eps) in the\n"
    "stable form; rectified, not summing to one; -inf entries are masked. --eps E >= 0\n"
    "(default 1e-6).\n" VARIANT_NOTE ROWS_OPTIONS;
const char smx_ssmax_help[] =
    "usage: smx ssmax IN -o OUT [--s S] [options]\n"
    "Scalable-Softmax over an axis (Nakanishi 2025): softmax((S log n) x), n the length of\n"
    "the axis; --s S >= 0 (default 1).\n" VARIANT_NOTE ROWS_OPTIONS;
const char smx_sa_softmax_help[] =
    "usage: smx sa-softmax IN -o OUT [--normalized] [options]\n"
    "Self-Adjust Softmax over an axis (Zheng et al. 2025): x * softmax(x), or with\n"
    "--normalized (x - min(x_min, 0)) / (max(0, x_max) - min(x_min, 0)) * softmax(x).\n" VARIANT_NOTE ROWS_OPTIONS;
const char smx_adaptive_softmax_help[] =
    "usage: smx adaptive-softmax IN -o OUT [options]\n"
    "adaptive-temperature softmax over an axis (Velickovic et al. 2024): softmax(beta x), beta\n"
    "from the entropy of softmax(x) by the paper's polynomial.\n" VARIANT_NOTE ROWS_OPTIONS;
const char smx_topk_softmax_help[] =
    "usage: smx topk-softmax IN -o OUT -k K [options]\n"
    "softmax over the K largest entries of an axis, 0 elsewhere (ties: lowest index).\n"
    VARIANT_NOTE ROWS_OPTIONS;
const char smx_softplus_l1_help[] =
    "usage: smx softplus-l1 IN -o OUT [options]\n"
    "softplus(x) / sum softplus(x) over an axis (stable softplus; -inf entries give 0).\n"
    VARIANT_NOTE ROWS_OPTIONS;
const char smx_standardize_softmax_help[] =
    "usage: smx standardize-softmax IN -o OUT [-t T] [options]\n"
    "logit standardisation over an axis (Sun et al. 2024): softmax(((x - mean) / (std + 1e-7)) / T),\n"
    "std unbiased; -t T is this temperature.\n" ROWS_OPTIONS;

static int parse_algo(const char *s, smx_algo *a) {
  static const char *names[] = { "auto", "three-pass", "two-pass", "online" };
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) { *a = (smx_algo)i; return 1; }
  return 0;
}

static int run_rows(const char *cmd, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  int quiet = 0, have_dtype = 0, have_k = 0;
  double p = 0.0;   /* the variant's parameter (see cli_op_ctx) */
  size_t kk = 0;
  if (!strcmp(cmd, "softpick")) p = 1e-6;
  if (!strcmp(cmd, "ssmax")) p = 1.0;
  if (!strcmp(cmd, "entmax")) p = 1.5;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  cli_run_opts run = CLI_RUN_OPTS_INIT(CLI_RUN_MASKED_ROW);
  smx_dtype odt = SMX_DTYPE_F32;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    took = cli_run_option(&run, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!v) return smx_cli_usage_error("%s needs a value", a);
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else if (!strcmp(a, "--alpha") && !strcmp(cmd, "entmax")) {
      char *end;
      p = v ? strtod(v, &end) : 0.0;
      if (!v || *end || !(p > 1.0 && p < 1e300)) return smx_cli_usage_error("--alpha must be a number above 1");
      i++;
    } else if (!strcmp(a, "--algo")) {
      if (!v || !parse_algo(v, &o.algo)) return smx_cli_usage_error("--algo must be auto, three-pass, two-pass or online");
      i++;
    } else if (!strcmp(a, "--dtype")) {
      if (!v || !cli_parse_dtype(v, &odt)) return smx_cli_usage_error("--dtype must be f32, f64 or f16, not '%s'", v ? v : "");
      have_dtype = 1; i++;
    } else if ((!strcmp(a, "--eps") && !strcmp(cmd, "softpick")) || (!strcmp(a, "--s") && !strcmp(cmd, "ssmax")) ||
               (!strcmp(a, "--bias") && !strcmp(cmd, "sigmoid"))) {
      char *end;
      p = v ? strtod(v, &end) : 0.0;
      if (!v || *end || !(p == p) || p - p != 0.0) return smx_cli_usage_error("%s needs a finite number", a);
      if (strcmp(a, "--bias") && p < 0.0) return smx_cli_usage_error("%s must be >= 0", a);
      i++;
    } else if ((!strcmp(a, "-k") || !strcmp(a, "--k")) && !strcmp(cmd, "topk-softmax")) {
      char *end;
      long long n = v ? strtoll(v, &end, 10) : 0;
      if (!v || *end || n < 1) return smx_cli_usage_error("-k must be a whole number >= 1");
      kk = (size_t)n; have_k = 1; i++;
    } else if (!strcmp(a, "--normalized") && !strcmp(cmd, "sa-softmax")) {
      kk = 1;
    } else {
      int prc = cli_run_positional(&run, cmd, "input file", a);
      if (prc) return prc;
    }
  }
  in = run.in;
  out = run.out;
  quiet = run.quiet;
  o.threads = run.threads;
  o.flags |= run.flags;
  if (!in) return smx_cli_usage_error("%s needs an input file (.npy, .csv or .tsv; - for stdin)", cmd);
  if (!out) return smx_cli_usage_error("%s needs -o OUT (.npy, .csv or .tsv; - for stdout)", cmd);
  int fin, fout, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_output_format(&io, out, fin, &fout)) != 0) return urc;
  cli_op op = !strcmp(cmd, "logsumexp") ? CLI_LOGSUMEXP : !strcmp(cmd, "log-softmax") ? CLI_LOG_SOFTMAX
            : !strcmp(cmd, "sigmoid")   ? CLI_SIGMOID : !strcmp(cmd, "sparsemax") ? CLI_SPARSEMAX
            : !strcmp(cmd, "entmax15")  ? CLI_ENTMAX15 : !strcmp(cmd, "entmax") ? CLI_ENTMAX
            : !strcmp(cmd, "softpick") ? CLI_SOFTPICK
            : !strcmp(cmd, "ssmax") ? CLI_SSMAX : !strcmp(cmd, "sa-softmax") ? CLI_SA_SOFTMAX
            : !strcmp(cmd, "adaptive-softmax") ? CLI_ADAPTIVE_SOFTMAX : !strcmp(cmd, "topk-softmax") ? CLI_TOPK_SOFTMAX
            : !strcmp(cmd, "softplus-l1") ? CLI_SOFTPLUS_L1 : !strcmp(cmd, "standardize-softmax") ? CLI_STANDARDIZE_SOFTMAX
            : CLI_SOFTMAX;

  if ((op == CLI_SPARSEMAX || op == CLI_ENTMAX15 || op == CLI_ENTMAX) && o.temperature != 0.0 && o.temperature != 1.0)
    return smx_cli_usage_error("%s takes no temperature (--temperature must be 1): scale the input instead", cmd);
  /* the row variants take their parameters explicitly and read no temperature (smx_norm.h): a -t that
   * would change nothing is refused rather than ignored; standardize-softmax's is the options' (smx_norm.h) */
  if (op >= CLI_SOFTPICK && op != CLI_STANDARDIZE_SOFTMAX && o.temperature != 0.0 && o.temperature != 1.0)
    return smx_cli_usage_error("%s takes no temperature (--temperature must be 1): its own parameters set how "
                               "sharp it is", cmd);
  if (op == CLI_TOPK_SOFTMAX && !have_k) return smx_cli_usage_error("topk-softmax needs -k K");

  cli_job j;
  int rc = cli_job_input(&j, cmd, in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
  /* output dtype: --dtype, else the input's float type (float64 for text,
   * float32 for integers and bool). Computed in the wider of the input's
   * precision (float16, float64, else float32) and the output's: float32
   * input written as float64 is computed with the float64 kernels. */
  smx_dtype idt = j.src.dtype;
  if (!have_dtype) odt = idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
  cli_op_ctx ctx = { op, CLI_F32, o, p, kk, cmd, NULL, { 0, 0 }, 0 };
  ctx.t = idt == SMX_DTYPE_F64 || odt == SMX_DTYPE_F64 ? CLI_F64
        : idt == SMX_DTYPE_F16 && odt == SMX_DTYPE_F16 ? CLI_F16 : CLI_F32;
  cli_kernel k = cli_op_kernel(&ctx, cli_job_axis_len(&j));
  cli_output outs[1] = { { out, fout, odt, op == CLI_LOGSUMEXP ? CLI_AXIS_REMOVE : CLI_AXIS_KEEP } };
  rc = cli_job_outputs(&j, &k, outs);
  if (!rc) rc = cli_job_run(&j, &k, quiet);
  return cli_job_end(&j, rc);
}

int smx_cmd_softmax(int argc, char **argv) { return run_rows("softmax", argc, argv); }
int smx_cmd_log_softmax(int argc, char **argv) { return run_rows("log-softmax", argc, argv); }
int smx_cmd_logsumexp(int argc, char **argv) { return run_rows("logsumexp", argc, argv); }
int smx_cmd_sigmoid(int argc, char **argv) { return run_rows("sigmoid", argc, argv); }
int smx_cmd_sparsemax(int argc, char **argv) { return run_rows("sparsemax", argc, argv); }
int smx_cmd_entmax15(int argc, char **argv) { return run_rows("entmax15", argc, argv); }
int smx_cmd_entmax(int argc, char **argv) { return run_rows("entmax", argc, argv); }
int smx_cmd_softpick(int argc, char **argv) { return run_rows("softpick", argc, argv); }
int smx_cmd_ssmax(int argc, char **argv) { return run_rows("ssmax", argc, argv); }
int smx_cmd_sa_softmax(int argc, char **argv) { return run_rows("sa-softmax", argc, argv); }
int smx_cmd_adaptive_softmax(int argc, char **argv) { return run_rows("adaptive-softmax", argc, argv); }
int smx_cmd_topk_softmax(int argc, char **argv) { return run_rows("topk-softmax", argc, argv); }
int smx_cmd_softplus_l1(int argc, char **argv) { return run_rows("softplus-l1", argc, argv); }
int smx_cmd_standardize_softmax(int argc, char **argv) { return run_rows("standardize-softmax", argc, argv); }
