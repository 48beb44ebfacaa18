/* The wisdom file (format in src/tune/wisdom.h). */
#define _POSIX_C_SOURCE 200809L
#include "tune/wisdom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WISDOM_MAX 1024 /* a longer file is not wisdom */

static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* "never" or a decimal size; -1 when malformed */
static int parse_size(const char *s, size_t *out) {
  if (strcmp(s, "never") == 0) {
    *out = SMX_TUNE_NEVER;
    return 0;
  }
  if (!*s || strlen(s) > 19) return -1;
  unsigned long long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (unsigned long long)(*s - '0');
  }
  if (v == 0 || v > (unsigned long long)(SIZE_MAX / 2)) return -1;
  *out = (size_t)v;
  return 0;
}

static int format(char *buf, size_t n, const char *isa, uint64_t cpu_hash, const smx_tune_table *t) {
  char sw[24], lw[24];
  if (t->softmax_ws == SMX_TUNE_NEVER) snprintf(sw, sizeof sw, "never");
  else snprintf(sw, sizeof sw, "%llu", (unsigned long long)t->softmax_ws);
  if (t->lse_ws == SMX_TUNE_NEVER) snprintf(lw, sizeof lw, "never");
  else snprintf(lw, sizeof lw, "%llu", (unsigned long long)t->lse_ws);
  int k = snprintf(buf, n, "smx-wisdom 1\nisa %s\ncpu %016llx\nsoftmax_ws %s\nlse_ws %s\n", isa,
                   (unsigned long long)cpu_hash, sw, lw);
  if (k <= 0 || (size_t)k >= n) return -1;
  int k2 = snprintf(buf + k, n - (size_t)k, "sum %016llx\n", (unsigned long long)fnv1a(buf, (size_t)k));
  if (k2 <= 0 || (size_t)k2 >= n - (size_t)k) return -1;
  return k + k2;
}

int smx_wisdom_load(const char *path, const char *isa, uint64_t cpu_hash, smx_tune_table *t) {
  char buf[WISDOM_MAX + 1];
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (n == 0 || n > WISDOM_MAX) return -1;
  buf[n] = '\0';
  if (memchr(buf, '\0', n)) return -1;
  /* the file must read back as exactly what format() writes for its values */
  char isa_s[16], cpu_s[24], sw[24], lw[24];
  if (sscanf(buf, "smx-wisdom 1\nisa %15s\ncpu %23s\nsoftmax_ws %23s\nlse_ws %23s\n", isa_s, cpu_s, sw, lw) != 4)
    return -1;
  if (strcmp(isa_s, isa) != 0) return -1;
  char want_cpu[24];
  snprintf(want_cpu, sizeof want_cpu, "%016llx", (unsigned long long)cpu_hash);
  if (strcmp(cpu_s, want_cpu) != 0) return -1;
  smx_tune_table v = *t;
  if (parse_size(sw, &v.softmax_ws) != 0 || parse_size(lw, &v.lse_ws) != 0) return -1;
  char again[WISDOM_MAX + 1];
  int k = format(again, sizeof again, isa, cpu_hash, &v);
  if (k <= 0 || (size_t)k != n || memcmp(again, buf, n) != 0) return -1; /* checksum, spacing, trailing bytes */
  *t = v;
  return 0;
}

int smx_wisdom_save(const char *path, const char *isa, uint64_t cpu_hash, const smx_tune_table *t) {
  char buf[WISDOM_MAX + 1], tmp[4200];
  int len = format(buf, sizeof buf, isa, cpu_hash, t);
  if (len <= 0) return -1;
  int k = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  if (k <= 0 || (size_t)k >= sizeof tmp) return -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < (size_t)len) {
    ssize_t w = write(fd, buf + off, (size_t)len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  int ok = off == (size_t)len;
  if (close(fd) != 0) ok = 0;
  if (ok && rename(tmp, path) == 0) return 0;
  unlink(tmp);
  return -1;
}
