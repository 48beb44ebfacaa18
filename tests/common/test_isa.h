/* The kernel set a unit test runs at. A test checks one level per process: ctest registers it once per
 * level (smx_add_isa_tests in tests/CMakeLists.txt) as <name>_<level> with SMX_MAX_ISA=<level>, and a
 * level this CPU lacks exits with TU_SKIP (the entry's SKIP_RETURN_CODE), never a silent pass. */
#ifndef SMX_TESTS_TEST_ISA_H
#define SMX_TESTS_TEST_ISA_H

#include "test_util.h"

#define TU_SKIP 77

static int tu_isa_at;   /* index into tu_isas / tu_isa_names of the level in use */
static int tu_isa_once; /* 1 in just one of the test's entries: it also runs the checks no ISA changes */

/* last: the highest index of tu_isas the test's ctest entries name (3 up to avx512bf16, 2 up to avx512:
 * the UP_TO of smx_add_isa_tests). Without SMX_MAX_ISA (a test run by hand) it caps itself at that level,
 * or the CPU's best below it, and runs everything. */
static inline void tu_isa_start(int last) {
  int top = tu_isa_top() < last ? tu_isa_top() : last;
  const char *e = getenv("SMX_MAX_ISA");
  if (!e || !*e) {
    tu_isa_at = top;
    tu_isa_once = 1;
    smx_set_max_isa(tu_isas[top]);
    return;
  }
  int want = -1;
  for (int i = 0; i < 4 && want < 0; i++)
    if (!strcmp(e, tu_isa_names[i])) want = i;
  if (want < 0 || want > last) {
    fprintf(stderr, "SMX_MAX_ISA=%s is not a level this test runs at (scalar .. %s)\n", e, tu_isa_names[last]);
    exit(2);
  }
  if (want > tu_isa_top()) {
    printf("skipped: this CPU has no %s (its best is %s)\n", e, tu_isa_names[tu_isa_top()]);
    exit(TU_SKIP);
  }
  if (strcmp(smx_isa(), tu_isa_names[want]) != 0) {
    fprintf(stderr, "SMX_MAX_ISA=%s, but the library runs %s\n", e, smx_isa());
    exit(1);
  }
  tu_isa_at = want;
  tu_isa_once = want == top;
}

#endif
