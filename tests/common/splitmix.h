/*
 * splitmix64, the generator of the C tests and soaks, and the draws they all
 * make from it. One copy, so that the soaks' printed seeds keep replaying the
 * same cases (the replay entries of tests/CMakeLists.txt name such seeds).
 */
#ifndef SMX_TESTS_SPLITMIX_H
#define SMX_TESTS_SPLITMIX_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tu_rng { uint64_t s; } tu_rng;
static inline uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* uniform on [0, 1) from the top 53 bits */
static inline double tu_uniform(tu_rng *r) { return (double)(tu_next(r) >> 11) * 0x1p-53; }
/* uniform on 0 .. n-1 (0 when n is 0) */
static inline size_t tu_below(tu_rng *r, size_t n) { return n ? (size_t)(tu_next(r) % n) : 0; }
/* 1 with probability p */
static inline int tu_chance(tu_rng *r, double p) { return tu_uniform(r) < p; }
/* a standard normal in double (Box-Muller, one of the pair) */
static inline double tu_gauss(tu_rng *r) {
  double u1 = tu_uniform(r), u2 = tu_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
