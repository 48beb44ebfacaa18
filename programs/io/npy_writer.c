/*
 * The .npy writer. Output goes to a temporary file next to the destination
 * and is renamed over it only when complete, so a failure at any point
 * leaves either the old file or nothing, never a torn one. Rows are
 * converted in bounded chunks; only a small Fortran-order array (<= 1 MiB)
 * is assembled in memory, larger ones are written window by window with
 * positioned writes (read back first where a window is only partly new).
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

#define SCRATCH_MAX ((size_t)256 << 10)   /* bytes converted per write call         */
#define SMALL_FORTRAN ((uint64_t)1 << 20) /* Fortran data assembled in memory up to  */
#define ROW_BLOCK 1024                    /* rows whose F(r) are computed at a time  */

struct smx_npy_writer {
  int fd;
  int stream;             /* written in order, in place: stdout, a device, a FIFO     */
  int own_fd;             /* fd is ours to close (everything but stdout)              */
  char *path;             /* the destination; NULL for stdout                        */
  char *tmp;              /* the temporary file; NULL for a stream                    */
  const char *name;       /* for messages                                             */
  int keep_mode;          /* the destination existed: give the new file its mode      */
  mode_t mode;
  smx_npy_info info;
  size_t isz;
  int c_layout;
  uint64_t rows_done;
  uint64_t elems_done;    /* storage-order writes: elements written so far            */
  int failed;             /* an I/O error happened: only abort / finish make sense    */
  unsigned char *scratch;
  size_t scratch_cap;     /* a multiple of isz                                        */
  unsigned char *whole;   /* small Fortran-order data, written by finish              */
};

static smx_status io_fail(smx_npy_writer *w, int e, const char *what, char *err, size_t errlen) {
  char eb[128];
  w->failed = 1;
  return smx_io_err(SMX_E_IO, err, errlen, "%s: %s: %s", w->name, what, smx_io_strerror(e, eb, sizeof eb));
}

/* Frees everything; removes the temporary file unless it was renamed. */
static void destroy(smx_npy_writer *w) {
  if (w == NULL) return;
  if (w->own_fd && w->fd >= 0) close(w->fd);
  if (w->tmp) unlink(w->tmp);
  free(w->tmp);
  free(w->path);
  free(w->scratch);
  free(w->whole);
  free(w);
}

void smx_npy_writer_abort(smx_npy_writer *w) { destroy(w); }

const char *smx_npy_writer_temp_path(const smx_npy_writer *w) { return w ? w->tmp : NULL; }

const smx_npy_info *smx_npy_writer_info(const smx_npy_writer *w) { return w ? &w->info : NULL; }

smx_status smx_npy_writer_open(const char *path, smx_dtype dtype, int ndim, const uint64_t *shape,
                               const smx_npy_write_options *opt, smx_npy_writer **out, char *err, size_t errlen) {
  static const smx_npy_write_options defaults = { 0, 0, 0 };
  if (path == NULL || out == NULL)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_writer_open: NULL argument");
  *out = NULL;
  if (path[0] == '\0') return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_writer_open: empty path");
  if (opt == NULL) opt = &defaults;
  int to_stdout = strcmp(path, "-") == 0;
  const char *name = to_stdout ? "<stdout>" : path;
  if (opt->version < 0 || opt->version > 3)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: unknown .npy format version %d", name, opt->version);

  smx_npy_writer *w = calloc(1, sizeof *w);
  if (w == NULL) return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", name);
  w->fd = -1;
  w->stream = to_stdout || smx_io_is_stream_path(path);
  w->own_fd = !to_stdout;
  w->name = "<stdout>";
  smx_status s;
  if (!to_stdout) {
    if ((w->path = malloc(strlen(path) + 1)) == NULL) {
      s = smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", name);
      goto fail;
    }
    strcpy(w->path, path);
    w->name = w->path;
  }
  smx_npy_info *in = &w->info;
  if ((s = smx_io_shape_set(in, dtype, ndim, shape, SMX_E_INVALID_ARG, err, errlen)) != SMX_OK) {
    smx_io_err_prefix(err, errlen, w->name);
    goto fail;
  }
  w->isz = smx_dtype_size(dtype);
  in->big_endian = opt->big_endian != 0 && w->isz > 1;
  in->fortran_order = opt->fortran_order != 0;
  in->version_major = opt->version == 0 ? 1 : opt->version;
  in->version_minor = 0;
  w->c_layout = smx_io_layout_is_c(in);
  unsigned char header[SMX_NPY_FORMAT_MAX];
  size_t hlen;
  if ((s = smx_npy_format_header(in, header, sizeof header, &hlen, err, errlen)) != SMX_OK) {
    smx_io_err_prefix(err, errlen, w->name);
    goto fail;
  }
  in->data_offset = hlen;
  if (!w->c_layout && in->data_bytes <= SMALL_FORTRAN && (w->whole = calloc(1, (size_t)in->data_bytes + 1)) == NULL) {
    s = smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", w->name);
    goto fail;
  }
  w->scratch_cap = in->data_bytes < 64 ? 64 : in->data_bytes < SCRATCH_MAX ? (size_t)in->data_bytes : SCRATCH_MAX;
  if ((w->scratch = malloc(w->scratch_cap)) == NULL) {
    s = smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", w->name);
    goto fail;
  }

  if (w->stream) {
    if (!w->c_layout && w->whole == NULL) {
      s = smx_io_err(SMX_E_INVALID_ARG, err, errlen,
                     "%s: a Fortran-order array of more than 1 MiB cannot be written to a stream", w->name);
      goto fail;
    }
    int e = to_stdout ? 0 : smx_io_open_stream(path, &w->fd);
    if (to_stdout) w->fd = STDOUT_FILENO;
    if (e != 0) {
      s = io_fail(w, e, "cannot open it for writing", err, errlen);
      goto fail;
    }
  } else {
    struct stat st;
    if (stat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        s = smx_io_err(SMX_E_IO, err, errlen, "%s: is a directory", w->name);
        goto fail;
      }
      w->keep_mode = S_ISREG(st.st_mode);
      w->mode = st.st_mode & 0777;
    }
    int e = smx_io_create_temp(path, &w->tmp, &w->fd);
    if (e != 0) {
      s = io_fail(w, e, "cannot create a temporary file next to it", err, errlen);
      goto fail;
    }
  }
  int e = smx_io_write_full(w->fd, header, hlen);
  if (e != 0) {
    s = io_fail(w, e, "write failed", err, errlen);
    goto fail;
  }
  *out = w;
  return SMX_OK;
