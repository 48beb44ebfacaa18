/*
 * The output side of the smx command. .npy goes through the library's
 * writer (temporary file, renamed at the end); .npy for stdout that arrives
 * out of order is written to a private temporary directory first and copied
 * out at the end; text is collected as float64 in an unlinked temporary file
 * and formatted at the end, into a temporary next to the destination that is
 * renamed over it, or to stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/npy_out.h"
#include "cli/signals.h"
#include "cli/stream.h"
#include "io/convert.h"
#include "io/fileio.h"
#include "io/io_err.h"

static smx_status sys_fail(const char *name, const char *what, int e, char *err, size_t errlen) {
  char eb[128];
  return smx_io_err(SMX_E_IO, err, errlen, "%s: %s: %s", name, what, smx_io_strerror(e, eb, sizeof eb));
}

#define WINDOW ((size_t)64 << 20)

/* Streaming writeback. Left to itself the kernel keeps a whole output as
 * dirty pages until the final fsync, which then waits for all of it; the
 * output fills the page cache, and each write takes fresh pages. Instead the
 * writes are gathered into contiguous pieces of WB_PIECE bytes, each handed
 * to the disk at once (sync_file_range), and the piece WB_LAG pieces back is
 * waited for and its pages dropped (POSIX_FADV_DONTNEED): the disk works
 * while the next blocks are computed, the final fsync finds little left, the
 * output holds a few pieces of the page cache at most, and the dropped pages
 * are reused for the next writes. Scattered writes of less than WB_MIN
 * contiguous bytes are left to the kernel. Errors are left to the final
 * fsync, which reports them. */
#define WB_PIECE ((uint64_t)8 << 20)
#define WB_MIN ((uint64_t)1 << 20)
#define WB_LAG CLI_WB_LAG

static void writeback_start(cli_sink *k) {
  k->wb_fd = -1;
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  const char *off = getenv("SMX_CLI_NO_WRITEBACK");
  const char *tmp = smx_npy_writer_temp_path(k->npy);
  if ((off && *off && strcmp(off, "0")) || !tmp) return;
  k->wb_fd = open(tmp, O_RDONLY | O_CLOEXEC);
#endif
}

#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
/* [a, b) to the disk; the oldest piece in flight waited for and dropped */
static void writeback_piece(cli_sink *k, uint64_t a, uint64_t b) {
  (void)sync_file_range(k->wb_fd, (off_t)a, (off_t)(b - a), SYNC_FILE_RANGE_WRITE);
  if (k->wb_n == WB_LAG) {
    (void)sync_file_range(k->wb_fd, (off_t)k->wb_off[0], (off_t)k->wb_len[0],
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    (void)posix_fadvise(k->wb_fd, (off_t)k->wb_off[0], (off_t)k->wb_len[0], POSIX_FADV_DONTNEED);
    for (int i = 1; i < WB_LAG; i++) {
      k->wb_off[i - 1] = k->wb_off[i];
      k->wb_len[i - 1] = k->wb_len[i];
    }
    k->wb_n--;
  }
  k->wb_off[k->wb_n] = a;
  k->wb_len[k->wb_n] = b - a;
  k->wb_n++;
}
#endif

/* Bytes [off, off + len) of the file were written. */
static void writeback(cli_sink *k, uint64_t off, uint64_t len) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  if (k->wb_fd < 0 || len == 0) return;
  if (off != k->wb_b) {  /* not where the gathered piece ends: start it if large, begin another */
    if (k->wb_b - k->wb_a >= WB_MIN) writeback_piece(k, k->wb_a, k->wb_b);
    k->wb_a = k->wb_b = off;
  }
  k->wb_b += len;
  if (k->wb_b - k->wb_a >= WB_PIECE) {
    writeback_piece(k, k->wb_a, k->wb_b);
    k->wb_a = k->wb_b;
  }
#else
  (void)k;
  (void)off;
  (void)len;
#endif
}

/* The mapped-output experiment: the temporary file at its full size, header
 * written, data filled through windows. Returns 0 when not applicable. */
