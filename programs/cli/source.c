/*
 * The input side of the smx command: a .npy file read through the library's
 * reader (pread of bounded chunks into the engine's block), a .npy stream on
 * a pipe, or text parsed into a temporary file.
 *
 * With SMX_CLI_MMAP_IN=1, a file whose bytes are already the type computed
 * in is instead memory-mapped 64 MiB at a time (unmapped as the engine moves
 * on, so the resident size stays bounded) and computed from in place. That
 * saves a copy but was measured slower: on 1M x 1000 float32 from the page
 * cache it took 4.2-6.9 s of CPU against 2.7-3.9 s with pread (user time
 * 2.4-2.6 s against 0.6-0.9 s: the kernels run slower on page-cache pages
 * faulted in 64 KiB at a time than on a reused, cache-warm block), and twice
 * the peak RSS (100 MB against 51 MB). Kept for measuring.
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

#include "cli/stream.h"
#include "io/convert.h"
#include "io/fileio.h"
#include "io/io_err.h"

/* Mapped window: about this much of the file at a time (more when one read
 * asks for more). Mapped pages count in the resident size until unmapped. */
#define WINDOW ((size_t)64 << 20)

static smx_dtype ctype_dtype(cli_ctype t) {
  return t == CLI_F64 ? SMX_DTYPE_F64 : t == CLI_F16 ? SMX_DTYPE_F16 : SMX_DTYPE_F32;
}

static void take_npy_info(cli_src *s) {
  const smx_npy_info *in = smx_npy_reader_info(s->npy);
  s->dtype = in->dtype;
  s->fortran = in->fortran_order;
  s->ndim = in->ndim;
  memcpy(s->shape, in->shape, sizeof s->shape);
  s->count = in->count;
  s->data_offset = in->data_offset;
}

/* Memory mapping only for a regular file of native floats. */
static void setup_map(cli_src *s, const char *path) {
  const smx_npy_info *in = smx_npy_reader_info(s->npy);
  s->map_fd = -1;
  const char *on = getenv("SMX_CLI_MMAP_IN");  /* off by default: measured slower, see the top of this file */
  if (!on || !*on || !strcmp(on, "0") || !strcmp(path, "-") || !smx_io_native_float(in->dtype, in->big_endian))
    return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != in->data_offset + in->data_bytes) {
    close(fd);
    return;
  }
  s->map_fd = fd;
  s->file_end = (uint64_t)st.st_size;
}

smx_status cli_src_open(cli_src *s, const char *path, cli_format fmt, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  s->raw_fd = -1;
  s->map_fd = -1;
  s->name = strcmp(path, "-") ? path : "<stdin>";
  if (fmt == CLI_FMT_NPY) {
    smx_status st = smx_npy_open(path, &s->npy, err, errlen);
    if (st != SMX_OK) return st;
    take_npy_info(s);
    setup_map(s, path);
    return SMX_OK;
  }
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
  if (fd < 0) {
    char eb[128];
    return smx_io_err(SMX_E_IO, err, errlen, "%s: cannot open: %s", path, smx_io_strerror(errno, eb, sizeof eb));
  }
  uint64_t rows = 0, cols = 0;
  smx_status st = cli_text_parse(fd, s->name, fmt == CLI_FMT_TSV ? '\t' : ',', &s->raw_fd, &rows, &cols, err, errlen);
  if (fd != STDIN_FILENO) close(fd);
  if (st != SMX_OK) return st;
  s->dtype = SMX_DTYPE_F64;
  s->ndim = 2;
  s->shape[0] = rows;
  s->shape[1] = cols;
  s->count = rows * cols;
  return SMX_OK;
}

int cli_src_in_order_only(const cli_src *s) {
  if (!s->npy || s->map_fd >= 0) return 0;
  struct stat st;
  return s->name[0] == '<' && (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode));
}

