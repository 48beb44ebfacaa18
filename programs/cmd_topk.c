/*
 * smx topk IN.npy -k K -o VALUES.npy [--indices IDX.npy] [--log | --raw] [options]
 *
 * The K largest softmax probabilities of each row (the last axis) and their
 * indices, with the fused softmax + top-k of smx_topk.h (no probability row is
 * formed). --log gives log-probabilities, --raw the logits themselves.
 * VALUES is float32 of shape (..., K); IDX is int64 of the same shape (a NaN
 * row has indices -1). Both are written through temporary files renamed only
 * when everything succeeded.
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

const char smx_topk_help[] =
    "usage: smx topk IN.npy -k K -o VALUES.npy [--indices IDX.npy] [--log | --raw] [options]\n"
    "The K largest softmax probabilities of each row (fused: no probability row is\n"
    "formed; ties to the lowest index) and, with --indices, their int64 indices.\n"
    "  --log                  log-probabilities instead\n"
    "  --raw                  the logits themselves\n"
    "  -t, --temperature T    softmax(x / T), T > 0 (default 1)\n"
    "  --threads N            threads to use (default 1)\n"
    "  --masked-row zero|nan  rows of all -inf: 0 (default) or NaN\n";

int smx_cmd_topk(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *idx_out = NULL;
  uint64_t k = 0;
  int have_k = 0, log_mode = 0, raw = 0;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1 };
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--indices")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      idx_out = v; i++;
    } else if (!strcmp(a, "-k")) {
      if (!smx_cli_parse_u64(v, 0, (uint64_t)1 << 62, &k)) return smx_cli_usage_error("-k must be a whole number >= 0");
      have_k = 1; i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else if (!strcmp(a, "--threads")) {
      uint64_t n;
      if (!smx_cli_parse_u64(v, 1, 256, &n)) return smx_cli_usage_error("--threads must be a whole number from 1 to 256");
      o.threads = (int)n; i++;
    } else if (!strcmp(a, "--masked-row")) {
      if (!v || (strcmp(v, "zero") && strcmp(v, "nan"))) return smx_cli_usage_error("--masked-row must be zero or nan");
      if (!strcmp(v, "nan")) o.flags |= SMX_FLAG_MASKED_ROW_NAN;
      i++;
    } else if (!strcmp(a, "--log")) {
      log_mode = 1;
    } else if (!strcmp(a, "--raw")) {
      raw = 1;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      /* nothing to say in this command */
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for topk", a);
    } else if (!in) {
      in = a;
    } else {
      return smx_cli_usage_error("topk takes one input file; '%s' is extra", a);
    }
  }
  if (!in) return smx_cli_usage_error("topk needs an input .npy file (or - for stdin)");
  if (!have_k) return smx_cli_usage_error("topk needs -k K");
  if (!out) return smx_cli_usage_error("topk needs -o VALUES.npy (or -o - for stdout)");
  if (log_mode && raw) return smx_cli_usage_error("--log and --raw exclude each other");
  if (idx_out && !strcmp(idx_out, "-") && !strcmp(out, "-")) return smx_cli_usage_error("only one output can be stdout");

  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(in, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  uint64_t rows = info->rows, cols = info->cols;
  if (k > cols) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: -k %llu is more than the %llu entries of a row", in,
                        (unsigned long long)k, (unsigned long long)cols);
  }
  /* output shape: the input's with the last axis replaced by k */
  uint64_t oshape[SMX_NPY_MAX_DIMS];
  int ondim = info->ndim > 0 ? info->ndim : 1;
  for (int d = 0; d + 1 < info->ndim; d++) oshape[d] = info->shape[d];
  oshape[ondim - 1] = k;
  smx_npy_writer *wv = NULL, *wi = NULL;
  if (cli_npy_create(out, SMX_DTYPE_F32, ondim, oshape, NULL, &wv, err, sizeof err) != SMX_OK ||
      (idx_out && cli_npy_create(idx_out, SMX_DTYPE_I64, ondim, oshape, NULL, &wi, err, sizeof err) != SMX_OK)) {
    cli_npy_abort(wv);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  size_t block = smx_lm_block_rows(rows, cols);
  float *x = malloc(block * (size_t)(cols ? cols : 1) * sizeof(float));
  float *v = malloc(block * (size_t)(k ? k : 1) * sizeof(float));
  int64_t *ix = malloc(block * (size_t)(k ? k : 1) * sizeof(int64_t));
  double *ixd = malloc(block * (size_t)(k ? k : 1) * sizeof(double));
  int rc = 0;
  if (!x || !v || !ix || !ixd) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu rows of %s", block, in);
  for (uint64_t r0 = 0; r0 < rows && !rc; r0 += block) {
    if (cli_signal_caught()) break;
    size_t nr = (size_t)(rows - r0 < block ? rows - r0 : block);
    if (cols && smx_npy_read_rows_f32(r, r0, nr, x, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); break; }
    smx_status s = raw ? smx_topk_rows_f32(x, (size_t)cols, nr, (size_t)cols, (size_t)k, v, ix, &o)
                 : log_mode ? smx_log_softmax_topk_rows_f32(x, (size_t)cols, nr, (size_t)cols, (size_t)k, v, ix, &o)
                            : smx_softmax_topk_rows_f32(x, (size_t)cols, nr, (size_t)cols, (size_t)k, v, ix, &o);
    if (s != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", in, smx_status_string(s)); break; }
    for (size_t j = 0; j < nr * (size_t)k; j++) ixd[j] = (double)ix[j];   /* exact: indices < 2^53 */
    if (smx_npy_write_rows_f32(wv, v, nr, err, sizeof err) != SMX_OK ||
        (wi && smx_npy_write_rows_f64(wi, ixd, nr, err, sizeof err) != SMX_OK)) {
      rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
      break;
    }
  }
  if (!rc && cli_signal_caught()) rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", out);
  free(x);
  free(v);
  free(ix);
  free(ixd);
  smx_npy_close(r);
  if (rc) {
    cli_npy_abort(wv);
    cli_npy_abort(wi);
  } else if (cli_npy_finish(wv, err, sizeof err) != SMX_OK) {
    cli_npy_abort(wi);
    rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  } else if (wi && cli_npy_finish(wi, err, sizeof err) != SMX_OK) {
    rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  return rc;
}
