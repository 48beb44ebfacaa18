/*
 * The smx command's messages: "smx: <message>" on stderr. Messages quote
 * file names and the bytes of bad input; a carriage return, an escape
 * sequence or any other control byte printed raw would garble the terminal
 * or hide part of the message, so every control byte is written as an escape
 * (\r, \t, \n, \xNN). Bytes from 0x80 up pass unchanged: they are UTF-8 text
 * in names a user typed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/message.h"
#include "cli/signals.h"

void smx_cli_put_escaped(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = *p;
    if (c >= 0x20 && c != 0x7f) fputc((int)c, f);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\r') fputs("\\r", f);
    else if (c == '\t') fputs("\\t", f);
    else fprintf(f, "\\x%02x", c);
  }
}

/* The command whose help a usage error points to, or NULL. */
static const char *command;
void smx_cli_set_command(const char *name) { command = name; }

/* Where messages are held instead of printed (smx_cli_hold_messages), or NULL. */
static char *held;
static size_t held_cap;

void smx_cli_hold_messages(char *buf, size_t cap) {
  held = buf && cap ? buf : NULL;
  held_cap = cap;
  if (held) held[0] = '\0';
}

static void vmessage(int code, const char *fmt, va_list ap) {
  /* the reader of our output went away: like any command in a pipeline, end
   * quietly (main re-raises SIGPIPE) */
  if (cli_signal_caught() == SIGPIPE) return;
  char small[512];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  char *text = small;
  if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL) vsnprintf(text, (size_t)n + 1, fmt, again);
  va_end(again);
  if (!text) text = small;  /* out of memory: the message cut short is still better than none */
  if (held) {   /* the first error is what the reporting rank will need; notes are dropped */
    if (code != SMX_CLI_EXIT_OK && !held[0] && n >= 0) snprintf(held, held_cap, "%s", text);
    if (text != small) free(text);
    return;
  }
  fputs("smx: ", stderr);
  if (n >= 0) smx_cli_put_escaped(stderr, text);
  fputc('\n', stderr);
  if (text != small) free(text);
}

int smx_cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage(SMX_CLI_EXIT_USAGE, fmt, ap);
  va_end(ap);
  if (!held) fprintf(stderr, "smx: try 'smx %s%s--help'\n", command ? command : "", command ? " " : "");
  return SMX_CLI_EXIT_USAGE;
}

int smx_cli_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage(code, fmt, ap);
  va_end(ap);
  return code;
}
