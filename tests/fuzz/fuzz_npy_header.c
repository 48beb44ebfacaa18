/*
 * libFuzzer target for the .npy layer (also replayed without libFuzzer by
 * regression_driver.c). For each input:
 *  1. smx_npy_parse_header must return SMX_OK or SMX_E_PARSE, agree with
 *     smx_npy_header_size, terminate its message inside the buffer, and
 *     give the same status with a tiny or absent message buffer;
 *  2. a parsed header must be self-consistent, and format -> parse must give
 *     the same array description back (the writer's header is one smx reads);
 *  3. when the input also holds the data (up to 64 KiB), it goes through a
 *     real file: read as f32 and f64, written back with smx's writer from
 *     each, read again, and the values must survive.
 * Any broken invariant aborts, which libFuzzer reports as a crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy_io.h"

#define FUZZ_TARGET "fuzz_npy_header"
#include "fuzz_require.h"

#define MAX_DATA ((uint64_t)1 << 16)

static char dir[256], in_path[300], out_path[300];

static void cleanup(void) {
  unlink(in_path);
  unlink(out_path);
  rmdir(dir);
}

/* A private directory for the file round trip, made once. */
static int have_dir(void) {
  static int state;  /* 0 untried, 1 ready, -1 unavailable */
  if (state == 0) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/smx_fuzz_npy.XXXXXX", base && *base ? base : "/tmp");
    state = mkdtemp(dir) ? 1 : -1;
    if (state == 1) {
      snprintf(in_path, sizeof in_path, "%s/in.npy", dir);
      snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
      atexit(cleanup);
    }
  }
  return state == 1;
}

static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int wide_int(smx_dtype t) { return t == SMX_DTYPE_I64 || t == SMX_DTYPE_U64; }

/* Reads every row of path as f64 (*d) and f32 (*f), both malloc'ed, checking they agree. */
static smx_status read_all(const char *path, smx_npy_info *info, double **dp, float **fp) {
  char err[256];
  smx_npy_reader *r;
  *dp = NULL;
  *fp = NULL;
  smx_status s = smx_npy_open(path, &r, err, sizeof err);
  if (s != SMX_OK) return s;
  *info = *smx_npy_reader_info(r);
  uint64_t n = info->count;
  double *d = malloc((size_t)n * sizeof *d + 1);
  float *f = malloc((size_t)n * sizeof *f + 1);
  REQUIRE(d && f);
  s = smx_npy_read_rows_f64(r, 0, info->rows, d, err, sizeof err);
  REQUIRE(s == SMX_OK);
  /* f32 in two uneven pieces, to cross the chunk logic */
  uint64_t third = info->rows / 3;
  REQUIRE(smx_npy_read_rows_f32(r, 0, third, f, err, sizeof err) == SMX_OK);
  REQUIRE(smx_npy_read_rows_f32(r, third, info->rows - third, f + third * info->cols, err, sizeof err) == SMX_OK);
  REQUIRE(smx_npy_read_rows_f32(r, info->rows, 1, f, err, sizeof err) == SMX_E_INVALID_ARG);
  for (uint64_t i = 0; i < n; i++)
    if (!wide_int(info->dtype)) REQUIRE(same_value((double)f[i], (double)(float)d[i]));  /* one rounding either way */
  smx_npy_close(r);
  *dp = d;
  *fp = f;
  return SMX_OK;
}

/* Writes values (f64 or f32) as a's dtype, order, byte order and version to
 * out_path; returns 0 when the dtype cannot hold them (rounded wide integers). */
static int write_back(const smx_npy_info *a, const double *d, const float *f) {
  char err[256];
  smx_npy_write_options o = { a->big_endian, a->fortran_order, a->version_major };
  smx_npy_writer *w;
  REQUIRE(smx_npy_writer_open(out_path, a->dtype, a->ndim, a->shape, &o, &w, err, sizeof err) == SMX_OK);
  smx_status s = d ? smx_npy_write_rows_f64(w, d, a->rows, err, sizeof err)
                   : smx_npy_write_rows_f32(w, f, a->rows, err, sizeof err);
  /* 2^63 - 1 comes back as 2^63 (and 2^31 - 1 as 2^31 through f32), which the type cannot hold */
  int may_round_out = wide_int(a->dtype) || (!d && (a->dtype == SMX_DTYPE_I32 || a->dtype == SMX_DTYPE_U32));
  if (s == SMX_E_INVALID_ARG && may_round_out) {
    smx_npy_writer_abort(w);
    return 0;
  }
  REQUIRE(s == SMX_OK);
  REQUIRE(smx_npy_writer_finish(w, err, sizeof err) == SMX_OK);
  return 1;
}

