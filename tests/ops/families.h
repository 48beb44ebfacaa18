/* The adversarial row families every table row is run on. */
#ifndef SMX_TESTS_OPS_FAMILIES_H
#define SMX_TESTS_OPS_FAMILIES_H

#include <stddef.h>
#include <stdint.h>

#define FAM_F32 0x1u    /* run on f32 rows */
#define FAM_F64 0x2u    /* run on f64 rows */
#define FAM_HALF 0x8u   /* run on f16 and bf16 rows */
#define FAM_FLOAT (FAM_F32 | FAM_HALF)   /* written for the float range */
#define FAM_ALL (FAM_F32 | FAM_F64 | FAM_HALF)
#define FAM_EDGES 0x4u  /* short or at a chunk edge: also flush against the leading guard page */
#define FAM_FWD 0x20u   /* only the rows with a choice of algorithm (the forward ops, which take the store flags) */
#define FAM_LONG 0x10u  /* the 2^26 row: only the rows with a choice of algorithm (the forward ops), whose
                         * contract is a bound independent of the length; the other ops meet the chunk
                         * and window edges (up to 2^22) */

typedef struct family {
  char name[48];
  unsigned kind;
  size_t n;
  double T;
  uint32_t flags;
  void (*gen)(uint64_t seed, double *x, size_t n, double a, double b);
  double a, b;
} family;

/* The whole list: today's accuracy families, the policy rows, lengths 0..4W+1,
 * lengths around the engine's chunk size, and the long row of 2^SMX_TEST_LONG_LOG2
 * (default 26 for f32, 24 for f64; 0 leaves it out). Caller frees. */
family *families_build(size_t *count);

#endif
