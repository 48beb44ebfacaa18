/*
 * CSV / TSV for the smx command. Input: one row per line, values separated
 * by ',' (CSV) or a tab (TSV), spaces around a value ignored, blank lines and
 * lines starting with '#' skipped (as numpy.loadtxt does); anything strtod
 * reads whole is a number, including nan, inf and -inf. Parsed line by line
 * into a temporary file of float64, so memory holds one line at a time.
 * Output: numbers that read back to the same value (%.9g for float32, %.17g
 * for float64, %.5g for float16), nan, inf and -inf; a 1-d result one value
 * per line, as numpy.savetxt writes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/stream.h"
#include "io/fileio.h"
#include "io/io_err.h"

#define OUT_CHUNK 8192  /* doubles buffered before a write to the temporary file */

typedef struct text_in {
  const char *name;
  char sep;
  int raw_fd;
  double buf[OUT_CHUNK];
  size_t nbuf;
  uint64_t written;
} text_in;

static int flush_raw(text_in *t) {
  int e = smx_io_pwrite_full(t->raw_fd, t->buf, t->nbuf * sizeof(double), t->written * sizeof(double));
  t->written += t->nbuf;
  t->nbuf = 0;
  return e;
}

/* The field [b, e) without surrounding blanks. */
static void trim(char **b, char **e) {
  while (*b < *e && (**b == ' ' || **b == '\t' || **b == '\r')) (*b)++;
  while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
}

/* Only blanks, or a '#' comment. A separator makes a line a row of empty
 * values, not a blank line: a TSV line of tabs is refused like "1\t\t". */
static int blank_line(const char *b, const char *e, char sep) {
  while (b < e && (*b == ' ' || *b == '\r' || (*b == '\t' && sep != '\t'))) b++;
  return b == e || *b == '#';
}

static smx_status bad_value(const text_in *t, uint64_t line, uint64_t col, const char *b, const char *e, char *err,
                            size_t errlen) {
  if (b == e)
    return smx_io_err(SMX_E_PARSE, err, errlen, "%s: line %llu, column %llu: empty value", t->name,
                      (unsigned long long)line, (unsigned long long)col);
  int len = e - b > 40 ? 40 : (int)(e - b);
  return smx_io_err(SMX_E_PARSE, err, errlen, "%s: line %llu, column %llu: '%.*s%s' is not a number", t->name,
                    (unsigned long long)line, (unsigned long long)col, len, b, e - b > 40 ? "..." : "");
}

smx_status cli_text_parse(int fd, const char *name, char sep, int *raw_fd, uint64_t *rows, uint64_t *cols, char *err,
                          size_t errlen) {
  char eb[128];
  *raw_fd = -1;
  int dfd = dup(fd);
  FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
  if (!f) {
    if (dfd >= 0) close(dfd);
    return smx_io_err(SMX_E_IO, err, errlen, "%s: cannot read: %s", name, smx_io_strerror(errno, eb, sizeof eb));
  }
  text_in *t = calloc(1, sizeof *t);
  if (!t) {
    fclose(f);
    return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", name);
  }
  t->name = name;
  t->sep = sep;
  t->raw_fd = cli_temp_fd();
  smx_status s = SMX_OK;
  if (t->raw_fd < 0) s = smx_io_err(SMX_E_IO, err, errlen, "%s: cannot create a temporary file: %s", name,
                                    smx_io_strerror(errno, eb, sizeof eb));
  char *line = NULL;
  size_t cap = 0;
  uint64_t lineno = 0, first_line = 0, ncols = 0, nrows = 0;
  ssize_t len;
  while (s == SMX_OK && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    char *p = line, *end = line + len;
    if (lineno == 1 && len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3;  /* a UTF-8 byte order mark */
    if (end > p && end[-1] == '\n') end--;
    if (blank_line(p, end, sep)) continue;
    if (memchr(p, '\0', (size_t)(end - p))) {
      s = smx_io_err(SMX_E_PARSE, err, errlen, "%s: line %llu: a NUL byte (is this a binary file?)", name,
                     (unsigned long long)lineno);
      break;
    }
    uint64_t col = 0;
    for (char *fb = p;; ) {
      char *fe = memchr(fb, sep, (size_t)(end - fb));
      if (!fe) fe = end;
      col++;
      if (ncols && col > ncols) {
        s = smx_io_err(SMX_E_PARSE, err, errlen, "%s: line %llu, column %llu: extra value (line %llu has %llu values)",
                       name, (unsigned long long)lineno, (unsigned long long)col, (unsigned long long)first_line,
                       (unsigned long long)ncols);
        break;
      }
      char *b = fb, *e = fe;
      trim(&b, &e);
      char *stop = e, saved = *e;
      *e = '\0';  /* strtod must not read past the field */
      errno = 0;
      double v = b < e ? strtod(b, &stop) : 0.0;
      *e = saved;
      if (b == e || stop != e) {
        s = bad_value(t, lineno, col, b, e, err, errlen);
        break;
      }
      t->buf[t->nbuf++] = v;
      int we;
      if (t->nbuf == OUT_CHUNK && (we = flush_raw(t)) != 0) {
        s = smx_io_err(SMX_E_IO, err, errlen, "%s: writing the temporary copy failed: %s", name,
                       smx_io_strerror(we, eb, sizeof eb));
        break;
      }
      if (fe == end) break;
      fb = fe + 1;
    }
    if (s != SMX_OK) break;
    if (!ncols) {
      ncols = col;
      first_line = lineno;
    } else if (col < ncols) {
      s = smx_io_err(SMX_E_PARSE, err, errlen, "%s: line %llu, column %llu: missing value (line %llu has %llu values)",
                     name, (unsigned long long)lineno, (unsigned long long)col + 1, (unsigned long long)first_line,
                     (unsigned long long)ncols);
      break;
    }
    nrows++;
  }
  if (s == SMX_OK && ferror(f))
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: read failed: %s", name, smx_io_strerror(errno, eb, sizeof eb));
  if (s == SMX_OK && nrows == 0) s = smx_io_err(SMX_E_PARSE, err, errlen, "%s: no numbers in the input", name);
  int we;
  if (s == SMX_OK && t->nbuf && (we = flush_raw(t)) != 0)
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: writing the temporary copy failed: %s", name,
                   smx_io_strerror(we, eb, sizeof eb));
  free(line);
  fclose(f);
  if (s == SMX_OK) {
    *raw_fd = t->raw_fd;
    *rows = nrows;
    *cols = ncols;
  } else if (t->raw_fd >= 0) {
    close(t->raw_fd);
  }
  free(t);
  return s;
}

