#include "io/npy_layout.h"

int smx_io_layout_is_c(const smx_npy_info *info) {
  if (!info->fortran_order) return 1;
  int big = 0;
  for (int i = 0; i < info->ndim; i++) big += info->shape[i] > 1;
  return big <= 1;
}

void smx_io_frow_start(smx_io_frow *it, const smx_npy_info *info, uint64_t row) {
  it->np = info->ndim > 0 ? info->ndim - 1 : 0;
  uint64_t s = 1;
  for (int k = 0; k < it->np; k++) {
    it->dims[k] = info->shape[k];
    it->stride[k] = s;
    s *= info->shape[k];  /* <= rows: no overflow (smx_io_shape_set) */
  }
  it->f = 0;
  for (int k = it->np; k-- > 0;) {  /* row < rows, so every dims[k] > 0 */
    it->idx[k] = row % it->dims[k];
    row /= it->dims[k];
    it->f += it->idx[k] * it->stride[k];
  }
}

void smx_io_frow_next(smx_io_frow *it) {
  for (int k = it->np; k-- > 0;) {
    if (++it->idx[k] < it->dims[k]) {
      it->f += it->stride[k];
      return;
    }
    it->f -= (it->dims[k] - 1) * it->stride[k];  /* wrap to 0, carry left */
    it->idx[k] = 0;
  }
}

int smx_io_span(const uint64_t *f, size_t m, uint64_t *lo, uint64_t *span) {
  uint64_t a = f[0], b = f[0];
  int contig = 1;
  for (size_t k = 1; k < m; k++) {
    if (f[k] < a) a = f[k];
    if (f[k] > b) b = f[k];
    contig &= f[k] == f[0] + k;
  }
  *lo = a;
  *span = b - a + 1;
  return contig;
}
