/*
 * smx sample IN.npy -o TOKENS.npy --seed S [--step N] [--temperature T]
 *            [--top-k K] [--top-p P] [--min-p P] [--greedy] [--gumbel] [options]
 *
 * One token per row (the last axis holds the logits), drawn with
 * smx_sample_rows_f32: temperature, then top-k, top-p and min-p, then a
 * multinomial draw (or Gumbel-max with --gumbel) from Philox keyed by
 * (seed, row, step), so the same command gives the same tokens on any number
 * of threads. TOKENS is int64 with the input's shape minus its last axis; a
 * row with NaN or with every logit -inf gets -1.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/number.h"
#include "cli/npy_out.h"
#include "cli/signals.h"
#include "cmd_lm_common.h"
#include "smx/smx.h"
#include "smx/smx_io.h"

const char smx_sample_help[] =
    "usage: smx sample IN.npy -o TOKENS.npy --seed S [options]\n"
    "One int64 token per row, drawn from Philox keyed by (seed, row, step): the same\n"
    "tokens for any --threads. Filters apply in the order temperature, top-k, top-p,\n"
    "min-p; a row with NaN or with every logit -inf gets -1.\n"
    "  --seed S               the random seed (not needed with --greedy or -t 0)\n"
    "  --step N               the decoding step, a second key (default 0)\n"
    "  -t, --temperature T    T >= 0; 0 is greedy (default 1)\n"
    "  --top-k K              keep the K most likely (0: off)\n"
    "  --top-p P              keep the smallest set of mass >= P, in (0, 1] (1: off)\n"
    "  --min-p P              drop tokens below P times the largest probability (0: off)\n"
    "  --greedy               the most likely token\n"
    "  --gumbel               Gumbel-max instead of the multinomial draw\n"
    "  --threads N            threads to use (default 1)\n";

int smx_cmd_sample(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  uint64_t seed = 0, step = 0, top_k = 0;
  int have_seed = 0;
  smx_sample_params p;
  memset(&p, 0, sizeof p);
  p.temperature = 1.0;
  p.top_p = 1.0;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1 };
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--seed")) {
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
    } else if (!strcmp(a, "--threads")) {
      uint64_t n;
      if (!smx_cli_parse_u64(v, 1, 256, &n)) return smx_cli_usage_error("--threads must be a whole number from 1 to 256");
      o.threads = (int)n; i++;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      /* nothing to say in this command */
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for sample", a);
    } else if (!in) {
      in = a;
    } else {
      return smx_cli_usage_error("sample takes one input file; '%s' is extra", a);
    }
  }
  if (!in) return smx_cli_usage_error("sample needs an input .npy file (or - for stdin)");
  if (!out) return smx_cli_usage_error("sample needs -o TOKENS.npy (or -o - for stdout)");
  if (!have_seed && !p.greedy && p.temperature != 0.0) return smx_cli_usage_error("sample needs --seed S (or --greedy)");

  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(in, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  uint64_t rows = info->rows, cols = info->cols;
  if (cols == 0 && rows > 0) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: rows of length 0 have no token to draw", in);
  }
  uint64_t oshape[SMX_NPY_MAX_DIMS];
  int ondim = info->ndim > 0 ? info->ndim - 1 : 0;   /* the logits axis is reduced away */
  for (int d = 0; d < ondim; d++) oshape[d] = info->shape[d];
  smx_npy_writer *w = NULL;
  if (cli_npy_create(out, SMX_DTYPE_I64, ondim, oshape, NULL, &w, err, sizeof err) != SMX_OK) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  /* the writer's rows: one token per input row, written ocols at a time */
  uint64_t ocols = smx_npy_writer_info(w)->cols;
  if (ocols < 1) ocols = 1;
  size_t block = smx_lm_block_rows(rows, cols);
  block = block < ocols ? (size_t)ocols : block / (size_t)ocols * (size_t)ocols;
  float *x = malloc(block * (size_t)(cols ? cols : 1) * sizeof(float));
  int64_t *tok = malloc(block * sizeof(int64_t));
  double *td = malloc(block * sizeof(double));
  int rc = 0;
  if (!x || !tok || !td) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu rows of %s", block, in);
  for (uint64_t r0 = 0; r0 < rows && !rc; r0 += block) {
    if (cli_signal_caught()) break;
    size_t nr = (size_t)(rows - r0 < block ? rows - r0 : block);
    if (smx_npy_read_rows_f32(r, r0, nr, x, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); break; }
    p.row_offset = r0;   /* each row keeps its own random stream, whatever the block size */
    smx_status s = smx_sample_rows_f32(x, (size_t)cols, nr, (size_t)cols, &p, seed, step, tok, &o);
    if (s != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", in, smx_status_string(s)); break; }
    for (size_t j = 0; j < nr; j++) td[j] = (double)tok[j];   /* exact: tokens < 2^53 */
    if (smx_npy_write_rows_f64(w, td, nr / ocols, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err); break; }
  }
  if (!rc && cli_signal_caught()) rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", out);
  free(x);
  free(tok);
  free(td);
  smx_npy_close(r);
  if (rc) cli_npy_abort(w);
  else if (cli_npy_finish(w, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  return rc;
}
