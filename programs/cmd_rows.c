/*
 * smx softmax | log-softmax | logsumexp IN -o OUT [options]
 *
 * Reads the options, opens IN (.npy, CSV or TSV; "-" is stdin), decides the
 * axis, the output dtype and the type computed in, and hands the work to the
 * engine (cli/engine.c). OUT is written through a temporary file renamed only
 * when everything succeeded, so an error or Ctrl-C never leaves a half-written
 * OUT and never clobbers an existing one.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "cli/message.h"
#include "cli/number.h"
#include "cli/signals.h"
#include "cli/stream.h"
#include "io/npy_shape.h"

/* The options and the input rules the three commands share. */
#define ROWS_OPTIONS                                                                             \
  "options:\n"                                                                                   \
  "  -o, --output FILE      output file (- for stdout); a regular file is written whole\n"       \
  "                         or not at all (a temporary renamed over it); a device, FIFO\n"       \
  "                         or socket is written in place, as a stream, never replaced\n"        \
  "  -a, --axis A           the axis, negative counts from the end (default -1)\n"               \
  "  -t, --temperature T    compute softmax(x / T), T > 0 (default 1)\n"                         \
  "  --dtype f32|f64|f16    output dtype (default: the input's float type; float32\n"            \
  "                         for integer input, float64 for text input)\n"                        \
  "  --format npy|csv|tsv   output format (default: from the extension of OUT, else\n"           \
  "                         npy; the input's format for -o -)\n"                                 \
  "  --in-format npy|csv|tsv  input format (default: from the extension of IN, else npy)\n"      \
  "  --algo A               auto, three-pass, two-pass or online (default auto)\n"               \
  "  --threads N            threads to use (default 1)\n"                                        \
  "  --masked-row zero|nan  rows of all -inf: 0 / -inf (default) or NaN\n"                       \
  "  -q, --quiet            no progress line on stderr\n"                                        \
  "IN may be - for stdin. .npy input of any dtype, byte order and C or Fortran order\n"          \
  "is streamed in bounded memory and computed in its own precision (float64 with the\n"         \
  "float64 kernels, float16 with the float16 ones, everything else in float32, or in\n"         \
  "float64 with --dtype f64); the output keeps the input's order. CSV/TSV: one row per\n"       \
  "line, ',' or tab between values, nan/inf/-inf accepted, blank and '#' lines skipped;\n"      \
  "written with round-trip digits (%.9g float32, %.17g float64, %.5g float16).\n"

const char smx_softmax_help[] =
    "usage: smx softmax IN -o OUT [options]\n"
    "softmax over an axis (default the last): exp(x / T) / sum(exp(x / T)).\n" ROWS_OPTIONS;
const char smx_log_softmax_help[] =
    "usage: smx log-softmax IN -o OUT [options]\n"
    "log-softmax over an axis (default the last), computed without forming softmax.\n" ROWS_OPTIONS;
const char smx_logsumexp_help[] =
    "usage: smx logsumexp IN -o OUT [options]\n"
    "log-sum-exp over an axis (default the last); the axis is removed from the shape.\n" ROWS_OPTIONS;

/* A mapped input that shrinks under us faults on access: remove what we were
 * writing and leave with the input error code. */
static void on_sigbus(int sig) {
  static const char msg[] = "smx: the input file shrank while it was being read; no output was written\n";
  (void)sig;
  cli_cleanup_now();
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(SMX_CLI_EXIT_INPUT);
}

static int parse_algo(const char *s, smx_algo *a) {
  static const char *names[] = { "auto", "three-pass", "two-pass", "online" };
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) { *a = (smx_algo)i; return 1; }
  return 0;
}

static int parse_format(const char *s) {
  return !strcmp(s, "npy") ? CLI_FMT_NPY : !strcmp(s, "csv") ? CLI_FMT_CSV : !strcmp(s, "tsv") ? CLI_FMT_TSV : -1;
}
static const char *format_name(int f) { return f == CLI_FMT_CSV ? "csv" : f == CLI_FMT_TSV ? "tsv" : "npy"; }

