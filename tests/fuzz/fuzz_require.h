/*
 * What every fuzz target here shares: libFuzzer's entry point, and REQUIRE,
 * the invariant check. A broken invariant prints the target (FUZZ_TARGET,
 * defined by the file before it includes this one), the line and the
 * condition, then aborts: libFuzzer reports that as a crash, and
 * regression_driver.c's replay as a failed ctest.
 */
#ifndef SMX_TESTS_FUZZ_REQUIRE_H
#define SMX_TESTS_FUZZ_REQUIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                                                                                   \
  do {                                                                                               \
    if (!(c)) {                                                                                      \
      fprintf(stderr, "%s: %s:%d: invariant failed: %s\n", FUZZ_TARGET, __FILE__, __LINE__, #c);     \
      abort();                                                                                       \
    }                                                                                                \
  } while (0)

#endif
