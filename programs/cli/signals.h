/*
 * Signals that end the smx command, and the temporary files they must not
 * leave behind.
 *
 * Every signal whose default action terminates the process (HUP, INT, QUIT,
 * TERM, PIPE, USR1, USR2, ALRM, XCPU, XFSZ) is caught. The handler removes
 * the registered temporary files at once and raises a flag; the command
 * notices the flag between blocks, says what was not written and returns,
 * and main() then re-raises the signal with its default action, so the exit
 * status is the conventional one (a shell sees 128 + the signal number). A
 * command stuck in a blocking read or write past a short grace period, or a
 * second signal, ends the process from the handler, after the same cleanup.
 */
#ifndef SMX_PROGRAMS_CLI_SIGNALS_H
#define SMX_PROGRAMS_CLI_SIGNALS_H

#include <signal.h>

void cli_signals_install(void);
/* on = 1: a terminating signal is only recorded (flag and cli_signal_caught),
 * with no cleanup and no exit, until on = 0; for the few renames that must
 * all happen or none (outset.h). A signal held is then handled as one that
 * arrived just after. */
void cli_signals_defer(int on);
/* The signal that arrived, or 0. */
int cli_signal_caught(void);
/* The flag the engine polls between blocks (nonzero once a signal arrived). */
volatile sig_atomic_t *cli_interrupt_flag(void);
/* If a signal arrived: removes what is registered and re-raises it (does not
 * return). Otherwise returns rc. */
int cli_signals_exit(int rc);
/* For an in-process caller that runs several commands (the fuzz target):
 * forget a caught signal and the registrations, restore the default actions. */
void cli_signals_reset(void);

/* Paths removed by the handler: temporary files first, then directories.
 * The registry copies the string; NULL is ignored. */
void cli_cleanup_register(const char *path);
void cli_cleanup_unregister(const char *path);
void cli_cleanup_now(void);  /* async-signal-safe */
int cli_cleanup_pending(void);  /* how many paths are registered */

#endif
