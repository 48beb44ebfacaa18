/*
 * smx softmax | log-softmax | logsumexp IN.npy -o OUT.npy [options]
 *
 * Streams IN in blocks of rows (the last axis is the softmax axis), computes
 * with the library's rows functions and writes OUT through a temporary file
 * that is renamed only when everything succeeded, so an error or Ctrl-C never
 * leaves a half-written OUT and never clobbers an existing one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "smx/smx.h"
#include "smx/smx_io.h"

/* rows per block: about 16 MiB of floats, at least one row */
#define BLOCK_BYTES ((size_t)16 << 20)

static volatile sig_atomic_t interrupted = 0;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

/* A progress line on stderr, only when it is a terminal and not -q; at most
 * every 0.2 s, cleared at the end. */
typedef struct progress { int on; double last; const char *what; } progress;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress_show(progress *p, uint64_t done, uint64_t total) {
  if (!p->on || total == 0) return;
  double t = now_s();
  if (t - p->last < 0.2 && done < total) return;
  p->last = t;
  fprintf(stderr, "\rsmx: %s %3d%%", p->what, (int)(100.0 * (double)done / (double)total));
  fflush(stderr);
}

static void progress_end(progress *p) {
  if (p->on) fprintf(stderr, "\r\033[K");
}

static int parse_algo(const char *s, smx_algo *a) {
  static const char *names[] = { "auto", "three-pass", "two-pass", "online" };
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) { *a = (smx_algo)i; return 1; }
  return 0;
}

int smx_cmd_rows(const char *cmd, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  smx_options o = { SMX_ALGO_AUTO, 0.0f, 0, 1 };
  int quiet = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      char *end;
      if (!v) return smx_cli_usage_error("%s needs a value", a);
      errno = 0;
      double t = strtod(v, &end);
      if (*end || errno || !(t > 0.0) || !(t <= 1.7e308)) return smx_cli_usage_error("--temperature must be a positive finite number, not '%s'", v);
      o.temperature = t; i++;
    } else if (!strcmp(a, "--algo")) {
      if (!v || !parse_algo(v, &o.algo)) return smx_cli_usage_error("--algo must be auto, three-pass, two-pass or online");
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
    } else if (!strcmp(a, "--axis")) {
      if (!v || (strcmp(v, "-1") && strcmp(v, "last")))
        return smx_cli_usage_error("only --axis -1 (the last axis) is supported in this version");
      i++;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      return smx_cli_usage_error("unknown option '%s' for %s", a, cmd);
    } else if (!in) {
      in = a;
    } else {
      return smx_cli_usage_error("%s takes one input file; '%s' is extra", cmd, a);
    }
  }
  if (!in) return smx_cli_usage_error("%s needs an input .npy file (or - for stdin)", cmd);
  if (!out) return smx_cli_usage_error("%s needs -o OUT.npy (or -o - for stdout)", cmd);
  int lse = !strcmp(cmd, "logsumexp"), logsm = !strcmp(cmd, "log-softmax");

  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(in, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  smx_dtype odt = info->dtype == SMX_DTYPE_F16 || info->dtype == SMX_DTYPE_F64 ? info->dtype : SMX_DTYPE_F32;
  if (info->dtype == SMX_DTYPE_F64 && !quiet)
    fprintf(stderr, "smx: note: %s is float64; it is computed in float32 (float64 kernels are not in this version)\n",
            in);
  uint64_t rows = info->rows, cols = info->cols;
  uint64_t oshape[SMX_NPY_MAX_DIMS];
  int ondim = info->ndim;
  for (int d = 0; d < info->ndim; d++) oshape[d] = info->shape[d];
  if (lse) ondim = info->ndim > 0 ? info->ndim - 1 : 0;   /* the softmax axis is reduced away */

  smx_npy_writer *w = NULL;
  if (smx_npy_writer_open(out, odt, ondim, oshape, NULL, &w, err, sizeof err) != SMX_OK) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  /* logsumexp: a block must fill whole rows of the output (its last axis) */
  uint64_t ocols = lse ? smx_npy_writer_info(w)->cols : 1;
  if (ocols < 1) ocols = 1;
  size_t block = cols ? BLOCK_BYTES / sizeof(float) / (size_t)cols : BLOCK_BYTES / sizeof(float);
  if (block < 1) block = 1;
  if (block > rows) block = rows ? (size_t)rows : 1;
  if (lse) block = block < ocols ? (size_t)ocols : block / (size_t)ocols * (size_t)ocols;
  float *x = cols ? malloc(block * (size_t)cols * sizeof(float)) : NULL, *l = lse ? malloc(block * sizeof(float)) : NULL;
  if ((cols && !x) || (lse && !l)) {
    free(x); free(l);
    smx_npy_writer_abort(w);
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu rows of %s", block, in);
  }
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  progress pr = { !quiet && isatty(STDERR_FILENO), 0.0, in };
  int rc = 0;
  for (uint64_t r0 = 0; r0 < rows && !rc; r0 += block) {
    progress_show(&pr, r0, rows);
    if (interrupted) { rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", out); break; }
    size_t nr = (size_t)(rows - r0 < block ? rows - r0 : block);
    if (cols && smx_npy_read_rows_f32(r, r0, nr, x, err, sizeof err) != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err); break; }
    smx_status s = lse ? smx_logsumexp_rows_f32(x, (size_t)cols, l, nr, (size_t)cols, &o)
                 : logsm ? smx_log_softmax_rows_f32(x, (size_t)cols, x, (size_t)cols, nr, (size_t)cols, &o)
                         : smx_softmax_rows_f32(x, (size_t)cols, x, (size_t)cols, nr, (size_t)cols, &o);
    if (s != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", in, smx_status_string(s)); break; }
    s = lse ? smx_npy_write_rows_f32(w, l, nr / ocols, err, sizeof err)   /* one value per input row */
            : (cols ? smx_npy_write_rows_f32(w, x, nr, err, sizeof err) : SMX_OK);
    if (s != SMX_OK) { rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err); break; }
  }
  progress_end(&pr);
  free(x);
  free(l);
  smx_npy_close(r);
  if (!rc && interrupted) rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted; %s was not written", out);
  if (rc) smx_npy_writer_abort(w);
  else if (smx_npy_writer_finish(w, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return rc;
}
