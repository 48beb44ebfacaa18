/*
 * smx xent LOGITS.npy --targets T.npy [-o LOSS.npy] [--grad GRAD.npy] [options]
 *
 * Cross-entropy of logits (the last axis is the class axis) against integer
 * targets, with the library's fused cross-entropy. The targets are read and
 * checked whole first (a bad target is reported before anything is computed);
 * the logits are then streamed in blocks of rows, the gradient is computed in
 * place in the block and written through a temporary file that is renamed
 * only when everything succeeded. Mean and sum are reduced across blocks in
 * double, in row order, so the result does not depend on the block size or
 * the thread count.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
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

/* rows per block: about 16 MiB of floats, at least one row */
#define BLOCK_BYTES ((size_t)16 << 20)

static int is_integer_dtype(smx_dtype t) {
  return t == SMX_DTYPE_I8 || t == SMX_DTYPE_I16 || t == SMX_DTYPE_I32 || t == SMX_DTYPE_I64 || t == SMX_DTYPE_U8 ||
         t == SMX_DTYPE_U16 || t == SMX_DTYPE_U32 || t == SMX_DTYPE_U64 || t == SMX_DTYPE_BOOL;
}

/* Reads every target as int64 (through double: exact below 2^53, and larger
 * values are out of any class range anyway). *t is malloc'ed. */
static int read_targets(const char *path, uint64_t want, int64_t **t) {
  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);   /* owned by r: read it before smx_npy_close */
  smx_dtype dt = info->dtype;
  uint64_t count = info->count;
  if (!is_integer_dtype(dt)) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: targets must be integers, not %s", path, smx_dtype_name(dt));
  }
  if (count != want) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s has %llu targets; the logits have %llu rows", path,
                        (unsigned long long)count, (unsigned long long)want);
  }
  size_t n = (size_t)want;
  double *d = malloc((n ? n : 1) * sizeof(double));
  *t = malloc((n ? n : 1) * sizeof(int64_t));
  if (!d || !*t) {
    free(d);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for %zu targets", n);
  }
  if (n && info->cols && smx_npy_read_rows_f64(r, 0, info->rows, d, err, sizeof err) != SMX_OK) {
    free(d);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  }
  smx_npy_close(r);
  for (size_t i = 0; i < n; i++) (*t)[i] = d[i] >= 9.2e18 ? INT64_MAX : (int64_t)d[i];
  free(d);
  return 0;
}

const char smx_xent_help[] =
    "usage: smx xent LOGITS.npy --targets T.npy [-o LOSS.npy] [--grad GRAD.npy] [options]\n"
    "Cross-entropy over the last axis against integer targets; without -o the reduced\n"
    "value is printed. A target outside the classes (and not the ignore index) is exit 2.\n"
    "  --reduction none|mean|sum  (default mean)\n"
    "  --ignore-index I       targets to skip (default -100)\n"
    "  --label-smoothing E    in [0, 1]\n"
    "  --z-loss Z             Z * logsumexp^2 added to each loss\n"
    "  -t, --temperature T    logits / T, T > 0 (default 1)\n"
    "  --threads N, --masked-row zero|nan, -q as for softmax\n";

