/*
 * The .npy reader: positioned reads (pread) of bounded chunks, converted into
 * the caller's rows. Not mmap: a file truncated by someone else while mapped
 * would kill the process with SIGBUS, where pread just returns short.
 * Standard input that is not a regular file is read sequentially instead.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/convert.h"
#include "io/fileio.h"
#include "io/io_err.h"
#include "io/npy_layout.h"
#include "io/npy_shape.h"
#include "io/npy_io.h"

#define SCRATCH_MAX ((size_t)256 << 10)   /* bytes converted per read call           */
#define SMALL_FORTRAN ((uint64_t)1 << 20) /* Fortran data read whole up to this size  */
#define ROW_BLOCK 1024                    /* rows whose F(r) are computed at a time   */

struct smx_npy_reader {
  int fd, own_fd;
  int seekable;            /* a regular file: pread at any offset, size known          */
  uint64_t base;           /* file offset of the magic (stdin may start mid-file)      */
  uint64_t pos;            /* sequential mode: bytes consumed since base               */
  uint64_t next_row;       /* sequential mode: rows must come in order                 */
  smx_npy_info info;
  size_t isz;
  int c_layout;
  int have_header;         /* offsets past the header are data from now on             */
  int failed;              /* sequential mode: a read failed, the position is lost      */
  unsigned char *scratch;
  size_t scratch_cap;      /* a multiple of isz                                        */
  unsigned char *whole;    /* small Fortran-order data, read on first use              */
  char *name;              /* for messages                                             */
};

static smx_status io_fail(const smx_npy_reader *r, int e, const char *what, char *err, size_t errlen) {
  char eb[128];
  return smx_io_err(SMX_E_IO, err, errlen, "%s: %s: %s", r->name, what, smx_io_strerror(e, eb, sizeof eb));
}

/* Reads up to n bytes at offset off (from the magic). Sequential mode only
 * moves forward, which the callers guarantee. */
static int read_some(smx_npy_reader *r, uint64_t off, void *buf, size_t n, size_t *got) {
  if (r->seekable) return smx_io_pread_full(r->fd, buf, n, r->base + off, got);
  if (off != r->pos) { *got = 0; return EINVAL; }  /* a bug if ever seen */
  int e = smx_io_read_full(r->fd, buf, n, got);
  r->pos += *got;
  return e;
}

/* Exactly n bytes at off, or an error naming what was being read. */
static smx_status read_exact(smx_npy_reader *r, uint64_t off, void *buf, size_t n, const char *what, char *err,
                             size_t errlen) {
  size_t got;
  int e = read_some(r, off, buf, n, &got);
  if (e != 0) return io_fail(r, e, "read failed", err, errlen);
  if (got == n) return SMX_OK;
  if (r->seekable && r->have_header)  /* the size was checked at open */
    return smx_io_err(SMX_E_IO, err, errlen, "%s: the file shrank while being read (it ends at byte %llu)", r->name,
                      (unsigned long long)(off + got));
  uint64_t from = r->have_header ? r->info.data_offset : 0;  /* count data bytes from the data */
  return smx_io_err(SMX_E_PARSE, err, errlen, "%s: truncated: %s ends after %llu bytes of the %llu expected",
                    r->name, what, (unsigned long long)(off + got - from), (unsigned long long)(off + n - from));
}

/* Sequential mode, after the last data byte: there must be nothing more. */
static smx_status check_no_trailing(smx_npy_reader *r, char *err, size_t errlen) {
  unsigned char b;
  size_t got;
  int e = read_some(r, r->pos, &b, 1, &got);
  if (e != 0) return io_fail(r, e, "read failed", err, errlen);
  if (got != 0)
    return smx_io_err(SMX_E_PARSE, err, errlen, "%s: trailing bytes after the %llu bytes of data the header declares",
                      r->name, (unsigned long long)r->info.data_bytes);
  return SMX_OK;
}

static smx_status read_header(smx_npy_reader *r, char *err, size_t errlen) {
  unsigned char pre[12];
  size_t got;
  int e = read_some(r, 0, pre, 8, &got);
  if (e != 0) return io_fail(r, e, "read failed", err, errlen);
  uint64_t total = 0;
  smx_status s = smx_npy_header_size(pre, got, &total, err, errlen);  /* magic and version, or why not */
  if (s != SMX_OK && got == 8) {
    /* the version is known: read the length field and ask again */
    size_t prefix = pre[6] == 1 ? 10 : 12;
    if (pre[6] >= 1 && pre[6] <= 3 && pre[7] == 0) {
      if ((s = read_exact(r, 8, pre + 8, prefix - 8, "the header", err, errlen)) != SMX_OK) return s;
      s = smx_npy_header_size(pre, prefix, &total, err, errlen);
    }
  }
  if (s != SMX_OK) {
    smx_io_err_prefix(err, errlen, r->name);
    return s;
  }
  size_t prefix = pre[6] == 1 ? 10 : 12;
  /* total <= 12 + SMX_NPY_MAX_HEADER_BYTES: a bounded allocation */
  unsigned char *h = malloc((size_t)total);
  if (h == NULL) return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory for the header", r->name);
  memcpy(h, pre, prefix);
  s = read_exact(r, prefix, h + prefix, (size_t)total - prefix, "the header", err, errlen);
  if (s == SMX_OK) {
    s = smx_npy_parse_header(h, (size_t)total, &r->info, err, errlen);
    if (s != SMX_OK) smx_io_err_prefix(err, errlen, r->name);
  }
  free(h);
  return s;
}

