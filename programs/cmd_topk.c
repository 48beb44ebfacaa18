/*
 * smx topk IN -k K -o VALUES [--indices IDX] [--log | --raw] [options]
 *
 * The K largest softmax probabilities along an axis (default the last) and
 * their indices, with the fused softmax + top-k of smx_topk.h (no
 * probability row is formed). --log gives log-probabilities, --raw the
 * logits themselves. IN is .npy, CSV or TSV (- for stdin), streamed by the
 * engine in bounded memory; VALUES is float32 (or --dtype) and IDX int64, both the
 * input's shape with the axis replaced by K (a NaN row has indices -1), and
 * both are written whole or not at all.
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
#include "smx/smx.h"

typedef struct topk_ctx { int mode; size_t k; smx_options o; } topk_ctx;
enum { TOPK_PROBS, TOPK_LOG, TOPK_RAW };

/* rows -> values (float32) and indices (int64, then widened in place to
 * float64 for the writer: exact, as indices are below 2^53) */
static smx_status topk_rows(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0) {
  const topk_ctx *c = ctx;
  (void)row0;
  smx_status s = c->mode == TOPK_RAW ? smx_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o)
               : c->mode == TOPK_LOG ? smx_log_softmax_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o)
                                     : smx_softmax_topk_rows_f32(x, n, y[0], (int64_t *)y[1], rows, n, c->k, &c->o);
  if (s == SMX_OK) cli_widen_i64(y[1], rows * c->k);
  return s;
}

typedef struct topk_args {
  cli_files files;
  cli_common run;
  const char *indices;
  uint64_t k;   /* UINT64_MAX: not given */
  int log, raw, dtype;
  double temperature;
} topk_args;
static const topk_args topk_defaults = { .files = CLI_FILES_INIT, .run = CLI_COMMON_INIT, .k = UINT64_MAX };

static int run_topk(const cli_spec *s, int argc, char **argv) {
  topk_args a;
  const char *in;
  int rc = cli_parse(s, argc, argv, &a, &in);
  if (rc) return rc;
  const char *out = a.run.out, *idx_out = a.indices;
  if (!in) return smx_cli_usage_error("topk needs an input file (.npy, .csv or .tsv; - for stdin)");
  if (a.k == UINT64_MAX) return smx_cli_usage_error("topk needs -k K");
  if (!out) return smx_cli_usage_error("topk needs -o VALUES.npy (or -o - for stdout)");
  if (a.log && a.raw) return smx_cli_usage_error("--log and --raw exclude each other");
  if (idx_out && !strcmp(idx_out, "-") && !strcmp(out, "-")) return smx_cli_usage_error("only one output can be stdout");
  smx_options o = { SMX_ALGO_AUTO, a.temperature, CLI_MASK_FLAGS(a.run), a.run.threads, NULL };
  uint64_t k = a.k;

  cli_job j;
  int fmt[3];
  if ((rc = cli_job_open(&j, s->name, &a.files, in, (const char *[]){ out, idx_out }, 2, fmt))) return rc;
  uint64_t n = cli_job_axis_len(&j);
  if (k > n) {
    rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: -k %llu is more than the %llu entries of a row", in,
                      (unsigned long long)k, (unsigned long long)n);
    return cli_job_end(&j, rc);
  }
  topk_ctx ctx = { a.raw ? TOPK_RAW : a.log ? TOPK_LOG : TOPK_PROBS, (size_t)k, o };
  cli_kernel kn = { CLI_F32, 2, { k, k }, { CLI_F32, CLI_F64 }, 0, 0, topk_rows, &ctx };
  cli_output outs[2] = { { out, fmt[1], a.dtype ? (smx_dtype)a.dtype : SMX_DTYPE_F32, CLI_AXIS_REPLACE },
                         { idx_out, fmt[2], SMX_DTYPE_I64, CLI_AXIS_REPLACE } };
  rc = cli_job_outputs(&j, &kn, outs);
  if (!rc) rc = cli_job_run(&j, &kn, a.run.quiet);
  return cli_job_end(&j, rc);
}

#define TOPK(field) offsetof(topk_args, field)
static const cli_opt topk_opts[] = {
  CLI_NUM("-k", NULL, "K", CLI_OPT_UINT, TOPK(k), 0, 0x1p64, NULL, "the entries kept per row (required)"),
  CLI_PATH("--indices", NULL, "IDX", CLI_OPT_OUTPUT, TOPK(indices), "npy|csv|tsv", 0,
           "int64 indices (- for stdout; a NaN row gives -1)"),
  CLI_FLAG("--log", NULL, TOPK(log), "log-probabilities instead"),
  CLI_FLAG("--raw", NULL, TOPK(raw), "the logits themselves"),
  CLI_TEMPERATURE(TOPK(temperature), "softmax(x / T), T > 0 (default 1)"),
  CLI_DTYPE(TOPK(dtype), "dtype of VALUES (default f32; computed in float32)"),
};

const cli_spec smx_topk_spec = {
  "topk", run_topk, "the K largest softmax probabilities over an axis, and their indices",
  "IN -k K -o VALUES [--indices IDX] [--log | --raw] [options]",
  "The K largest softmax probabilities along an axis (fused: no probability row is\n"
  "formed; ties to the lowest index) and, with --indices, their int64 indices; both\n"
  "have the input's shape with the axis replaced by K.\n",
  CLI_SETS(CLI_SET(topk_args, run, cli_common_opts),
           CLI_OWN(topk_opts),
           CLI_SET(topk_args, files, cli_files_opts),
           CLI_SET(topk_args, run, cli_masked_opts)),
  "IN (.npy of any dtype and order, CSV or TSV; - for stdin) is streamed in bounded\n"
  "memory, as for softmax.\n", 1, "one input file", 0, CLI_DEFAULTS(topk_defaults) };
