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
#include <sys/stat.h>
#include <unistd.h>

#include "cli_stream.h"
#include "io/fileio.h"
#include "io/io_err.h"
#include "math/half_scalar.h"

/* ------------------------------------------------ cleanup on sudden death */
#define MAX_CLEANUP 4
static const char *volatile cleanup[MAX_CLEANUP];

void cli_cleanup_register(const char *path) {
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (!cleanup[i]) { cleanup[i] = path; return; }
}
void cli_cleanup_unregister(const char *path) {
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (cleanup[i] == path) cleanup[i] = NULL;
}
void cli_cleanup_now(void) {
  for (int i = 0; i < MAX_CLEANUP; i++)  /* files first, then the directory holding them */
    if (cleanup[i] && unlink(cleanup[i]) != 0 && errno == EISDIR) rmdir(cleanup[i]);
  for (int i = 0; i < MAX_CLEANUP; i++)
    if (cleanup[i]) rmdir(cleanup[i]);
}

int cli_temp_fd(void) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  char *path = malloc(strlen(dir) + 20);  /* no O_TMPFILE here: create and unlink */
  if (!path) return -1;
  sprintf(path, "%s/smx.XXXXXX", dir);
  fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  free(path);
  return fd;
}

static smx_status sys_fail(const char *name, const char *what, int e, char *err, size_t errlen) {
  char eb[128];
  return smx_io_err(SMX_E_IO, err, errlen, "%s: %s: %s", name, what, smx_io_strerror(e, eb, sizeof eb));
}

smx_status cli_sink_open(cli_sink *k, const char *path, cli_format fmt, smx_dtype dtype, int ndim,
                         const uint64_t *shape, int fortran, int random, char *err, size_t errlen) {
  memset(k, 0, sizeof *k);
  k->raw_fd = -1;
  k->path = path;
  k->name = strcmp(path, "-") ? path : "<stdout>";
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
  smx_npy_write_options wo = { 0, fortran, 0 };
  const char *target = path;
  if (!strcmp(path, "-") && (random || fortran)) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    k->spool_dir = malloc(strlen(dir) + 16);
    k->spool_file = malloc(strlen(dir) + 24);
    if (!k->spool_dir || !k->spool_file) {
      cli_sink_abort(k);
      return smx_io_err(SMX_E_NOMEM, err, errlen, "<stdout>: out of memory");
    }
    sprintf(k->spool_dir, "%s/smx.XXXXXX", dir);
    if (!mkdtemp(k->spool_dir)) {
      int e = errno;
      free(k->spool_dir);
      k->spool_dir = NULL;
      cli_sink_abort(k);
      return sys_fail("<stdout>", "cannot create a temporary directory", e, err, errlen);
    }
    cli_cleanup_register(k->spool_dir);
    sprintf(k->spool_file, "%s/out.npy", k->spool_dir);
    target = k->spool_file;
  }
  smx_status s = smx_npy_writer_open(target, dtype, ndim, shape, &wo, &k->npy, err, errlen);
  if (s != SMX_OK) {
    cli_sink_abort(k);
    return s;
  }
  if (smx_npy_writer_temp_path(k->npy)) cli_cleanup_register(smx_npy_writer_temp_path(k->npy));
  return SMX_OK;
}

static smx_status write_raw(cli_sink *k, cli_ctype t, uint64_t e0, const void *src, size_t n, char *err,
                            size_t errlen) {
  double chunk[4096];
  for (size_t done = 0; done < n;) {
    size_t m = n - done < 4096 ? n - done : 4096;
    for (size_t i = 0; i < m; i++)
      chunk[i] = t == CLI_F64 ? ((const double *)src)[done + i]
               : t == CLI_F32 ? (double)((const float *)src)[done + i]
                              : (double)smx_f16_to_f32(((const uint16_t *)src)[done + i]);
    int e = smx_io_pwrite_full(k->raw_fd, chunk, m * sizeof(double), (e0 + done) * sizeof(double));
    if (e) return sys_fail(k->name, "writing the temporary copy failed", e, err, errlen);
    done += m;
  }
  return SMX_OK;
}

smx_status cli_sink_write(cli_sink *k, cli_ctype t, uint64_t e0, const void *src, size_t n, char *err,
                          size_t errlen) {
  if (k->raw_fd >= 0) return write_raw(k, t, e0, src, n, err, errlen);
  if (t == CLI_F64) return smx_npy_write_elems_f64(k->npy, e0, src, n, err, errlen);
  if (t == CLI_F16) return smx_npy_write_elems_f16(k->npy, e0, src, n, err, errlen);
  return smx_npy_write_elems_f32(k->npy, e0, src, n, err, errlen);
}

static void free_sink(cli_sink *k) {
  if (k->raw_fd >= 0) close(k->raw_fd);
  if (k->spool_dir) {
    cli_cleanup_unregister(k->spool_dir);
    if (k->spool_file) unlink(k->spool_file);
    rmdir(k->spool_dir);
  }
  free(k->spool_file);
  free(k->spool_dir);
  memset(k, 0, sizeof *k);
  k->raw_fd = -1;
}

void cli_sink_abort(cli_sink *k) {
  if (k->npy) {
    if (smx_npy_writer_temp_path(k->npy)) cli_cleanup_unregister(smx_npy_writer_temp_path(k->npy));
    smx_npy_writer_abort(k->npy);
  }
  k->npy = NULL;
  free_sink(k);
}

/* A finished spool file to stdout. */
static smx_status copy_out(const char *from, char *err, size_t errlen) {
  int fd = open(from, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_fail("<stdout>", "cannot reopen the temporary file", errno, err, errlen);
  static unsigned char buf[1 << 16];
  int e = 0;
  for (;;) {
    size_t got;
    if ((e = smx_io_read_full(fd, buf, sizeof buf, &got)) != 0 || got == 0) break;
    if ((e = smx_io_write_full(STDOUT_FILENO, buf, got)) != 0) break;
  }
  close(fd);
  return e ? sys_fail("<stdout>", "write failed", e, err, errlen) : SMX_OK;
}

/* Text into a temporary next to the destination, renamed over it. */
static smx_status finish_text(cli_sink *k, char *err, size_t errlen) {
  char sep = k->fmt == CLI_FMT_TSV ? '\t' : ',';
  if (!strcmp(k->path, "-"))
    return cli_text_format(k->raw_fd, STDOUT_FILENO, k->name, sep, k->dtype, k->ndim, k->shape, k->fortran, err,
                           errlen);
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
    if (smx_npy_writer_temp_path(k->npy)) cli_cleanup_unregister(smx_npy_writer_temp_path(k->npy));
    s = smx_npy_writer_finish(k->npy, err, errlen);
    k->npy = NULL;
    if (s == SMX_OK && k->spool_file) s = copy_out(k->spool_file, err, errlen);
  } else if (k->raw_fd >= 0) {
    s = finish_text(k, err, errlen);
  }
  free_sink(k);
  return s;
}