static int open_mapped(cli_sink *k, const uint64_t *shape, cli_ctype vt, char *err, size_t errlen, smx_status *st) {
  const char *on = getenv("SMX_CLI_MMAP_OUT");
  if (!on || !*on || !strcmp(on, "0") || k->stream || !smx_io_native_float(k->dtype, 0) ||
      smx_dtype_size(k->dtype) != cli_ctype_size(vt))
    return 0;
  smx_npy_info h;
  memset(&h, 0, sizeof h);
  h.dtype = k->dtype;
  h.fortran_order = k->fortran;
  h.ndim = k->ndim;
  memcpy(h.shape, shape, (size_t)k->ndim * sizeof *shape);
  unsigned char hdr[SMX_NPY_FORMAT_MAX];
  size_t hlen;
  if ((*st = smx_npy_format_header(&h, hdr, sizeof hdr, &hlen, err, errlen)) != SMX_OK) return 1;
  int e = smx_io_create_temp(k->path, &k->map_tmp, &k->map_fd);
  if (e) {
    k->map_fd = -1;
    *st = sys_fail(k->name, "cannot create a temporary file next to it", e, err, errlen);
    return 1;
  }
  cli_cleanup_register(k->map_tmp);
  k->data_offset = hlen;
  k->file_end = hlen + k->count * smx_dtype_size(k->dtype);
  if ((e = smx_io_write_full(k->map_fd, hdr, hlen)) != 0 || ftruncate(k->map_fd, (off_t)k->file_end) != 0) {
    *st = sys_fail(k->name, "write failed", e ? e : errno, err, errlen);
    return 1;
  }
  *st = SMX_OK;
  return 1;
}

void *cli_sink_window(cli_sink *k, cli_ctype t, uint64_t e0, size_t n) {
  size_t esz = cli_ctype_size(t);
  if (k->map_fd < 0 || esz != smx_dtype_size(k->dtype) || n == 0) return NULL;
  uint64_t off = k->data_offset + e0 * esz, end = off + (uint64_t)n * esz;
  if (end > k->file_end) return NULL;
  if (!k->map || off < k->map_off || end > k->map_off + k->map_len) {
    if (k->map) munmap(k->map, k->map_len);
    k->map = NULL;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off / page * page;
    uint64_t len = end - start > WINDOW ? end - start : WINDOW;
    if (len > k->file_end - start) len = k->file_end - start;
    void *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, k->map_fd, (off_t)start);
    if (m == MAP_FAILED) return NULL;
#ifdef MADV_POPULATE_WRITE
    madvise(m, (size_t)len, MADV_POPULATE_WRITE);  /* one call instead of a fault per page */
#endif
    k->map = m;
    k->map_off = start;
    k->map_len = (size_t)len;
  }
  return k->map + (off - k->map_off);
}

smx_status cli_sink_open(cli_sink *k, const char *path, cli_format fmt, smx_dtype dtype, int ndim,
                         const uint64_t *shape, int fortran, int random, cli_ctype vt, char *err, size_t errlen) {
  memset(k, 0, sizeof *k);
  k->raw_fd = -1;
  k->map_fd = -1;
  k->wb_fd = -1;
  k->path = path;
  k->name = strcmp(path, "-") ? path : "<stdout>";
  k->stream = !strcmp(path, "-") || smx_io_is_stream_path(path);
  k->fmt = fmt;
  k->dtype = dtype;
  k->fortran = fortran;
  k->ndim = ndim;
  k->count = 1;
  for (int d = 0; d < ndim; d++) k->count *= (k->shape[d] = shape[d]);
  if (fmt != CLI_FMT_NPY) {
    if (ndim > 2)
      return smx_io_err(SMX_E_INVALID_ARG, err, errlen,
                        "%s: CSV/TSV output holds 1-d or 2-d results, this one has %d dimensions (use .npy)", k->name,
                        ndim);
    if ((k->raw_fd = cli_temp_fd()) < 0) return sys_fail(k->name, "cannot create a temporary file", errno, err, errlen);
    return SMX_OK;
  }
  smx_status ms;
  if (open_mapped(k, shape, vt, err, errlen, &ms)) {
    if (ms != SMX_OK) cli_sink_abort(k);
    return ms;
  }
  smx_npy_write_options wo = { 0, fortran, 0 };
  const char *target = path;
  if (k->stream && (random || fortran)) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    k->spool_dir = malloc(strlen(dir) + 16);
    k->spool_file = malloc(strlen(dir) + 24);
    if (!k->spool_dir || !k->spool_file) {
      cli_sink_abort(k);
      return smx_io_err(SMX_E_NOMEM, err, errlen, "%s: out of memory", k->name);
    }
    sprintf(k->spool_dir, "%s/smx.XXXXXX", dir);
    if (!mkdtemp(k->spool_dir)) {
      int e = errno;
      free(k->spool_dir);
      k->spool_dir = NULL;
      cli_sink_abort(k);
      return sys_fail(k->name, "cannot create a temporary directory", e, err, errlen);
    }
    sprintf(k->spool_file, "%s/out.npy", k->spool_dir);
    cli_cleanup_register(k->spool_dir);
    cli_cleanup_register(k->spool_file);
    target = k->spool_file;
  }
  smx_status s = cli_npy_create(target, dtype, ndim, shape, &wo, &k->npy, err, errlen);
  if (s != SMX_OK) cli_sink_abort(k);
  else writeback_start(k);
  return s;
}

