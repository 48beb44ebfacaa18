/*
 * The data path of `smx softmax | log-softmax | logsumexp`: a source that
 * hands out elements of the input in storage order (the order the file keeps
 * them), a sink that takes elements of the output in storage order, and the
 * engine between them that walks any axis in bounded memory.
 *
 * Storage order: a C-order array is walked as it is; a Fortran-order array of
 * shape (d0, ..., dk) is stored like a C-order array of shape (dk, ..., d0),
 * so the engine works on that reversed shape (axis a becomes k - a) and the
 * output keeps the input's order. Text input is parsed once into a
 * temporary file of native float64 values; text output is collected as
 * float64 in a temporary file and formatted at the end. Both temporaries are
 * unlinked at creation (in $TMPDIR, else /tmp).
 */
#ifndef SMX_PROGRAMS_CLI_STREAM_H
#define SMX_PROGRAMS_CLI_STREAM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "smx/smx.h"
#include "io/npy_io.h"

/* The element type of the engine's buffers: what the library computes in. */
typedef enum cli_ctype { CLI_F32, CLI_F64, CLI_F16 } cli_ctype;
static inline size_t cli_ctype_size(cli_ctype t) { return t == CLI_F64 ? 8 : t == CLI_F16 ? 2 : 4; }

typedef enum cli_format { CLI_FMT_NPY, CLI_FMT_CSV, CLI_FMT_TSV } cli_format;

typedef struct cli_src {
  const char *name;            /* for messages: the path, or "<stdin>"                  */
  smx_npy_reader *npy;         /* .npy input                                            */
  int raw_fd;                  /* text input: native float64 values, C order; else -1   */
  smx_dtype dtype;             /* of the data in the file                               */
  int fortran;
  int ndim;
  uint64_t shape[SMX_NPY_MAX_DIMS];  /* the logical shape                               */
  uint64_t count;
  /* windows of a regular .npy file whose bytes are native floats (else map_fd -1) */
  int map_fd;
  uint64_t data_offset, file_end;
  unsigned char *map;
  uint64_t map_off;
  size_t map_len;
} cli_src;

/* Opens path ("-": stdin) as fmt. Text is parsed completely here (bad text:
 * SMX_E_PARSE with file, line and column). */
smx_status cli_src_open(cli_src *s, const char *path, cli_format fmt, char *err, size_t errlen);
/* 1 when only in-order reads work (a .npy stream on a pipe). */
int cli_src_in_order_only(const cli_src *s);
/* Copies the rest of a piped .npy stream into a temporary file, so that it
 * can be read in any order. */
smx_status cli_src_spool(cli_src *s, char *err, size_t errlen);
/* Elements [e0, e0 + n) in storage order, converted to t. */
smx_status cli_src_read(cli_src *s, cli_ctype t, uint64_t e0, size_t n, void *dst, char *err, size_t errlen);
/* The same elements in place in a mapped window when the file's bytes are
 * already of type t; else NULL (then use cli_src_read). Valid until the
 * next call. */
const void *cli_src_peek(cli_src *s, cli_ctype t, uint64_t e0, size_t n);
void cli_src_close(cli_src *s);

#define CLI_WB_LAG 3             /* pieces of output in flight to the disk (sink.c) */
typedef struct cli_sink {
  const char *path;            /* the destination, "-" for stdout                       */
  int stream;                  /* written in order, in place: stdout, a device, a FIFO  */
  const char *name;            /* for messages                                          */
  cli_format fmt;
  smx_dtype dtype;
  int fortran;
  int ndim;
  uint64_t shape[SMX_NPY_MAX_DIMS];
  uint64_t count;
  smx_npy_writer *npy;
  int raw_fd;                  /* text output: float64 values in storage order; else -1 */
  char *spool_dir;             /* .npy for stdout written out of order: a private dir   */
  char *spool_file;
  /* SMX_CLI_MMAP_OUT=1: a .npy file of native floats written through mapped
   * windows of its temporary file (an experiment kept for measuring) */
  int map_fd;
  char *map_tmp;
  uint64_t data_offset, file_end;
  unsigned char *map;
  uint64_t map_off;
  size_t map_len;
  /* a .npy written to a regular file: its temporary reopened, so that large
   * writes go to the disk as they come and then leave the page cache (-1:
   * not done; SMX_CLI_NO_WRITEBACK=1 turns it off, to measure) */
  int wb_fd;
  int wb_n;                    /* pieces handed to the disk, not yet waited for */
  uint64_t wb_off[CLI_WB_LAG], wb_len[CLI_WB_LAG];
  uint64_t wb_a, wb_b;         /* the piece being gathered                      */
} cli_sink;

