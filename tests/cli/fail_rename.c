/*
 * A test shim, LD_PRELOADed into smx by tests/cli/attention_test.sh: rename()
 * fails with EIO when its target's last path component equals
 * $SMX_TEST_FAIL_RENAME, and works as usual otherwise. It reaches the one
 * step of a set of outputs that no file-system setup can make fail on cue:
 * the second rename, after the first output already has its new content
 * (programs/cli/outset.c must then put the first one back).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rename(const char *from, const char *to) {
  const char *want = getenv("SMX_TEST_FAIL_RENAME");
  const char *base = strrchr(to, '/');
  base = base ? base + 1 : to;
  if (want && *want && !strcmp(base, want)) {
    errno = EIO;
    return -1;
  }
  int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  return real(from, to);
}
