#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#endif
#include "guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Freed mappings are kept for the next buffer of the same size (the driver
 * asks for the same sizes many times over): an mmap, mprotect and munmap per
 * buffer cost more system time than the checks. A reused buffer holds what
 * its last user left, so callers fill every byte they read. */
#define KEEP 32
static guard kept[KEEP];
static int nkept;

guard guard_alloc(size_t bytes, int at_start) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  size_t body = (bytes + pg - 1) / pg * pg;
  if (body == 0) body = pg;
  guard g;
  g.len = body + 2 * pg;
  g.base = NULL;
  for (int i = 0; i < nkept; i++)
    if (kept[i].len == g.len) {
      g.base = kept[i].base;
      kept[i] = kept[--nkept];
      break;
    }
  if (!g.base) {
    g.base = mmap(NULL, g.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g.base == MAP_FAILED) { perror("mmap"); exit(2); }
    if (mprotect((char *)g.base + pg, body, PROT_READ | PROT_WRITE) != 0) { perror("mprotect"); exit(2); }
  }
  char *b = (char *)g.base + pg;
  g.p = at_start ? b : b + body - bytes;
  return g;
}

void guard_free(guard g) {
  if (nkept < KEEP && g.len <= ((size_t)1 << 24)) kept[nkept++] = g;
  else munmap(g.base, g.len);
}