static smx_status write_raw(cli_sink *k, cli_ctype t, uint64_t e0, const void *src, size_t n, char *err,
                            size_t errlen) {
  double chunk[4096];
  float half[4096];
  for (size_t done = 0; done < n;) {
    size_t m = n - done < 4096 ? n - done : 4096;
    if (t == CLI_F16) smx_f16_to_f32_n((const uint16_t *)src + done, half, m);
    for (size_t i = 0; i < m; i++)
      chunk[i] = t == CLI_F64 ? ((const double *)src)[done + i]
               : t == CLI_F32 ? (double)((const float *)src)[done + i]
                              : (double)half[i];
    int e = smx_io_pwrite_full(k->raw_fd, chunk, m * sizeof(double), (e0 + done) * sizeof(double));
    if (e) return sys_fail(k->name, "writing the temporary copy failed", e, err, errlen);
    done += m;
  }
  return SMX_OK;
}

smx_status cli_sink_write(cli_sink *k, cli_ctype t, uint64_t e0, const void *src, size_t n, char *err,
                          size_t errlen) {
  if (k->raw_fd >= 0) return write_raw(k, t, e0, src, n, err, errlen);
  if (k->map_fd >= 0) {  /* positioned writes stay coherent with the mapping */
    int e = smx_io_pwrite_full(k->map_fd, src, n * cli_ctype_size(t), k->data_offset + e0 * cli_ctype_size(t));
    return e ? sys_fail(k->name, "write failed", e, err, errlen) : SMX_OK;
  }
  smx_status s = t == CLI_F64 ? smx_npy_write_elems_f64(k->npy, e0, src, n, err, errlen)
               : t == CLI_F16 ? smx_npy_write_elems_f16(k->npy, e0, src, n, err, errlen)
                              : smx_npy_write_elems_f32(k->npy, e0, src, n, err, errlen);
  if (s == SMX_OK && k->wb_fd >= 0) {
    uint64_t isz = smx_dtype_size(k->dtype);
    writeback(k, smx_npy_writer_info(k->npy)->data_offset + e0 * isz, (uint64_t)n * isz);
  }
  return s;
}

static void free_sink(cli_sink *k) {
  if (k->raw_fd >= 0) close(k->raw_fd);
  if (k->wb_fd >= 0) close(k->wb_fd);
  if (k->map) munmap(k->map, k->map_len);
  if (k->map_fd >= 0) close(k->map_fd);
  if (k->map_tmp) {
    cli_cleanup_unregister(k->map_tmp);
    unlink(k->map_tmp);
    free(k->map_tmp);
  }
  if (k->spool_dir) {
    cli_cleanup_unregister(k->spool_dir);
    cli_cleanup_unregister(k->spool_file);
    if (k->spool_file) unlink(k->spool_file);
    rmdir(k->spool_dir);
  }
  free(k->spool_file);
  free(k->spool_dir);
  memset(k, 0, sizeof *k);
  k->raw_fd = k->map_fd = k->wb_fd = -1;
}

void cli_sink_abort(cli_sink *k) {
  cli_npy_abort(k->npy);
  k->npy = NULL;
  free_sink(k);
}

/* The stream destination's descriptor: stdout, or the device / FIFO opened
 * in place. Returns 0 or an errno value. */
static int open_stream(const cli_sink *k, int *fd) {
  if (!strcmp(k->path, "-")) {
    *fd = STDOUT_FILENO;
    return 0;
  }
  return smx_io_open_stream(k->path, fd);
}

static smx_status close_stream(const cli_sink *k, int fd, smx_status s, char *err, size_t errlen) {
  if (fd != STDOUT_FILENO && close(fd) != 0 && s == SMX_OK) s = sys_fail(k->name, "close failed", errno, err, errlen);
  return s;
}