/* The format a file name implies (case-insensitive extension), or -1. */
static int format_of_name(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return -1;
  char ext[5] = { 0 };
  for (int i = 0; i < 4 && dot[1 + i]; i++) ext[i] = (char)(dot[1 + i] | 0x20);
  if (strlen(dot + 1) != 3) return -1;
  return parse_format(ext);
}

static int parse_dtype(const char *s, smx_dtype *t) {
  if (!strcmp(s, "f32") || !strcmp(s, "float32")) *t = SMX_DTYPE_F32;
  else if (!strcmp(s, "f64") || !strcmp(s, "float64")) *t = SMX_DTYPE_F64;
  else if (!strcmp(s, "f16") || !strcmp(s, "float16")) *t = SMX_DTYPE_F16;
  else return 0;
  return 1;
}

/* Resolves the format of one end: explicit choice, the name, or fallback. */
static int resolve_format(const char *opt_name, int chosen, const char *path, int fallback, int *out) {
  int by_name = strcmp(path, "-") ? format_of_name(path) : -1;
  if (chosen >= 0 && by_name >= 0 && chosen != by_name)
    return smx_cli_usage_error("%s %s conflicts with the name %s", opt_name, format_name(chosen), path);
  *out = chosen >= 0 ? chosen : by_name >= 0 ? by_name : fallback;
  return 0;
}