fail:
  destroy(w);
  return s;
}

/* Where encoded elements go: straight into `whole`, or through scratch. */
static unsigned char *slot(smx_npy_writer *w, uint64_t e0) {
  return w->whole ? w->whole + e0 * w->isz : w->scratch;
}
static smx_status commit(smx_npy_writer *w, uint64_t e0, size_t n, int sequential, char *err, size_t errlen) {
  if (w->whole) return SMX_OK;
  int e = sequential ? smx_io_write_full(w->fd, w->scratch, n * w->isz)
                     : smx_io_pwrite_full(w->fd, w->scratch, n * w->isz, w->info.data_offset + e0 * w->isz);
  return e ? io_fail(w, e, "write failed", err, errlen) : SMX_OK;
}

/* Loads n elements from e0 into scratch before a partial update: what earlier
 * blocks wrote there, zeros where nothing was written yet (past the end). */
static smx_status read_window(smx_npy_writer *w, uint64_t e0, size_t n, char *err, size_t errlen) {
  size_t got;
  int e = smx_io_pread_full(w->fd, w->scratch, n * w->isz, w->info.data_offset + e0 * w->isz, &got);
  if (e != 0) return io_fail(w, e, "read-back of the temporary file failed", err, errlen);
  memset(w->scratch + got, 0, n * w->isz - got);
  return SMX_OK;
}

static void encode(const smx_npy_writer *w, const void *src, size_t at, size_t stride, size_t n, unsigned char *dst,
                   int f64) {
  if (f64) smx_io_encode_f64(w->info.dtype, w->info.big_endian, (const double *)src + at, stride, n, dst);
  else smx_io_encode_f32(w->info.dtype, w->info.big_endian, (const float *)src + at, stride, n, dst);
}