static smx_status check_size(smx_npy_reader *r, uint64_t file_size, char *err, size_t errlen) {
  const smx_npy_info *in = &r->info;
  uint64_t have = file_size > r->base + in->data_offset ? file_size - r->base - in->data_offset : 0;
  if (have == in->data_bytes) return SMX_OK;
  char shape[256];
  smx_io_shape_repr(in->ndim, in->shape, shape, sizeof shape);
  return smx_io_err(SMX_E_PARSE, err, errlen,
                    "%s: header declares shape %s %s = %llu bytes but the file has %llu bytes of data (%s)", r->name,
                    shape, smx_dtype_name(in->dtype), (unsigned long long)in->data_bytes, (unsigned long long)have,
                    have < in->data_bytes ? "truncated" : "trailing bytes");
}

smx_status smx_npy_open(const char *path, smx_npy_reader **out, char *err, size_t errlen) {
  if (path == NULL || out == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_open: NULL argument");
  *out = NULL;
  if (path[0] == '\0') return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_open: empty path");
  int is_stdin = strcmp(path, "-") == 0;
  smx_npy_reader *r = calloc(1, sizeof *r);
  const char *label = is_stdin ? "<stdin>" : path;
  if (r == NULL || (r->name = malloc(strlen(label) + 1)) == NULL) {
    free(r);
    return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", label);
  }
  strcpy(r->name, label);
  r->fd = -1;
  smx_status s = SMX_OK;
  struct stat st;
  if (is_stdin) {
    r->fd = STDIN_FILENO;
  } else {
    do r->fd = open(path, O_RDONLY | O_CLOEXEC); while (r->fd < 0 && errno == EINTR);
    if (r->fd < 0) {
      s = io_fail(r, errno, "cannot open", err, errlen);
      goto fail;
    }
    r->own_fd = 1;
  }
  if (fstat(r->fd, &st) != 0) {
    s = io_fail(r, errno, "cannot stat", err, errlen);
    goto fail;
  }
  if (S_ISDIR(st.st_mode)) {
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: is a directory", r->name);
    goto fail;
  }
  r->seekable = S_ISREG(st.st_mode);
  if (r->seekable && is_stdin) {  /* "< file": the array starts where stdin stands */
    off_t here = lseek(r->fd, 0, SEEK_CUR);
    if (here < 0) r->seekable = 0;
    else r->base = (uint64_t)here;
  }
  if ((s = read_header(r, err, errlen)) != SMX_OK) goto fail;
  r->have_header = 1;
  const smx_npy_info *in = &r->info;
  r->isz = smx_dtype_size(in->dtype);
  r->c_layout = smx_io_layout_is_c(in);
  if (r->seekable) {
    if ((s = check_size(r, (uint64_t)st.st_size, err, errlen)) != SMX_OK) goto fail;
  } else {
    if (!r->c_layout && in->data_bytes > SMALL_FORTRAN) {
      s = smx_io_err(SMX_E_INVALID_ARG, err, errlen,
                     "%s: a Fortran-order array of more than 1 MiB cannot be read from a pipe (it is read by column)",
                     r->name);
      goto fail;
    }
    if (in->data_bytes == 0 && (s = check_no_trailing(r, err, errlen)) != SMX_OK) goto fail;
  }
  r->scratch_cap = in->data_bytes < 64 ? 64 : in->data_bytes < SCRATCH_MAX ? (size_t)in->data_bytes : SCRATCH_MAX;
  if ((r->scratch = malloc(r->scratch_cap)) == NULL) {
    s = smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", r->name);
    goto fail;
  }
  *out = r;
  return SMX_OK;
fail:
  smx_npy_close(r);
  return s;
}

const smx_npy_info *smx_npy_reader_info(const smx_npy_reader *r) { return r ? &r->info : NULL; }

void smx_npy_close(smx_npy_reader *r) {
  if (r == NULL) return;
  if (r->own_fd && r->fd >= 0) close(r->fd);
  free(r->scratch);
  free(r->whole);
  free(r->name);
  free(r);
}

/* n elements from element e0 of the data (n * isz <= scratch_cap unless whole). */
static smx_status fetch(smx_npy_reader *r, uint64_t e0, size_t n, const unsigned char **p, char *err, size_t errlen) {
  if (r->whole) {
    *p = r->whole + e0 * r->isz;
    return SMX_OK;
  }
  *p = r->scratch;
  return read_exact(r, r->info.data_offset + e0 * r->isz, r->scratch, n * r->isz, "the data", err, errlen);
}

static void decode(const smx_npy_reader *r, const unsigned char *src, size_t n, void *dst, size_t at, size_t stride,
                   int f64) {
  if (f64) smx_io_decode_f64(r->info.dtype, r->info.big_endian, src, n, (double *)dst + at, stride);
  else smx_io_decode_f32(r->info.dtype, r->info.big_endian, src, n, (float *)dst + at, stride);
}

/* Row-major data: one contiguous byte range, in scratch-sized chunks. */
static smx_status read_c(smx_npy_reader *r, uint64_t row0, size_t n, void *dst, int f64, char *err, size_t errlen) {
  size_t per = r->scratch_cap / r->isz;
  uint64_t e0 = row0 * r->info.cols;
  for (size_t done = 0; done < n;) {
    size_t k = n - done < per ? n - done : per;
    const unsigned char *p;
    smx_status s = fetch(r, e0 + done, k, &p, err, errlen);
    if (s != SMX_OK) return s;
    decode(r, p, k, dst, done, 1, f64);
    done += k;
  }
  return SMX_OK;
}

/* Column-major data, a block of rows at a time: for each column, the window
 * of the file holding the block's elements (the block itself for 2-d arrays)
 * in one read when it fits the scratch buffer, else run by run. */
static smx_status read_f(smx_npy_reader *r, uint64_t row0, uint64_t nrows, void *dst, int f64, char *err,
                         size_t errlen) {
  const smx_npy_info *in = &r->info;
  if (r->whole == NULL && in->data_bytes <= SMALL_FORTRAN) {
    if ((r->whole = malloc((size_t)in->data_bytes)) == NULL)
      return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", r->name);
    smx_status s = read_exact(r, in->data_offset, r->whole, (size_t)in->data_bytes, "the data", err, errlen);
    if (s != SMX_OK) {
      free(r->whole);
      r->whole = NULL;
      return s;
    }
  }
  size_t per = r->whole ? SIZE_MAX : r->scratch_cap / r->isz;
  size_t cols = (size_t)in->cols;
  uint64_t f[ROW_BLOCK];
  smx_io_frow it;
  smx_io_frow_start(&it, in, row0);
  for (uint64_t b0 = 0; b0 < nrows; b0 += ROW_BLOCK) {
    size_t m = nrows - b0 < ROW_BLOCK ? (size_t)(nrows - b0) : ROW_BLOCK;
    for (size_t k = 0; k < m; k++, smx_io_frow_next(&it)) f[k] = it.f;
    uint64_t lo, span;
    int contig = smx_io_span(f, m, &lo, &span);
    size_t at = (size_t)b0 * cols;
    for (size_t j = 0; j < cols; j++) {
      const unsigned char *p;
      smx_status s;
      if (span <= per) {
        if ((s = fetch(r, in->rows * j + lo, (size_t)span, &p, err, errlen)) != SMX_OK) return s;
        if (contig) decode(r, p, m, dst, at + j, cols, f64);
        else for (size_t k = 0; k < m; k++) decode(r, p + (f[k] - lo) * r->isz, 1, dst, at + k * cols + j, cols, f64);
        continue;
      }
      for (size_t s0 = 0; s0 < m;) {  /* a sparse block: runs of consecutive elements */
        size_t e = s0 + 1;
        while (e < m && f[e] == f[e - 1] + 1 && e - s0 < per) e++;
        if ((s = fetch(r, in->rows * j + f[s0], e - s0, &p, err, errlen)) != SMX_OK) return s;
        decode(r, p, e - s0, dst, at + s0 * cols + j, cols, f64);
        s0 = e;
      }
    }
  }
  return SMX_OK;
}

static smx_status read_rows(smx_npy_reader *r, uint64_t row0, uint64_t nrows, void *dst, int f64, char *err,
                            size_t errlen) {
  if (r == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_read_rows: NULL reader");
  const smx_npy_info *in = &r->info;
  if (row0 > in->rows || nrows > in->rows - row0)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: rows %llu..%llu requested, the array has %llu", r->name,
                      (unsigned long long)row0, (unsigned long long)(row0 + nrows), (unsigned long long)in->rows);
  uint64_t n = nrows * in->cols;  /* <= count: no overflow */
  if (n > SIZE_MAX / 8) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: too many rows at once", r->name);
  if (dst == NULL && n > 0) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: NULL destination", r->name);
  if (r->failed)
    return smx_io_err(SMX_E_IO, err, errlen, "%s: an earlier read failed, the pipe position is lost", r->name);
  if (!r->seekable && row0 != r->next_row)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: a pipe is read in order: row %llu is next, not %llu",
                      r->name, (unsigned long long)r->next_row, (unsigned long long)row0);
  smx_status s = SMX_OK;
  if (n > 0) s = r->c_layout ? read_c(r, row0, (size_t)n, dst, f64, err, errlen)
                             : read_f(r, row0, nrows, dst, f64, err, errlen);
  if (r->seekable) return s;
  if (s != SMX_OK) {
    r->failed = 1;
    return s;
  }
  r->next_row += nrows;
  if (nrows > 0 && r->next_row == in->rows && in->data_bytes > 0) s = check_no_trailing(r, err, errlen);
  if (s != SMX_OK) r->failed = 1;
  return s;
}

