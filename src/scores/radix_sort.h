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

uint32_t smx_key_from_f32(float v);
float smx_f32_from_key(uint32_t k);
uint64_t smx_key_from_f64(double v);
double smx_f64_from_key(uint64_t k);

/* Sorts keys[0..n) ascending using tmp[0..n); returns the buffer holding the
 * result (keys or tmp). */
uint32_t *smx_radix_sort_u32(uint32_t *keys, uint32_t *tmp, size_t n);
uint64_t *smx_radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n);

#endif
