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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/formats.h"
#include "cli/run_opts.h"
#include "cli/job.h"
#include "cli/message.h"
#include "cli/number.h"
#include "commands.h"
#include "smx/smx.h"

const char smx_sample_help[] =
    "usage: smx sample IN -o TOKENS --seed S [options]\n"
    "One int64 token per row of the axis, drawn from Philox keyed by (seed, row, step):\n"
    "the same tokens for any --threads. TOKENS has the input's shape without the axis;\n"
    "a row is numbered in the order of that shape. Filters apply in the order\n"
    "temperature, top-k, top-p, min-p; a row with NaN or with every logit -inf gets -1.\n"
    "  -o, --output TOKENS    the tokens (- for stdout)\n"
    "  --seed S               the random seed (not needed with --greedy or -t 0)\n"
    "  --step N               the decoding step, a second key (default 0)\n"
    "  -t, --temperature T    T >= 0; 0 is greedy (default 1)\n"
    "  --top-k K              keep the K most likely (0: off)\n"
    "  --top-p P              keep the smallest set of mass >= P, in (0, 1] (1: off)\n"
    "  --min-p P              drop tokens below P times the largest probability (0: off)\n"
    "  --greedy               the most likely token\n"
    "  --gumbel               Gumbel-max instead of the multinomial draw\n"
    "  -a, --axis A           the axis of the logits, negative counts from the end (default -1)\n"
    "  --format npy|csv|tsv   output format (default: from the extension of TOKENS, else\n"
    "                         npy; the input's format for -o -)\n"
    "  --in-format npy|csv|tsv  input format (default: from the extension of IN, else npy)\n"
    "  --threads N            threads to use (default 1)\n"
    "  -q, --quiet            no progress line on stderr\n"
    "IN (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
    "memory, as for softmax.\n";

typedef struct sample_ctx { smx_sample_params p; uint64_t seed, step; smx_options o; cli_row_order ro; } sample_ctx;

/* rows -> int64 tokens, widened in place to float64 for the writer (exact:
 * tokens are below 2^53) */
static smx_status sample_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const sample_ctx *c = ctx;
  smx_sample_params p = c->p;
  unsigned char *tok = y[0];
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
  for (size_t i = 0; s == SMX_OK && i < rows; i++) {
    int64_t v;
    memcpy(&v, tok + i * 8, 8);
    double d = (double)v;
    memcpy(tok + i * 8, &d, 8);
  }
  return s;
}

int smx_cmd_sample(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  uint64_t seed = 0, step = 0, top_k = 0;
  int have_seed = 0, quiet = 0;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  cli_run_opts run = CLI_RUN_OPTS_INIT(0u);
  smx_sample_params p;
  memset(&p, 0, sizeof p);
  p.temperature = 1.0;
  p.top_p = 1.0;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    took = cli_run_option(&run, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    if (!strcmp(a, "--seed")) {
      if (!smx_cli_parse_u64(v, 0, UINT64_MAX, &seed)) return smx_cli_usage_error("--seed must be a whole number from 0 to 2^64-1");
      have_seed = 1; i++;
    } else if (!strcmp(a, "--step")) {
      if (!smx_cli_parse_u64(v, 0, UINT64_MAX, &step)) return smx_cli_usage_error("--step must be a whole number from 0 to 2^64-1");
      i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!smx_cli_parse_double(v, 0.0, 1.7976931348623157e308, &p.temperature))
        return smx_cli_usage_error("--temperature must be a finite number >= 0 (0: greedy), not '%s'", v ? v : "");
      i++;
    } else if (!strcmp(a, "--top-k")) {
      if (!smx_cli_parse_u64(v, 0, (uint64_t)1 << 62, &top_k)) return smx_cli_usage_error("--top-k must be a whole number >= 0 (0: off)");
      p.top_k = (size_t)top_k; i++;
    } else if (!strcmp(a, "--top-p")) {
      if (!smx_cli_parse_double(v, 0.0, 1.0, &p.top_p) || p.top_p == 0.0)
        return smx_cli_usage_error("--top-p must be a number in (0, 1] (1: off)");
      i++;
    } else if (!strcmp(a, "--min-p")) {
      if (!smx_cli_parse_double(v, 0.0, 1.0, &p.min_p)) return smx_cli_usage_error("--min-p must be a number in [0, 1] (0: off)");
      i++;
    } else if (!strcmp(a, "--greedy")) {
      p.greedy = 1;
    } else if (!strcmp(a, "--gumbel")) {
      p.method = SMX_SAMPLE_GUMBEL_MAX;
    } else {
      int prc = cli_run_positional(&run, "sample", "input file", a);
      if (prc) return prc;
    }
  }
  in = run.in;
  out = run.out;
  quiet = run.quiet;
  o.threads = run.threads;
  if (!in) return smx_cli_usage_error("sample needs an input file (.npy, .csv or .tsv; - for stdin)");
  if (!out) return smx_cli_usage_error("sample needs -o TOKENS.npy (or -o - for stdout)");
  if (!have_seed && !p.greedy && p.temperature != 0.0) return smx_cli_usage_error("sample needs --seed S (or --greedy)");

  int fin, fout, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_output_format(&io, out, fin, &fout)) != 0) return urc;

  cli_job j;
  int rc = cli_job_input(&j, "sample", in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
  if (cli_job_axis_len(&j) == 0 && cli_job_rows(&j) > 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: rows of length 0 have no token to draw", in);
    return cli_job_end(&j, rc);
  }
  sample_ctx ctx = { p, seed, step, o, { 0, 0, { 0 } } };
  cli_job_row_order(&j, &ctx.ro);
  cli_kernel kn = { CLI_F32, 1, { 1, 0 }, { CLI_F64, CLI_F32 }, 0, 0, sample_rows, &ctx };
  cli_output outs[1] = { { out, fout, SMX_DTYPE_I64, CLI_AXIS_REMOVE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  return cli_job_end(&j, rc);
}
