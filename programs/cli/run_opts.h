/*
 * The options every row command shares for its run, beside its files
 * (formats.h): -o / --output, --threads, --masked-row, -q / --quiet, and the
 * one positional argument, the input file. One parser, so that each command
 * spells them and their errors the same way.
 */
#ifndef SMX_PROGRAMS_CLI_RUN_OPTS_H
#define SMX_PROGRAMS_CLI_RUN_OPTS_H

#define CLI_RUN_MASKED_ROW 0x1u   /* the command takes --masked-row */

typedef struct cli_run_opts {
  unsigned accepts;     /* CLI_RUN_* */
  const char *in, *out; /* NULL until given */
  int threads;          /* 1 unless given */
  unsigned flags;       /* SMX_FLAG_MASKED_ROW_NAN from --masked-row nan */
  int quiet;
} cli_run_opts;
#define CLI_RUN_OPTS_INIT(accepts) { (accepts), 0, 0, 1, 0u, 0 }

/* Reads option a (v: the next argument, or NULL) when it is one of the shared
 * ones. Returns how many arguments it took (0: a is not one of them), or -1
 * after a usage error's message. */
int cli_run_option(cli_run_opts *o, const char *a, const char *v);

/* a is none of the command's options: the input file (what names it in the
 * messages, e.g. "input file"), or an unknown option or an extra file. Returns
 * 0, or the usage error's exit code after its message. */
int cli_run_positional(cli_run_opts *o, const char *cmd, const char *what, const char *a);
#endif
