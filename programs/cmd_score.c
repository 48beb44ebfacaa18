/*
 * smx score KIND LOGITS -o SCORES [options]
 *
 * Per-sample scores (higher = more in-distribution) along the class axis
 * (default the last) of a logits array, written as float64 of the logits'
 * shape without that axis. LOGITS is .npy, CSV or TSV (- for stdin),
 * streamed by the engine in bounded memory, and SCORES is written through a
 * temporary file renamed at the end, so an error never leaves a
 * half-written output.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/formats.h"
#include "cli/job.h"
#include "cli/message.h"
#include "commands.h"
#include "score_args.h"
#include "smx/smx.h"

typedef struct score_ctx {
  smx_score_kind kind;
  const smx_score_params *params;
} score_ctx;

static smx_status score_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const score_ctx *c = ctx;
  (void)row0;
  return smx_scores_rows_f32(c->kind, x, n, rows, n, c->params, y[0]);
}

const char smx_score_help[] =
    "usage: smx score KIND LOGITS -o SCORES [options]\n"
    "Per-sample scores (higher = more in-distribution) along the class axis (default the\n"
    "last): float64 of the logits' shape without that axis. KIND: " SMX_SCORE_NAMES "\n"
    "  -o, --output SCORES    the scores (- for stdout)\n"
    "  -a, --axis A           the class axis, negative counts from the end (default -1)\n"
    "  --format npy|csv|tsv   output format (default: from the extension of SCORES, else\n"
    "                         npy; the input's format for -o -)\n"
    "  --in-format npy|csv|tsv  input format (default: from the extension of LOGITS, else npy)\n"
    "  -q, --quiet            no progress line on stderr\n"
    "LOGITS (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
    "memory, as for softmax.\n"
    SMX_SCORE_OPTIONS_HELP;

int smx_cmd_score(int argc, char **argv) {
  const char *kind_name = NULL, *in = NULL, *out = NULL;
  smx_score_args sa;
  smx_score_args_init(&sa);
  int quiet = 0;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    int used = 0;
    int rc = smx_score_args_parse(&sa, a, v, &used);
    if (rc < 0) return SMX_CLI_EXIT_USAGE;
    if (rc > 0) { i += used; continue; }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for score", a);
    } else if (!kind_name) {
      kind_name = a;
    } else if (!in) {
      in = a;
    } else {
      return smx_cli_usage_error("score takes one input file; '%s' is extra", a);
    }
  }
  smx_score_kind kind;
  if (!kind_name) return smx_cli_usage_error("score needs a score name (%s)", SMX_SCORE_NAMES);
  if (smx_score_from_name(kind_name, &kind) != SMX_OK)
    return smx_cli_usage_error("unknown score '%s' (one of %s)", kind_name, SMX_SCORE_NAMES);
  if (!in) return smx_cli_usage_error("score needs an input logits file (.npy, .csv or .tsv; - for stdin)");
  if (!out) return smx_cli_usage_error("score needs -o OUT.npy (or -o - for stdout)");
  if (kind == SMX_SCORE_KL_MATCHING && !sa.templates_from)
    return smx_cli_usage_error("kl_matching needs --templates-from REF.npy (reference logits, e.g. the ID validation set)");

  int fin, fout, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_output_format(&io, out, fin, &fout)) != 0) return urc;

  cli_job j;
  int rc = cli_job_input(&j, "score", in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
  int nd = j.src.ndim;
  uint64_t cols = cli_job_axis_len(&j);
  if (nd < 2 || cols == 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: logits must have shape (N, K) with K >= 1 classes; this array has %s",
                      in, nd < 2 ? (nd ? "one axis" : "no axis")
                                 : j.axis == nd - 1 ? "an empty last axis" : "an empty class axis");
    return cli_job_end(&j, rc);
  }
  double *templates = NULL;
  if (kind == SMX_SCORE_KL_MATCHING && (rc = smx_score_args_templates(&sa, cols, in, quiet, &templates)) != 0)
    return cli_job_end(&j, rc);
  if (kind == SMX_SCORE_ODIN && sa.odin_temperature == 0.0) sa.odin_temperature = sa.temperature;
  smx_score_params p = smx_score_args_params_for(&sa, kind, templates);
  score_ctx ctx = { kind, &p };
  cli_kernel kn = { CLI_F32, 1, { 1, 0 }, { CLI_F64, CLI_F32 }, 0, 0, score_rows, &ctx };
  cli_output outs[1] = { { out, fout, SMX_DTYPE_F64, CLI_AXIS_REMOVE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  rc = cli_job_end(&j, rc);
  free(templates);
  return rc;
}
