/*
 * libFuzzer target for the CSV / TSV reader and writer of the smx command
 * (programs/cli/text.c; also replayed without libFuzzer by
 * regression_driver.c). The input is parsed as CSV and as TSV, exactly as
 * the command reads a file: through cli_text_parse on a file descriptor (a
 * memfd holding the bytes). For each separator:
 *  1. the status is SMX_OK or SMX_E_PARSE (never an I/O error on a memory
 *     file), and a refusal comes with a non-empty, terminated message;
 *  2. accepted text is formatted back with cli_text_format as float64
 *     (2-d, and 1-d when there is one column), parsed again, and gives the
 *     same shape and bitwise the same values: %.17g keeps every double,
 *     -0.0, subnormals and +-inf included. NaN is the exception: the writer
 *     spells every NaN "nan", so only "is a NaN" survives, not its sign or
 *     payload;
 *  3. formatted as float32 and float16, the text reads back to the same
 *     float32 / float16 values (the writer's %.9g and %.5g are round-trip
 *     digits for those types).
 * Any broken invariant aborts, which libFuzzer reports as a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/stream.h"
#include "io/fileio.h"
#include "math/half_scalar.h"

#define FUZZ_TARGET "fuzz_csv_roundtrip"
#include "fuzz_require.h"

/* A memory file holding len bytes, positioned at its start. */
static int mem_file(const void *p, size_t len) {
  int fd = memfd_create("smx_fuzz_text", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(smx_io_write_full(fd, p, len) == 0);
  REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
  return fd;
}

typedef struct parsed {
  smx_status st;
  uint64_t rows, cols;
  double *v;  /* rows * cols values, malloc'ed (NULL on failure) */
} parsed;

static parsed parse(int fd, char sep) {
  char err[256];
  parsed p = { SMX_OK, 0, 0, NULL };
  int raw = -1;
  memset(err, 'x', sizeof err);
  p.st = cli_text_parse(fd, "<fuzz>", sep, &raw, &p.rows, &p.cols, err, sizeof err);
  REQUIRE(p.st == SMX_OK || p.st == SMX_E_PARSE);
  if (p.st != SMX_OK) {
    REQUIRE(raw == -1);
    REQUIRE(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
    return p;
  }
  REQUIRE(raw >= 0 && p.rows >= 1 && p.cols >= 1);
  size_t n = (size_t)(p.rows * p.cols), got = 0;
  p.v = malloc(n * sizeof(double));
  REQUIRE(p.v != NULL);
  REQUIRE(smx_io_pread_full(raw, p.v, n * sizeof(double), 0, &got) == 0 && got == n * sizeof(double));
  close(raw);
  return p;
}

/* The values of p as text of the given dtype and dimensions, parsed back. */
static parsed reformat(const parsed *p, char sep, smx_dtype dtype, int ndim) {
  char err[256];
  size_t n = (size_t)(p->rows * p->cols);
  int raw = mem_file(p->v, n * sizeof(double));
  int out = memfd_create("smx_fuzz_text_out", MFD_CLOEXEC);
  REQUIRE(out >= 0);
  uint64_t shape[2] = { p->rows, p->cols };
  REQUIRE(cli_text_format(raw, out, "<fuzz-out>", sep, dtype, ndim, shape, 0, err, sizeof err) == SMX_OK);
  close(raw);
  REQUIRE(lseek(out, 0, SEEK_SET) == 0);
  parsed q = parse(out, sep);
  close(out);
  REQUIRE(q.st == SMX_OK);  /* what the writer wrote, the reader reads */
  REQUIRE(q.rows == p->rows && q.cols == p->cols);
  return q;
}

static int same_f64(double a, double b) { return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0; }

static int same_f32(double a, double b) {
  float x = (float)a, y = (float)b;
  return isnan(x) ? isnan(y) : memcmp(&x, &y, sizeof x) == 0;
}

static int same_f16(double a, double b) {
  uint16_t x = smx_f64_to_f16(a), y = smx_f64_to_f16(b);
  return isnan(smx_f16_to_f32(x)) ? isnan(smx_f16_to_f32(y)) : x == y;
}

static void round_trip(const uint8_t *data, size_t size, char sep) {
  int fd = mem_file(data, size);
  parsed p = parse(fd, sep);
  close(fd);
  if (p.st != SMX_OK) return;
  size_t n = (size_t)(p.rows * p.cols);
  REQUIRE(n <= size);  /* every value takes at least one byte */
  for (int ndim = 2; ndim >= (p.cols == 1 ? 1 : 2); ndim--) {
    parsed q = reformat(&p, sep, SMX_DTYPE_F64, ndim);
    for (size_t i = 0; i < n; i++) REQUIRE(same_f64(p.v[i], q.v[i]));
    free(q.v);
  }
  parsed q = reformat(&p, sep, SMX_DTYPE_F32, 2);
  for (size_t i = 0; i < n; i++) REQUIRE(same_f32(p.v[i], q.v[i]));
  free(q.v);
  q = reformat(&p, sep, SMX_DTYPE_F16, 2);
  for (size_t i = 0; i < n; i++) REQUIRE(same_f16(p.v[i], q.v[i]));
  free(q.v);
  free(p.v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {  /* the parser's temporary files: in memory when possible */
    if (access("/dev/shm", W_OK) == 0) setenv("TMPDIR", "/dev/shm", 1);
    ready = 1;
  }
  round_trip(data, size, ',');
  round_trip(data, size, '\t');
  return 0;
}
