/* Buffers placed flush against PROT_NONE pages, so that a read or write one
 * byte outside faults. */
#ifndef SMX_TESTS_OPS_GUARD_H
#define SMX_TESTS_OPS_GUARD_H

#include <stddef.h>

typedef struct guard {
  void *base;
  size_t len;
  void *p;   /* bytes usable from here, flush against the leading or trailing guard page */
} guard;

guard guard_alloc(size_t bytes, int at_start);
void guard_free(guard g);

#endif
