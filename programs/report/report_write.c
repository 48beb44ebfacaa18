/*
 * Writing the page: rendered whole in memory first (its size is bounded),
 * then written to a temporary file next to the target and renamed over it,
 * so the target is never seen half-written (a device or FIFO target is
 * written in place: programs/io/fileio.h, smx_io_out).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/fileio.h"
#include "report.h"

static smx_status io_fail(char *err, size_t errlen, const char *path, const char *what, int e) {
  if (err && errlen) snprintf(err, errlen, "%s: %s: %s", path, what, strerror(e));
  return SMX_E_IO;
}

smx_status smx_report_write_html(const char *path, const smx_report *r, char *err, size_t errlen) {
  if (path == NULL || path[0] == '\0') {
    if (err && errlen) snprintf(err, errlen, "report: no output path given");
    return SMX_E_INVALID_ARG;
  }
  char *html;
  size_t len;
  smx_status st = smx_report_render_html(r, &html, &len, err, errlen);
  if (st != SMX_OK) return st;
  if (strcmp(path, "-") == 0) {
    int e = smx_io_write_full(STDOUT_FILENO, html, len);
    free(html);
    return e ? io_fail(err, errlen, "standard output", "cannot write", e) : SMX_OK;
  }
  smx_io_out o;
  int e = smx_io_out_open(&o, path);
  if (e) {
    free(html);
    return io_fail(err, errlen, path, "cannot open it for writing", e);
  }
  e = smx_io_write_full(o.fd, html, len);
  free(html);
  const char *what = "cannot write";
  if (e) smx_io_out_abort(&o);
  else e = smx_io_out_commit(&o, &what);
  return e ? io_fail(err, errlen, path, what, e) : SMX_OK;
}