static smx_status write_rows(smx_npy_writer *w, const void *src, uint64_t nrows, int f64, char *err, size_t errlen) {
  if (w == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_write_rows: NULL writer");
  if (w->failed) return smx_io_err(SMX_E_IO, err, errlen, "%s: an earlier write failed", w->name);
  const smx_npy_info *in = &w->info;
  if (nrows > in->rows - w->rows_done)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: %llu rows given but only %llu of %llu are left", w->name,
                      (unsigned long long)nrows, (unsigned long long)(in->rows - w->rows_done),
                      (unsigned long long)in->rows);
  uint64_t n64 = nrows * in->cols;  /* <= count: no overflow */
  if (n64 > SIZE_MAX / 8) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: too many rows at once", w->name);
  size_t n = (size_t)n64, cols = (size_t)in->cols;
  if (n == 0) {
    w->rows_done += nrows;
    return SMX_OK;
  }
  if (src == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: NULL source", w->name);
  /* Values that do not fit an integer type are refused before anything is written. */
  size_t bad = f64 ? smx_io_check_f64(in->dtype, (const double *)src, n)
                   : smx_io_check_f32(in->dtype, (const float *)src, n);
  if (bad < n) {
    double v = f64 ? ((const double *)src)[bad] : (double)((const float *)src)[bad];
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: row %llu, column %zu: %g does not fit %s", w->name,
                      (unsigned long long)(w->rows_done + bad / cols), bad % cols, v, smx_dtype_name(in->dtype));
  }
  smx_status s;
  if (w->c_layout) {
    size_t per = w->scratch_cap / w->isz;
    for (size_t done = 0; done < n; done += per) {
      size_t k = n - done < per ? n - done : per;
      encode(w, src, done, 1, k, w->scratch, f64);
      if ((s = commit(w, 0, k, 1, err, errlen)) != SMX_OK) return s;
    }
  } else {
    /* Column-major: for each column, the window of the file holding the
     * block's elements, read first when the block does not cover it. */
    size_t per = w->whole ? SIZE_MAX : w->scratch_cap / w->isz;
    uint64_t f[ROW_BLOCK];
    smx_io_frow it;
    smx_io_frow_start(&it, in, w->rows_done);
    for (uint64_t b0 = 0; b0 < nrows; b0 += ROW_BLOCK) {
      size_t m = nrows - b0 < ROW_BLOCK ? (size_t)(nrows - b0) : ROW_BLOCK;
      for (size_t k = 0; k < m; k++, smx_io_frow_next(&it)) f[k] = it.f;
      uint64_t lo, span;
      int contig = smx_io_span(f, m, &lo, &span);
      size_t at = (size_t)b0 * cols;
      for (size_t j = 0; j < cols; j++) {
        if (span <= per) {
          uint64_t e0 = in->rows * j + lo;
          unsigned char *win = slot(w, e0);
          if (!w->whole && !contig && (s = read_window(w, e0, (size_t)span, err, errlen)) != SMX_OK) return s;
          if (contig) encode(w, src, at + j, cols, m, win, f64);
          else
            for (size_t k = 0; k < m; k++) encode(w, src, at + k * cols + j, cols, 1, win + (f[k] - lo) * w->isz, f64);
          if ((s = commit(w, e0, (size_t)span, 0, err, errlen)) != SMX_OK) return s;
          continue;
        }
        for (size_t s0 = 0; s0 < m;) {  /* a sparse block: runs of consecutive elements */
          size_t e = s0 + 1;
          while (e < m && f[e] == f[e - 1] + 1 && e - s0 < per) e++;
          uint64_t e0 = in->rows * j + f[s0];
          encode(w, src, at + s0 * cols + j, cols, e - s0, slot(w, e0), f64);
          if ((s = commit(w, e0, e - s0, 0, err, errlen)) != SMX_OK) return s;
          s0 = e;
        }
      }
    }
  }
  w->rows_done += nrows;
  return SMX_OK;
}

smx_status smx_npy_write_rows_f32(smx_npy_writer *w, const float *src, uint64_t nrows, char *err, size_t errlen) {
  return write_rows(w, src, nrows, 0, err, errlen);
}

smx_status smx_npy_write_rows_f64(smx_npy_writer *w, const double *src, uint64_t nrows, char *err, size_t errlen) {
  return write_rows(w, src, nrows, 1, err, errlen);
}

/* Storage order (kind 0 f32, 1 f64, 2 float16 bits): positioned writes of
 * converted scratch chunks, or of src itself when its bytes are the file's. */
