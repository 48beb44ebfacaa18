/*
 * smx score KIND LOGITS.npy -o SCORES.npy [options]
 *
 * Per-sample scores (higher = more in-distribution) of a logits file of
 * shape (..., K), written as a float64 array of the leading shape. The
 * logits are streamed in blocks of rows; the scores (8 bytes per row) are
 * kept and written at the end through a temporary file, so an error never
 * leaves a half-written output.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/npy_out.h"
#include "cli/signals.h"
#include "logits_stream.h"
#include "score_args.h"
#include "smx/smx.h"
#include "smx/smx_io.h"

typedef struct score_job {
  smx_score_kind kind;
  const smx_score_params *params;
  double *out;
  const char *path;
} score_job;

static int score_block(void *ctx, const float *x, size_t nr, size_t cols, uint64_t r0) {
  score_job *j = ctx;
  smx_status s = smx_scores_rows_f32(j->kind, x, cols, nr, cols, j->params, j->out + r0);
  if (s != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", j->path, smx_status_string(s));
  return 0;
}

const char smx_score_help[] =
    "usage: smx score KIND LOGITS.npy -o SCORES.npy [options]\n"
    "Per-sample scores (higher = more in-distribution) over the last axis, float64 of\n"
    "the leading shape. KIND: " SMX_SCORE_NAMES "\n"
    "score options:\n"
    "  --temperature T        energy's T (score: also odin's), default 1\n"
    "  --odin-temperature T   ODIN's T (default 1000); ODIN here has no input perturbation:\n"
    "                         to get it, pass logits of perturbed inputs from your framework\n"
    "  --gen-gamma G --gen-m M  GEN's gamma in (0, 1] (0.1) and top-M classes (100)\n"
    "  --templates-from REF.npy  kl_matching templates from reference logits (eval: --val)\n"
    "  --double               msp and energy in double instead of the f32 kernels\n";

int smx_cmd_score(int argc, char **argv) {
  const char *kind_name = NULL, *in = NULL, *out = NULL;
  smx_score_args sa;
  smx_score_args_init(&sa);
  int quiet = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
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
  if (!in) return smx_cli_usage_error("score needs an input logits .npy file (or - for stdin)");
  if (!out) return smx_cli_usage_error("score needs -o OUT.npy (or -o - for stdout)");
  if (kind == SMX_SCORE_KL_MATCHING && !sa.templates_from)
    return smx_cli_usage_error("kl_matching needs --templates-from REF.npy (reference logits, e.g. the ID validation set)");

  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(in, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  smx_npy_info info = *smx_npy_reader_info(r);
  smx_npy_close(r);
  if (info.rows > SIZE_MAX / sizeof(double)) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: too many rows", in);
  double *templates = NULL;
  int rc = 0;
  if (kind == SMX_SCORE_KL_MATCHING) {
    rc = smx_score_args_templates(&sa, info.cols, in, quiet, &templates);
    if (rc) return rc;
  }
  if (kind == SMX_SCORE_ODIN && sa.odin_temperature == 0.0) sa.odin_temperature = sa.temperature;
  smx_score_params p = smx_score_args_params_for(&sa, kind, templates);
  score_job j = { kind, &p, malloc((info.rows ? (size_t)info.rows : 1) * sizeof(double)), in };
  if (!j.out) { free(templates); return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory for the scores", in); }
  uint64_t rows = 0, cols = 0;
  rc = smx_cli_stream_logits(in, quiet, 0, NULL, 1, &rows, &cols, score_block, &j);
  if (!rc) {
    uint64_t shape[SMX_NPY_MAX_DIMS];
    int ndim = info.ndim - 1;
    for (int d = 0; d < ndim; d++) shape[d] = info.shape[d];
    smx_npy_writer *w = NULL;
    if (cli_npy_create(out, SMX_DTYPE_F64, ndim, shape, NULL, &w, err, sizeof err) != SMX_OK) {
      rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    } else {
      /* the output is rows x cols in the writer's view; write it all at once */
      const smx_npy_info *wi = smx_npy_writer_info(w);
      smx_status s = (wi->rows && wi->cols) ? smx_npy_write_rows_f64(w, j.out, wi->rows, err, sizeof err) : SMX_OK;
      if (s != SMX_OK) { cli_npy_abort(w); rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err); }
      else if (cli_signal_caught()) { cli_npy_abort(w); rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", out); }
      else if (cli_npy_finish(w, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    }
  }
  free(j.out);
  free(templates);
  return rc;
}
