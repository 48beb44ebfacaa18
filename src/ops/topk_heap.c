/* The bounded best-k selection of topk_heap.h. */
#include "ops/topk_heap.h"

/* a is worse than b: the heap keeps the worst pair at the root */
static int worse(const smx_topk_heap *h, size_t a, size_t b) {
  return smx_topk_better(h->v[b], h->i[b], h->v[a], h->i[a]);
}

static void swap(smx_topk_heap *h, size_t a, size_t b) {
  float tv = h->v[a];
  int64_t ti = h->i[a];
  h->v[a] = h->v[b];
  h->i[a] = h->i[b];
  h->v[b] = tv;
  h->i[b] = ti;
}

static void sift_down(smx_topk_heap *h, size_t at, size_t size) {
  for (;;) {
    size_t l = 2 * at + 1, r = l + 1, w = at;
    if (l < size && worse(h, l, w)) w = l;
    if (r < size && worse(h, r, w)) w = r;
    if (w == at) return;
    swap(h, at, w);
    at = w;
  }
}

void smx_topk_heap_push(smx_topk_heap *h, float v, int64_t i) {
  if (h->size < h->k) {
    size_t at = h->size++;
    h->v[at] = v;
    h->i[at] = i;
    while (at > 0) {
      size_t up = (at - 1) / 2;
      if (!worse(h, at, up)) break;
      swap(h, at, up);
      at = up;
    }
    return;
  }
  if (h->k == 0 || !smx_topk_better(v, i, h->v[0], h->i[0])) return;
  h->v[0] = v;
  h->i[0] = i;
  sift_down(h, 0, h->size);
}

void smx_topk_heap_sort(smx_topk_heap *h) {
  /* pop the worst to the end, repeatedly: best first once done */
  for (size_t n = h->size; n > 1; n--) {
    swap(h, 0, n - 1);
    sift_down(h, 0, n - 1);
  }
}
