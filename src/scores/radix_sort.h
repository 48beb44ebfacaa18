/*
 * LSD radix sort of float / double values by their IEEE bits (the OOD
 * metrics' sort). Keys are made order-preserving (sign bit flipped for
 * positives, all bits for negatives) with -0 mapped to +0, so that equal
 * numbers, and only they, get equal keys: ties stay exact. NaN must be
 * excluded by the caller. 11-bit digits; passes whose digit is the same for
 * every key are skipped (narrow score ranges share their high bits).
 */
#ifndef SMX_SCORES_RADIX_SORT_H
#define SMX_SCORES_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t smx_key_from_f32(float v) {
  uint32_t u;
  if (v == 0.0f) v = 0.0f;   /* -0 -> +0: equal numbers, equal keys */
  memcpy(&u, &v, sizeof u);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline float smx_f32_from_key(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static inline uint64_t smx_key_from_f64(double v) {
  uint64_t u;
  if (v == 0.0) v = 0.0;
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

static inline double smx_f64_from_key(uint64_t k) {
  uint64_t u = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Sorts keys[0..n) ascending using tmp[0..n); returns the buffer holding the
 * result (keys or tmp). */
uint32_t *smx_radix_sort_u32(uint32_t *keys, uint32_t *tmp, size_t n);
uint64_t *smx_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n);

/* Key buffers: large ones are mapped with transparent huge pages where the
 * kernel offers them (first-touch page faults of fresh buffers otherwise cost
 * as much as the sort itself on a VM). NULL on failure. */
void *smx_sort_buffer_alloc(size_t bytes);
void smx_sort_buffer_free(void *p, size_t bytes);

#endif
