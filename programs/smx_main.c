/* The smx program: the command line lives in smx_cli_main (smx.c), which
 * the CLI fuzz target calls in-process. Signals are caught here, around it:
 * a terminating signal removes the temporary files and, once the command
 * has returned, ends the process as that signal would (cli/signals.h). */
#include "commands.h"
#include "cli/signals.h"

int main(int argc, char **argv) {
  cli_signals_install();
  return cli_signals_exit(smx_cli_main(argc, argv));
}
