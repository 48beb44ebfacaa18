#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#endif
#include "guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

guard guard_alloc(size_t bytes, int at_start) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  size_t body = (bytes + pg - 1) / pg * pg;
  if (body == 0) body = pg;
  guard g;
  g.len = body + 2 * pg;
  g.base = mmap(NULL, g.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g.base == MAP_FAILED) { perror("mmap"); exit(2); }
  char *b = (char *)g.base + pg;
  if (mprotect(b, body, PROT_READ | PROT_WRITE) != 0) { perror("mprotect"); exit(2); }
  g.p = at_start ? b : b + body - bytes;
  return g;
}

void guard_free(guard g) { munmap(g.base, g.len); }
