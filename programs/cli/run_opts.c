/* The run options the row commands share; see run_opts.h. */
#include "cli/run_opts.h"

#include <string.h>

#include "cli/message.h"
#include "cli/number.h"
#include "smx/smx.h"

int cli_run_option(cli_run_opts *o, const char *a, const char *v) {
  if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
    if (!v) {
      smx_cli_usage_error("%s needs a file name", a);
      return -1;
    }
    o->out = v;
    return 2;
  }
  if (!strcmp(a, "--threads")) {
    uint64_t n;
    if (!smx_cli_parse_u64(v, 1, 256, &n)) {
      smx_cli_usage_error("--threads must be a whole number from 1 to 256");
      return -1;
    }
    o->threads = (int)n;
    return 2;
  }
  if (!strcmp(a, "--masked-row") && (o->accepts & CLI_RUN_MASKED_ROW)) {
    if (!v || (strcmp(v, "zero") && strcmp(v, "nan"))) {
      smx_cli_usage_error("--masked-row must be zero or nan");
      return -1;
    }
    if (!strcmp(v, "nan")) o->flags |= SMX_FLAG_MASKED_ROW_NAN;
    else o->flags &= ~(unsigned)SMX_FLAG_MASKED_ROW_NAN;
    return 2;
  }
  if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
    o->quiet = 1;
    return 1;
  }
  return 0;
}

int cli_run_positional(cli_run_opts *o, const char *cmd, const char *what, const char *a) {
  if (a[0] == '-' && a[1] != '\0') return smx_cli_usage_error("unknown option '%s' for %s", a, cmd);
  if (o->in) return smx_cli_usage_error("%s takes one %s; '%s' is extra", cmd, what, a);
  o->in = a;
  return 0;
}
