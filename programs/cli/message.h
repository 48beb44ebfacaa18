/*
 * What every smx command says and returns: the documented exit codes and
 * the "smx: <message>" lines on stderr. Commands include this, never the
 * command table, so that the plumbing does not depend on the commands.
 */
#ifndef SMX_PROGRAMS_CLI_MESSAGE_H
#define SMX_PROGRAMS_CLI_MESSAGE_H

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

/* The command whose help the usage hint names ("try 'smx topk --help'"); NULL: the overview's. */
void smx_cli_set_command(const char *name);
/* "smx: <message>" and the usage hint on stderr; returns SMX_CLI_EXIT_USAGE. */
int smx_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "smx: <message>" on stderr; returns code. */
int smx_cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* buf != NULL: from now on the first error message (without "smx: ") is kept
 * in buf[0 .. cap) and nothing is printed, notes and usage hints included;
 * buf NULL: print again. For the MPI ranks other than 0 in smx eval, whose
 * messages would repeat rank 0's and interleave with them (eval_dist.c
 * hands a message rank 0 lacks over to it). */
void smx_cli_hold_messages(char *buf, size_t cap);
/* s with control bytes written as \r, \t, \n or \xNN. */
void smx_cli_put_escaped(FILE *f, const char *s);

#endif
