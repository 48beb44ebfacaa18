/*
 * POSIX file plumbing for the reader and writer: whole-buffer reads and
 * writes that survive EINTR and short transfers, and the unique temporary
 * name next to an output file.
 */
#ifndef SMX_IO_FILEIO_H
#define SMX_IO_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0, or an errno value. Reads stop early only at end of file
 * (*got says how much arrived); writes either complete or fail. */
int smx_io_read_full(int fd, void *buf, size_t n, size_t *got);
int smx_io_pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *got);
int smx_io_write_full(int fd, const void *buf, size_t n);
int smx_io_pwrite_full(int fd, const void *buf, size_t n, uint64_t off);

/*
 * Creates and opens a new file "DIR/.BASE.tmp.XXXXXX" for path "DIR/BASE":
 * read-write (the writer reads back partial windows), close-on-exec, mode
 * 0666 less the umask. Returns 0 and sets
 * *tmp (malloc'ed; free it) and *fd, or an errno value.
 */
int smx_io_create_temp(const char *path, char **tmp, int *fd);

/*
 * Outputs are written to a temporary file and renamed over their name, so
 * that a failure never leaves half a file. That is only right for a regular
 * file: renaming over /dev/null, a FIFO a reader waits on or a socket would
 * replace it with a regular file. Such a path (an existing file that is
 * neither regular nor a directory, after symbolic links) is written in place,
 * as a stream, like standard output.
 */
int smx_io_is_stream_path(const char *path);   /* 1 for such a path, else 0 ("-" is 0) */
/* Opens it for writing, without creating or truncating. 0, or an errno value
 * (a FIFO blocks here until it has a reader; a socket gives ENXIO). */
int smx_io_open_stream(const char *path, int *fd);

/*
 * One output, written whole or not at all: "-" is standard output, a stream
 * path (above) is opened in place, anything else is a temporary file next to
 * path, renamed over it by commit (keeping an existing file's permission
 * bits; a new one gets 0666 less the umask).
 */
typedef struct smx_io_out {
  int fd;          /* write here */
  char *tmp;       /* the temporary file while one exists: a signal handler may unlink it */
  const char *path;
  int stream;      /* stdout, a device, a FIFO: written in order, nothing to rename */
  int own_fd;      /* fd is closed by commit / abort (not stdout) */
  int keep_mode;
  unsigned mode;
} smx_io_out;
/* 0, or an errno value (EISDIR for a directory) with nothing left behind. */
int smx_io_out_open(smx_io_out *o, const char *path);
/* Flushes, closes and renames. 0, or an errno value with *what saying which
 * step failed; the temporary file is gone either way. */
int smx_io_out_commit(smx_io_out *o, const char **what);
/* Closes and removes the temporary file: an existing output stays as it was. */
void smx_io_out_abort(smx_io_out *o);

#endif
