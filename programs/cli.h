/* Shared pieces of the smx command: exit codes and message helpers. */
#ifndef SMX_PROGRAMS_CLI_H
#define SMX_PROGRAMS_CLI_H

#include <stdio.h>

/* Documented exit codes (smx --help). */
enum {
  SMX_CLI_EXIT_OK = 0,
  SMX_CLI_EXIT_USAGE = 1,        /* bad command line                       */
  SMX_CLI_EXIT_INPUT = 2,        /* an input file is missing or malformed   */
  SMX_CLI_EXIT_OUTPUT = 3,       /* the output could not be written         */
  SMX_CLI_EXIT_COMPUTE = 4,      /* the library refused the data            */
  SMX_CLI_EXIT_INTERRUPTED = 130 /* SIGINT / SIGTERM: no output was left    */
};

/* "smx: <message>" and the usage hint on stderr; returns SMX_CLI_EXIT_USAGE. */
int smx_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "smx: <message>" on stderr; returns code. */
int smx_cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s with control bytes written as \r, \t, \n or \xNN (programs/cli_message.c). */
void smx_cli_put_escaped(FILE *f, const char *s);

/* A whole-string finite number (subnormals included: strtod's ERANGE for them
 * is not an error); 0 if v is not one. programs/cli_number.c */
int smx_cli_parse_number(const char *v, double *out);
/* The temperature rule of every command: any positive finite number. */
int smx_cli_parse_temperature(const char *v, double *out);
/* The one message for a refused temperature option; returns SMX_CLI_EXIT_USAGE. */
int smx_cli_temperature_error(const char *opt, const char *v);

/* The whole command line, argv[0] being the program: what main returns.
 * Separate from main so that a fuzz target can run it in-process. */
int smx_cli_main(int argc, char **argv);

int smx_cmd_rows(const char *cmd, int argc, char **argv);
int smx_cmd_xent(int argc, char **argv);   /* programs/cmd_xent.c */
int smx_cmd_topk(int argc, char **argv);     /* programs/cmd_topk.c   */
int smx_cmd_sample(int argc, char **argv);   /* programs/cmd_sample.c */
int smx_cmd_score(int argc, char **argv);
int smx_cmd_eval(int argc, char **argv);

#endif
