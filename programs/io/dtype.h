/* The dtypes of .npy files: sizes, names and the 'descr' strings of headers. */
#ifndef SMX_IO_DTYPE_H
#define SMX_IO_DTYPE_H

#include <stddef.h>

#include "io/npy_io.h"

/* 1 when this machine stores integers big-endian (decides what '=' means). */
int smx_io_host_big_endian(void);

/* Parses descr s[0 .. n) (without quotes), e.g. "<f4", "|u1", "=i8".
 * Returns 0 and sets *t and *big (0 for 1-byte types), or -1. */
int smx_io_dtype_from_descr(const char *s, size_t n, smx_dtype *t, int *big);

/* Writes NumPy's descr for (t, big), e.g. "<f4" or "|b1", into out[4]
 * (3 characters and a NUL). Returns -1 for an unknown t. */
int smx_io_dtype_descr(smx_dtype t, int big, char out[4]);

#endif
