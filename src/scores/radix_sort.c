/* LSD radix sort on order-preserving keys of floats and doubles (radix_sort.h). */
#include <string.h>

#include "scores/radix_sort.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)

uint32_t smx_key_from_f32(float v) {
  uint32_t u;
  if (v == 0.0f) v = 0.0f;   /* -0 -> +0: equal numbers, equal keys */
  memcpy(&u, &v, sizeof u);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

float smx_f32_from_key(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

uint64_t smx_key_from_f64(double v) {
  uint64_t u;
  if (v == 0.0) v = 0.0;
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

double smx_f64_from_key(uint64_t k) {
  uint64_t u = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

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
