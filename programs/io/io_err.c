/* The XSI strerror_r (int result), whatever the build defines. */
#undef _GNU_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "io/io_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

smx_status smx_io_err(smx_status s, char *err, size_t errlen, const char *fmt, ...) {
  if (err == NULL || errlen == 0) return s;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  if (n < 0) err[0] = '\0';   /* an encoding error: an empty message beats garbage */
  return s;
}

void smx_io_err_prefix(char *err, size_t errlen, const char *name) {
  if (err == NULL || errlen == 0 || name == NULL) return;
  size_t nl = strlen(name), ml = 0;
  while (ml < errlen - 1 && err[ml] != '\0') ml++;  /* the message may be unterminated */
  err[ml] = '\0';
  size_t pl = nl + 2;  /* "name: " */
  if (pl >= errlen) {  /* only the name fits, truncated */
    memcpy(err, name, errlen - 1);
    err[errlen - 1] = '\0';
    return;
  }
  size_t keep = ml < errlen - 1 - pl ? ml : errlen - 1 - pl;  /* tail of the message is what gets cut */
  memmove(err + pl, err, keep);
  memcpy(err, name, nl);
  err[nl] = ':';
  err[nl + 1] = ' ';
  err[pl + keep] = '\0';
}

const char *smx_io_strerror(int e, char *buf, size_t len) {
  if (len == 0) return buf;
  if (strerror_r(e, buf, len) != 0) snprintf(buf, len, "error %d", e);
  return buf;
}