/* A finished spool file to the stream destination. */
static smx_status copy_out(const cli_sink *k, char *err, size_t errlen) {
  int fd = open(k->spool_file, O_RDONLY | O_CLOEXEC), out;
  if (fd < 0) return sys_fail(k->name, "cannot reopen the temporary file", errno, err, errlen);
  int e = open_stream(k, &out);
  if (e) {
    close(fd);
    return sys_fail(k->name, "cannot open it for writing", e, err, errlen);
  }
  static unsigned char buf[1 << 16];
  for (;;) {
    size_t got;
    if ((e = smx_io_read_full(fd, buf, sizeof buf, &got)) != 0 || got == 0) break;
    if ((e = smx_io_write_full(out, buf, got)) != 0) break;
  }
  close(fd);
  return close_stream(k, out, e ? sys_fail(k->name, "write failed", e, err, errlen) : SMX_OK, err, errlen);
}

/* Text into a temporary next to the destination, renamed over it. */
static smx_status finish_text(cli_sink *k, char *err, size_t errlen) {
  char sep = k->fmt == CLI_FMT_TSV ? '\t' : ',';
  if (k->stream) {
    int out, e = open_stream(k, &out);
    if (e) return sys_fail(k->name, "cannot open it for writing", e, err, errlen);
    smx_status s = cli_text_format(k->raw_fd, out, k->name, sep, k->dtype, k->ndim, k->shape, k->fortran, err, errlen);
    return close_stream(k, out, s, err, errlen);
  }
  char *tmp = NULL;
  int fd, e = smx_io_create_temp(k->path, &tmp, &fd);
  if (e) return sys_fail(k->name, "cannot create a temporary file next to it", e, err, errlen);
  cli_cleanup_register(tmp);
  struct stat st;
  smx_status s = cli_text_format(k->raw_fd, fd, k->name, sep, k->dtype, k->ndim, k->shape, k->fortran, err, errlen);
  if (s == SMX_OK && stat(k->path, &st) == 0 && S_ISREG(st.st_mode) && fchmod(fd, st.st_mode & 0777) != 0)
    s = sys_fail(k->name, "cannot set the file mode", errno, err, errlen);
  if (s == SMX_OK && fsync(fd) != 0) s = sys_fail(k->name, "fsync failed", errno, err, errlen);
  if (close(fd) != 0 && s == SMX_OK) s = sys_fail(k->name, "close failed", errno, err, errlen);
  if (s == SMX_OK && rename(tmp, k->path) != 0)
    s = sys_fail(k->name, "cannot rename the temporary file over it", errno, err, errlen);
  if (s != SMX_OK) unlink(tmp);
  cli_cleanup_unregister(tmp);
  free(tmp);
  return s;
}

smx_status cli_sink_finish(cli_sink *k, char *err, size_t errlen) {
  smx_status s = SMX_OK;
  if (k->npy) {
    s = cli_npy_finish(k->npy, err, errlen);
    k->npy = NULL;
    if (s == SMX_OK && k->spool_file) s = copy_out(k, err, errlen);
  } else if (k->raw_fd >= 0) {
    s = finish_text(k, err, errlen);
  } else if (k->map_fd >= 0) {
    struct stat st;
    if (k->map) munmap(k->map, k->map_len);
    k->map = NULL;
    if (stat(k->path, &st) == 0 && S_ISREG(st.st_mode) && fchmod(k->map_fd, st.st_mode & 0777) != 0)
      s = sys_fail(k->name, "cannot set the file mode", errno, err, errlen);
    if (s == SMX_OK && fsync(k->map_fd) != 0) s = sys_fail(k->name, "fsync failed", errno, err, errlen);
    if (close(k->map_fd) != 0 && s == SMX_OK) s = sys_fail(k->name, "close failed", errno, err, errlen);
    k->map_fd = -1;
    if (s == SMX_OK && rename(k->map_tmp, k->path) != 0)
      s = sys_fail(k->name, "cannot rename the temporary file over it", errno, err, errlen);
    if (s == SMX_OK) {  /* renamed: nothing to remove */
      cli_cleanup_unregister(k->map_tmp);
      free(k->map_tmp);
      k->map_tmp = NULL;
    }
  }
  free_sink(k);
  return s;
}