static int run_rows(const char *cmd, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  smx_options o = { SMX_ALGO_AUTO, 0.0, 0, 1 };
  int quiet = 0, fmt_out = -1, fmt_in = -1, have_dtype = 0;
  long axis = -1;
  smx_dtype odt = SMX_DTYPE_F32;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!v) return smx_cli_usage_error("%s needs a file name", a);
      out = v; i++;
    } else if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!v) return smx_cli_usage_error("%s needs a value", a);
      if (!smx_cli_parse_temperature(v, &o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
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
    } else if (!strcmp(a, "--axis") || !strcmp(a, "-a")) {
      char *end = NULL;
      errno = 0;
      if (v && !strcmp(v, "last")) axis = -1;
      else if (!v || !*v || (axis = strtol(v, &end, 10), *end) || errno || axis < -SMX_NPY_MAX_DIMS ||
               axis >= SMX_NPY_MAX_DIMS)
        return smx_cli_usage_error("--axis must be a whole number (negative counts from the end), not '%s'",
                                   v ? v : "");
      i++;
    } else if (!strcmp(a, "--dtype")) {
      if (!v || !parse_dtype(v, &odt)) return smx_cli_usage_error("--dtype must be f32, f64 or f16, not '%s'", v ? v : "");
      have_dtype = 1; i++;
    } else if (!strcmp(a, "--format") || !strcmp(a, "--in-format")) {
      int f = v ? parse_format(v) : -1;
      if (f < 0) return smx_cli_usage_error("%s must be npy, csv or tsv, not '%s'", a, v ? v : "");
      if (a[2] == 'i') fmt_in = f; else fmt_out = f;
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
  if (!in) return smx_cli_usage_error("%s needs an input file (.npy, .csv or .tsv; - for stdin)", cmd);
  if (!out) return smx_cli_usage_error("%s needs -o OUT (.npy, .csv or .tsv; - for stdout)", cmd);
  int fin, fout, urc;
  if ((urc = resolve_format("--in-format", fmt_in, in, CLI_FMT_NPY, &fin)) != 0) return urc;
  if ((urc = resolve_format("--format", fmt_out, out, CLI_FMT_NPY, &fout)) != 0) return urc;
  if (!strcmp(out, "-") && fmt_out < 0) fout = fin;
  cli_op op = !strcmp(cmd, "logsumexp") ? CLI_LOGSUMEXP : !strcmp(cmd, "log-softmax") ? CLI_LOG_SOFTMAX : CLI_SOFTMAX;

  char err[512];
  cli_src s;
  smx_status st = cli_src_open(&s, in, (cli_format)fin, err, sizeof err);
  if (st != SMX_OK) {
    cli_src_close(&s);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  }
  int nd = s.ndim;
  if ((nd == 0 && axis != 0 && axis != -1) || (nd > 0 && (axis < -nd || axis >= nd))) {
    int rc = smx_cli_usage_error("--axis %ld is out of range for %s, which has %d dimension%s", axis, s.name, nd,
                                 nd == 1 ? "" : "s");
    cli_src_close(&s);
    return rc;
  }
  int ax = nd == 0 ? 0 : (int)(axis < 0 ? axis + nd : axis);

  /* output dtype: --dtype, else the input's float type (float64 for text,
   * float32 for integers and bool); computed in the input's precision */
  smx_dtype idt = s.dtype;
  if (!have_dtype) odt = idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F64 ? idt : SMX_DTYPE_F32;
  int in_float = idt == SMX_DTYPE_F16 || idt == SMX_DTYPE_F32 || idt == SMX_DTYPE_F64;
  cli_ctype ct = idt == SMX_DTYPE_F16 && odt == SMX_DTYPE_F16 ? CLI_F16
               : idt == SMX_DTYPE_F64 || (!in_float && odt == SMX_DTYPE_F64) ? CLI_F64 : CLI_F32;

  uint64_t oshape[SMX_NPY_MAX_DIMS], stshape[SMX_NPY_MAX_DIMS];
  int ond = 0;
  for (int d = 0; d < nd; d++) {
    stshape[d] = s.fortran ? s.shape[nd - 1 - d] : s.shape[d];
    if (op != CLI_LOGSUMEXP || d != ax) oshape[ond++] = s.shape[d];
  }
  /* An empty input can reduce to a result no file can hold, as logsumexp
   * over axis 0 of shape (0, 2^63 - 1): the input is what is wrong there. */
  smx_npy_info oinfo;
  char why[256];
  if (smx_io_shape_set(&oinfo, odt, ond, oshape, SMX_E_INVALID_ARG, why, sizeof why) != SMX_OK) {
    cli_src_close(&s);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s over axis %d gives a result too big to write: %s", in, cmd, ax, why);
  }
  int st_axis = s.fortran && nd > 0 ? nd - 1 - ax : ax;
  int random = cli_plan_random(nd, stshape, st_axis, ct);
  if (random && cli_src_in_order_only(&s) && (st = cli_src_spool(&s, err, sizeof err)) != SMX_OK) {
    cli_src_close(&s);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  }

  struct sigaction sa, old_bus;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigaction(SIGBUS, &sa, &old_bus);

  cli_sink k;
  st = cli_sink_open(&k, out, (cli_format)fout, odt, ond, oshape, s.fortran, random, cli_out_type(op, ct), err,
                     sizeof err);
  int rc = 0;
  if (st != SMX_OK) {
    rc = smx_cli_fail(st == SMX_E_INVALID_ARG ? SMX_CLI_EXIT_USAGE : SMX_CLI_EXIT_OUTPUT, "%s", err);
  } else {
    cli_run_args ra = { op, ct, st_axis, o, !quiet && isatty(STDERR_FILENO), s.name, cli_interrupt_flag() };
    rc = cli_run(&s, &k, &ra);
    if (!rc && cli_signal_caught()) rc = SMX_CLI_EXIT_INTERRUPTED;
    if (rc == SMX_CLI_EXIT_INTERRUPTED) smx_cli_fail(rc, "interrupted; %s was not written", out);
    if (rc) cli_sink_abort(&k);
    else if (cli_sink_finish(&k, err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
  }
  cli_src_close(&s);
  sigaction(SIGBUS, &old_bus, NULL);
  return rc;
}

int smx_cmd_softmax(int argc, char **argv) { return run_rows("softmax", argc, argv); }
int smx_cmd_log_softmax(int argc, char **argv) { return run_rows("log-softmax", argc, argv); }
int smx_cmd_logsumexp(int argc, char **argv) { return run_rows("logsumexp", argc, argv); }
