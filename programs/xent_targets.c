/* The targets of smx xent; see xent_targets.h. */
#define _POSIX_C_SOURCE 200809L
#include "xent_targets.h"

#include <math.h>
#include <stdlib.h>

#include "cli/job.h"
#include "cli/message.h"

static int is_integer_dtype(smx_dtype t) {
  return t == SMX_DTYPE_I8 || t == SMX_DTYPE_I16 || t == SMX_DTYPE_I32 || t == SMX_DTYPE_I64 || t == SMX_DTYPE_U8 ||
         t == SMX_DTYPE_U16 || t == SMX_DTYPE_U32 || t == SMX_DTYPE_U64 || t == SMX_DTYPE_BOOL;
}

/* Through double: exact below 2^53, and larger values are out of any class
 * range anyway. */
int smx_xent_read_targets(const char *path, int fmt, uint64_t want, int64_t **t) {
  char err[512];
  cli_src s;
  smx_status st = cli_src_open(&s, path, (cli_format)fmt, err, sizeof err);
  int rc = 0;
  double *d = NULL;
  *t = NULL;
  if (st != SMX_OK) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
    goto done;
  }
  int text = fmt != CLI_FMT_NPY;
  if (!text && !is_integer_dtype(s.dtype)) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: targets must be integers, not %s", path, smx_dtype_name(s.dtype));
    goto done;
  }
  if (s.count != want) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s has %llu targets; the logits have %llu rows", path,
                      (unsigned long long)s.count, (unsigned long long)want);
    goto done;
  }
  size_t n = (size_t)want;
  d = malloc((n ? n : 1) * sizeof(double));
  *t = malloc((n ? n : 1) * sizeof(int64_t));
  if (!d || !*t) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "out of memory for %zu targets", n);
    goto done;
  }
  if (n && cli_src_read(&s, CLI_F64, 0, n, d, err, sizeof err) != SMX_OK) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
    goto done;
  }
  /* a Fortran-order file keeps its first index fastest: number the targets
   * in C order, as the rows of the logits are numbered */
  cli_row_order ro = { s.fortran, s.ndim, { 0 } };
  for (int k = 0; k < s.ndim; k++) ro.shape[k] = s.shape[k];
  for (size_t i = 0; i < n; i++) {
    double v = d[i];
    if (text && !(v == floor(v) && fabs(v) < 9.2e18)) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: target %g of row %zu is not a whole number", path, v,
                        (size_t)cli_row_c_index(&ro, i));
      goto done;
    }
    (*t)[cli_row_c_index(&ro, i)] = v >= 9.2e18 ? INT64_MAX : (int64_t)v;
  }
done:
  if (rc) {
    free(*t);
    *t = NULL;
  }
  free(d);
  cli_src_close(&s);
  return rc;
}
