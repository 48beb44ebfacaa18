/*
 * The library's .npy writer, with its temporary file registered for removal
 * by a terminating signal (signals.h): OUT appears whole, on finish, or not
 * at all, and an existing OUT stays as it was until then.
 */
#ifndef SMX_PROGRAMS_CLI_NPY_OUT_H
#define SMX_PROGRAMS_CLI_NPY_OUT_H

#include "io/npy_io.h"

smx_status cli_npy_create(const char *path, smx_dtype dtype, int ndim, const uint64_t *shape,
                          const smx_npy_write_options *opt, smx_npy_writer **w, char *err, size_t errlen);
smx_status cli_npy_finish(smx_npy_writer *w, char *err, size_t errlen);
void cli_npy_abort(smx_npy_writer *w);  /* NULL is ignored */

#endif
