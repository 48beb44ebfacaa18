/* File formats and dtypes named on the command line; see formats.h. */
#include "cli/formats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/message.h"
#include "cli/stream.h"
#include "io/npy_io.h"

int cli_parse_format(const char *s) {
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
  return cli_parse_format(ext);
}

int cli_parse_dtype(const char *s, smx_dtype *t) {
  if (!strcmp(s, "f32") || !strcmp(s, "float32")) *t = SMX_DTYPE_F32;
  else if (!strcmp(s, "f64") || !strcmp(s, "float64")) *t = SMX_DTYPE_F64;
  else if (!strcmp(s, "f16") || !strcmp(s, "float16")) *t = SMX_DTYPE_F16;
  else return 0;
  return 1;
}

int cli_resolve_format(const char *opt_name, int chosen, const char *path, int fallback, int *out) {
  int by_name = strcmp(path, "-") ? format_of_name(path) : -1;
  if (chosen >= 0 && by_name >= 0 && chosen != by_name)
    return smx_cli_usage_error("%s %s conflicts with the name %s", opt_name, format_name(chosen), path);
  *out = chosen >= 0 ? chosen : by_name >= 0 ? by_name : fallback;
  return 0;
}

int cli_parse_axis(const char *v, long *axis) {
  char *end = NULL;
  errno = 0;
  if (v && !strcmp(v, "last")) *axis = -1;
  else if (!v || !*v || (*axis = strtol(v, &end, 10), *end) || errno || *axis < -SMX_NPY_MAX_DIMS ||
           *axis >= SMX_NPY_MAX_DIMS)
    return smx_cli_usage_error("--axis must be a whole number (negative counts from the end), not '%s'", v ? v : "");
  return 0;
}

int cli_io_option(cli_io_opts *o, const char *a, const char *v) {
  if (!strcmp(a, "--axis") || !strcmp(a, "-a")) return cli_parse_axis(v, &o->axis) ? -1 : 2;
  if (!strcmp(a, "--format") || !strcmp(a, "--in-format")) {
    int f = v ? cli_parse_format(v) : -1;
    if (f < 0) {
      smx_cli_usage_error("%s must be npy, csv or tsv, not '%s'", a, v ? v : "");
      return -1;
    }
    if (a[2] == 'i') o->fmt_in = f;
    else o->fmt_out = f;
    return 2;
  }
  return 0;
}

int cli_input_format(const cli_io_opts *o, const char *path, int *fmt) {
  return cli_resolve_format("--in-format", o->fmt_in, path, CLI_FMT_NPY, fmt);
}

int cli_output_format(const cli_io_opts *o, const char *path, int fin, int *fmt) {
  int rc = cli_resolve_format("--format", o->fmt_out, path, CLI_FMT_NPY, fmt);
  if (!rc && !strcmp(path, "-") && o->fmt_out < 0) *fmt = fin;
  return rc;
}