smx_status cli_src_spool(cli_src *s, char *err, size_t errlen) {
  /* The header was consumed from the pipe: write an equivalent one, then the
   * rest of the stream, and read that file as standard input. */
  const smx_npy_info *in = smx_npy_reader_info(s->npy);
  smx_npy_info h = *in;
  unsigned char hdr[SMX_NPY_FORMAT_MAX];
  size_t hlen;
  char eb[128];
  smx_status st = smx_npy_format_header(&h, hdr, sizeof hdr, &hlen, err, errlen);
  if (st != SMX_OK) return st;
  int fd = cli_temp_fd();
  if (fd < 0) return smx_io_err(SMX_E_IO, err, errlen, "%s: cannot create a temporary file: %s", s->name,
                                smx_io_strerror(errno, eb, sizeof eb));
  int e = smx_io_write_full(fd, hdr, hlen);
  static unsigned char buf[1 << 16];
  uint64_t left = in->data_bytes;
  while (!e && left > 0) {
    size_t got, want = left < sizeof buf ? (size_t)left : sizeof buf;
    e = smx_io_read_full(STDIN_FILENO, buf, want, &got);
    if (!e && got < want) {
      close(fd);
      return smx_io_err(SMX_E_PARSE, err, errlen, "%s: truncated: the data ends after %llu bytes of the %llu expected",
                        s->name, (unsigned long long)(in->data_bytes - left + got),
                        (unsigned long long)in->data_bytes);
    }
    if (!e) e = smx_io_write_full(fd, buf, got);
    left -= got;
  }
  size_t extra = 0;
  if (!e) e = smx_io_read_full(STDIN_FILENO, buf, 1, &extra);
  if (!e && extra) {
    close(fd);
    return smx_io_err(SMX_E_PARSE, err, errlen, "%s: trailing bytes after the %llu bytes of data the header declares",
                      s->name, (unsigned long long)in->data_bytes);
  }
  if (e || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, STDIN_FILENO) < 0) {
    if (!e) e = errno;
    close(fd);
    return smx_io_err(SMX_E_IO, err, errlen, "%s: cannot spool the stream: %s", s->name,
                      smx_io_strerror(e, eb, sizeof eb));
  }
  close(fd);
  smx_npy_close(s->npy);
  s->npy = NULL;
  if ((st = smx_npy_open("-", &s->npy, err, errlen)) != SMX_OK) return st;
  take_npy_info(s);
  return SMX_OK;
}

/* Text input: pread native doubles, converted to t a chunk at a time. */
static smx_status read_raw(cli_src *s, cli_ctype t, uint64_t e0, size_t n, void *dst, char *err, size_t errlen) {
  double chunk[4096];
  for (size_t done = 0; done < n;) {
    size_t k = n - done < 4096 ? n - done : 4096;
    double *to = t == CLI_F64 ? (double *)dst + done : chunk;
    size_t got;
    int e = smx_io_pread_full(s->raw_fd, to, k * sizeof(double), (e0 + done) * sizeof(double), &got);
    if (e || got != k * sizeof(double)) {
      char eb[128];
      return smx_io_err(SMX_E_IO, err, errlen, "%s: reading the temporary copy failed: %s", s->name,
                        smx_io_strerror(e ? e : EIO, eb, sizeof eb));
    }
    if (t == CLI_F32)
      for (size_t i = 0; i < k; i++) ((float *)dst)[done + i] = (float)chunk[i];
    done += k;
  }
  return SMX_OK;
}

smx_status cli_src_read(cli_src *s, cli_ctype t, uint64_t e0, size_t n, void *dst, char *err, size_t errlen) {
  if (s->raw_fd >= 0) return read_raw(s, t, e0, n, dst, err, errlen);
  if (t == CLI_F64) return smx_npy_read_elems_f64(s->npy, e0, n, dst, err, errlen);
  if (t == CLI_F16) return smx_npy_read_elems_f16(s->npy, e0, n, dst, err, errlen);
  return smx_npy_read_elems_f32(s->npy, e0, n, dst, err, errlen);
}

const void *cli_src_peek(cli_src *s, cli_ctype t, uint64_t e0, size_t n) {
  if (s->map_fd < 0 || ctype_dtype(t) != s->dtype || n == 0) return NULL;
  size_t esz = cli_ctype_size(t);
  uint64_t off = s->data_offset + e0 * esz, end = off + (uint64_t)n * esz;
  if (end > s->file_end) return NULL;
  if (!s->map || off < s->map_off || end > s->map_off + s->map_len) {
    if (s->map) munmap(s->map, s->map_len);
    s->map = NULL;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t start = off / (uint64_t)page * (uint64_t)page;
    uint64_t len = end - start > WINDOW ? end - start : WINDOW;
    if (len > s->file_end - start) len = s->file_end - start;
    void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, s->map_fd, (off_t)start);
    if (m == MAP_FAILED) {  /* fall back to reads for good */
      close(s->map_fd);
      s->map_fd = -1;
      return NULL;
    }
    madvise(m, (size_t)len, MADV_SEQUENTIAL);
    s->map = m;
    s->map_off = start;
    s->map_len = (size_t)len;
  }
  return s->map + (off - s->map_off);
}

void cli_src_close(cli_src *s) {
  if (s->map) munmap(s->map, s->map_len);
  if (s->map_fd >= 0) close(s->map_fd);
  if (s->raw_fd >= 0) close(s->raw_fd);
  smx_npy_close(s->npy);
  memset(s, 0, sizeof *s);
  s->raw_fd = s->map_fd = -1;
}
