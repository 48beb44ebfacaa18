/* The library call for one block of rows, by the type computed in. */
#include "cli/stream.h"

cli_ctype cli_out_type(cli_op op, cli_ctype t) { return op == CLI_LOGSUMEXP && t == CLI_F16 ? CLI_F32 : t; }

smx_status cli_compute(cli_op op, cli_ctype t, const void *x, void *y, size_t rows, size_t n, const smx_options *o) {
  if (t == CLI_F64) {
    if (op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f64(x, n, y, rows, n, o);
    if (op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f64(x, n, y, n, rows, n, o);
    return smx_softmax_rows_f64(x, n, y, n, rows, n, o);
  }
  if (t == CLI_F16) {
    if (op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f16(x, n, y, rows, n, o);
    if (op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f16(x, n, y, n, rows, n, o);
    return smx_softmax_rows_f16(x, n, y, n, rows, n, o);
  }
  if (op == CLI_LOGSUMEXP) return smx_logsumexp_rows_f32(x, n, y, rows, n, o);
  if (op == CLI_LOG_SOFTMAX) return smx_log_softmax_rows_f32(x, n, y, n, rows, n, o);
  return smx_softmax_rows_f32(x, n, y, n, rows, n, o);
}
