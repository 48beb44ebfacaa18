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

#endif