int smx_cmd_xent(int argc, char **argv) {
  const char *in = NULL, *tpath = NULL, *out = NULL, *gpath = NULL;
  smx_xent_options o = SMX_XENT_OPTIONS_INIT;
  int quiet = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--targets")) {
      if (!v) return smx_cli_usage_error("--targets needs a file name");
      tpath = v; i++;
    } else if (!strcmp(a, "--grad")) {
      if (!v) return smx_cli_usage_error("--grad needs a file name");
      gpath = v; i++;
    } else if (!strcmp(a, "--reduction")) {
      if (v && !strcmp(v, "mean")) o.reduction = SMX_REDUCTION_MEAN;
      else if (v && !strcmp(v, "sum")) o.reduction = SMX_REDUCTION_SUM;
      else if (v && !strcmp(v, "none")) o.reduction = SMX_REDUCTION_NONE;
      else return smx_cli_usage_error("--reduction must be none, mean or sum");
      i++;
    } else if (!strcmp(a, "--ignore-index")) {
      char *end;
      errno = 0;
      long long n = v ? strtoll(v, &end, 10) : 0;
      if (!v || end == v || *end || errno) return smx_cli_usage_error("--ignore-index must be a whole number");
      o.ignore_index = (int64_t)n; i++;
    } else if (!strcmp(a, "--label-smoothing")) {
      if (!smx_cli_parse_double(v, 0.0, 1.0, &o.label_smoothing))
        return smx_cli_usage_error("--label-smoothing must be a number from 0 to 1");
      i++;
    } else if (!strcmp(a, "--z-loss")) {
      if (!smx_cli_parse_double(v, 0.0, 1.7e308, &o.z_loss)) return smx_cli_usage_error("--z-loss must be a number >= 0");
      i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else if (!strcmp(a, "--threads")) {
      char *end;
      long n = v ? strtol(v, &end, 10) : -1;
      if (!v || *end || n < 1 || n > 256) return smx_cli_usage_error("--threads must be a whole number from 1 to 256");
      o.threads = (int)n; i++;
    } else if (!strcmp(a, "--masked-row")) {
      if (!v || (strcmp(v, "zero") && strcmp(v, "nan"))) return smx_cli_usage_error("--masked-row must be zero or nan");
      if (!strcmp(v, "nan")) o.flags |= SMX_FLAG_MASKED_ROW_NAN;
      i++;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for xent", a);
    } else if (!in) {
      in = a;
    } else {
      return smx_cli_usage_error("xent takes one logits file; '%s' is extra", a);
    }
  }
  if (!in) return smx_cli_usage_error("xent needs a logits .npy file (or - for stdin)");
  if (!tpath) return smx_cli_usage_error("xent needs --targets T.npy");
  if (!out && o.reduction == SMX_REDUCTION_NONE) return smx_cli_usage_error("--reduction none needs -o LOSS.npy");
  if (out && gpath && !strcmp(out, gpath)) return smx_cli_usage_error("-o and --grad name the same file");
  if (!strcmp(tpath, "-") && !strcmp(in, "-")) return smx_cli_usage_error("only one of the inputs can be stdin");

  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(in, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  uint64_t rows = info->rows, cols = info->cols;
  if (info->dtype == SMX_DTYPE_F64 && !quiet)
    smx_cli_fail(SMX_CLI_EXIT_OK, "note: %s is float64; it is computed in float32 (float64 kernels are not in this version)",
                 in);
  if (rows > 0 && cols == 0) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s has no classes (its last axis is empty)", in);
  }
  int64_t *t = NULL;
  int rc = read_targets(tpath, rows, &t);
  if (rc) { smx_npy_close(r); return rc; }
  uint64_t count = 0;
  for (uint64_t i = 0; i < rows; i++) {
    if (t[i] == o.ignore_index) continue;
    if (t[i] < 0 || (uint64_t)t[i] >= cols) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: target %lld of row %llu is outside [0, %llu) and not the ignore index (%lld)",
                        tpath, (long long)t[i], (unsigned long long)i, (unsigned long long)cols,
                        (long long)o.ignore_index);
      free(t);
      smx_npy_close(r);
      return rc;
    }
    count++;
  }

  /* outputs: the loss (the logits' shape without the class axis, or a scalar), the gradient (the logits' shape) */
  smx_npy_writer *wl = NULL, *wg = NULL;
  uint64_t lshape[SMX_NPY_MAX_DIMS], gshape[SMX_NPY_MAX_DIMS];
  for (int d = 0; d < info->ndim; d++) lshape[d] = gshape[d] = info->shape[d];
  int lndim = o.reduction == SMX_REDUCTION_NONE ? (info->ndim > 0 ? info->ndim - 1 : 0) : 0;
  smx_dtype gdt = info->dtype == SMX_DTYPE_F16 || info->dtype == SMX_DTYPE_F64 ? info->dtype : SMX_DTYPE_F32;
  if (out && cli_npy_create(out, SMX_DTYPE_F32, lndim, lshape, NULL, &wl, err, sizeof err) != SMX_OK) {
    free(t);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  if (gpath && cli_npy_create(gpath, gdt, info->ndim, gshape, NULL, &wg, err, sizeof err) != SMX_OK) {
    if (wl) cli_npy_abort(wl);
    free(t);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  size_t block = cols ? BLOCK_BYTES / sizeof(float) / (size_t)cols : 1;
  if (block < 1) block = 1;
  if (block > rows) block = rows ? (size_t)rows : 1;
  /* reduction none: a block must fill whole rows of the loss file (its last axis) */
  size_t ocols = wl && o.reduction == SMX_REDUCTION_NONE ? (size_t)smx_npy_writer_info(wl)->cols : 1;
  if (ocols < 1) ocols = 1;
  block = block < ocols ? ocols : block / ocols * ocols;
  float *x = cols ? malloc(block * (size_t)cols * sizeof(float)) : NULL, *l = malloc(block * sizeof(float));
  if ((cols && !x) || !l) {
    free(x); free(l); free(t);
    if (wl) cli_npy_abort(wl);
    if (wg) cli_npy_abort(wg);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu rows of %s", block, in);
  }

  /* blocks use NONE (row losses, summed here in row order) with the global mean's gradient scale */
  smx_xent_options bo = o;
  bo.reduction = SMX_REDUCTION_NONE;
  if (o.reduction == SMX_REDUCTION_MEAN && count) bo.grad_scale = 1.0 / (double)count;
  double total = 0.0;
  for (uint64_t r0 = 0; r0 < rows && !rc; r0 += block) {
    if (cli_signal_caught()) break;
    size_t nr = (size_t)(rows - r0 < block ? rows - r0 : block);
    if (smx_npy_read_rows_f32(r, r0, nr, x, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); break; }
    smx_status s = smx_cross_entropy_f32(x, (size_t)cols, nr, (size_t)cols, t + r0, SMX_INDEX_I64, &bo, l,
                                         wg ? x : NULL, (size_t)cols, NULL);
    if (s != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", in, smx_status_string(s)); break; }
    for (size_t i = 0; i < nr; i++) total += l[i];
    if (wl && o.reduction == SMX_REDUCTION_NONE && smx_npy_write_rows_f32(wl, l, nr / ocols, err, sizeof err) != SMX_OK) {
      rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
      break;
    }
    if (wg && smx_npy_write_rows_f32(wg, x, nr, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err); break; }
  }
  if (!rc && cli_signal_caught()) rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; no output was written");
  float value = o.reduction == SMX_REDUCTION_SUM ? (float)total : count ? (float)(total / (double)count) : NAN;
  if (!rc && wl && o.reduction != SMX_REDUCTION_NONE && smx_npy_write_rows_f32(wl, &value, 1, err, sizeof err) != SMX_OK)
    rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  free(x);
  free(l);
  free(t);
  smx_npy_close(r);
  if (rc) {
    if (wl) cli_npy_abort(wl);
    if (wg) cli_npy_abort(wg);
  } else {
    if (wl && cli_npy_finish(wl, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    if (wg) {
      if (rc) cli_npy_abort(wg);
      else if (cli_npy_finish(wg, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    }
  }
  if (!rc && !out) printf("%.9g\n", (double)value);
  return rc;
}
