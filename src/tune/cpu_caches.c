/*
 * Cache sizes for SMX_ALGO_AUTO's crossovers (src/tune/tune.c). x86 reports
 * them through cpuid: the deterministic cache parameters of AMD leaf
 * 0x8000001D and Intel leaf 4 have the same layout. Elsewhere, or when cpuid
 * has nothing, Linux sysfs (/sys/devices/system/cpu/cpu0/cache) and then
 * glibc's sysconf are asked; whatever is still missing gets a default.
 * sysfs comes before sysconf because glibc's L3 on AMD is the sum over all
 * CCDs (320 MiB on the development VM, whose one L3 is 32 MiB).
 */
#define _POSIX_C_SOURCE 200809L
#include "tune/cpu_caches.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define DEFAULT_L1D (32 * KIB)
#define DEFAULT_L2 (1 * MIB)
#define DEFAULT_L3 (32 * MIB)

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

size_t smx_cpu_parse_cache_size(const char *s) {
  if (!s) return 0;
  size_t v = 0;
  int digits = 0;
  while (*s >= '0' && *s <= '9') {
    if (v > (SIZE_MAX - 9) / 10) return 0;
    v = v * 10 + (size_t)(*s++ - '0');
    digits++;
  }
  if (!digits) return 0;
  size_t mul = 1;
  if (*s == 'K' || *s == 'k') mul = KIB, s++;
  else if (*s == 'M' || *s == 'm') mul = MIB, s++;
  else if (*s == 'G' || *s == 'g') mul = MIB * 1024, s++;
  while (*s == '\n' || *s == ' ') s++;
  if (*s) return 0;
  if (v > SIZE_MAX / mul) return 0;
  return v * mul;
}

#if defined(__x86_64__) || defined(__i386__)
/* Walks a deterministic-cache-parameters leaf (0x8000001D or 4). */
static int cpuid_cache_leaf(unsigned leaf, smx_cpu_caches *c) {
  int found = 0;
  for (unsigned i = 0; i < 16; i++) {
    unsigned a, b, cx, d;
    __cpuid_count(leaf, i, a, b, cx, d);
    unsigned type = a & 31, level = (a >> 5) & 7;
    if (type == 0) break;
    if (type != 1 && type != 3) continue; /* data or unified */
    size_t size = (size_t)(((b >> 22) & 0x3ff) + 1) * (size_t)(((b >> 12) & 0x3ff) + 1) *
                  (size_t)((b & 0xfff) + 1) * ((size_t)cx + 1);
    unsigned sharing = ((a >> 14) & 0xfff) + 1;
    if (level == 1) c->l1d = size;
    else if (level == 2) c->l2 = size;
    else if (level == 3) {
      c->l3 = size;
      c->l3_sharing = sharing;
    }
    found = 1;
  }
  return found;
}

static void read_cpuid(smx_cpu_caches *c, uint64_t *h) {
  unsigned a, b, cx, d;
  unsigned max = __get_cpuid_max(0, NULL);
  unsigned ext = __get_cpuid_max(0x80000000u, NULL);
  __cpuid(0, a, b, cx, d);
  unsigned vendor[3] = {b, d, cx};
  *h = fnv1a(*h, vendor, sizeof vendor);
  if (max >= 1) {
    __cpuid(1, a, b, cx, d);
    unsigned sig = a; /* family, model, stepping */
    *h = fnv1a(*h, &sig, sizeof sig);
  }
  if (ext >= 0x80000004u) {
    for (unsigned l = 0x80000002u; l <= 0x80000004u; l++) {
      unsigned r[4];
      __cpuid(l, r[0], r[1], r[2], r[3]);
      *h = fnv1a(*h, r, sizeof r);
    }
  }
  int amd = !memcmp(&vendor[0], "Auth", 4) || !memcmp(&vendor[0], "Hygo", 4);
  int topoext = 0;
  if (ext >= 0x80000001u) {
    __cpuid(0x80000001u, a, b, cx, d);
    topoext = (cx >> 22) & 1;
  }
  if (amd && topoext && ext >= 0x8000001Du && cpuid_cache_leaf(0x8000001Du, c)) c->source = "cpuid";
  else if (!amd && max >= 4 && cpuid_cache_leaf(4, c)) c->source = "cpuid";
}
#endif

