/* The atomic .npy writer of the smx command; see npy_out.h. */
#include "cli/npy_out.h"

#include <string.h>

#include "cli/signals.h"

/* The longest temporary path the cleanup registry keeps (signals.c). */
#define TEMP_PATH_MAX 4096

smx_status cli_npy_create(const char *path, smx_dtype dtype, int ndim, const uint64_t *shape,
                          const smx_npy_write_options *opt, smx_npy_writer **w, char *err, size_t errlen) {
  smx_status s = smx_npy_writer_open(path, dtype, ndim, shape, opt, w, err, errlen);
  if (s == SMX_OK) cli_cleanup_register(smx_npy_writer_temp_path(*w));
  return s;
}

smx_status cli_npy_finish(smx_npy_writer *w, char *err, size_t errlen) {
  char tmp[TEMP_PATH_MAX] = "";
  const char *t = smx_npy_writer_temp_path(w);
  if (t && strlen(t) < TEMP_PATH_MAX) strcpy(tmp, t);
  smx_status s = smx_npy_writer_finish(w, err, errlen);
  cli_cleanup_unregister(tmp);
  return s;
}

void cli_npy_abort(smx_npy_writer *w) {
  if (!w) return;
  cli_cleanup_unregister(smx_npy_writer_temp_path(w));
  smx_npy_writer_abort(w);
}
