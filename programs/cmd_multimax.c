/*
 * smx multimax IN -o OUT [--ranges R0,R1,R2,R3] [--ts T0,T1,T2,T3] [options]
 *
 * MultiMax (include/smx/smx_multi.h) over an axis, through the streaming
 * engine of the row commands (cli/job.h): the input's float64 is computed in
 * float64, anything else in float32.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cli/formats.h"
#include "cli/run_opts.h"
#include "cli/job.h"
#include "cli/message.h"
#include "cli/number.h"

const char smx_multimax_help[] =
    "usage: smx multimax IN -o OUT [--ranges R0,R1,R2,R3] [--ts T0,T1,T2,T3] [options]\n"
    "MultiMax (Zhou et al. 2024) over an axis (default the last): softmax(s(x) / T) with\n"
    "s(x) = x + T0 (R0 - x)_+ + T1 (x - R1)_+ + T2 (R2 - x)_+^2 + T3 (x - R3)_+^2\n"
    "(the parameters default to 0: softmax).\n"
    "options:\n"
    "  -o, --output FILE      output file (- for stdout), written whole or not at all\n"
    "  -a, --axis A           the axis, negative counts from the end (default -1)\n"
    "  -t, --temperature T    T > 0 (default 1)\n"
    "  --ranges R0,R1,R2,R3   the four ranges (finite)\n"
    "  --ts T0,T1,T2,T3       the four scales (finite)\n"
    "  --threads N            threads to use (default 1)\n"
    "  --masked-row zero|nan  rows of all -inf: 0 (default) or NaN\n"
    "  --format, --in-format  as smx softmax\n"
    "  -q, --quiet            no progress line on stderr\n"
    "float64 input is computed and written in float64; any other input in float32.\n";

typedef struct mm_ctx {
  cli_ctype t;
  smx_options o;
  double r[4], ts[4];
} mm_ctx;

static smx_status mm_rows(void *ctx, const void *x, void *const *yv, size_t rows, size_t n, uint64_t row0) {
  const mm_ctx *c = ctx;
  (void)row0;
  if (c->t == CLI_F64) return smx_multimax_rows_f64(x, n, yv[0], n, rows, n, c->r, c->ts, &c->o);
  return smx_multimax_rows_f32(x, n, yv[0], n, rows, n, c->r, c->ts, &c->o);
}

/* "a,b,c,d" into four finite doubles */
static int parse4(const char *v, double out[4]) {
  char buf[256];
  if (!v || strlen(v) >= sizeof buf) return 0;
  strcpy(buf, v);
  char *save = NULL, *tok = strtok_r(buf, ",", &save);
  for (int k = 0; k < 4; k++) {
    if (!tok || !smx_cli_parse_double(tok, -1.7976931348623157e308, 1.7976931348623157e308, &out[k])) return 0;
    tok = strtok_r(NULL, ",", &save);
  }
  return tok == NULL;
}

int smx_cmd_multimax(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  mm_ctx c;
  memset(&c, 0, sizeof c);
  c.o.threads = 1;
  int quiet = 0;
  cli_io_opts io = CLI_IO_OPTS_INIT;
  cli_run_opts run = CLI_RUN_OPTS_INIT(CLI_RUN_MASKED_ROW);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int took = cli_io_option(&io, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    took = cli_run_option(&run, a, v);
    if (took < 0) return SMX_CLI_EXIT_USAGE;
    if (took > 0) { i += took - 1; continue; }
    if (!strcmp(a, "--temperature") || !strcmp(a, "-t")) {
      if (!v) return smx_cli_usage_error("%s needs a value", a);
      if (!smx_cli_parse_temperature(v, &c.o.temperature)) return smx_cli_temperature_error("--temperature", v);
      i++;
    } else if (!strcmp(a, "--ranges") || !strcmp(a, "--ts")) {
      if (!parse4(v, !strcmp(a, "--ranges") ? c.r : c.ts))
        return smx_cli_usage_error("%s needs four finite numbers separated by commas", a);
      i++;
    } else {
      int prc = cli_run_positional(&run, "multimax", "input file", a);
      if (prc) return prc;
    }
  }
  in = run.in;
  out = run.out;
  quiet = run.quiet;
  c.o.threads = run.threads;
  c.o.flags |= run.flags;
  if (!in) return smx_cli_usage_error("multimax needs an input file (.npy, .csv or .tsv; - for stdin)");
  if (!out) return smx_cli_usage_error("multimax needs -o OUT (.npy, .csv or .tsv; - for stdout)");
  int fin, fout, urc;
  if ((urc = cli_input_format(&io, in, &fin)) != 0) return urc;
  if ((urc = cli_output_format(&io, out, fin, &fout)) != 0) return urc;
  cli_job j;
  int rc = cli_job_input(&j, "multimax", in, fin, io.axis);
  if (rc) return cli_job_end(&j, rc);
  int f64 = j.src.dtype == SMX_DTYPE_F64;
  c.t = f64 ? CLI_F64 : CLI_F32;
  uint64_t n = cli_job_axis_len(&j);
  cli_kernel k = { c.t, 1, { n, 0 }, { c.t, c.t }, 1, 0, mm_rows, &c };
  cli_output outs[1] = { { out, fout, f64 ? SMX_DTYPE_F64 : SMX_DTYPE_F32, CLI_AXIS_KEEP } };
  rc = cli_job_outputs(&j, &k, outs);
  if (!rc) rc = cli_job_run(&j, &k, quiet);
  return cli_job_end(&j, rc);
}