static smx_status write_elems(smx_npy_writer *w, uint64_t e0, const void *src, size_t n, int kind, char *err,
                              size_t errlen) {
  if (w == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_write_elems: NULL writer");
  if (w->failed) return smx_io_err(SMX_E_IO, err, errlen, "%s: an earlier write failed", w->name);
  const smx_npy_info *in = &w->info;
  if (e0 > in->count || n > in->count - e0 || n > in->count - w->elems_done)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: elements %llu..%llu given, the array has %llu", w->name,
                      (unsigned long long)e0, (unsigned long long)e0 + n, (unsigned long long)in->count);
  if (kind == 2 && in->dtype != SMX_DTYPE_F16)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: float16 bits given for %s data", w->name,
                      smx_dtype_name(in->dtype));
  if (w->stream && e0 != w->elems_done)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: a stream is written in order: element %llu is next, not %llu",
                      w->name, (unsigned long long)w->elems_done, (unsigned long long)e0);
  if (n == 0) return SMX_OK;
  if (src == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: NULL source", w->name);
  if (kind != 2) {
    size_t bad = kind ? smx_io_check_f64(in->dtype, (const double *)src, n) : smx_io_check_f32(in->dtype, (const float *)src, n);
    if (bad < n) {
      double v = kind ? ((const double *)src)[bad] : (double)((const float *)src)[bad];
      return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: element %llu: %g does not fit %s", w->name,
                        (unsigned long long)(e0 + bad), v, smx_dtype_name(in->dtype));
    }
  }
  size_t src_size = kind == 2 ? 2 : kind == 1 ? 8 : 4;
  int e;
  if (w->whole == NULL && src_size == w->isz && smx_io_native_float(in->dtype, in->big_endian)) {
    e = w->stream ? smx_io_write_full(w->fd, src, n * w->isz)
                     : smx_io_pwrite_full(w->fd, src, n * w->isz, in->data_offset + e0 * w->isz);
    if (e != 0) return io_fail(w, e, "write failed", err, errlen);
  } else {
    size_t per = w->whole ? n : w->scratch_cap / w->isz;
    for (size_t done = 0; done < n; done += per) {
      size_t k = n - done < per ? n - done : per;
      unsigned char *dst = w->whole ? w->whole + (e0 + done) * w->isz : w->scratch;
      if (kind == 2) smx_io_encode_f16_bits(in->big_endian, (const uint16_t *)src + done, k, dst);
      else encode(w, src, done, 1, k, dst, kind);
      if (w->whole) continue;
      e = w->stream ? smx_io_write_full(w->fd, dst, k * w->isz)
                       : smx_io_pwrite_full(w->fd, dst, k * w->isz, in->data_offset + (e0 + done) * w->isz);
      if (e != 0) return io_fail(w, e, "write failed", err, errlen);
    }
  }
  w->elems_done += n;
  return SMX_OK;
}

smx_status smx_npy_write_elems_f32(smx_npy_writer *w, uint64_t e0, const float *src, size_t n, char *err,
                                   size_t errlen) {
  return write_elems(w, e0, src, n, 0, err, errlen);
}

smx_status smx_npy_write_elems_f64(smx_npy_writer *w, uint64_t e0, const double *src, size_t n, char *err,
                                   size_t errlen) {
  return write_elems(w, e0, src, n, 1, err, errlen);
}

smx_status smx_npy_write_elems_f16(smx_npy_writer *w, uint64_t e0, const uint16_t *src, size_t n, char *err,
                                   size_t errlen) {
  return write_elems(w, e0, src, n, 2, err, errlen);
}

smx_status smx_npy_writer_finish(smx_npy_writer *w, char *err, size_t errlen) {
  if (w == NULL) return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "smx_npy_writer_finish: NULL writer");
  smx_status s = SMX_OK;
  const char *left = w->stream ? "" : " (the destination was left as it was)";
  int e;
  if (w->failed) {
    s = smx_io_err(SMX_E_IO, err, errlen, "%s: an earlier write failed%s", w->name, left);
  } else if (w->rows_done != w->info.rows && w->elems_done != w->info.count) {
    s = smx_io_err(SMX_E_INVALID_ARG, err, errlen, "%s: %llu of %llu rows were written%s", w->name,
                   (unsigned long long)w->rows_done, (unsigned long long)w->info.rows, left);
  } else if (w->whole && (e = smx_io_write_full(w->fd, w->whole, (size_t)w->info.data_bytes)) != 0) {
    s = io_fail(w, e, "write failed", err, errlen);
  } else if (w->stream) {
    if (w->own_fd) {  /* a device reports some errors (no space, EIO) only at close */
      e = close(w->fd) != 0 ? errno : 0;
      w->fd = -1;
      if (e != 0) s = io_fail(w, e, "close failed", err, errlen);
    }
  } else {
    /* Data on disk before the name points at it: a crash never shows a torn file. */
    if (w->keep_mode && fchmod(w->fd, w->mode) != 0) s = io_fail(w, errno, "cannot set the file mode", err, errlen);
    else if (fsync(w->fd) != 0) s = io_fail(w, errno, "fsync failed", err, errlen);
    else {
      e = close(w->fd) != 0 ? errno : 0;
      w->fd = -1;
      if (e != 0) s = io_fail(w, e, "close failed", err, errlen);
      else if (rename(w->tmp, w->path) != 0)
        s = io_fail(w, errno, "cannot rename the temporary file over it", err, errlen);
      else {
        free(w->tmp);  /* renamed: nothing left to remove */
        w->tmp = NULL;
      }
    }
  }
  destroy(w);
  return s;
}
