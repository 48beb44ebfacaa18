/*
 * smx topk IN -k K -o VALUES [--indices IDX] [--log | --raw] [options]
 *
 * The K largest softmax probabilities along an axis (default the last) and
 * their indices, with the fused softmax + top-k of smx_topk.h (no
 * probability row is formed). --log gives log-probabilities, --raw the
 * logits themselves. IN is .npy, CSV or TSV (- for stdin), streamed by the
 * engine in bounded memory; VALUES is float32 and IDX int64, both the
 * input's shape with the axis replaced by K (a NaN row has indices -1), and
 * both are written whole or not at all.
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

const char smx_topk_help[] =
    "usage: smx topk IN -k K -o VALUES [--indices IDX] [--log | --raw] [options]\n"
    "The K largest softmax probabilities along an axis (fused: no probability row is\n"
    "formed; ties to the lowest index) and, with --indices, their int64 indices; both\n"
    "have the input's shape with the axis replaced by K.\n"
    "  -o, --output VALUES    float32 values (- for stdout)\n"
    "  --indices IDX          int64 indices (- for stdout; a NaN row gives -1)\n"
    "  --log                  log-probabilities instead\n"
    "  --raw                  the logits themselves\n"
    "  -a, --axis A           the axis, negative counts from the end (default -1)\n"
    "  -t, --temperature T    softmax(x / T), T > 0 (default 1)\n"
    "  --format npy|csv|tsv   output format (default: from each output's extension, else\n"
    "                         npy; the input's format for -)\n"
    "  --in-format npy|csv|tsv  input format (default: from the extension of IN, else npy)\n"
    "  --threads N            threads to use (default 1)\n"
    "  --masked-row zero|nan  rows of all -inf: 0 (default) or NaN\n"
    "  -q, --quiet            no progress line on stderr\n"
    "IN (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
    "memory, as for softmax.\n";

typedef struct topk_ctx { int mode; size_t k; smx_options o; } topk_ctx;
enum { TOPK_PROBS, TOPK_LOG, TOPK_RAW };

/* rows -> values (float32) and indices (int64, then widened in place to
 * float64 for the writer: exact, as indices are below 2^53) */
static smx_status topk_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const topk_ctx *c = ctx;
  unsigned char *ix = y[1];
  (void)row0;
  smx_status s = c->mode == TOPK_RAW ? smx_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o)
               : c->mode == TOPK_LOG ? smx_log_softmax_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o)
                                     : smx_softmax_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o);
  for (size_t i = 0; s == SMX_OK && i < rows * c->k; i++) {
    int64_t v;
    memcpy(&v, ix + i * 8, 8);
    double d = (double)v;
    memcpy(ix + i * 8, &d, 8);
  }
  return s;
}

int smx_cmd_topk(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *idx_out = NULL;
  uint64_t k = 0;
  int have_k = 0, log_mode = 0, raw = 0, quiet = 0;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  cli_run_opts run = CLI_RUN_OPTS_INIT(CLI_RUN_MASKED_ROW);
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1, NULL };
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    took = cli_run_option(&run, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    if (!strcmp(a, "--indices")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      idx_out = v; i++;
    } else if (!strcmp(a, "-k")) {
      if (!smx_cli_parse_u64(v, 0, (uint64_t)1 << 62, &k)) return smx_cli_usage_error("-k must be a whole number >= 0");
      have_k = 1; i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else if (!strcmp(a, "--log")) {
      log_mode = 1;
    } else if (!strcmp(a, "--raw")) {
      raw = 1;
    } else {
      int prc = cli_run_positional(&run, "topk", "input file", a);
      if (prc) return prc;
    }
  }
  in = run.in;
  out = run.out;
  quiet = run.quiet;
  o.threads = run.threads;
  o.flags |= run.flags;
  if (!in) return smx_cli_usage_error("topk needs an input file (.npy, .csv or .tsv; - for stdin)");
  if (!have_k) return smx_cli_usage_error("topk needs -k K");
  if (!out) return smx_cli_usage_error("topk needs -o VALUES.npy (or -o - for stdout)");
  if (log_mode && raw) return smx_cli_usage_error("--log and --raw exclude each other");
  if (idx_out && !strcmp(idx_out, "-") && !strcmp(out, "-")) return smx_cli_usage_error("only one output can be stdout");

  int fin, fv, fi = CLI_FMT_NPY, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_output_format(&io, out, fin, &fv)) != 0) return urc;
  if (idx_out && (urc = cli_output_format(&io, idx_out, fin, &fi)) != 0) return urc;

  cli_job j;
  int rc = cli_job_input(&j, "topk", in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
  uint64_t n = cli_job_axis_len(&j);
  if (k > n) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: -k %llu is more than the %llu entries of a row", in,
                      (unsigned long long)k, (unsigned long long)n);
    return cli_job_end(&j, rc);
  }
  topk_ctx ctx = { raw ? TOPK_RAW : log_mode ? TOPK_LOG : TOPK_PROBS, (size_t)k, o };
  cli_kernel kn = { CLI_F32, 2, { k, k }, { CLI_F32, CLI_F64 }, 0, 0, topk_rows, &ctx };
  cli_output outs[2] = { { out, fv, SMX_DTYPE_F32, CLI_AXIS_REPLACE },
                         { idx_out, fi, SMX_DTYPE_I64, CLI_AXIS_REPLACE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, quiet);
  return cli_job_end(&j, rc);
}
