/*
 * Error messages of the I/O layer: printf-style into the caller's (err,
 * errlen) buffer, which may be NULL / 0, always NUL-terminated and truncated
 * rather than overflowed.
 */
#ifndef SMX_IO_IO_ERR_H
#define SMX_IO_IO_ERR_H

#include <stddef.h>

#include "smx/smx.h"

#if defined(__GNUC__)
#  define SMX_IO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define SMX_IO_PRINTF(f, a)
/* errno text into buf (thread-safe, unlike strerror); returns buf. */
const char *smx_io_strerror(int e, char *buf, size_t len);

#endif

/* Formats the message and returns s, so that `return smx_io_err(...)` reads well. */
smx_status smx_io_err(smx_status s, char *err, size_t errlen, const char *fmt, ...) SMX_IO_PRINTF(4, 5);

/* Prepends "name: " to the message already in err (callers below the file
 * level do not know the file name). */
void smx_io_err_prefix(char *err, size_t errlen, const char *name);

/* errno text into buf (thread-safe, unlike strerror); returns buf. */
const char *smx_io_strerror(int e, char *buf, size_t len);

#endif
