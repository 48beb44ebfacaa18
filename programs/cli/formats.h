/*
 * The options every streamed command shares for its files: the format of
 * each end (npy, csv or tsv; from --format / --in-format, else the file's
 * extension, else npy), an output dtype and the axis.
 */
#ifndef SMX_PROGRAMS_CLI_FORMATS_H
#define SMX_PROGRAMS_CLI_FORMATS_H

#include "io/npy_io.h"

/* CLI_FMT_* of stream.h for "npy", "csv" or "tsv"; -1 otherwise. */
int cli_parse_format(const char *s);
/* "f32" / "float32", "f64" / "float64", "f16" / "float16"; 0 otherwise. */
int cli_parse_dtype(const char *s, smx_dtype *t);
/* The format of one end: the chosen one (-1: none), which must agree with
 * the extension of path when it has one of the three, else the extension's,
 * else fallback. Returns 0, or the usage error's exit code after its message. */
int cli_resolve_format(const char *opt_name, int chosen, const char *path, int fallback, int *out);

/* The options every streamed command takes for its files and its axis:
 * --in-format, --format and -a / --axis. */
typedef struct cli_io_opts {
  int fmt_in, fmt_out;  /* CLI_FMT_*, or -1: from the file names */
  long axis;            /* negative counts from the end          */
} cli_io_opts;
#define CLI_IO_OPTS_INIT { -1, -1, -1 }
/* Reads option a (v: the next argument, or NULL) when it is one of them.
 * Returns how many arguments it took (0: a is not one of them), or -1 after
 * a usage error's message. */
int cli_io_option(cli_io_opts *o, const char *a, const char *v);
/* The format of the input at path. Returns 0, or the usage error's exit code. */
int cli_input_format(const cli_io_opts *o, const char *path, int *fmt);
/* The format of an output at path; "-" without --format takes the input's
 * format fin. Returns 0, or the usage error's exit code. */
int cli_output_format(const cli_io_opts *o, const char *path, int fin, int *fmt);

/* --axis A: a whole number, negative counting from the end, or "last".
 * Returns 0, or the usage error's exit code after its message. */
int cli_parse_axis(const char *v, long *axis);

#endif