static void put_value(FILE *f, double v, smx_dtype dtype) {
  if (isnan(v)) { fputs("nan", f); return; }
  if (isinf(v)) { fputs(v > 0 ? "inf" : "-inf", f); return; }
  if (dtype == SMX_DTYPE_F32) fprintf(f, "%.9g", (double)(float)v);
  else if (dtype == SMX_DTYPE_F16) {
    uint16_t b;
    float h;
    smx_f64_to_f16_n(&v, &b, 1);
    smx_f16_to_f32_n(&b, &h, 1);
    if (isinf(h)) fputs(h > 0 ? "inf" : "-inf", f);
    else fprintf(f, "%.5g", (double)h);
  } else fprintf(f, "%.17g", v);
}

smx_status cli_text_format(int raw_fd, int out_fd, const char *name, char sep, smx_dtype dtype, int ndim,
                           const uint64_t *shape, int fortran, char *err, size_t errlen) {
  char eb[128];
  uint64_t rows = ndim == 2 ? shape[0] : ndim == 1 ? shape[0] : 1, cols = ndim == 2 ? shape[1] : 1;
  int dfd = dup(out_fd);
  FILE *f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
  if (!f) {
    if (dfd >= 0) close(dfd);
    return smx_io_err(SMX_E_IO, err, errlen, "%s: cannot write: %s", name, smx_io_strerror(errno, eb, sizeof eb));
  }
  /* a block of rows: b * cols values, gathered column by column for a
   * Fortran-order result */
  size_t b = cols ? (size_t)(((uint64_t)1 << 18) / cols) : 1;
  if (b < 1) b = 1;
  if (b > rows) b = rows ? (size_t)rows : 1;
  double *buf = malloc(b * (size_t)(cols ? cols : 1) * sizeof(double));
  smx_status s = buf ? SMX_OK : smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", name);
  for (uint64_t r0 = 0; s == SMX_OK && r0 < rows && cols; r0 += b) {
    size_t m = rows - r0 < b ? (size_t)(rows - r0) : b;
    int e = 0;
    size_t got = 0, want = 0;
    if (fortran && ndim == 2) {
      for (uint64_t j = 0; j < cols && !e && got == want; j++) {
        want = m * sizeof(double);
        e = smx_io_pread_full(raw_fd, buf + j * m, want, (j * rows + r0) * sizeof(double), &got);
      }
    } else {
      want = m * (size_t)cols * sizeof(double);
      e = smx_io_pread_full(raw_fd, buf, want, r0 * cols * sizeof(double), &got);
    }
    if (e || got != want) {
      s = smx_io_err(SMX_E_IO, err, errlen, "%s: reading the temporary copy failed: %s", name,
                     smx_io_strerror(e ? e : EIO, eb, sizeof eb));
      break;
    }
    for (size_t i = 0; i < m; i++) {
      for (uint64_t j = 0; j < cols; j++) {
        if (j) fputc(sep, f);
        put_value(f, fortran && ndim == 2 ? buf[j * m + i] : buf[i * cols + j], dtype);
      }
      fputc('\n', f);
    }
  }
  free(buf);
  if (fflush(f) != 0 && s == SMX_OK)
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: write failed: %s", name, smx_io_strerror(errno, eb, sizeof eb));
  if (fclose(f) != 0 && s == SMX_OK)
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: write failed: %s", name, smx_io_strerror(errno, eb, sizeof eb));
  return s;
}
