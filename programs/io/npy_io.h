/*
 * The programs' .npy I/O (programs/io/, the smx_fileio library): reading and
 * writing NumPy .npy files, row by row. Not part of the library's ABI
 * (docs/cli-architecture.md); used by the command, the benches and the tests.
 *
 * The view is the one softmax needs: an array of shape (d0, ..., dk) is
 * rows x cols with cols = dk (the last axis) and rows = d0 * ... * d(k-1).
 * A 1-d array is one row; a 0-d array (a scalar) is one row of one element;
 * shape (5, 0) is five empty rows. Row r, column j is the element whose
 * C-order (row-major) index is r * cols + j, whatever the file's layout.
 *
 * Data goes through f32 or f64 buffers owned by the caller; the file's dtype
 * and byte order are converted on the fly, a bounded chunk at a time (256 KiB
 * of file data; only a Fortran-order array of at most 1 MiB is held whole).
 * Files are read with pread, not mmap: a file truncated by another process
 * gives an error, not SIGBUS.
 *
 * Every fallible function returns an smx_status and, on failure, writes a
 * one-line message naming the file and the problem into err (at most errlen
 * bytes including the NUL; err may be NULL when errlen is 0). Codes:
 *   SMX_E_INVALID_ARG  a NULL pointer or empty path, a bad dtype / shape / row
 *                      range, a value an integer file cannot hold, a layout
 *                      a pipe cannot carry
 *   SMX_E_NOMEM        an allocation failed (all are small and bounded)
 *   SMX_E_PARSE        the bytes are not a .npy file smx accepts
 *   SMX_E_IO           open / read / write / rename failed (errno text inside)
 * Nothing aborts. Readers and writers are not thread-safe; use one per thread.
 *
 * What is accepted (strictly; everything else is SMX_E_PARSE):
 *  - magic "\x93NUMPY", version 1.0 (2-byte header length), 2.0 or 3.0 (4-byte);
 *    1.0 and 2.0 headers must be ASCII; 3.0 headers must be valid UTF-8, but
 *    no accepted header has a place for a non-ASCII character either;
 *  - a header of at most SMX_NPY_MAX_HEADER_BYTES, ending in '\n': a Python
 *    dict literal starting at its first byte, with exactly the keys 'descr',
 *    'fortran_order' and 'shape' in any order, spaces or tabs between tokens,
 *    an optional trailing comma, then only spaces before the final '\n';
 *  - descr: one of [<>=] followed by f2 f4 f8 i2 i4 i8 u2 u4 u8, or one of
 *    [|<>=] followed by i1 u1 b1 ('=' means this machine's order; a byte-order
 *    character is required; '|' is refused for multi-byte types, where it
 *    would leave the byte order unsaid);
 *  - fortran_order: True or False;
 *  - shape: a tuple of decimal integers without sign or leading zeros, () for
 *    a scalar, (n,) for one dimension (a Python-2 'L' suffix is accepted in
 *    versions 1.0 and 2.0, as NumPy does), at most SMX_NPY_MAX_DIMS of them,
 *    each at most 2^63 - 1, the product of the non-zero ones and the data size
 *    in bytes also at most 2^63 - 1;
 *  - for files: exactly shape x itemsize bytes of data after the header
 *    (fewer is a truncated file, more is trailing garbage; both are errors).
 */
#ifndef SMX_PROGRAMS_IO_NPY_IO_H
#define SMX_PROGRAMS_IO_NPY_IO_H

#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"

#define SMX_NPY_MAX_DIMS 32
/* Headers longer than this are refused before anything is allocated for them
 * (NumPy itself refuses more than 10000 bytes by default). */
#define SMX_NPY_MAX_HEADER_BYTES (1u << 20)
/* smx_npy_format_header never needs more than this many bytes. */
#define SMX_NPY_FORMAT_MAX 1024

/* Element types of .npy files. Stable numbers, like smx_status. */
typedef enum smx_dtype {
  SMX_DTYPE_BOOL = 1, /* 'b1': one byte, 0 or 1 (any non-zero byte reads as 1) */
  SMX_DTYPE_I8 = 2,
  SMX_DTYPE_I16 = 3,
  SMX_DTYPE_I32 = 4,
  SMX_DTYPE_I64 = 5,
  SMX_DTYPE_U8 = 6,
  SMX_DTYPE_U16 = 7,
  SMX_DTYPE_U32 = 8,
  SMX_DTYPE_U64 = 9,
  SMX_DTYPE_F16 = 10, /* IEEE binary16 ('f2'); .npy has no bfloat16 */
  SMX_DTYPE_F32 = 11,
  SMX_DTYPE_F64 = 12
} smx_dtype;

/** @return NumPy's name ("float32", "uint8", "bool", ...), or NULL for an unknown value. */
const char *smx_dtype_name(smx_dtype t);
/** @return the element size in bytes, or 0 for an unknown value. */
size_t smx_dtype_size(smx_dtype t);

