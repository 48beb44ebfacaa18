/* smx eval --report in a build without the HTML renderer (programs/report/). */
#include "cli.h"
#include "eval_result.h"

int smx_report_write(const smx_eval_result *r, const char *path);
int smx_report_write(const smx_eval_result *r, const char *path) {
  (void)r;
  return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s: not written: this build of smx has no HTML report renderer", path);
}