smx_status smx_npy_read_rows_f32(smx_npy_reader *r, uint64_t row0, uint64_t nrows, float *dst, char *err,
                                 size_t errlen) {
  return read_rows(r, row0, nrows, dst, 0, err, errlen);
}

smx_status smx_npy_read_rows_f64(smx_npy_reader *r, uint64_t row0, uint64_t nrows, double *dst, char *err,
                                 size_t errlen) {
  return read_rows(r, row0, nrows, dst, 1, err, errlen);
}

/* Storage order: one contiguous byte range, converted a scratch chunk at a
 * time (kind 0 f32, 1 f64, 2 float16 bits). */
static smx_status read_elems(smx_npy_reader *r, uint64_t e0, size_t n, void *dst, int kind, char *err,
                             size_t errlen) {
  if (r == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_read_elems: NULL reader");
  const smx_npy_info *in = &r->info;
  if (e0 > in->count || n > in->count - e0)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: elements %llu..%llu requested, the array has %llu",
                      r->name, (unsigned long long)e0, (unsigned long long)e0 + n, (unsigned long long)in->count);
  if (kind == 2 && in->dtype != SMX_DTYPE_F16)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: float16 bits requested from %s data", r->name,
                      smx_dtype_name(in->dtype));
  if (dst == NULL && n > 0) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: NULL destination", r->name);
  if (r->failed)
    return smx_io_err(SMX_E_IO, err, errlen, "%s: an earlier read failed, the pipe position is lost", r->name);
  uint64_t off = in->data_offset + e0 * r->isz;
  if (!r->seekable && off != r->pos)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: a pipe is read in order: element %llu is next, not %llu",
                      r->name, (unsigned long long)((r->pos - in->data_offset) / r->isz), (unsigned long long)e0);
  size_t per = r->scratch_cap / r->isz;
  smx_status s = SMX_OK;
  size_t want = kind == 2 ? 2 : kind == 1 ? 8 : 4;
  if (want == r->isz && smx_io_native_float(in->dtype, in->big_endian)) {  /* the bytes are the values: no copy */
    if (n > 0) s = read_exact(r, off, dst, n * r->isz, "the data", err, errlen);
  } else {
    for (size_t done = 0; done < n && s == SMX_OK; done += per) {
      size_t k = n - done < per ? n - done : per;
      s = read_exact(r, off + done * r->isz, r->scratch, k * r->isz, "the data", err, errlen);
      if (s != SMX_OK) break;
      if (kind == 2) smx_io_decode_f16_bits(in->big_endian, r->scratch, k, (uint16_t *)dst + done);
      else decode(r, r->scratch, k, dst, done, 1, kind == 1);
    }
  }
  if (r->seekable) return s;
  if (s == SMX_OK && n > 0 && e0 + n == in->count) s = check_no_trailing(r, err, errlen);
  if (s != SMX_OK) r->failed = 1;
  return s;
}

smx_status smx_npy_read_elems_f32(smx_npy_reader *r, uint64_t e0, size_t n, float *dst, char *err, size_t errlen) {
  return read_elems(r, e0, n, dst, 0, err, errlen);
}

smx_status smx_npy_read_elems_f64(smx_npy_reader *r, uint64_t e0, size_t n, double *dst, char *err, size_t errlen) {
  return read_elems(r, e0, n, dst, 1, err, errlen);
}

smx_status smx_npy_read_elems_f16(smx_npy_reader *r, uint64_t e0, size_t n, uint16_t *dst, char *err,
                                  size_t errlen) {
  return read_elems(r, e0, n, dst, 2, err, errlen);
}
