/*
 * Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy
 * as 1, 2, 3", SC 2011): a counter-based generator, so the n-th number of any
 * stream is computed directly from (key, counter) with no state to carry. smx
 * keys it with the seed and counts with (draw, row, step), which is what
 * makes every sample independent of the thread count and the run.
 */
#ifndef SMX_MATH_PHILOX_H
#define SMX_MATH_PHILOX_H

#include <stdint.h>

void smx_philox4x32_10(uint64_t seed, const uint32_t ctr[4], uint32_t out[4]);

/* Uniform in (0, 1), never 0 or 1: 53 random bits plus half an ulp. */
double smx_philox_uniform(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw);

/* Standard Gumbel: -log(-log U), U = smx_philox_uniform(...). Always finite. */
double smx_philox_gumbel(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw);

/* Standard normal by Box-Muller from one block: u1 from (w0, w1) and u2 from
 * (w2, w3), each as smx_philox_uniform forms it; sqrt(-2 ln u1) cos(2 pi u2).
 * |result| < 8.7 (u1 >= 2^-54). */
double smx_philox_normal(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw);

#endif
