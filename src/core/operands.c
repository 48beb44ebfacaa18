/* The argument checks of operands.h. */
#include "core/operands.h"

size_t smx_span(size_t rows, size_t cols, size_t ld) {
  const size_t max_elems = (size_t)PTRDIFF_MAX / sizeof(double);
  if (cols > max_elems || ld < cols) return 0;
  if (rows - 1 > 0 && ld > (max_elems - cols) / (rows - 1)) return 0;
  return (rows - 1) * ld + cols;
}

size_t smx_mul(size_t n, size_t m, size_t limit) {
  if (n > limit / m) return 0;
  return n * m;
}

int smx_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

smx_status smx_check_args(const smx_arg *a, size_t n) {
  size_t bytes[8];
  if (n > sizeof bytes / sizeof bytes[0]) return SMX_E_INVALID_ARG;
  for (size_t i = 0; i < n; i++) {
    if (!a[i].p) continue;
    size_t s = smx_span(a[i].rows, a[i].cols, a[i].ld);
    if (!s) return SMX_E_INVALID_ARG;
    bytes[i] = s * a[i].es;
  }
  for (size_t i = 0; i < n; i++) {
    if (!a[i].p || !a[i].out) continue;
    for (size_t j = 0; j < n; j++) {
      if (j == i || !a[j].p || (a[j].out && j < i)) continue;   /* each pair of outputs once */
      int in_place = a[i].alias == (int)j + 1 && a[i].p == a[j].p && a[i].ld == a[j].ld;
      if (!in_place && smx_overlap(a[i].p, bytes[i], a[j].p, bytes[j])) return SMX_E_INVALID_ARG;
    }
  }
  return SMX_OK;
}

smx_status smx_check_x_y(const void *x, size_t ldx, const void *y, size_t ldy, size_t rows, size_t cols, size_t es,
                         int *empty) {
  *empty = 0;
  if (ldx < cols || ldy < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) { *empty = 1; return SMX_OK; }
  if (!x || !y) return SMX_E_INVALID_ARG;
  smx_arg args[2] = { SMX_ARG_IN(x, rows, cols, ldx, es), SMX_ARG_OUT(y, rows, cols, ldy, es, 1) };
  return smx_check_args(args, 2);
}

smx_status smx_check_y_dy_dx(const void *y, size_t ldy, const void *dy, size_t lddy, const void *dx, size_t lddx,
                             size_t rows, size_t cols, size_t es, int *empty) {
  *empty = 0;
  if (ldy < cols || lddy < cols || lddx < cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || cols == 0) { *empty = 1; return SMX_OK; }
  if (!y || !dy || !dx) return SMX_E_INVALID_ARG;
  int as_y = dx == y && lddx == ldy, as_dy = dx == dy && lddx == lddy;
  smx_arg args[3] = { SMX_ARG_IN(y, rows, cols, ldy, es), SMX_ARG_IN(dy, rows, cols, lddy, es),
                      SMX_ARG_OUT(dx, rows, cols, lddx, es, as_y ? 1 : 2) };
  if (as_y && as_dy) args[2].out = 0;   /* the inputs' own buffer: only its span is checked */
  return smx_check_args(args, 3);
}

smx_status smx_check_x_topk(const void *x, size_t ldx, size_t es, size_t rows, size_t cols, size_t k,
                            const void *values, size_t vs, const int64_t *indices, int *empty) {
  *empty = 0;
  if (ldx < cols || k > cols) return SMX_E_INVALID_ARG;
  if (rows == 0 || k == 0) { *empty = 1; return SMX_OK; }
  if (!x || !values || !indices) return SMX_E_INVALID_ARG;
  smx_arg args[3] = { SMX_ARG_IN(x, rows, cols, ldx, es), SMX_ARG_OUT(values, rows, k, k, vs, 0),
                      SMX_ARG_OUT(indices, rows, k, k, sizeof(int64_t), 0) };
  return smx_check_args(args, 3);
}