static void file_round_trip(const uint8_t *data, const smx_npy_info *a) {
  if (!have_dir()) return;
  FILE *fp = fopen(in_path, "wb");
  if (!fp) return;
  size_t len = (size_t)(a->data_offset + a->data_bytes);
  int ok = fwrite(data, 1, len, fp) == len;
  if (fclose(fp) != 0 || !ok) return;

  smx_npy_info in, out;
  double *d, *d2;
  float *f, *f2;
  REQUIRE(read_all(in_path, &in, &d, &f) == SMX_OK);  /* header and size were already checked */
  REQUIRE(in.count == a->count && in.dtype == a->dtype);
  /* through f64, the values come back (wide integers: as rounded) */
  if (write_back(a, d, NULL)) {
    REQUIRE(read_all(out_path, &out, &d2, &f2) == SMX_OK);
    REQUIRE(out.count == in.count && out.dtype == in.dtype && out.fortran_order == in.fortran_order);
    for (uint64_t i = 0; i < in.count; i++) REQUIRE(same_value(d[i], d2[i]));
    free(d2);
    free(f2);
  }
  /* through f32, the f32 view comes back (replacing the previous output) */
  if (write_back(a, NULL, f)) {
    REQUIRE(read_all(out_path, &out, &d2, &f2) == SMX_OK);
    for (uint64_t i = 0; i < in.count; i++) REQUIRE(same_value((double)f[i], (double)f2[i]));
    free(d2);
    free(f2);
  }
  free(d);
  free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256], tiny[7];
  smx_npy_info a;
  memset(err, 'x', sizeof err);
  smx_status s = smx_npy_parse_header(data, size, &a, err, sizeof err);
  REQUIRE(s == SMX_OK || s == SMX_E_PARSE);
  if (s != SMX_OK) REQUIRE(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
  smx_npy_info scratch;
  memset(tiny, 'x', sizeof tiny);
  REQUIRE(smx_npy_parse_header(data, size, &scratch, tiny, sizeof tiny) == s);
  if (s != SMX_OK) REQUIRE(memchr(tiny, '\0', sizeof tiny) != NULL);  /* untouched on success */
  REQUIRE(smx_npy_parse_header(data, size, &scratch, NULL, 0) == s);
  uint64_t total;
  smx_status hs = smx_npy_header_size(data, size, &total, NULL, 0);
  if (s != SMX_OK) return 0;

  /* a parsed header is self-consistent */
  REQUIRE(hs == SMX_OK && total == a.data_offset && a.data_offset <= size);
  REQUIRE(a.ndim >= 0 && a.ndim <= SMX_NPY_MAX_DIMS);
  REQUIRE(a.version_major >= 1 && a.version_major <= 3 && a.version_minor == 0);
  size_t isz = smx_dtype_size(a.dtype);
  REQUIRE(isz > 0 && (isz > 1 || a.big_endian == 0));
  uint64_t count = 1, rows = 1;
  for (int i = 0; i < a.ndim; i++) {
    count *= a.shape[i];
    if (i < a.ndim - 1) rows *= a.shape[i];
  }
  for (int i = a.ndim; i < SMX_NPY_MAX_DIMS; i++) REQUIRE(a.shape[i] == 0);
  REQUIRE(count == a.count && rows == a.rows && a.cols == (a.ndim ? a.shape[a.ndim - 1] : 1));
  REQUIRE(a.rows * a.cols == a.count && a.data_bytes == a.count * isz && a.data_bytes <= (uint64_t)INT64_MAX);

  /* format -> parse gives the same description, for the same and the automatic version */
  for (int auto_version = 0; auto_version < 2; auto_version++) {
    unsigned char buf[SMX_NPY_FORMAT_MAX];
    size_t len = 0;
    smx_npy_info want = a;
    if (auto_version) want.version_major = 0;
    REQUIRE(smx_npy_format_header(&want, buf, sizeof buf, &len, err, sizeof err) == SMX_OK);
    REQUIRE(len <= SMX_NPY_FORMAT_MAX && len % 64 == 0 && buf[len - 1] == '\n');
    size_t need = 0;
    REQUIRE(smx_npy_format_header(&want, buf, len - 1, &need, NULL, 0) == SMX_E_INVALID_ARG && need == len);
    smx_npy_info b;
    REQUIRE(smx_npy_parse_header(buf, len, &b, err, sizeof err) == SMX_OK);
    REQUIRE(b.dtype == a.dtype && b.big_endian == a.big_endian && b.fortran_order == a.fortran_order);
    REQUIRE(b.ndim == a.ndim && memcmp(b.shape, a.shape, sizeof a.shape) == 0);
    REQUIRE(b.count == a.count && b.data_bytes == a.data_bytes && b.data_offset == len);
    REQUIRE(b.version_major == (auto_version ? 1 : a.version_major));
  }

  /* with the data present: through real files */
  if (a.data_bytes <= MAX_DATA && size - a.data_offset >= a.data_bytes) file_round_trip(data, &a);
  return 0;
}
