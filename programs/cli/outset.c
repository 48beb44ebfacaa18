/* Outputs committed together; see outset.h. */
#define _POSIX_C_SOURCE 200809L
#include "cli/outset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/signals.h"

void cli_outset_init(cli_outset *s) { memset(s, 0, sizeof *s); }

int cli_outset_add(cli_outset *s, const char *path, int *fd, int *stream) {
  if (s->n == CLI_OUTSET_MAX) return EINVAL;
  int i = s->n;
  int e = smx_io_out_open(&s->f[i].out, path);
  if (e) return e;
  s->f[i].path = path;
  if (s->f[i].out.tmp) {
    /* the registry keeps its own copy; ours is for unregistering after
     * smx_io_out has freed its name */
    s->f[i].tmp_copy = strdup(s->f[i].out.tmp);
    if (!s->f[i].tmp_copy) {
      smx_io_out_abort(&s->f[i].out);
      return ENOMEM;
    }
    cli_cleanup_register(s->f[i].tmp_copy);
  }
  *fd = s->f[i].out.fd;
  *stream = s->f[i].out.stream;
  s->n++;
  return 0;
}

static void forget(cli_outset *s, int i) {
  cli_cleanup_unregister(s->f[i].tmp_copy);
  free(s->f[i].tmp_copy);
  s->f[i].tmp_copy = NULL;
}

void cli_outset_abort(cli_outset *s) {
  for (int i = 0; i < s->n; i++) {
    smx_io_out_abort(&s->f[i].out);   /* unlinks first, then the name leaves the registry */
    forget(s, i);
  }
  s->n = 0;
}

int cli_outset_sync(cli_outset *s, int *failed, const char **what) {
  for (int i = 0; i < s->n; i++) {
    smx_io_out *o = &s->f[i].out;
    if (!o->tmp) continue;
    int e = 0;
    if (o->keep_mode && fchmod(o->fd, o->mode) != 0) e = errno, *what = "cannot set the file mode";
    else if (fsync(o->fd) != 0 && errno != EINVAL) e = errno, *what = "fsync failed";
    if (e) {
      *failed = i;
      cli_outset_abort(s);
      return e;
    }
  }
  s->synced = 1;
  return 0;
}

/* A second name for an existing regular target, to put it back if a later
 * rename of the set fails. NULL when there is nothing to keep (no file yet),
 * or when no hard link can be made (a file system without them): *lost then
 * says so, and a rollback leaves that output as newly written rather than
 * remove the only copy of anything. */
static char *keep_old(const char *path, int *lost) {
  struct stat st;
  *lost = 0;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
  char *name = NULL;
  int fd;
  if (smx_io_create_temp(path, &name, &fd) != 0) {   /* a fresh unique name next to it */
    *lost = 1;
    return NULL;
  }
  close(fd);
  unlink(name);
  if (link(path, name) != 0) {
    free(name);
    *lost = 1;
    return NULL;
  }
  cli_cleanup_register(name);
  return name;
}

static void drop_old(char *name) {
  if (!name) return;
  unlink(name);
  cli_cleanup_unregister(name);
  free(name);
}

int cli_outset_commit(cli_outset *s, int *failed, const char **what) {
  int e = 0;
  if (!s->synced && (e = cli_outset_sync(s, failed, what))) return e;
  char *old[CLI_OUTSET_MAX] = { NULL };
  int existed[CLI_OUTSET_MAX] = { 0 };
  cli_signals_defer(1);
  /* only an output followed by another rename can need its old file back */
  for (int i = 0; i + 1 < s->n; i++) {
    int lost;
    if (!s->f[i].out.tmp) continue;
    old[i] = keep_old(s->f[i].path, &lost);
    existed[i] = old[i] != NULL || lost;
  }
  int done = 0;
  for (; done < s->n; done++) {
    forget(s, done);   /* renamed or removed by the commit below, either way */
    if ((e = smx_io_out_commit(&s->f[done].out, what)) != 0) break;
  }
  if (e) {
    *failed = done;
    for (int j = done + 1; j < s->n; j++) {
      smx_io_out_abort(&s->f[j].out);
      forget(s, j);
    }
    for (int j = 0; j < done; j++) {   /* undo the renames already made */
      if (!s->f[j].out.path) continue;   /* a stream: written, cannot be taken back */
      if (old[j]) {
        if (rename(old[j], s->f[j].path) == 0) {
          cli_cleanup_unregister(old[j]);
          free(old[j]);
          old[j] = NULL;
        }
      } else if (!existed[j]) {
        unlink(s->f[j].path);
      }
    }
  }
  for (int i = 0; i < s->n; i++) drop_old(old[i]);
  s->n = 0;
  cli_signals_defer(0);
  return e;
}
