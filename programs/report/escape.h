/*
 * Text into the page. Every string that comes from the caller (and through
 * it from file names and command lines) goes through rep_escape, which makes
 * it safe both as HTML text and inside a double- or single-quoted attribute,
 * in HTML and in inline SVG.
 */
#ifndef SMX_REPORT_ESCAPE_H
#define SMX_REPORT_ESCAPE_H

#include "strbuf.h"

/*
 * Appends s with & < > " ' written as character references, and every byte
 * sequence that is not valid UTF-8 (overlong forms, surrogates, code points
 * above U+10FFFF, truncated sequences), every control character other than
 * tab and newline (C0, DEL, C1) replaced by U+FFFD, one per bad byte or
 * control. NULL appends nothing.
 */
void rep_escape(rep_buf *b, const char *s);

/* As rep_escape, but at most max_chars characters of s (a replaced byte
 * counts as one), then "…" when s was longer. */
void rep_escape_max(rep_buf *b, const char *s, size_t max_chars);

/* Length in bytes of the valid UTF-8 character at s (1..4), or 0 when the
 * bytes at s do not start one; reads only up to the NUL. */
size_t rep_utf8_len(const unsigned char *s);

#endif
