/*
 * One streamed command from its input to its outputs, around the engine:
 * open the input and pick the axis, shape and open the outputs (temporary
 * files renamed at the end), run the kernel, then finish every output or
 * leave none. The steps are separate so that a command can check the shape
 * between them or write something of its own at the end. Its users define
 * _POSIX_C_SOURCE (struct sigaction), as every source of the command does.
 */
#ifndef SMX_PROGRAMS_CLI_JOB_H
#define SMX_PROGRAMS_CLI_JOB_H

#include <signal.h>

#include "cli/options.h"
#include "cli/stream.h"

/* What becomes of the axis in an output. */
typedef enum cli_axis_fate {
  CLI_AXIS_KEEP,     /* the input's shape (softmax)                  */
  CLI_AXIS_REPLACE,  /* the axis becomes the kernel's m (top-k)      */
  CLI_AXIS_REMOVE    /* the axis is gone (a reduction)               */
} cli_axis_fate;

typedef struct cli_output {
  const char *path;  /* NULL: computed but not written                        */
  int fmt;           /* CLI_FMT_*                                              */
  smx_dtype dtype;
  cli_axis_fate fate;
} cli_output;

typedef struct cli_job {
  const char *cmd, *in;
  cli_src src;
  int src_open;
  int axis;          /* the axis in the input's logical order                 */
  int st_axis;       /* the same in storage order                             */
  int nout;
  const char *out_path[CLI_MAX_OUT];
  cli_sink sink[CLI_MAX_OUT];
  int sink_open[CLI_MAX_OUT];
  int bus_set;
  struct sigaction old_bus;
} cli_job;

/* The formats of in (fmt[0]) and of the nout outputs (fmt[1 + i]; NULL: none, npy) from f and the names,
 * then opens in ("-": stdin) and resolves the axis (negative counts from the end). Returns 0, or an exit
 * code after its message with the job ended; cli_job_end frees. */
int cli_job_open(cli_job *j, const char *cmd, const cli_files *f, const char *in, const char *const *outs, int nout,
                 int *fmt);
/* The format of the input at path: --in-format, else its extension, else npy. Returns 0, or the usage error's
 * exit code after its message. */
int cli_input_format(const cli_files *o, const char *path, int *fmt);
/* The length of the axis (1 for a scalar) and the count of its rows. */
uint64_t cli_job_axis_len(const cli_job *j);
uint64_t cli_job_rows(const cli_job *j);
/* The shape of an output in the input's logical order; returns its ndim. */
int cli_job_shape(const cli_job *j, cli_axis_fate fate, uint64_t m, uint64_t *shape);
/* Rows are handed to a kernel in storage order; a row's number in the
 * C order of the shape without the axis (what a user counts, as NumPy's
 * moveaxis(x, axis, -1).reshape(-1, n) does) differs from it only for a
 * Fortran-order input of more than two dimensions. */
typedef struct cli_row_order {
  int fortran;
  int ndim;                          /* of the shape without the axis */
  uint64_t shape[SMX_NPY_MAX_DIMS];  /* logical                       */
} cli_row_order;
void cli_job_row_order(const cli_job *j, cli_row_order *ro);
/* Whether storage and C order of the rows differ. */
int cli_rows_permuted(const cli_row_order *ro);
/* The C-order number of the row at storage index r. */
uint64_t cli_row_c_index(const cli_row_order *ro, uint64_t r);
/* Creates the kernel's outputs (outs[i] for output i of k). Returns 0 or an
 * exit code after its message. */
int cli_job_outputs(cli_job *j, const cli_kernel *k, const cli_output *outs);
/* Runs k over the input. Returns 0 or an exit code after its message. */
int cli_job_run(cli_job *j, const cli_kernel *k, int quiet);
/* n int64 values at buf widened in place to float64, as the writer takes them (exact below 2^53: indices,
 * tokens). */
void cli_widen_i64(void *buf, size_t n);
/* Finishes every output when rc is 0 (in order), else removes them; closes
 * the input. Returns rc, or the exit code of a failed finish. */
int cli_job_end(cli_job *j, int rc);

#endif
