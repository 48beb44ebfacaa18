/*
 * A bounded selection of the k best (value, index) pairs, "best" meaning the
 * larger value, and for equal values the lower index: a total order, so the
 * selected set and its final order do not depend on the order of the pushes
 * (which is what lets chunks of a row be selected on different threads and
 * merged). A binary min-heap whose root is the worst kept pair: the root's
 * value is the threshold below which a new element cannot enter.
 * NaN is never pushed (the callers filter it out).
 */
#ifndef SMX_OPS_TOPK_HEAP_H
#define SMX_OPS_TOPK_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct smx_topk_heap {
  size_t k, size;
  float *v;       /* room for k values  */
  int64_t *i;     /* room for k indices */
} smx_topk_heap;

static inline int smx_topk_better(float va, int64_t ia, float vb, int64_t ib) {
  return va > vb || (va == vb && ia < ib);
}

static inline void smx_topk_heap_init(smx_topk_heap *h, size_t k, float *v, int64_t *i) {
  h->k = k;
  h->size = 0;
  h->v = v;
  h->i = i;
}

static inline int smx_topk_heap_full(const smx_topk_heap *h) { return h->size == h->k; }

/* Adds (v, i) if it beats the worst kept pair (or the heap is not full). */
void smx_topk_heap_push(smx_topk_heap *h, float v, int64_t i);

/* Sorts the kept pairs best first (in place); the heap is no longer a heap. */
void smx_topk_heap_sort(smx_topk_heap *h);

#endif