/* What a .npy header says, plus the sizes derived from it. */
typedef struct smx_npy_info {
  smx_dtype dtype;
  int big_endian;            /* byte order of the data; always 0 for 1-byte types      */
  int fortran_order;         /* 1: column-major layout in the file (reading hides it)  */
  int ndim;                  /* 0 .. SMX_NPY_MAX_DIMS                                  */
  uint64_t shape[SMX_NPY_MAX_DIMS];  /* shape[0 .. ndim), the rest 0                   */
  uint64_t count;            /* elements: the product of shape (1 for ndim == 0)       */
  uint64_t rows, cols;       /* the softmax view described at the top of this file     */
  uint64_t data_offset;      /* bytes from the start of the file to the first element  */
  uint64_t data_bytes;       /* count * itemsize                                       */
  int version_major, version_minor;  /* 1.0, 2.0 or 3.0 (format_header: 0 = auto)      */
} smx_npy_info;

/* ------------------------------------------------------------ headers */
/*
 * From the first bytes of a file (at least 10 for version 1.0, 12 for 2.0 and
 * 3.0): the total size of magic + header, i.e. where the data starts. Use it
 * to know how much to read before calling smx_npy_parse_header.
 * SMX_E_PARSE for a wrong magic, an unknown version, a header above
 * SMX_NPY_MAX_HEADER_BYTES, or too few bytes to tell.
 */
smx_status smx_npy_header_size(const void *buf, size_t len, uint64_t *total, char *err, size_t errlen);

/*
 * Parses the magic and header at the start of buf[0 .. len) (bytes after the
 * header, if any, are ignored: this checks the header, not the file size).
 * Pure: no I/O, no allocation, never reads outside buf. On failure *info is
 * unspecified and err says what is wrong and at which byte.
 */
smx_status smx_npy_parse_header(const void *buf, size_t len, smx_npy_info *info, char *err, size_t errlen);

/*
 * Writes magic + header for info->dtype, big_endian, fortran_order, ndim,
 * shape and version_major into buf (version 0: the oldest that fits, which
 * for these dtypes and at most 32 dimensions is always 1.0; 1, 2 or 3 force
 * that version), byte-identical to what NumPy 1.24 writes: padded with
 * spaces and '\n' so that the data starts at a multiple of 64. The other
 * fields of info are ignored. *len receives the size, at most
 * SMX_NPY_FORMAT_MAX. SMX_E_INVALID_ARG for a bad dtype or shape, or when cap
 * is too small (then *len still receives the size needed).
 */
smx_status smx_npy_format_header(const smx_npy_info *info, void *buf, size_t cap, size_t *len,
                                 char *err, size_t errlen);

/* ------------------------------------------------------------- reading */
typedef struct smx_npy_reader smx_npy_reader;

/*
 * Opens a .npy file and checks its header and size. path "-" reads standard
 * input: then, unless stdin is a regular file, rows must be read in order
 * (row0 equal to the rows read so far), the data size is checked as it
 * arrives (truncation when it ends early, trailing bytes after the last row),
 * and a Fortran-order array is accepted only up to 1 MiB of data.
 */
smx_status smx_npy_open(const char *path, smx_npy_reader **r, char *err, size_t errlen);

/** @return the header of an open reader (valid until smx_npy_close). */
const smx_npy_info *smx_npy_reader_info(const smx_npy_reader *r);

/*
 * Reads rows [row0, row0 + nrows) into dst, nrows * cols values, densely
 * (row r at dst + (r - row0) * cols). Conversions: f16 -> f32/f64 exact;
 * f64 -> f32 rounds to nearest; integers -> nearest float (exact for
 * <= 16 bits into f32 and <= 32 bits into f64); bool -> 0 or 1.
 * Fortran-order files: arrays up to 1 MiB of data are read once and kept;
 * larger ones are read, for each column, as the window of the file that
 * holds the requested rows (at most 1024 rows at a time; one read of those
 * rows for a 2-d array). Read large row blocks: each call costs at least one
 * read per column.
 * SMX_E_INVALID_ARG for rows past the end or out-of-order rows from a pipe.
 */
smx_status smx_npy_read_rows_f32(smx_npy_reader *r, uint64_t row0, uint64_t nrows, float *dst,
                                 char *err, size_t errlen);
smx_status smx_npy_read_rows_f64(smx_npy_reader *r, uint64_t row0, uint64_t nrows, double *dst,
                                 char *err, size_t errlen);

/*
 * Storage-order access, for callers that handle the layout themselves (the
 * smx command works on any axis this way): elements [e0, e0 + n) in the order
 * the file stores them (C order, or column-major for a Fortran-order file),
 * converted like the rows functions. _f16 copies the IEEE binary16 bits of a
 * float16 file (byte order fixed) and refuses other dtypes. Any order for
 * regular files; from a pipe e0 must be where the previous call stopped.
 */
