/* LSD radix sort on order-preserving keys of floats and doubles (radix_sort.h). */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scores/radix_sort.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)

/* One generic body for both key widths. */
#define RADIX_BODY(T, NBITS)                                                              \
  enum { PASSES = (NBITS + DIGIT_BITS - 1) / DIGIT_BITS };                                \
  size_t h[PASSES][BUCKETS];                                                              \
  memset(h, 0, sizeof h);                                                                 \
  for (size_t i = 0; i < n; i++) {                                                        \
    T k = keys[i];                                                                        \
    for (int p = 0; p < PASSES; p++) h[p][(k >> (p * DIGIT_BITS)) & (BUCKETS - 1)]++;     \
  }                                                                                       \
  T *src = keys, *dst = tmp;                                                              \
  for (int p = 0; p < PASSES; p++) {                                                      \
    size_t *c = h[p];                                                                     \
    if (n == 0 || c[(src[0] >> (p * DIGIT_BITS)) & (BUCKETS - 1)] == n) continue;        \
    size_t sum = 0;                                                                       \
    for (unsigned b = 0; b < BUCKETS; b++) { size_t t = c[b]; c[b] = sum; sum += t; }     \
    int sh = p * DIGIT_BITS;                                                              \
    for (size_t i = 0; i < n; i++) {                                                      \
      T k = src[i];                                                                       \
      dst[c[(k >> sh) & (BUCKETS - 1)]++] = k;                                            \
    }                                                                                     \
    T *t2 = src; src = dst; dst = t2;                                                     \
  }                                                                                       \
  return src;

uint32_t *smx_radix_sort_u32(uint32_t *keys, uint32_t *tmp, size_t n) { RADIX_BODY(uint32_t, 32) }
uint64_t *smx_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n) { RADIX_BODY(uint64_t, 64) }

#define BIG_BUFFER ((size_t)4 << 20)

void *smx_sort_buffer_alloc(size_t bytes) {
  if (bytes < BIG_BUFFER) return malloc(bytes ? bytes : 1);
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);   /* advice only: ignoring a refusal is fine */
#endif
  return p;
}

void smx_sort_buffer_free(void *p, size_t bytes) {
  if (!p) return;
  if (bytes < BIG_BUFFER) free(p);
  else munmap(p, bytes);
}
