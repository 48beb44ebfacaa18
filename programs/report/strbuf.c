#include "strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes plus the NUL; doubles the capacity so appends are amortised O(1). */
static int reserve(rep_buf *b, size_t n) {
  if (b->failed) return 0;
  if (n > SIZE_MAX / 2 - b->len - 1) { b->failed = 1; return 0; }
  size_t need = b->len + n + 1;
  if (need <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < need) cap *= 2;
  char *p = realloc(b->data, cap);
  if (p == NULL) { b->failed = 1; return 0; }
  b->data = p;
  b->cap = cap;
  return 1;
}

void rep_putn(rep_buf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void rep_put(rep_buf *b, const char *s) { rep_putn(b, s, strlen(s)); }

void rep_printf(rep_buf *b, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (k < 0) { b->failed = 1; return; }
  if ((size_t)k < sizeof small) { rep_putn(b, small, (size_t)k); return; }
  if (!reserve(b, (size_t)k)) return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)k;
}

void rep_free(rep_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}
