#include "escape.h"

#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

size_t rep_utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return c ? 1 : 0;
  size_t n;
  unsigned cp, min;
  if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; min = 0x10000; }
  else return 0;  /* continuation byte, C0/C1 (overlong 2-byte) or F5..FF */
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;  /* also stops at the NUL */
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/* C0 and DEL, and the C1 controls U+0080..U+009F (encoded C2 80 .. C2 9F). */
static int is_control(const unsigned char *s, size_t n) {
  if (n == 1) return (s[0] < 0x20 && s[0] != '\t' && s[0] != '\n') || s[0] == 0x7F;
  return n == 2 && s[0] == 0xC2 && s[1] < 0xA0;
}

void rep_escape_max(rep_buf *b, const char *str, size_t max_chars) {
  if (str == NULL) return;
  const unsigned char *s = (const unsigned char *)str;
  size_t chars = 0;
  while (*s && chars < max_chars) {
    size_t n = rep_utf8_len(s);
    s += n ? n : 1;
    chars++;
  }
  if (*s == '\0') { rep_escape(b, str); return; }
  /* escape the prefix through a copy: rep_escape stops at a NUL only */
  size_t len = (size_t)(s - (const unsigned char *)str);
  rep_buf tmp = { 0 };
  rep_putn(&tmp, str, len);
  if (tmp.failed) { b->failed = 1; rep_free(&tmp); return; }
  rep_escape(b, tmp.data);
  rep_free(&tmp);
  rep_put(b, "\xE2\x80\xA6"); /* U+2026 */
}

void rep_escape(rep_buf *b, const char *str) {
  if (str == NULL) return;
  const unsigned char *s = (const unsigned char *)str;
  while (*s) {
    /* copy the longest plain run at once */
    const unsigned char *run = s;
    size_t n;
    while ((n = rep_utf8_len(s)) != 0 && !is_control(s, n) && *s != '&' && *s != '<' && *s != '>' &&
           *s != '"' && *s != '\'')
      s += n;
    rep_putn(b, (const char *)run, (size_t)(s - run));
    if (*s == '\0') break;
    switch (*s) {
      case '&': rep_put(b, "&amp;"); s++; break;
      case '<': rep_put(b, "&lt;"); s++; break;
      case '>': rep_put(b, "&gt;"); s++; break;
      case '"': rep_put(b, "&quot;"); s++; break;
      case '\'': rep_put(b, "&#39;"); s++; break;
      default:
        rep_put(b, replacement);
        s += n ? n : 1;  /* a control: skip it whole; a bad byte: skip one */
    }
  }
}
