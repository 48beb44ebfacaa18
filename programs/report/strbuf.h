/*
 * A growable text buffer for building the page in memory. Appends never
 * fail loudly: the first allocation failure sets `failed`, later appends do
 * nothing, and the renderer checks the flag once at the end (one error path
 * instead of one per line of SVG).
 */
#ifndef SMX_REPORT_STRBUF_H
#define SMX_REPORT_STRBUF_H

#include <stddef.h>

typedef struct rep_buf {
  char *data;   /* NUL-terminated once anything was appended */
  size_t len, cap;
  int failed;   /* an allocation failed (or a size overflowed) */
  unsigned ids; /* element ids handed out so far (svg.h rep_next_id) */
} rep_buf;

void rep_put(rep_buf *b, const char *s);
void rep_putn(rep_buf *b, const char *s, size_t n);
void rep_printf(rep_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the storage and zeroes the buffer. */
void rep_free(rep_buf *b);

#endif
