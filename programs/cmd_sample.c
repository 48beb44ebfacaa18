/*
 * smx sample IN -o TOKENS --seed S [--step N] [--temperature T]
 *            [--top-k K] [--top-p P] [--min-p P] [--greedy] [--gumbel] [options]
 *
 * One token per row of the axis (default the last, which holds the logits),
 * drawn with smx_sample_rows_f32: temperature, then top-k, top-p and min-p,
 * then a multinomial draw (or Gumbel-max with --gumbel) from Philox keyed by
 * (seed, row, step), so the same command gives the same tokens on any number
 * of threads and any block size. IN is .npy, CSV or TSV (- for stdin),
 * streamed by the engine; TOKENS is int64 with the input's shape minus the
 * axis; a row with NaN or with every logit -inf gets -1.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/job.h"
#include "cli/message.h"
#include "commands.h"
#include "smx/smx.h"

typedef struct sample_ctx { smx_sample_params p; uint64_t seed, step; smx_options o; cli_row_order ro; } sample_ctx;

/* rows -> int64 tokens, widened in place to float64 for the writer (exact:
 * tokens are below 2^53) */
static smx_status sample_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const sample_ctx *c = ctx;
  smx_sample_params p = c->p;
  smx_status s = SMX_OK;
  /* each row keeps its own random stream, keyed by its C-order number,
   * whatever the block or the input's order */
  if (!cli_rows_permuted(&c->ro)) {
    p.row_offset = row0;
    s = smx_sample_rows_f32(x, n, (int64_t *)y[0], rows, n, &p, c->seed, c->step, &c->o);
  } else {
    for (size_t i = 0; i < rows && s == SMX_OK; i++) {
      p.row_offset = cli_row_c_index(&c->ro, row0 + i);
      s = smx_sample_rows_f32((const float *)x + i * n, n, (int64_t *)y[0] + i, 1, n, &p, c->seed, c->step, &c->o);
    }
  }
  if (s == SMX_OK) cli_widen_i64(y[0], rows);
  return s;
}

typedef struct sample_args {
  cli_files files;
  cli_common run;
  uint64_t seed, step, top_k;
  double temperature, top_p, min_p;
  int greedy, gumbel, have_seed;
} sample_args;
static const sample_args sample_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT, .temperature = 1.0,
                                             .top_p = 1.0 };

static int check_seed(void *args, void *dst, const char *v) {
  ((sample_args *)args)->have_seed = 1;
  return smx_cli_parse_u64(v, 0, UINT64_MAX, dst);
}

static int run_sample(const cli_spec *s, int argc, char **argv) {
  sample_args a;
  const char *in;
  int rc = cli_parse(s, argc, argv, &a, &in);
  if (rc) return rc;
  const char *out = a.run.out;
  smx_sample_params p = { .temperature = a.temperature, .top_k = (size_t)a.top_k, .top_p = a.top_p, .min_p = a.min_p,
                          .greedy = a.greedy, .method = a.gumbel ? SMX_SAMPLE_GUMBEL_MAX : SMX_SAMPLE_MULTINOMIAL };
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, a.run.threads, NULL };
  if (!in) return smx_cli_usage_error("sample needs an input file (.npy, .csv or .tsv; - for stdin)");
  if (!out) return smx_cli_usage_error("sample needs -o TOKENS.npy (or -o - for stdout)");
  if (!a.have_seed && !p.greedy && p.temperature != 0.0) return smx_cli_usage_error("sample needs --seed S (or --greedy)");

  cli_job j;
  int fmt[2];
  if ((rc = cli_job_open(&j, s->name, &a.files, in, &out, 1, fmt))) return rc;
  if (cli_job_axis_len(&j) == 0 && cli_job_rows(&j) > 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: rows of length 0 have no token to draw", in);
    return cli_job_end(&j, rc);
  }
  sample_ctx ctx = { p, a.seed, a.step, o, { 0, 0, { 0 } } };
  cli_job_row_order(&j, &ctx.ro);
  cli_kernel kn = { CLI_F32, 1, { 1, 0 }, { CLI_F64, CLI_F32 }, 0, 0, sample_rows, &ctx };
  cli_output outs[1] = { { out, fmt[1], SMX_DTYPE_I64, CLI_AXIS_REMOVE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, a.run.quiet);
  return cli_job_end(&j, rc);
}

#define SAMPLE(field) offsetof(sample_args, field)
static const cli_opt sample_opts[] = {
  CLI_CHECKED("--seed", NULL, "S", SAMPLE(seed), check_seed, "a whole number from 0 to 2^64-1",
              "the random seed (not needed with --greedy or -t 0)"),
  CLI_NUM("--step", NULL, "N", CLI_OPT_UINT, SAMPLE(step), 0, 0x1p64, "a whole number from 0 to 2^64-1",
          "the decoding step, a second key (default 0)"),
  CLI_NUM("--temperature", "-t", "T", CLI_OPT_DOUBLE, SAMPLE(temperature), 0, DBL_MAX,
          "a finite number >= 0 (0: greedy)", "T >= 0; 0 is greedy (default 1)"),
  CLI_NUM("--top-k", NULL, "K", CLI_OPT_UINT, SAMPLE(top_k), 0, 0x1p62, "a whole number >= 0 (0: off)",
          "keep the K most likely (0: off)"),
  CLI_NUM("--top-p", NULL, "P", CLI_OPT_DOUBLE, SAMPLE(top_p), DBL_TRUE_MIN, 1, "a number in (0, 1] (1: off)",
          "keep the smallest set of mass >= P, in (0, 1] (1: off)"),
  CLI_NUM("--min-p", NULL, "P", CLI_OPT_DOUBLE, SAMPLE(min_p), 0, 1, "a number in [0, 1] (0: off)",
          "drop tokens below P times the largest probability (0: off)"),
  CLI_FLAG("--greedy", NULL, SAMPLE(greedy), "the most likely token"),
  CLI_FLAG("--gumbel", NULL, SAMPLE(gumbel), "Gumbel-max instead of the multinomial draw"),
};

const cli_spec smx_sample_spec = {
  "sample", run_sample, "one token per row drawn from the logits (top-k, top-p, min-p)",
  "IN -o TOKENS --seed S [options]",
  "One int64 token per row of the axis, drawn from Philox keyed by (seed, row, step):\n"
  "the same tokens for any --threads. TOKENS has the input's shape without the axis;\n"
  "a row is numbered in the order of that shape. Filters apply in the order\n"
  "temperature, top-k, top-p, min-p; a row with NaN or with every logit -inf gets -1.\n",
  CLI_SETS(CLI_SET(sample_args, run, cli_common_opts),
           CLI_OWN(sample_opts),
           CLI_SET(sample_args, files, cli_files_opts)),
  "IN (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
  "memory, as for softmax.\n", 1, "one input file", 0, CLI_DEFAULTS(sample_defaults) };
