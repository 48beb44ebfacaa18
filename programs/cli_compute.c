/*
 * The library call for one block of rows, by the type computed in. float64
 * data is computed in float32 until the library has float64 entry points
 * (then this file calls them directly).
 */
#include <stdlib.h>

#include "cli_stream.h"

cli_ctype cli_out_type(cli_op op, cli_ctype t) { return op == CLI_LOGSUMEXP && t == CLI_F16 ? CLI_F32 : t; }

static smx_status f32(cli_op op, const float *x, float *y, size_t rows, size_t n, const smx_options *o) {
  if (op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f32(x, n, y, rows, n, o);
  if (op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f32(x, n, y, n, rows, n, o);
  return smx_softmax_rows_f32(x, n, y, n, rows, n, o);
}

/* float64 through a float32 copy, a bounded piece at a time */
static smx_status f64_via_f32(cli_op op, const double *x, double *y, size_t rows, size_t n, const smx_options *o) {
  size_t per = n ? ((size_t)1 << 20) / n : rows;
  if (per < 1) per = 1;
  if (per > rows) per = rows ? rows : 1;
  size_t cells = per * (n ? n : 1);
  float *b = malloc(cells * sizeof(float)), *l = malloc(per * sizeof(float));
  smx_status s = b && l ? SMX_OK : SMX_E_NOMEM;
  for (size_t r0 = 0; s == SMX_OK && r0 < rows; r0 += per) {
    size_t m = rows - r0 < per ? rows - r0 : per;
    for (size_t i = 0; i < m * n; i++) b[i] = (float)x[r0 * n + i];
    s = f32(op, b, op == CLI_LOGSUMEXP ? l : b, m, n, o);
    if (op == CLI_LOGSUMEXP)
      for (size_t i = 0; i < m; i++) y[r0 + i] = l[i];
    else
      for (size_t i = 0; i < m * n; i++) y[r0 * n + i] = b[i];
  }
  free(b);
  free(l);
  return s;
}

smx_status cli_compute(cli_op op, cli_ctype t, const void *x, void *y, size_t rows, size_t n, const smx_options *o) {
  if (t == CLI_F64) return f64_via_f32(op, x, y, rows, n, o);
  if (t == CLI_F16) {
    if (op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f16(x, n, y, rows, n, o);
    if (op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f16(x, n, y, n, rows, n, o);
    return smx_softmax_rows_f16(x, n, y, n, rows, n, o);
  }
  return f32(op, x, y, rows, n, o);
}
