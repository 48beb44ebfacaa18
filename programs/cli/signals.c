/* Terminating signals and temporary-file cleanup for the smx command; see signals.h. */
#define _POSIX_C_SOURCE 200809L
#include "cli/signals.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* How long a command may take to notice the flag before the handler ends it:
 * a block is computed in milliseconds, so only a read or write that blocks
 * (a stalled pipe, a FIFO without a writer) runs into it. */
#define GRACE_SECONDS 2

static const int terminating[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ };
#define N_TERMINATING (sizeof terminating / sizeof terminating[0])

/* The registry keeps its own copies of the paths, so that a writer may free
 * its temporary file's name while the name is still registered: finishing
 * unregisters only after the rename, and removing a name that was renamed
 * away is harmless. */
#define MAX_CLEANUP 16
#define MAX_PATH 4096
static char paths[MAX_CLEANUP][MAX_PATH];
static volatile sig_atomic_t used[MAX_CLEANUP];
static volatile sig_atomic_t caught = 0;
static volatile sig_atomic_t flag = 0;
static volatile sig_atomic_t deferred = 0;

void cli_cleanup_register(const char *path) {
  if (!path || strlen(path) >= MAX_PATH) return;
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (!used[i]) {
      strcpy(paths[i], path);
      atomic_signal_fence(memory_order_release);  /* the name is complete before the handler may see it */
      used[i] = 1;
      return;
    }
}

void cli_cleanup_unregister(const char *path) {
  if (!path) return;
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (used[i] && !strcmp(paths[i], path)) used[i] = 0;
}

void cli_cleanup_now(void) {
  for (int i = 0; i < MAX_CLEANUP; i++)  /* files first, then the directories that held them */
    if (used[i]) unlink(paths[i]);
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (used[i]) rmdir(paths[i]);
}

int cli_cleanup_pending(void) {
  int n = 0;
  for (int i = 0; i < MAX_CLEANUP; i++) n += used[i] != 0;
  return n;
}

/* Default action, unblocked, raised: the process ends as the signal says. */
static void die_by(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(sig, &sa, NULL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  _exit(128 + sig);  /* not reached: every signal here terminates by default */
}

static void on_signal(int sig) {
  if (deferred) {   /* outputs are being renamed as a set: act on it once they are done */
    if (!caught) caught = sig;
    flag = 1;
    return;
  }
  cli_cleanup_now();
  if (caught) die_by(caught);  /* a second signal, or the grace period ran out */
  caught = sig;
  flag = 1;
  alarm(GRACE_SECONDS);
}

void cli_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_NODEFER;  /* the grace alarm may arrive inside the handler of another signal */
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < N_TERMINATING; i++) sigaction(terminating[i], &sa, NULL);
}

void cli_signals_defer(int on) {
  deferred = on;
  /* a signal held meanwhile gets the usual grace: the command returns and
   * main re-raises it, or the alarm ends it */
  if (!on && caught) alarm(GRACE_SECONDS);
}

int cli_signal_caught(void) { return caught; }
volatile sig_atomic_t *cli_interrupt_flag(void) { return &flag; }

int cli_signals_exit(int rc) {
  if (!caught) return rc;
  alarm(0);
  cli_cleanup_now();
  die_by(caught);
  return rc;
}

void cli_signals_reset(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  alarm(0);
  for (size_t i = 0; i < N_TERMINATING; i++) sigaction(terminating[i], &sa, NULL);
  for (int i = 0; i < MAX_CLEANUP; i++) used[i] = 0;
  caught = 0;
  flag = 0;
  deferred = 0;
}