smx_status smx_npy_read_elems_f32(smx_npy_reader *r, uint64_t e0, size_t n, float *dst,
                                  char *err, size_t errlen);
smx_status smx_npy_read_elems_f64(smx_npy_reader *r, uint64_t e0, size_t n, double *dst,
                                  char *err, size_t errlen);
smx_status smx_npy_read_elems_f16(smx_npy_reader *r, uint64_t e0, size_t n, uint16_t *dst,
                                  char *err, size_t errlen);

/** Closes the file and frees the reader. NULL is allowed. */
void smx_npy_close(smx_npy_reader *r);

/* ------------------------------------------------------------- writing */
typedef struct smx_npy_writer smx_npy_writer;

typedef struct smx_npy_write_options {  /* all-zero, or a NULL pointer, means the defaults */
  int big_endian;     /* 0: little-endian '<' (NumPy's choice on x86 and ARM); 1: '>'  */
  int fortran_order;  /* 0: C order; 1: column-major, as numpy.asfortranarray saves     */
  int version;        /* 0: 1.0 (every header smx writes fits it); 1, 2, 3: that one    */
} smx_npy_write_options;

/*
 * Creates a writer for an array of `dtype` and shape[0 .. ndim). The data is
 * written to a new temporary file ".NAME.tmp.XXXXXX" next to `path` and
 * renamed over `path` only by a successful smx_npy_writer_finish, so a failed
 * or aborted write leaves no output and an existing file untouched (the new
 * file keeps the old one's permission bits; a symbolic link at `path` is
 * replaced by the file, its target is left alone). The directory must be
 * writable. path "-" writes standard output directly (no temporary: an
 * error there leaves a partial stream). So does a path that names an
 * existing file that is neither regular nor a directory, after symbolic
 * links: a character or block device, a FIFO or a socket is opened and
 * written in place, never replaced (-o /dev/null discards the output, a FIFO
 * feeds its reader, /dev/full gives SMX_E_IO); a FIFO without a reader
 * blocks until one opens it, as a shell redirection does.
 * Fortran order to a stream is limited to 1 MiB of data.
 */
smx_status smx_npy_writer_open(const char *path, smx_dtype dtype, int ndim, const uint64_t *shape,
                               const smx_npy_write_options *opt, smx_npy_writer **w,
                               char *err, size_t errlen);

/** @return the temporary file's path while one exists (NULL for standard
 *  output): a program may unlink it from a signal handler before _exit. */
const char *smx_npy_writer_temp_path(const smx_npy_writer *w);

/** @return the header being written (rows and cols say what to append). */
const smx_npy_info *smx_npy_writer_info(const smx_npy_writer *w);

/*
 * Appends nrows rows of cols values (dense, like the readers' dst).
 * Conversions to the file's dtype: f16 and f32 round to nearest even (f64 ->
 * f16 directly, without double rounding), overflow gives infinity, NaN stays
 * NaN; integers round to nearest (ties to even) and a NaN or out-of-range
 * value is SMX_E_INVALID_ARG, naming the row and column, with nothing of this
 * call written (the writer stays usable); bool: 0 -> False, anything else
 * (NaN too) -> True. SMX_E_INVALID_ARG for rows beyond the shape. After an
 * I/O error the writer is failed: later calls return SMX_E_IO, finish
 * deletes the temporary file.
 */
smx_status smx_npy_write_rows_f32(smx_npy_writer *w, const float *src, uint64_t nrows,
                                  char *err, size_t errlen);
smx_status smx_npy_write_rows_f64(smx_npy_writer *w, const double *src, uint64_t nrows,
                                  char *err, size_t errlen);

/*
 * Storage-order writing (the counterpart of smx_npy_read_elems_*): n values
 * to elements [e0, e0 + n) in the order the file stores them, converted like
 * the rows functions (_f16: binary16 bits, float16 files only). To a regular
 * file in any order (positioned writes; native float data is written
 * straight from src); to standard output e0 must be where the previous call
 * stopped. Use either the rows or the elems functions on one writer, and
 * write each element once: finish checks that the counts add up to the shape.
 */
smx_status smx_npy_write_elems_f32(smx_npy_writer *w, uint64_t e0, const float *src, size_t n,
                                   char *err, size_t errlen);
smx_status smx_npy_write_elems_f64(smx_npy_writer *w, uint64_t e0, const double *src, size_t n,
                                   char *err, size_t errlen);
smx_status smx_npy_write_elems_f16(smx_npy_writer *w, uint64_t e0, const uint16_t *src, size_t n,
                                   char *err, size_t errlen);

/*
 * Checks that every row was written, flushes (fsync) the temporary file and
 * renames it over the destination. On any failure the temporary file is
 * removed and the destination left as it was. Frees w in every case.
 */
smx_status smx_npy_writer_finish(smx_npy_writer *w, char *err, size_t errlen);

/** Discards everything written (removes the temporary file) and frees w. NULL is allowed. */
void smx_npy_writer_abort(smx_npy_writer *w);

#endif
