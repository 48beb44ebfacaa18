/* A streamed command from its input to its outputs; see job.h. */
#define _POSIX_C_SOURCE 200809L
#include "cli/job.h"

#include <string.h>
#include <unistd.h>

#include "cli/message.h"
#include "cli/options.h"
#include "cli/signals.h"
#include "io/npy_shape.h"

static const char *format_name(int f) { return f == CLI_FMT_CSV ? "csv" : f == CLI_FMT_TSV ? "tsv" : "npy"; }

/* The format of a file: --format / --in-format (chosen; -1: none), which must agree with the name's
 * extension (case-insensitive) when that is one of the three, else the extension's, else npy. */
static int resolve_format(const char *opt_name, int chosen, const char *path, int *out) {
  const char *dot = strcmp(path, "-") ? strrchr(path, '.') : NULL;
  int by_name = -1;
  for (int f = CLI_FMT_NPY; f <= CLI_FMT_TSV && dot && !strchr(dot, '/'); f++)
    if (strlen(dot) == 4 && (dot[1] | 0x20) == format_name(f)[0] && (dot[2] | 0x20) == format_name(f)[1] &&
        (dot[3] | 0x20) == format_name(f)[2])
      by_name = f;
  if (chosen >= 0 && by_name >= 0 && chosen != by_name)
    return smx_cli_usage_error("%s %s conflicts with the name %s", opt_name, format_name(chosen), path);
  *out = chosen >= 0 ? chosen : by_name >= 0 ? by_name : CLI_FMT_NPY;
  return 0;
}

int cli_input_format(const cli_files *o, const char *path, int *fmt) {
  return resolve_format("--in-format", o->fmt_in, path, fmt);
}

/* A mapped input that shrinks under us faults on access: remove what we were
 * writing and leave with the input error code. */
static void on_sigbus(int sig) {
  static const char msg[] = "smx: the input file shrank while it was being read; no output was written\n";
  (void)sig;
  cli_cleanup_now();
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(SMX_CLI_EXIT_INPUT);
}

