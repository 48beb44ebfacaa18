/* Shapes of .npy arrays: the size checks shared by the parser and the writer,
 * and Python's repr of a shape for messages and headers. */
#ifndef SMX_IO_NPY_SHAPE_H
#define SMX_IO_NPY_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "io/npy_io.h"

/* Each dimension, the element count and the byte count must stay at most this
 * (NumPy's sizes are signed 64-bit, and so is off_t). */
#define SMX_IO_MAX_EXTENT ((uint64_t)INT64_MAX)

/*
 * Checks (t, ndim, shape) and fills info->dtype, ndim, shape (zero-filled past
 * ndim), count, rows, cols and data_bytes; leaves the other fields alone.
 * On failure returns `bad` with a message.
 */
smx_status smx_io_shape_set(smx_npy_info *info, smx_dtype t, int ndim, const uint64_t *shape, smx_status bad,
                            char *err, size_t errlen);

/* Python's repr of the tuple: "()", "(5,)", "(3, 4)". Writes at most cap bytes
 * including the NUL (truncating) and returns the full length. */
size_t smx_io_shape_repr(int ndim, const uint64_t *shape, char *buf, size_t cap);

#endif
