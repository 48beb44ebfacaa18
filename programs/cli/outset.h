/*
 * Several outputs of one command that appear together or not at all.
 *
 * Each output is written to a temporary file next to its name (stdout, a
 * device or a FIFO is written in place, as smx_io_out does). Committing
 * first flushes every temporary file to the disk, so that the errors that
 * come late (ENOSPC or EIO at fsync) are met before any name changes; then
 * renames them one after the other. Should a rename fail, the outputs
 * already renamed are put back as they were: an existing file from a hard
 * link kept for that moment, a new one removed. A terminating signal that
 * arrives during the renames is held until they are done (cli/signals.h), so
 * that it cannot split the set either.
 *
 * A stream output cannot be taken back once written: write the regular
 * outputs, call cli_outset_sync, then write the streams, then commit.
 */
#ifndef SMX_PROGRAMS_CLI_OUTSET_H
#define SMX_PROGRAMS_CLI_OUTSET_H

#include "io/fileio.h"

#define CLI_OUTSET_MAX 4

typedef struct cli_outset {
  int n;
  int synced;
  struct {
    smx_io_out out;
    const char *path;
    char *tmp_copy;   /* the temporary name as registered for signal cleanup */
  } f[CLI_OUTSET_MAX];
} cli_outset;

void cli_outset_init(cli_outset *s);
/* Opens output path as the next one of the set; *fd is where to write it and
 * *stream says whether it is written in place. 0, or an errno value (EISDIR
 * for a directory) with nothing left behind for this output. */
int cli_outset_add(cli_outset *s, const char *path, int *fd, int *stream);
/* Every temporary file to the disk (mode kept, fsync). 0, or an errno value
 * with *failed (the output's index) and *what (the step); the set is then
 * aborted. */
int cli_outset_sync(cli_outset *s, int *failed, const char **what);
/* Syncs if not done, then renames every temporary over its name, all or
 * none. Same results as cli_outset_sync; the set is finished either way. */
int cli_outset_commit(cli_outset *s, int *failed, const char **what);
/* Removes every temporary file: existing outputs stay as they were. */
void cli_outset_abort(cli_outset *s);

#endif
