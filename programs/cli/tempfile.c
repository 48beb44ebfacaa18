/* Unlinked temporary files of the streaming engine; see stream.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/stream.h"

int cli_temp_fd(void) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  char *path = malloc(strlen(dir) + 20);  /* no O_TMPFILE here: create and unlink */
  if (!path) return -1;
  sprintf(path, "%s/smx.XXXXXX", dir);
  fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  free(path);
  return fd;
}
