/* Small helpers of the smx_mpi sources: spans, overlap, float rounding. */
#ifndef SMX_MPI_UTIL_H
#define SMX_MPI_UTIL_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the element spans of two row-major blocks (esize-byte elements)
 * share a byte: [p, p + ((rows - 1) * ld + cols) * esize). Empty blocks never do. */
static inline int smx_mpi_overlap_es(const void *a, size_t ra, size_t ca, size_t lda, const void *b, size_t rb,
                                     size_t cb, size_t ldb, size_t es) {
  if (!a || !b || !ra || !ca || !rb || !cb) return 0;
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  uintptr_t a1 = a0 + ((ra - 1) * lda + ca) * es, b1 = b0 + ((rb - 1) * ldb + cb) * es;
  return a0 < b1 && b0 < a1;
}
static inline int smx_mpi_overlap(const void *a, size_t ra, size_t ca, size_t lda, const void *b, size_t rb,
                                  size_t cb, size_t ldb) {
  return smx_mpi_overlap_es(a, ra, ca, lda, b, rb, cb, ldb, 4);
}

/* double to float, rounded, +-inf beyond the float range (a plain
 * conversion of an out-of-range value is undefined) */
static inline float smx_mpi_to_float(double v) {
  if (v >= 0x1.ffffffp127) return (float)INFINITY;
  if (v <= -0x1.ffffffp127) return -(float)INFINITY;
  return (float)v;
}
#endif
