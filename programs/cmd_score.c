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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/job.h"
#include "cli/message.h"
#include "commands.h"
#include "score_args.h"
#include "smx/smx.h"

typedef struct score_ctx {
  smx_score_kind kind;
  const smx_score_params *params;
  int threads;
} score_ctx;

static smx_status score_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const score_ctx *c = ctx;
  double *out = y[0];
  (void)row0;
  smx_options o = { .threads = c->threads };
  return smx_scores_rows_f32(x, n, out, rows, n, c->kind, c->params, &o);
}

typedef struct score_cmd_args {
  cli_files files;
  cli_common run;
  smx_score_args sa;
  int dtype;   /* of SCORES; 0: float64 */
} score_cmd_args;
static const score_cmd_args score_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT };

static const cli_opt score_dtype[] = { CLI_DTYPE(offsetof(score_cmd_args, dtype), "dtype of SCORES (default f64)") };
static const cli_optset score_sets[] = { CLI_SET(score_cmd_args, run, cli_common_opts),
                                         CLI_SET(score_cmd_args, files, cli_files_opts),
                                         CLI_SET(score_cmd_args, sa, smx_score_opts),
                                         CLI_OWN(score_dtype) };

static int run_score(const cli_spec *s, int argc, char **argv) {
  score_cmd_args a;
  const char *pos[2];
  int rc = cli_parse(s, argc, argv, &a, pos);
  if (rc) return rc;
  const char *kind_name = pos[0], *in = pos[1], *out = a.run.out;
  int quiet = a.run.quiet;
  smx_score_args sa = a.sa;
  smx_score_kind kind;
  if (!kind_name) return smx_cli_usage_error("score needs a score name (%s)", SMX_SCORE_NAMES);
  if (smx_score_from_name(kind_name, &kind) != SMX_OK)
    return smx_cli_usage_error("unknown score '%s' (one of %s)", kind_name, SMX_SCORE_NAMES);
  if (!in) return smx_cli_usage_error("score needs an input logits file (.npy, .csv or .tsv; - for stdin)");
  if (!out) return smx_cli_usage_error("score needs -o OUT.npy (or -o - for stdout)");
  if (kind == SMX_SCORE_KL_MATCHING && !sa.templates_from)
    return smx_cli_usage_error("kl_matching needs --templates-from REF.npy (reference logits, e.g. the ID validation set)");

  cli_job j;
  int fmt[2];
  if ((rc = cli_job_open(&j, s->name, &a.files, in, &out, 1, fmt))) return rc;
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
  score_ctx ctx = { kind, &p, a.run.threads };
  cli_kernel kn = { CLI_F32, 1, { 1, 0 }, { CLI_F64, CLI_F32 }, 0, 0, score_rows, &ctx };
  cli_output outs[1] = { { out, fmt[1], a.dtype ? (smx_dtype)a.dtype : SMX_DTYPE_F64, CLI_AXIS_REMOVE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  rc = cli_job_end(&j, rc);
  free(templates);
  return rc;
}

const cli_spec smx_score_spec = {
  "score", run_score, "per-sample OOD scores (higher = more in-distribution)",
  "KIND LOGITS -o SCORES [options]",
  "Per-sample scores (higher = more in-distribution) along the class axis (default the\n"
  "last): float64 of the logits' shape without that axis. KIND: " SMX_SCORE_NAMES "\n",
  score_sets, 4,
  "LOGITS (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
  "memory, as for softmax; the scores are the same for any --threads.\n",
  2, "one input file", 0, CLI_DEFAULTS(score_defaults) };