static int job_input(cli_job *j, const char *cmd, const char *in, int fmt, long axis) {
  memset(j, 0, sizeof *j);
  j->cmd = cmd;
  j->in = in;
  char err[512];
  smx_status st = cli_src_open(&j->src, in, (cli_format)fmt, err, sizeof err);
  j->src_open = 1;
  if (st != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  int nd = j->src.ndim;
  if ((nd == 0 && axis != 0 && axis != -1) || (nd > 0 && (axis < -nd || axis >= nd)))
    return smx_cli_usage_error("--axis %ld is out of range for %s, which has %d dimension%s", axis, j->src.name, nd,
                               nd == 1 ? "" : "s");
  j->axis = nd == 0 ? 0 : (int)(axis < 0 ? axis + nd : axis);
  j->st_axis = j->src.fortran && nd > 0 ? nd - 1 - j->axis : j->axis;
  return 0;
}

int cli_job_open(cli_job *j, const char *cmd, const cli_files *f, const char *in, const char *const *outs, int nout,
                 int *fmt) {
  int rc = cli_input_format(f, in, &fmt[0]);
  for (int i = 0; i < nout && !rc; i++) {
    fmt[1 + i] = CLI_FMT_NPY;
    if (outs[i] && !(rc = resolve_format("--format", f->fmt_out, outs[i], &fmt[1 + i])) && !strcmp(outs[i], "-") &&
        f->fmt_out < 0)
      fmt[1 + i] = fmt[0];   /* stdout without --format: the input's format */
  }
  if (!rc && (rc = job_input(j, cmd, in, fmt[0], f->axis)) != 0) cli_job_end(j, rc);
  return rc;
}

uint64_t cli_job_axis_len(const cli_job *j) { return j->src.ndim ? j->src.shape[j->axis] : 1; }

uint64_t cli_job_rows(const cli_job *j) {
  uint64_t r = 1;
  for (int d = 0; d < j->src.ndim; d++)
    if (d != j->axis) r *= j->src.shape[d];
  return r;
}

int cli_job_shape(const cli_job *j, cli_axis_fate fate, uint64_t m, uint64_t *shape) {
  int nd = j->src.ndim, ond = 0;
  if (nd == 0 && fate == CLI_AXIS_REPLACE) {  /* a scalar is one row of one value */
    shape[0] = m;
    return 1;
  }
  for (int d = 0; d < nd; d++) {
    if (d != j->axis) shape[ond++] = j->src.shape[d];
    else if (fate == CLI_AXIS_KEEP) shape[ond++] = j->src.shape[d];
    else if (fate == CLI_AXIS_REPLACE) shape[ond++] = m;
  }
  return ond;
}

void cli_job_row_order(const cli_job *j, cli_row_order *ro) {
  memset(ro, 0, sizeof *ro);
  ro->fortran = j->src.fortran;
  ro->ndim = cli_job_shape(j, CLI_AXIS_REMOVE, 0, ro->shape);
}

int cli_rows_permuted(const cli_row_order *ro) { return ro->fortran && ro->ndim > 1; }

uint64_t cli_row_c_index(const cli_row_order *ro, uint64_t r) {
  if (!cli_rows_permuted(ro)) return r;
  /* Fortran order: the first index varies fastest */
  uint64_t idx[SMX_NPY_MAX_DIMS];
  for (int d = 0; d < ro->ndim; d++) {
    idx[d] = r % ro->shape[d];
    r /= ro->shape[d];
  }
  uint64_t c = 0;
  for (int d = 0; d < ro->ndim; d++) c = c * ro->shape[d] + idx[d];
  return c;
}

int cli_job_outputs(cli_job *j, const cli_kernel *k, const cli_output *outs) {
  char err[512];
  uint64_t shape[CLI_MAX_OUT][SMX_NPY_MAX_DIMS];
  int ndim[CLI_MAX_OUT];
  j->nout = k->nout;
  for (int o = 0; o < k->nout; o++) {
    j->out_path[o] = outs[o].path;
    if (!outs[o].path) continue;
    ndim[o] = cli_job_shape(j, outs[o].fate, k->m[o], shape[o]);
    /* An empty input can reduce to a result no file can hold, as logsumexp
     * over axis 0 of shape (0, 2^63 - 1): the input is what is wrong there. */
    smx_npy_info info;
    char why[256];
    if (smx_io_shape_set(&info, outs[o].dtype, ndim[o], shape[o], SMX_E_INVALID_ARG, why, sizeof why) != SMX_OK)
      return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %s over axis %d gives a result too big to write: %s", j->in, j->cmd,
                          j->axis, why);
  }
  uint64_t st[SMX_NPY_MAX_DIMS];
  int nd = j->src.ndim;
  for (int d = 0; d < nd; d++) st[d] = j->src.fortran ? j->src.shape[nd - 1 - d] : j->src.shape[d];
  int random = cli_plan_random(nd, st, j->st_axis, k->ct);
  if (random && cli_src_in_order_only(&j->src) && cli_src_spool(&j->src, err, sizeof err) != SMX_OK)
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigaction(SIGBUS, &sa, &j->old_bus);
  j->bus_set = 1;
  for (int o = 0; o < k->nout; o++) {
    if (!outs[o].path) continue;
    smx_status st2 = cli_sink_open(&j->sink[o], outs[o].path, (cli_format)outs[o].fmt, outs[o].dtype, ndim[o], shape[o],
                                   j->src.fortran, random, k->vt[o], err, sizeof err);
    if (st2 != SMX_OK)
      return smx_cli_fail(st2 == SMX_E_INVALID_ARG ? SMX_CLI_EXIT_USAGE : SMX_CLI_EXIT_OUTPUT, "%s", err);
    j->sink_open[o] = 1;
  }
  return 0;
}

int cli_job_run(cli_job *j, const cli_kernel *k, int quiet) {
  cli_sink *sinks[CLI_MAX_OUT] = { NULL, NULL };
  const char *named = NULL;
  for (int o = 0; o < k->nout; o++)
    if (j->sink_open[o]) {
      sinks[o] = &j->sink[o];
      if (!named) named = j->out_path[o];
    }
  cli_run_args ra = { k, j->st_axis, !quiet && isatty(STDERR_FILENO), j->src.name, cli_interrupt_flag() };
  int rc = cli_run(&j->src, sinks, &ra);
  if (!rc && cli_signal_caught()) rc = SMX_CLI_EXIT_INTERRUPTED;
  if (rc == SMX_CLI_EXIT_INTERRUPTED) {
    if (named) smx_cli_fail(rc, "interrupted; %s was not written", named);
    else smx_cli_fail(rc, "interrupted; no output was written");
  }
  return rc;
}

int cli_job_end(cli_job *j, int rc) {
  char err[512];
  for (int o = 0; o < CLI_MAX_OUT; o++) {
    if (!j->sink_open[o]) continue;
    if (rc) cli_sink_abort(&j->sink[o]);
    else if (cli_sink_finish(&j->sink[o], err, sizeof err) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", err);
    j->sink_open[o] = 0;
  }
  if (j->src_open) cli_src_close(&j->src);
  j->src_open = 0;
  if (j->bus_set) sigaction(SIGBUS, &j->old_bus, NULL);
  j->bus_set = 0;
  return rc;
}

void cli_widen_i64(void *buf, size_t n) {
  unsigned char *p = buf;
  for (size_t i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, p + i * 8, 8);
    double d = (double)v;
    memcpy(p + i * 8, &d, 8);
  }
}