/* Creates the output. random: writes will come out of order (stdout is
 * then fed from a temporary file at the end); vt: the type values will come
 * in. Text output of more than two dimensions is SMX_E_INVALID_ARG. */
smx_status cli_sink_open(cli_sink *k, const char *path, cli_format fmt, smx_dtype dtype, int ndim,
                         const uint64_t *shape, int fortran, int random, cli_ctype vt, char *err, size_t errlen);
/* n values of type t to elements [e0, e0 + n) in storage order. */
smx_status cli_sink_write(cli_sink *k, cli_ctype t, uint64_t e0, const void *src, size_t n, char *err, size_t errlen);
/* Where to compute elements [e0, e0 + n) of type t in place (a mapped window
 * of the output), or NULL (then use cli_sink_write). Valid until the next call. */
void *cli_sink_window(cli_sink *k, cli_ctype t, uint64_t e0, size_t n);
/* Completes the output (rename, or copy to stdout); frees everything. */
smx_status cli_sink_finish(cli_sink *k, char *err, size_t errlen);
/* Leaves no output behind; frees everything. */
void cli_sink_abort(cli_sink *k);

/* Text: parse fd into a temporary float64 file (rows x cols); format float64
 * values of a temporary file as text. */
smx_status cli_text_parse(int fd, const char *name, char sep, int *raw_fd, uint64_t *rows, uint64_t *cols, char *err,
                          size_t errlen);
smx_status cli_text_format(int raw_fd, int out_fd, const char *name, char sep, smx_dtype dtype, int ndim,
                           const uint64_t *shape, int fortran, char *err, size_t errlen);
/* A temporary file in $TMPDIR (or /tmp), already unlinked; -1 and errno on failure. */
int cli_temp_fd(void);

/* What the engine computes: a kernel that turns dense rows of the axis
 * (rows x n values of type ct) into up to CLI_MAX_OUT outputs of m[i]
 * values per row each (n for softmax, k for top-k, 1 for a reduction). In
 * storage order an output is [outer, m[i], inner]: the axis replaced by
 * m[i]. Rows are handed over in increasing order of their row index, the
 * storage-order index of the row in the array without the axis; row0 is
 * the index of the first row of a call. */
#define CLI_MAX_OUT 2
typedef struct cli_kernel {
  cli_ctype ct;
  int nout;
  uint64_t m[CLI_MAX_OUT];
  cli_ctype vt[CLI_MAX_OUT];
  int in_place;      /* output 0 may be computed over x (then m[0] == n)        */
  int empty_rows;    /* rows of length 0 still give values (a reduction)        */
  smx_status (*rows)(void *ctx, const void *x, void *const *y, size_t rows, size_t n, uint64_t row0);
  void *ctx;
} cli_kernel;

/* A row command's operation (compute.c): its row of the op table, by the command's name. */
typedef struct cli_op_ctx {
  cli_ctype t;
  smx_options opt;
  const char *cmd;          /* the command: the op-table rows of that CLI name compute it               */
  const double *params;     /* the values of the parameters of its row with the most (options.h)          */
  const smx_op_info *row;   /* set by cli_op_kernel                                                      */
  size_t nparams;           /* set by cli_op_kernel: the values the row takes                            */
} cli_op_ctx;
/* The kernel of op in type t; ctx must outlive it. */
cli_kernel cli_op_kernel(cli_op_ctx *ctx, uint64_t n);

typedef struct cli_run_args {
  const cli_kernel *kernel;
  int axis;                    /* in storage order, 0 .. ndim-1 (0 for a scalar)        */
  int progress;                /* show a progress line on stderr                        */
  const char *what;            /* name for the progress line                            */
  volatile sig_atomic_t *interrupted;
} cli_run_args;

/* Whether the engine will read and write out of order for this shape. */
int cli_plan_random(int ndim, const uint64_t *st_shape, int axis, cli_ctype ct);

/* The whole computation: output i goes to sinks[i], or nowhere when that is
 * NULL (the kernel still computes it). Returns a documented exit code
 * (message.h) after printing its message; the sinks are finished or
 * aborted by the caller. */
int cli_run(cli_src *s, cli_sink *const *sinks, const cli_run_args *a);

#endif
