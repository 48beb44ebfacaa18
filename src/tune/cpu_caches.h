#ifndef SMX_TUNE_CPU_CACHES_H
#define SMX_TUNE_CPU_CACHES_H
#include <stddef.h>
#include <stdint.h>

/* Data cache sizes of the CPU this process runs on, in bytes. */
typedef struct smx_cpu_caches {
  size_t l1d;          /* per core                                               */
  size_t l2;           /* per core                                               */
  size_t l3;           /* one last-level cache instance (what one thread can use) */
  unsigned l3_sharing; /* logical CPUs sharing that instance (1 when unknown)     */
  size_t l3_per_cpu;   /* l3 / l3_sharing                                         */
  const char *source;  /* "cpuid", "sysfs", "sysconf" or "default"                */
  uint64_t cpu_hash;   /* vendor, model and cache sizes: names the wisdom file    */
} smx_cpu_caches;

/* Read once (thread-safe); never NULL. Sizes the CPU does not report are the
 * development machine's (32 KiB / 1 MiB / 32 MiB), so AUTO then keeps its
 * measured crossovers; a CPU without an L3 reports its L2 as l3. */
const smx_cpu_caches *smx_cpu_caches_get(void);

/* Parses a sysfs cache size ("48K", "1024K", "32M", "65536"); 0 if malformed.
 * Exposed for the unit test. */
size_t smx_cpu_parse_cache_size(const char *s);

/* Clamps read sizes into plausible ranges and fills the gaps with defaults. */
void smx_cpu_caches_sanitize(smx_cpu_caches *c);
#endif