static size_t read_sysfs_size(const char *path) {
  char buf[64];
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return smx_cpu_parse_cache_size(buf);
}

/* Counts the CPUs in a sysfs list such as "0-7,64-71"; 0 if malformed. */
static unsigned count_cpu_list(const char *s) {
  unsigned n = 0;
  while (*s && *s != '\n') {
    char *e;
    unsigned long lo = strtoul(s, &e, 10), hi = lo;
    if (e == s) return 0;
    s = e;
    if (*s == '-') {
      hi = strtoul(s + 1, &e, 10);
      if (e == s + 1 || hi < lo) return 0;
      s = e;
    }
    if (hi - lo > 65535) return 0;
    n += (unsigned)(hi - lo + 1);
    if (*s == ',') s++;
    else if (*s && *s != '\n') return 0;
  }
  return n;
}

static void read_sysfs(smx_cpu_caches *c) {
  int found = 0;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    int level = 0;
    if (fscanf(f, "%d", &level) != 1) level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (strncmp(buf, "Data", 4) != 0 && strncmp(buf, "Unified", 7) != 0) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    size_t size = read_sysfs_size(path);
    if (!size) continue;
    if (level == 1 && !c->l1d) c->l1d = size;
    else if (level == 2 && !c->l2) c->l2 = size;
    else if (level == 3 && !c->l3) {
      c->l3 = size;
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
      f = fopen(path, "r");
      if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        unsigned k = count_cpu_list(buf);
        if (k) c->l3_sharing = k;
      }
    } else {
      continue;
    }
    found = 1;
  }
  if (found && !c->source) c->source = "sysfs";
  /* sysfs lists every level there is: no L3 (many Arm cores) makes the L2 the last level */
  if (found && !c->l3 && c->l2) {
    c->l3 = c->l2;
    c->l3_sharing = 1;
  }
}

static void read_sysconf(smx_cpu_caches *c) {
  int found = 0;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (!c->l1d && v > 0) c->l1d = (size_t)v, found = 1;
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  long v2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (!c->l2 && v2 > 0) c->l2 = (size_t)v2, found = 1;
#endif
  /* no _SC_LEVEL3_CACHE_SIZE: glibc sums it over the whole package */
  if (found && !c->source) c->source = "sysconf";
}

static size_t clamp_or(size_t v, size_t lo, size_t hi, size_t dflt) {
  if (!v) return dflt;
  return v < lo ? lo : (v > hi ? hi : v);
}

void smx_cpu_caches_sanitize(smx_cpu_caches *c) {
  c->l1d = clamp_or(c->l1d, 4 * KIB, 4 * MIB, DEFAULT_L1D);
  c->l2 = clamp_or(c->l2, 64 * KIB, 256 * MIB, DEFAULT_L2);
  c->l3 = clamp_or(c->l3, 256 * KIB, 4096 * MIB, DEFAULT_L3);
  if (c->l3 < c->l2) c->l3 = c->l2;
  if (c->l3_sharing == 0 || c->l3_sharing > 4096) c->l3_sharing = 1;
  c->l3_per_cpu = c->l3 / c->l3_sharing;
  if (!c->source) c->source = "default";
}

static smx_cpu_caches caches;

static void init_caches(void) {
  smx_cpu_caches c;
  memset(&c, 0, sizeof c);
  uint64_t h = 0xcbf29ce484222325ull;
#if defined(__x86_64__) || defined(__i386__)
  read_cpuid(&c, &h);
#else
  {
    /* AArch64: the main ID register names the core */
    char buf[64];
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "r");
    if (f) {
      size_t n = fread(buf, 1, sizeof buf, f);
      fclose(f);
      h = fnv1a(h, buf, n);
    }
  }
#endif
  if (!c.l1d || !c.l2 || !c.l3) read_sysfs(&c);
  if (!c.l1d || !c.l2) read_sysconf(&c);
  smx_cpu_caches_sanitize(&c);
  size_t sizes[3] = {c.l1d, c.l2, c.l3};
  c.cpu_hash = fnv1a(h, sizes, sizeof sizes);
  caches = c;
}

static pthread_once_t caches_once = PTHREAD_ONCE_INIT;

const smx_cpu_caches *smx_cpu_caches_get(void) {
  pthread_once(&caches_once, init_caches);
  return &caches;
}
