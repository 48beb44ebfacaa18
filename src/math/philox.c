/* Philox4x32-10 and the uniform / Gumbel numbers smx draws from it. */
#include <math.h>

#include "math/philox.h"
#include "smx/smx_topk.h"

/* the multipliers and Weyl key increments of the paper */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void smx_philox4x32_10(uint64_t seed, const uint32_t ctr[4], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

double smx_philox_uniform(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw) {
  uint32_t ctr[4] = { draw, (uint32_t)row, (uint32_t)step, (uint32_t)(step >> 32) }, w[4];
  smx_philox4x32_10(seed, ctr, w);
  uint64_t bits = (uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32;
  return ((double)bits + 0.5) * 0x1p-53;
}

double smx_philox_gumbel(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw) {
  return -log(-log(smx_philox_uniform(seed, row, step, draw)));
}

double smx_philox_normal(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw) {
  uint32_t ctr[4] = { draw, (uint32_t)row, (uint32_t)step, (uint32_t)(step >> 32) }, w[4];
  smx_philox4x32_10(seed, ctr, w);
  uint64_t b1 = (uint64_t)w[0] | (uint64_t)(w[1] & 0x1fffffu) << 32;
  uint64_t b2 = (uint64_t)w[2] | (uint64_t)(w[3] & 0x1fffffu) << 32;
  double u1 = ((double)b1 + 0.5) * 0x1p-53, u2 = ((double)b2 + 0.5) * 0x1p-53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

smx_status smx_philox4x32(uint64_t seed, const uint32_t counter[4], uint32_t out[4]) {
  if (!counter || !out) return SMX_E_INVALID_ARG;
  uint32_t c[4] = { counter[0], counter[1], counter[2], counter[3] }, o[4];
  smx_philox4x32_10(seed, c, o);
  for (int i = 0; i < 4; i++) out[i] = o[i];
  return SMX_OK;
}
