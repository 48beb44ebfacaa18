/*
 * The .npy header writer: the same bytes as NumPy 1.24's np.save, so files
 * written by smx compare equal to NumPy's (and NumPy's readers, which parse
 * the header with Python, see exactly what they would have written).
 */
#include <stdio.h>
#include <string.h>

#include "io/dtype.h"
#include "io/io_err.h"
#include "io/npy_shape.h"
#include "io/npy_io.h"

/* NumPy leaves room after the dict for the growing axis to reach 21 digits,
 * so that appending to a file can rewrite the header in place. */
#define GROWTH_AXIS_MAX_DIGITS 21

smx_status smx_npy_format_header(const smx_npy_info *info, void *buf, size_t cap, size_t *len, char *err,
                                 size_t errlen) {
  if (info == NULL || len == NULL || (buf == NULL && cap > 0))
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "NULL argument");
  smx_npy_info chk;
  smx_status s = smx_io_shape_set(&chk, info->dtype, info->ndim, info->shape, SMX_E_INVALID_ARG, err, errlen);
  if (s != SMX_OK) return s;
  int version = info->version_major;
  if (version < 0 || version > 3 || (version != 0 && info->version_minor != 0))
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "unsupported .npy format version %d.%d", version,
                      info->version_minor);
  char descr[4];
  smx_io_dtype_descr(info->dtype, info->big_endian, descr);

  /* The dict, keys sorted as NumPy sorts them, then the growth padding. */
  char text[SMX_NPY_FORMAT_MAX];
  char shape[SMX_NPY_MAX_DIMS * 24 + 8];
  smx_io_shape_repr(info->ndim, info->shape, shape, sizeof shape);
  int n = snprintf(text, sizeof text, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
                   info->fortran_order ? "True" : "False", shape);
  if (n < 0 || (size_t)n >= sizeof text) return smx_io_err(SMX_E_INTERNAL, err, errlen, "header text too long");
  size_t tlen = (size_t)n;
  if (info->ndim > 0) {
    char digits[24];
    int nd = snprintf(digits, sizeof digits, "%llu",
                      (unsigned long long)info->shape[info->fortran_order ? info->ndim - 1 : 0]);
    for (int k = nd; k < GROWTH_AXIS_MAX_DIGITS && tlen < sizeof text; k++) text[tlen++] = ' ';
  }
  /* Magic, version, length; then the text, spaces and '\n' up to a multiple of 64. */
  if (version == 0) version = 1;  /* every header smx can write fits 1.0 (< 65536 bytes) */
  size_t prefix = version == 1 ? 10 : 12;
  size_t hlen = tlen + 1;
  size_t pad = 64 - (prefix + hlen) % 64;  /* 1 .. 64, as NumPy: never zero */
  hlen += pad;
  size_t total = prefix + hlen;
  *len = total;
  if (total > SMX_NPY_FORMAT_MAX) return smx_io_err(SMX_E_INTERNAL, err, errlen, "header of %zu bytes", total);
  if (total > cap)
    return smx_io_err(SMX_E_INVALID_ARG, err, errlen, "the header needs %zu bytes, the buffer has %zu", total, cap);
  unsigned char *b = (unsigned char *)buf;
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)version;
  b[7] = 0;
  b[8] = (unsigned char)(hlen & 0xff);
  b[9] = (unsigned char)(hlen >> 8 & 0xff);
  if (version > 1) {
    b[10] = (unsigned char)(hlen >> 16 & 0xff);
    b[11] = (unsigned char)(hlen >> 24 & 0xff);
  }
  memcpy(b + prefix, text, tlen);
  memset(b + prefix + tlen, ' ', pad);
  b[total - 1] = '\n';
  return SMX_OK;
}
