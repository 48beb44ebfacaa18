#include "io/npy_shape.h"

#include <stdio.h>
#include <string.h>

#include "io/io_err.h"

size_t smx_io_shape_repr(int ndim, const uint64_t *shape, char *buf, size_t cap) {
  size_t len = 0;
  char tmp[32];
  for (int i = -1; i <= ndim; i++) {
    int n;
    if (i < 0) n = snprintf(tmp, sizeof tmp, "(");
    else if (i == ndim) n = snprintf(tmp, sizeof tmp, ndim == 1 ? ",)" : ")");
    else n = snprintf(tmp, sizeof tmp, "%s%llu", i ? ", " : "", (unsigned long long)shape[i]);
    if (n < 0) n = 0;
    for (int k = 0; k < n; k++, len++)
      if (len + 1 < cap) buf[len] = tmp[k];
  }
  if (cap) buf[len < cap ? len : cap - 1] = '\0';
  return len;
}

smx_status smx_io_shape_set(smx_npy_info *info, smx_dtype t, int ndim, const uint64_t *shape, smx_status bad,
                            char *err, size_t errlen) {
  size_t size = smx_dtype_size(t);
  if (size == 0) return smx_io_err(bad, err, errlen, "unknown dtype %d", (int)t);
  if (ndim < 0 || ndim > SMX_NPY_MAX_DIMS)
    return smx_io_err(bad, err, errlen, "%d dimensions (at most %d)", ndim, SMX_NPY_MAX_DIMS);
  if (ndim > 0 && shape == NULL) return smx_io_err(bad, err, errlen, "no shape for %d dimensions", ndim);
  /* Overflow is checked on the non-zero dimensions too: an empty array of
   * absurd extent is as suspicious as a full one, and rows * cols of its
   * non-empty part must stay computable. */
  uint64_t nonzero = 1, count = 1, rows = 1;
  int empty = 0;
  for (int i = 0; i < ndim; i++) empty |= shape[i] == 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] > SMX_IO_MAX_EXTENT)
      return smx_io_err(bad, err, errlen, "dimension %d is %llu (at most 2^63 - 1)", i,
                        (unsigned long long)shape[i]);
    if (shape[i] != 0) {
      if (nonzero > SMX_IO_MAX_EXTENT / shape[i]) {
        char s[256];
        smx_io_shape_repr(ndim, shape, s, sizeof s);
        if (empty)  /* no elements, but NumPy refuses this shape too ("array is too big") */
          return smx_io_err(bad, err, errlen, "shape %s is too big: its non-zero dimensions multiply to more than 2^63 - 1",
                            s);
        return smx_io_err(bad, err, errlen, "shape %s has more than 2^63 - 1 elements", s);
      }
      nonzero *= shape[i];
    }
    count *= shape[i];  /* <= nonzero, so no overflow */
    if (i < ndim - 1) rows *= shape[i];
  }
  if (count > SMX_IO_MAX_EXTENT / size) {
    char s[256];
    smx_io_shape_repr(ndim, shape, s, sizeof s);
    return smx_io_err(bad, err, errlen, "shape %s of %s needs more than 2^63 - 1 bytes", s, smx_dtype_name(t));
  }
  info->dtype = t;
  info->ndim = ndim;
  memset(info->shape, 0, sizeof info->shape);
  if (ndim > 0) memcpy(info->shape, shape, (size_t)ndim * sizeof shape[0]);
  info->count = count;
  info->rows = rows;
  info->cols = ndim > 0 ? shape[ndim - 1] : 1;
  info->data_bytes = count * size;
  return SMX_OK;
}
