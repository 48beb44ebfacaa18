/*
 * .npy reader and writer (programs/io/npy_io.h): round trips over every dtype
 * x byte order x format version x C/Fortran order and odd shapes; files made
 * by NumPy (tests/io/data, see make_fixtures.py), read and rewritten
 * byte-identically; f16 rounding against a brute-force reference; a table of
 * malformed headers with the message each must give; truncated files, lying
 * shapes, trailing bytes; the temporary-file + rename contract; pipes for
 * "-"; large Fortran-order arrays through the chunked paths.
 *
 * Usage: test_npy [DATA_DIR]   (default: SMX_NPY_DATA_DIR from the build)
 */
#include "../common/test_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "io/convert.h"
#include "io/dtype.h"
#include "math/half_scalar.h"
#include "io/npy_io.h"

#ifndef SMX_NPY_DATA_DIR
#define SMX_NPY_DATA_DIR "tests/io/data"
#endif

static const char *data_dir = SMX_NPY_DATA_DIR;
static char tmpdir[512];
static char err[512];

/* ------------------------------------------------------------ file helpers */
static void path_in(char *buf, size_t n, const char *dir, const char *name) {
  int k = snprintf(buf, n, "%s/%s", dir, name);
  if (k < 0 || (size_t)k >= n) {
    fprintf(stderr, "test_npy: path too long: %s/%s\n", dir, name);
    exit(2);
  }
}

static int put_file(const char *p, const void *data, size_t n) {
  FILE *f = fopen(p, "wb");
  if (!f) return -1;
  size_t w = n ? fwrite(data, 1, n, f) : 0;
  return fclose(f) == 0 && w == n ? 0 : -1;
}

static unsigned char *get_file(const char *p, size_t *n) {
  *n = 0;
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  unsigned char *b = malloc(cap);
  size_t k;
  while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
    len += k;
    if (len == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  *n = len;
  return b;
}

/* Entries of tmpdir that look like the writer's temporaries. */
static int count_temps(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
  if (d) closedir(d);
  return n;
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[1024];
  while (d && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    path_in(p, sizeof p, dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
    else unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* ------------------------------------------------------------ value model */
static const smx_dtype all_types[] = { SMX_DTYPE_BOOL, SMX_DTYPE_I8, SMX_DTYPE_I16, SMX_DTYPE_I32,
                                       SMX_DTYPE_I64, SMX_DTYPE_U8, SMX_DTYPE_U16, SMX_DTYPE_U32,
                                       SMX_DTYPE_U64, SMX_DTYPE_F16, SMX_DTYPE_F32, SMX_DTYPE_F64 };
enum { NTYPES = sizeof all_types / sizeof all_types[0] };

/* Test value for C-order element i, exactly representable in t except for
 * f32 (rounded from double on purpose). */
static double model(smx_dtype t, uint64_t i) {
  double k = (double)((i * 37) % 255);
  switch (t) {
    case SMX_DTYPE_BOOL: return i % 3 == 0;
    case SMX_DTYPE_I8: return k - 127;
    case SMX_DTYPE_I16: return (k - 127) * 100;
    case SMX_DTYPE_I32: return (k - 127) * 1e6;
    case SMX_DTYPE_I64: return (k - 127) * 0x1p40;
    case SMX_DTYPE_U8: return k;
    case SMX_DTYPE_U16: return k * 256;
    case SMX_DTYPE_U32: return k * 0x1p24;
    case SMX_DTYPE_U64: return k * 0x1p56;
    case SMX_DTYPE_F16: return (k - 127) * 0.125;
    case SMX_DTYPE_F32:
    case SMX_DTYPE_F64: return (k - 127) * 0.37;
  }
  return 0;
}

/* What the file holds after writing v through the f32 (via_f32) or f64 API. */
static double stored(smx_dtype t, double v, int via_f32) {
  double in = via_f32 ? (double)(float)v : v;
  if (t == SMX_DTYPE_F32) return (double)(float)in;
  return in;  /* every other model value is exact in its type */
}

static uint64_t prod(int ndim, const uint64_t *shape) {
  uint64_t p = 1;
  for (int i = 0; i < ndim; i++) p *= shape[i];
  return p;
}

/* Writes the model array: rows in two calls (f32 or f64 API). */
static smx_status write_model(const char *p, smx_dtype t, int ndim, const uint64_t *shape,
                              const smx_npy_write_options *o, int via_f32) {
  smx_npy_writer *w;
  smx_status s = smx_npy_writer_open(p, t, ndim, shape, o, &w, err, sizeof err);
  if (s != SMX_OK) return s;
  const smx_npy_info *in = smx_npy_writer_info(w);
  uint64_t n = in->count;
  float *xf = malloc((n + 1) * sizeof *xf);
  double *xd = malloc((n + 1) * sizeof *xd);
  for (uint64_t i = 0; i < n; i++) xd[i] = model(t, i), xf[i] = (float)xd[i];
  uint64_t half = in->rows / 2;
  for (int part = 0; part < 2 && s == SMX_OK; part++) {
    uint64_t r0 = part ? half : 0, nr = part ? in->rows - half : half;
    s = via_f32 ? smx_npy_write_rows_f32(w, xf + r0 * in->cols, nr, err, sizeof err)
                : smx_npy_write_rows_f64(w, xd + r0 * in->cols, nr, err, sizeof err);
  }
  free(xf);
  free(xd);
  if (s != SMX_OK) {
    smx_npy_writer_abort(w);
    return s;
  }
  return smx_npy_writer_finish(w, err, sizeof err);
}

/* Reads p back (f64 whole, f32 in blocks of 2 rows) and compares with the model. */
static int check_model(const char *p, smx_dtype t, int ndim, const uint64_t *shape, int via_f32, const char *what) {
  smx_npy_reader *r;
  smx_status s = smx_npy_open(p, &r, err, sizeof err);
  CHECK(s == SMX_OK, "%s: open: %s", what, err);
  if (s != SMX_OK) return 0;
  const smx_npy_info *in = smx_npy_reader_info(r);
  uint64_t n = in->count;
  CHECK(in->ndim == ndim && n == prod(ndim, shape), "%s: ndim %d count %llu", what, in->ndim, (unsigned long long)n);
  double *yd = malloc((n + 1) * sizeof *yd);
  float *yf = malloc((n + 1) * sizeof *yf);
  int ok = 1;
  s = smx_npy_read_rows_f64(r, 0, in->rows, yd, err, sizeof err);
  CHECK(s == SMX_OK, "%s: read f64: %s", what, err);
  for (uint64_t r0 = 0; r0 < in->rows && s == SMX_OK; r0 += 2) {
    uint64_t nr = in->rows - r0 < 2 ? in->rows - r0 : 2;
    s = smx_npy_read_rows_f32(r, r0, nr, yf + r0 * in->cols, err, sizeof err);
    CHECK(s == SMX_OK, "%s: read f32 rows %llu: %s", what, (unsigned long long)r0, err);
  }
  for (uint64_t i = 0; i < n && s == SMX_OK; i++) {
    double want = stored(t, model(t, i), via_f32);
    if (yd[i] != want || yf[i] != (float)want) {
      CHECK(0, "%s: element %llu: f64 %.17g f32 %.9g, want %.17g", what, (unsigned long long)i, yd[i], (double)yf[i],
            want);
      ok = 0;
      break;
    }
  }
  free(yd);
  free(yf);
  smx_npy_close(r);
  return ok && s == SMX_OK;
}

/* Checks the file's raw bytes against the layout: element q of the data holds
 * the C-order element whose multi-index, in column-major order, is q. */
static void check_raw_layout(const char *p, const smx_npy_info *in, int via_f32, const char *what) {
  size_t len;
  unsigned char *b = get_file(p, &len);
  CHECK(b && len == in->data_offset + in->data_bytes, "%s: file size %zu", what, len);
  if (!b || len != in->data_offset + in->data_bytes) { free(b); return; }
  size_t isz = smx_dtype_size(in->dtype);
  for (uint64_t q = 0; q < in->count; q++) {
    uint64_t c = q;  /* C index of file element q */
    if (in->fortran_order) {
      uint64_t rest = q, idx[SMX_NPY_MAX_DIMS];
      for (int d = 0; d < in->ndim; d++) idx[d] = rest % in->shape[d], rest /= in->shape[d];
      c = 0;
      for (int d = 0; d < in->ndim; d++) c = c * in->shape[d] + idx[d];
    }
    double v;
    smx_io_decode_f64(in->dtype, in->big_endian, b + in->data_offset + q * isz, 1, &v, 1);
    double want = stored(in->dtype, model(in->dtype, c), via_f32);
    if (v != want) {
      CHECK(0, "%s: raw element %llu is %.17g, want %.17g", what, (unsigned long long)q, v, want);
      break;
    }
  }
  free(b);
}

/* --------------------------------------------------------------- round trips */
static void test_round_trips(void) {
  static const struct { int ndim; uint64_t shape[4]; } shapes[] = {
    { 2, { 3, 5 } }, { 3, { 2, 3, 4 } }, { 0, { 0 } }, { 1, { 7 } },
    { 2, { 0, 3 } }, { 2, { 3, 0 } }, { 3, { 2, 0, 3 } }, { 4, { 2, 1, 3, 2 } },
  };
  char p[1024], what[256];
  int files = 0;
  for (int ti = 0; ti < NTYPES; ti++)
    for (int big = 0; big < 2; big++)
      for (int ver = 1; ver <= 3; ver++)
        for (int fo = 0; fo < 2; fo++)
          for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            /* every combination on the 2-d and 3-d shapes; the odd shapes on a subset */
            if (si >= 2 && (ver != 1 || big)) continue;
            smx_dtype t = all_types[ti];
            int via_f32 = (ti + ver + fo + (int)si) & 1;
            smx_npy_write_options o = { big, fo, ver };
            snprintf(what, sizeof what, "%s %s v%d %s shape#%zu via %s", smx_dtype_name(t), big ? "BE" : "LE", ver,
                     fo ? "F" : "C", si, via_f32 ? "f32" : "f64");
            path_in(p, sizeof p, tmpdir, "rt.npy");
            smx_status s = write_model(p, t, shapes[si].ndim, shapes[si].shape, &o, via_f32);
            CHECK(s == SMX_OK, "%s: write: %s", what, err);
            if (s != SMX_OK) continue;
            files++;
            smx_npy_reader *r;
            if (smx_npy_open(p, &r, err, sizeof err) != SMX_OK) {
              CHECK(0, "%s: open: %s", what, err);
              continue;
            }
            smx_npy_info in = *smx_npy_reader_info(r);
            smx_npy_close(r);
            CHECK(in.dtype == t && in.version_major == ver && in.fortran_order == fo &&
                  in.big_endian == (big && smx_dtype_size(t) > 1) && in.data_offset % 64 == 0,
                  "%s: header fields", what);
            int same = in.ndim == shapes[si].ndim;
            for (int d = 0; d < in.ndim && same; d++) same = in.shape[d] == shapes[si].shape[d];
            CHECK(same, "%s: shape", what);
            check_model(p, t, shapes[si].ndim, shapes[si].shape, via_f32, what);
            check_raw_layout(p, &in, via_f32, what);
          }
  CHECK(count_temps() == 0, "no temporaries left after %d round trips", files);
  printf("round trips: %d files\n", files);
}

/* ------------------------------------------------------------ NumPy fixtures */
static smx_npy_reader *open_fixture(const char *name) {
  char p[1024];
  path_in(p, sizeof p, data_dir, name);
  smx_npy_reader *r = NULL;
  smx_status s = smx_npy_open(p, &r, err, sizeof err);
  CHECK(s == SMX_OK, "fixture %s: %s", name, err);
  return s == SMX_OK ? r : NULL;
}

/* All of a fixture as f64 (and checks the f32 read agrees with (float) of it). */
static double *read_fixture(const char *name, smx_npy_info *info) {
  smx_npy_reader *r = open_fixture(name);
  if (!r) return NULL;
  *info = *smx_npy_reader_info(r);
  double *v = malloc((info->count + 1) * sizeof *v);
  float *f = malloc((info->count + 1) * sizeof *f);
  smx_status s1 = smx_npy_read_rows_f64(r, 0, info->rows, v, err, sizeof err);
  smx_status s2 = smx_npy_read_rows_f32(r, 0, info->rows, f, err, sizeof err);
  CHECK(s1 == SMX_OK && s2 == SMX_OK, "fixture %s: read: %s", name, err);
  for (uint64_t i = 0; i < info->count; i++)
    if (!tu_same(f[i], (float)v[i])) {
      CHECK(0, "fixture %s: f32 %.9g vs f64 %.17g at %llu", name, (double)f[i], v[i], (unsigned long long)i);
      break;
    }
  free(f);
  smx_npy_close(r);
  return v;
}

/* Rewrites a fixture's values with smx's writer (same dtype, order, version)
 * and compares the bytes with NumPy's file. */
static void rewrite_identical(const char *name) {
  smx_npy_info in;
  double *v = read_fixture(name, &in);
  if (!v) return;
  char src[1024], dst[1024];
  path_in(src, sizeof src, data_dir, name);
  path_in(dst, sizeof dst, tmpdir, "rewrite.npy");
  smx_npy_write_options o = { in.big_endian, in.fortran_order, in.version_major };
  smx_npy_writer *w;
  smx_status s = smx_npy_writer_open(dst, in.dtype, in.ndim, in.shape, &o, &w, err, sizeof err);
  if (s == SMX_OK && (s = smx_npy_write_rows_f64(w, v, in.rows, err, sizeof err)) != SMX_OK) smx_npy_writer_abort(w);
  else if (s == SMX_OK) s = smx_npy_writer_finish(w, err, sizeof err);
  CHECK(s == SMX_OK, "rewrite %s: %s", name, err);
  size_t na, nb;
  unsigned char *a = get_file(src, &na), *b = get_file(dst, &nb);
  CHECK(a && b && na == nb && memcmp(a, b, na) == 0, "rewrite of %s is byte-identical to NumPy's (%zu vs %zu bytes)",
        name, na, nb);
  free(a);
  free(b);
  free(v);
}

static void test_fixtures(void) {
  smx_npy_info in;
  double *v;
  if ((v = read_fixture("f32_c_2d.npy", &in))) {
    CHECK(in.dtype == SMX_DTYPE_F32 && in.rows == 3 && in.cols == 4 && !in.fortran_order, "f32_c_2d info");
    for (int i = 0; i < 12; i++) CHECK(v[i] == i * 0.25 - 1, "f32_c_2d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("f64_be_fortran_2d.npy", &in))) {
    CHECK(in.dtype == SMX_DTYPE_F64 && in.big_endian && in.fortran_order && in.rows == 3 && in.cols == 4,
          "f64_be_fortran_2d info");
    for (int i = 0; i < 12; i++) CHECK(v[i] == i * 1.5 - 4, "f64_be_fortran_2d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("f32_fortran_3d.npy", &in))) {
    CHECK(in.fortran_order && in.ndim == 3 && in.rows == 6 && in.cols == 4, "f32_fortran_3d info");
    for (int i = 0; i < 24; i++) CHECK(v[i] == i, "f32_fortran_3d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("i16_be_3d.npy", &in))) {
    CHECK(in.dtype == SMX_DTYPE_I16 && in.big_endian && in.rows == 6, "i16_be_3d info");
    for (int i = 0; i < 24; i++) CHECK(v[i] == (i - 12) * 1000, "i16_be_3d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("u8_1d.npy", &in))) {
    CHECK(in.dtype == SMX_DTYPE_U8 && in.rows == 1 && in.cols == 16, "u8_1d info");
    for (int i = 0; i < 16; i++) CHECK(v[i] == i * 17, "u8_1d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("bool_2d.npy", &in))) {
    CHECK(in.dtype == SMX_DTYPE_BOOL && in.rows == 2 && in.cols == 3, "bool_2d info");
    for (int i = 0; i < 6; i++) CHECK(v[i] == (i % 3 == 0), "bool_2d[%d] = %g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("i64_extremes.npy", &in))) {
    static const int64_t want[] = { INT64_MIN, INT64_MAX, 0, -1, (1ll << 53) + 1, -(1ll << 31) - 1 };
    CHECK(in.dtype == SMX_DTYPE_I64 && in.count == 6, "i64_extremes info");
    for (int i = 0; i < 6; i++) CHECK(v[i] == (double)want[i], "i64_extremes[%d] = %.17g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("u64_extremes.npy", &in))) {
    static const uint64_t want[] = { 0, UINT64_MAX, (1ull << 53) + 1, (1ull << 32) + 3 };
    CHECK(in.dtype == SMX_DTYPE_U64 && in.big_endian && in.count == 4, "u64_extremes info");
    for (int i = 0; i < 4; i++) CHECK(v[i] == (double)want[i], "u64_extremes[%d] = %.17g", i, v[i]);
    free(v);
  }
  if ((v = read_fixture("u32_1d.npy", &in))) {
    static const uint32_t want[] = { 0, 1, UINT32_MAX, 1u << 31, 16777217 };
    for (int i = 0; i < 5; i++) CHECK(v[i] == (double)want[i], "u32_1d[%d] = %.17g", i, v[i]);
    free(v);
  }
  /* single rounding of wide integers to f32: 2^53 + 1 -> 2^53, 16777217 -> 16777216 (ties to even) */
  smx_npy_reader *r = open_fixture("u32_1d.npy");
  if (r) {
    float f[5];
    CHECK(smx_npy_read_rows_f32(r, 0, 1, f, err, sizeof err) == SMX_OK && f[4] == 16777216.0f &&
          f[2] == 4294967296.0f, "u32 -> f32 rounding");
    smx_npy_close(r);
  }
  if ((v = read_fixture("scalar_f8.npy", &in))) {
    CHECK(in.ndim == 0 && in.rows == 1 && in.cols == 1 && v[0] == 3.25, "scalar_f8");
    free(v);
  }
  if ((v = read_fixture("empty_f4.npy", &in))) {
    CHECK(in.ndim == 2 && in.rows == 0 && in.cols == 3 && in.count == 0 && in.data_bytes == 0, "empty_f4 info");
    free(v);
  }
  const char *vs[] = { "v2_f4.npy", "v3_f4.npy" };
  for (int k = 0; k < 2; k++)
    if ((v = read_fixture(vs[k], &in))) {
      CHECK(in.version_major == 2 + k && in.rows == 2 && in.cols == 3, "%s info", vs[k]);
      for (int i = 0; i < 6; i++) CHECK(v[i] == i * 0.5, "%s[%d] = %g", vs[k], i, v[i]);
      free(v);
    }
  /* f16 -> f32 against NumPy's own conversion, bit for bit (NaN: any NaN) */
  smx_npy_info ih, is;
  double *h = read_fixture("f16_specials.npy", &ih), *ref = read_fixture("f16_specials_as_f32.npy", &is);
  if (h && ref) {
    CHECK(ih.count == is.count && ih.dtype == SMX_DTYPE_F16, "f16 fixture info");
    for (uint64_t i = 0; i < ih.count; i++) {
      int both_nan = h[i] != h[i] && ref[i] != ref[i];
      CHECK(both_nan || (h[i] == ref[i] && signbit(h[i]) == signbit(ref[i])), "f16[%llu] = %.9g, NumPy %.9g",
            (unsigned long long)i, h[i], ref[i]);
    }
  }
  free(h);
  free(ref);

  /* (not the 64-bit extremes: 2^63 - 1 and 2^64 - 1 have no double to come back from) */
  const char *same[] = { "f32_c_2d.npy", "f64_be_fortran_2d.npy", "f32_fortran_3d.npy", "i16_be_3d.npy",
                         "u8_1d.npy", "bool_2d.npy", "u32_1d.npy",
                         "scalar_f8.npy", "empty_f4.npy", "v2_f4.npy", "v3_f4.npy", "f16_specials.npy" };
  for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) rewrite_identical(same[k]);
}

/* -------------------------------------------------------------------- f16 */
static double f16_value(uint16_t h) { return (double)smx_f16_to_f32(h); }

static void test_f16(void) {
  long bad = 0;
  /* every value widens exactly and narrows back to itself */
  for (uint32_t h = 0; h < 65536; h++) {
    float f = smx_f16_to_f32((uint16_t)h);
    uint16_t back = smx_f64_to_f16(f);
    int nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    if (nan ? !(f != f) || (back & 0x7c00u) != 0x7c00u || !(back & 0x3ffu) || (back ^ h) & 0x8000u : back != h) bad++;
  }
  CHECK(bad == 0, "f16 round trip: %ld mismatches", bad);
  /* midpoints round to even; one ulp either side rounds to the nearer */
  bad = 0;
  for (uint16_t h = 0; h < 0x7bff; h++) {
    double a = f16_value(h), b = f16_value((uint16_t)(h + 1)), mid = (a + b) / 2;  /* exact */
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : h;
    if (smx_f64_to_f16(mid) != even || smx_f64_to_f16(nextafter(mid, a)) != h ||
        smx_f64_to_f16(nextafter(mid, b)) != h + 1 || smx_f64_to_f16(-mid) != (even | 0x8000u))
      bad++;
  }
  CHECK(bad == 0, "f16 rounding: %ld mismatches", bad);
  CHECK(smx_f64_to_f16(65520.0) == 0x7c00 && smx_f64_to_f16(nextafter(65520.0, 0)) == 0x7bff,
        "f16 overflow edge");
  CHECK(smx_f64_to_f16(1e300) == 0x7c00 && smx_f64_to_f16(-INFINITY) == 0xfc00, "f16 infinities");
  CHECK(smx_f64_to_f16(0x1p-25) == 0 && smx_f64_to_f16(nextafter(0x1p-25, 1)) == 1 &&
        smx_f64_to_f16(-0x1p-26) == 0x8000 && smx_f64_to_f16(1e-300) == 0, "f16 underflow edge");
  CHECK(smx_f64_to_f16(0x1p-14 - 0x1p-25) == 0x400, "f16 largest subnormal rounds up to the least normal");
  /* f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the midpoint in f64 but
   * lands on it in f32, where ties-to-even would give 1.0 */
  CHECK(smx_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40) == 0x3c01, "f16 no double rounding");
}

/* ------------------------------------------------------- value conversions */
static void test_value_conversions(void) {
  char p[1024];
  path_in(p, sizeof p, tmpdir, "ints.npy");
  uint64_t shape[1] = { 6 };
  smx_npy_writer *w;
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_I8, 1, shape, NULL, &w, err, sizeof err) == SMX_OK, "open i8: %s", err);
  double badv[6] = { 0, 1, 2, 3, 128, 5 };
  smx_status s = smx_npy_write_rows_f64(w, badv, 1, err, sizeof err);
  CHECK(s == SMX_E_INVALID_ARG && has(err, "row 0, column 4") && has(err, "int8"), "128 into int8: %s", err);
  float nanv[6] = { 0, NAN, 0, 0, 0, 0 };
  s = smx_npy_write_rows_f32(w, nanv, 1, err, sizeof err);
  CHECK(s == SMX_E_INVALID_ARG && has(err, "column 1") && has(err, "nan"), "NaN into int8: %s", err);
  /* the writer is still usable: ties go to even, -0.5 -> 0, -127.5 -> -128 */
  double ties[6] = { 0.5, 1.5, 2.5, -0.5, -127.5, 126.5 };
  CHECK(smx_npy_write_rows_f64(w, ties, 1, err, sizeof err) == SMX_OK, "ties: %s", err);
  CHECK(smx_npy_writer_finish(w, err, sizeof err) == SMX_OK, "finish: %s", err);
  smx_npy_reader *r;
  double got[6];
  if (smx_npy_open(p, &r, err, sizeof err) == SMX_OK) {
    CHECK(smx_npy_read_rows_f64(r, 0, 1, got, err, sizeof err) == SMX_OK, "read ties");
    CHECK(got[0] == 0 && got[1] == 2 && got[2] == 2 && got[3] == 0 && got[4] == -128 && got[5] == 126,
          "ties to even: %g %g %g %g %g %g", got[0], got[1], got[2], got[3], got[4], got[5]);
    smx_npy_close(r);
  }
  /* range edges for each integer type */
  static const struct { smx_dtype t; double lo, hi, below, above; } edges[] = {
    { SMX_DTYPE_I16, -32768, 32767, -32768.6, 32767.5 },
    { SMX_DTYPE_I32, -2147483648.0, 2147483647.0, -2147483649.0, 2147483647.5 },
    { SMX_DTYPE_I64, -0x1p63, 0x1p63 - 1024, -0x1p63 - 2048, 0x1p63 },
    { SMX_DTYPE_U8, 0, 255, -0.6, 255.5 },
    { SMX_DTYPE_U16, -0.5, 65535, -1, 65535.5 },
    { SMX_DTYPE_U32, 0, 4294967295.0, -1, 4294967295.5 },
    { SMX_DTYPE_U64, 0, 0x1p64 - 2048, -1, 0x1p64 },
  };
  for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
    CHECK(smx_io_check_f64(edges[k].t, &edges[k].lo, 1) == 1 && smx_io_check_f64(edges[k].t, &edges[k].hi, 1) == 1,
          "%s accepts its range", smx_dtype_name(edges[k].t));
    CHECK(smx_io_check_f64(edges[k].t, &edges[k].below, 1) == 0 &&
              smx_io_check_f64(edges[k].t, &edges[k].above, 1) == 0,
          "%s refuses beyond its range", smx_dtype_name(edges[k].t));
    double inf = INFINITY;
    CHECK(smx_io_check_f64(edges[k].t, &inf, 1) == 0, "%s refuses inf", smx_dtype_name(edges[k].t));
  }
  /* bool: NaN is True; f16/f32 accept anything (overflow -> inf) */
  double bv[4] = { 0, -0.0, NAN, 1e-300 };
  unsigned char bb[4];
  smx_io_encode_f64(SMX_DTYPE_BOOL, 0, bv, 1, 4, bb);
  CHECK(bb[0] == 0 && bb[1] == 0 && bb[2] == 1 && bb[3] == 1, "bool encoding");
  double big = 1e300;
  unsigned char fb[4];
  smx_io_encode_f64(SMX_DTYPE_F32, 1, &big, 1, 1, fb);
  CHECK(fb[0] == 0x7f && fb[1] == 0x80 && fb[2] == 0 && fb[3] == 0, "f64 -> f32 overflow to +inf, big-endian");
  /* i64 / u64 -> f32 is one rounding (not through double) */
  unsigned char raw[8];
  uint64_t u = (1ull << 62) + (1ull << 38) + 1;  /* just above a float midpoint; via double it would tie */
  for (int i = 0; i < 8; i++) raw[i] = (unsigned char)(u >> (8 * i));
  float fx;
  smx_io_decode_f32(SMX_DTYPE_U64, 0, raw, 1, &fx, 1);
  CHECK(fx == 0x1p62f + 0x1p39f, "u64 -> f32 single rounding: %.9g", (double)fx);
}

/* ------------------------------------------------------------- bad headers */
static size_t mk(unsigned char *buf, int major, int minor, const char *text) {
  size_t tl = strlen(text), pre = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = (unsigned char)minor;
  buf[8] = (unsigned char)(tl & 0xff);
  buf[9] = (unsigned char)(tl >> 8 & 0xff);
  if (pre == 12) buf[10] = (unsigned char)(tl >> 16 & 0xff), buf[11] = (unsigned char)(tl >> 24);
  memcpy(buf + pre, text, tl);
  return pre + tl;
}

#define D "'descr': '<f4', "
#define F "'fortran_order': False, "
#define S "'shape': (2, 3), "

static void test_bad_headers(void) {
  static const struct { int major; const char *text, *want; } bad[] = {
    { 1, "", "empty" },
    { 1, "{" D F S "}", "newline" },
    { 1, " {" D F S "}\n", "expected '{'" },
    { 1, "[" D F S "]\n", "expected '{'" },
    { 1, "{" D F S "'foo': 1, }\n", "unknown key 'foo'" },
    { 1, "{" D F S D "}\n", "duplicate key 'descr'" },
    { 1, "{" D F "}\n", "missing key 'shape'" },
    { 1, "{" D S "}\n", "missing key 'fortran_order'" },
    { 1, "{" F S "}\n", "missing key 'descr'" },
    { 1, "{}\n", "missing key" },
    { 1, "{'descr': '<c8', " F S "}\n", "unsupported dtype '<c8'" },
    { 1, "{'descr': '|O', " F S "}\n", "unsupported dtype '|O'" },
    { 1, "{'descr': 'f4', " F S "}\n", "unsupported dtype 'f4'" },
    { 1, "{'descr': '|f4', " F S "}\n", "unsupported dtype '|f4'" },
    { 1, "{'descr': '<f16', " F S "}\n", "unsupported dtype '<f16'" },
    { 1, "{'descr': '<M8[ns]', " F S "}\n", "unsupported dtype" },
    { 1, "{'descr': [('a', '<f4')], " F S "}\n", "structured dtypes" },
    { 1, "{'descr': '<f4, " F S "}\n", "unsupported dtype '<f4, '" },
    { 1, "{'descr: '<f4', " F S "}\n", "unknown key" },
    { 1, "{'descr': '<f4\n", "unsupported character 0x0a" },
    { 1, "{'descr': '<f\\x34', " F S "}\n", "unsupported character 0x5c" },
    { 1, "{'descr': 7, " F S "}\n", "expected a quoted dtype" },
    { 1, "{" D "'fortran_order': false, " S "}\n", "True or False" },
    { 1, "{" D "'fortran_order': 0, " S "}\n", "True or False" },
    { 1, "{" D "'fortran_order': Truest, " S "}\n", "True or False" },
    { 1, "{" D F "'shape': [2, 3], }\n", "a tuple" },
    { 1, "{" D F "'shape': (5), }\n", "is an integer, not a tuple" },
    { 1, "{" D F "'shape': (-1,), }\n", "expected a dimension" },
    { 1, "{" D F "'shape': (+1,), }\n", "expected a dimension" },
    { 1, "{" D F "'shape': (03,), }\n", "leading zero" },
    { 1, "{" D F "'shape': (3,,), }\n", "expected a dimension" },
    { 1, "{" D F "'shape': (,), }\n", "expected a dimension" },
    { 1, "{" D F "'shape': (3 4), }\n", "expected ',' or ')' in 'shape'" },
    { 1, "{" D F "'shape': (1e3,), }\n", "after a dimension" },
    { 1, "{" D F "'shape': (0x10,), }\n", "after a dimension" },
    { 1, "{" D F "'shape': (1_000,), }\n", "after a dimension" },
    { 1, "{" D F "'shape': (2, 3), }\n", "" },  /* placeholder replaced below: valid */
    { 1, "{" D F "'shape': (9223372036854775808,), }\n", "exceeds 2^63 - 1" },
    { 1, "{" D F "'shape': (99999999999999999999999999,), }\n", "exceeds 2^63 - 1" },
    { 1, "{" D F "'shape': (4294967296, 4294967296), }\n", "more than 2^63 - 1 elements" },
    { 1, "{" D F "'shape': (0, 4294967296, 4294967296), }\n", "non-zero dimensions multiply to more than 2^63 - 1" },
    { 1, "{'descr': '<f8', " F "'shape': (2305843009213693952,), }\n", "needs more than 2^63 - 1 bytes" },
    { 1, "{" D F "'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }\n",
      "more than 32 dimensions" },
    { 3, "{" D F "'shape': (3L,), }\n", "after a dimension" },
    { 1, "{" D F S "} x\n", "only spaces between" },
    { 1, "{" D F S "}\t\n", "only spaces between" },
    { 1, "{" D F S "}\n\n", "only spaces between" },
    { 1, "{" D F S "\n}\n", "found a newline" },
    { 1, "{" D F "'shape' (2, 3)}\n", "expected ':'" },
    { 1, "{" D F "'shape': (2, 3) 'x': 1}\n", "expected ',' or '}'" },
    { 1, "{'descr': '<f4' " F S "}\n", "expected ',' or '}'" },
    { 1, "{" D F "'shape': (2, 3), \xc3\xa9}\n", "non-ASCII byte 0xc3" },
    { 2, "{" D F "'shape': (2, 3), \xff}\n", "non-ASCII byte 0xff" },
    { 3, "{" D F "'shape': (2, 3), \xc3(}\n", "invalid UTF-8" },
    { 3, "{" D F "'shape': (2, 3), \xed\xa0\x80}\n", "invalid UTF-8" },
    { 3, "{" D F "'shape': (2, 3), \xc3\xa9}\n", "found byte 0xc3" },
    { 1, "{" D F "'shape': (2, 3)", "newline" },
    { 1, "{" D F "'shape': (2, 3\n", "found a newline" },
  };
  unsigned char buf[4096];
  smx_npy_info in;
  char p[1024];
  path_in(p, sizeof p, tmpdir, "bad.npy");
  int n = 0;
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    size_t len = mk(buf, bad[k].major, 0, bad[k].text);
    smx_status s = smx_npy_parse_header(buf, len, &in, err, sizeof err);
    if (bad[k].want[0] == '\0') {
      CHECK(s == SMX_OK, "valid header #%zu: %s", k, err);
      continue;
    }
    n++;
    if (getenv("SMX_NPY_SHOW")) printf("  #%zu: %s\n", k, err);
    CHECK(s == SMX_E_PARSE && has(err, bad[k].want), "bad header #%zu [%s]: got %d \"%s\", want \"%s\"", k,
          bad[k].text, s, err, bad[k].want);
    /* the same bytes as a file: the same message, with the file name first */
    put_file(p, buf, len);
    smx_npy_reader *r = NULL;
    s = smx_npy_open(p, &r, err, sizeof err);
    CHECK(s == SMX_E_PARSE && r == NULL && has(err, bad[k].want) && !strncmp(err, p, strlen(p)),
          "bad file #%zu: \"%s\"", k, err);
  }
  printf("bad headers: %d in the table\n", n);

  /* binary damage */
  size_t len = mk(buf, 1, 0, "{" D F S "}\n");
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_OK && in.rows == 2 && in.cols == 3, "baseline");
  buf[5] = 'Z';
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "magic"), "bad magic: %s", err);
  buf[5] = 'Y';
  buf[6] = 4;
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "version 4.0"), "v4: %s", err);
  buf[6] = 1;
  buf[7] = 1;
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "version 1.1"), "v1.1: %s",
        err);
  buf[6] = 0;
  buf[7] = 0;
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "version 0.0"), "v0: %s", err);
  buf[6] = 1;
  for (size_t cut = 0; cut < len; cut++)
    CHECK(smx_npy_parse_header(buf, cut, &in, err, sizeof err) == SMX_E_PARSE &&
          (has(err, "truncated") || has(err, "empty")), "cut at %zu: %s", cut, err);
  buf[8] = (unsigned char)(buf[8] + 1);  /* header length one past the buffer */
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "needs"), "long: %s", err);
  buf[8] = (unsigned char)(buf[8] - 2);  /* one short: the newline falls outside */
  CHECK(smx_npy_parse_header(buf, len, &in, err, sizeof err) == SMX_E_PARSE && has(err, "newline"), "short: %s", err);
  unsigned char big[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x01, 0x00, 0x10, 0x00 };  /* 1 MiB + 1 */
  CHECK(smx_npy_parse_header(big, sizeof big, &in, err, sizeof err) == SMX_E_PARSE && has(err, "exceeds the limit"),
        "huge header length: %s", err);
  big[8] = 0xff, big[9] = 0xff, big[10] = 0xff, big[11] = 0xff;
  uint64_t total;
  CHECK(smx_npy_header_size(big, sizeof big, &total, err, sizeof err) == SMX_E_PARSE, "4 GiB header length");

  /* accepted variants */
  static const struct { int major; const char *text; int big, fortran, ndim; } good[] = {
    { 1, "{\"descr\": \"<f4\", \"fortran_order\": True, \"shape\": (4,)}\n", 0, 1, 1 },
    { 1, "{'shape':(),'fortran_order':False,'descr':'>f8'}   \n", 1, 0, 0 },
    { 1, "{\t'descr' :\t'=i4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }\n", -1, 0, 2 },
    { 2, "{'descr': '>u1', 'fortran_order': False, 'shape': (3L, 4L), }\n", 0, 0, 2 },
    { 3, "{'descr': '|b1', 'fortran_order': False, 'shape': (0,), }\n", 0, 0, 1 },
  };
  for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
    len = mk(buf, good[k].major, 0, good[k].text);
    smx_status s = smx_npy_parse_header(buf, len, &in, err, sizeof err);
    int want_big = good[k].big < 0 ? smx_io_host_big_endian() : good[k].big;
    CHECK(s == SMX_OK && in.big_endian == want_big && in.fortran_order == good[k].fortran && in.ndim == good[k].ndim &&
          in.version_major == good[k].major && in.data_offset == len,
          "good header #%zu: %s", k, s ? err : "fields");
  }
}

/* ------------------------------------------------- truncation and lying sizes */
static void test_file_sizes(void) {
  char p[1024], q[1024];
  path_in(p, sizeof p, tmpdir, "sz.npy");
  path_in(q, sizeof q, tmpdir, "cut.npy");
  uint64_t shape[2] = { 3, 4 };
  CHECK(write_model(p, SMX_DTYPE_F32, 2, shape, NULL, 1) == SMX_OK, "write: %s", err);
  size_t len;
  unsigned char *b = get_file(p, &len);
  if (!b) return;
  smx_npy_reader *r;
  for (size_t cut = 0; cut < len; cut++) {
    put_file(q, b, cut);
    smx_status s = smx_npy_open(q, &r, err, sizeof err);
    const char *want = cut == 0 ? "empty" : cut < 128 ? "truncated" : "but the file has";
    CHECK(s == SMX_E_PARSE && has(err, want) && has(err, q), "cut at %zu: %s", cut, err);
  }
  unsigned char *more = malloc(len + 1);
  memcpy(more, b, len);
  more[len] = 0;
  put_file(q, more, len + 1);
  CHECK(smx_npy_open(q, &r, err, sizeof err) == SMX_E_PARSE && has(err, "trailing bytes") &&
        has(err, "48 bytes but the file has 49"), "trailing: %s", err);
  free(more);
  free(b);

  /* a lying shape: 1000 x 1000 float32 with 4 bytes missing */
  unsigned char hb[SMX_NPY_FORMAT_MAX];
  smx_npy_info in = { 0 };
  in.dtype = SMX_DTYPE_F32;
  in.ndim = 2;
  in.shape[0] = in.shape[1] = 1000;
  size_t hl;
  CHECK(smx_npy_format_header(&in, hb, sizeof hb, &hl, err, sizeof err) == SMX_OK, "format");
  FILE *f = fopen(q, "wb");
  fwrite(hb, 1, hl, f);
  static float zeros[1000];
  for (int i = 0; i < 999; i++) fwrite(zeros, sizeof zeros, 1, f);
  fwrite(zeros, sizeof zeros - 4, 1, f);
  fclose(f);
  char want[1200];
  snprintf(want, sizeof want,
           "%s: header declares shape (1000, 1000) float32 = 4000000 bytes but the file has 3999996 bytes of data", q);
  CHECK(smx_npy_open(q, &r, err, sizeof err) == SMX_E_PARSE && has(err, want), "lying shape: %s", err);

  /* a shape that multiplies past 2^63 never reaches an allocation */
  unsigned char buf[512];
  len = mk(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }\n");
  put_file(q, buf, len);
  CHECK(smx_npy_open(q, &r, err, sizeof err) == SMX_E_PARSE && has(err, "bytes"), "huge shape: %s", err);

  /* missing file, directory */
  path_in(q, sizeof q, tmpdir, "nonexistent.npy");
  CHECK(smx_npy_open(q, &r, err, sizeof err) == SMX_E_IO && has(err, "No such file") && has(err, q), "missing: %s",
        err);
  CHECK(smx_npy_open(tmpdir, &r, err, sizeof err) == SMX_E_IO && has(err, "directory"), "dir: %s", err);
}

/* ------------------------------------------------------ argument checking */
static void test_arguments(void) {
  char p[1024];
  path_in(p, sizeof p, tmpdir, "args.npy");
  uint64_t shape[2] = { 4, 3 };
  smx_npy_writer *w = NULL;
  smx_npy_reader *r = NULL;
  CHECK(smx_npy_writer_open(NULL, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG,
        "NULL path");
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, NULL, err, sizeof err) == SMX_E_INVALID_ARG, "NULL out");
  CHECK(smx_npy_writer_open(p, (smx_dtype)0, 2, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "dtype 0");
  CHECK(smx_npy_writer_open(p, (smx_dtype)13, 2, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "dtype 13");
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 33, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "33 dims");
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, -1, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "-1 dims");
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, NULL, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "NULL shape");
  smx_npy_write_options o = { 0, 0, 4 };
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, &o, &w, err, sizeof err) == SMX_E_INVALID_ARG, "version 4");
  uint64_t huge[2] = { 1ull << 62, 4 };
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, huge, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "huge");
  CHECK(w == NULL && count_temps() == 0 && access(p, F_OK) != 0, "failed opens leave nothing");
  CHECK(smx_npy_open(NULL, &r, err, sizeof err) == SMX_E_INVALID_ARG, "open NULL path");
  CHECK(smx_npy_open("", &r, err, sizeof err) == SMX_E_INVALID_ARG && r == NULL, "open empty path");
  CHECK(smx_npy_writer_open("", SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_INVALID_ARG, "empty path");
  CHECK(smx_npy_write_rows_f32(NULL, NULL, 0, err, sizeof err) == SMX_E_INVALID_ARG, "write NULL writer");
  CHECK(smx_npy_read_rows_f32(NULL, 0, 0, NULL, err, sizeof err) == SMX_E_INVALID_ARG, "read NULL reader");
  CHECK(smx_npy_writer_finish(NULL, err, sizeof err) == SMX_E_INVALID_ARG, "finish NULL");
  smx_npy_writer_abort(NULL);
  smx_npy_close(NULL);
  CHECK(smx_dtype_name((smx_dtype)99) == NULL && smx_dtype_size((smx_dtype)0) == 0 &&
        !strcmp(smx_dtype_name(SMX_DTYPE_F16), "float16") && smx_dtype_size(SMX_DTYPE_U64) == 8, "dtype table");

  /* row ranges; err may be NULL */
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, NULL, 0) == SMX_OK, "open");
  float x[12] = { 0 };
  CHECK(smx_npy_write_rows_f32(w, x, 5, err, sizeof err) == SMX_E_INVALID_ARG && has(err, "only 4 of 4"),
        "5 rows: %s", err);
  CHECK(smx_npy_write_rows_f32(w, NULL, 1, err, sizeof err) == SMX_E_INVALID_ARG, "NULL src");
  CHECK(smx_npy_write_rows_f32(w, NULL, 0, NULL, 0) == SMX_OK, "0 rows, NULL src");
  CHECK(smx_npy_write_rows_f32(w, x, 4, NULL, 0) == SMX_OK, "4 rows");
  CHECK(smx_npy_write_rows_f32(w, x, 1, err, sizeof err) == SMX_E_INVALID_ARG, "a fifth row");
  CHECK(smx_npy_writer_finish(w, NULL, 0) == SMX_OK, "finish");
  CHECK(smx_npy_open(p, &r, err, sizeof err) == SMX_OK, "open: %s", err);
  if (r) {
    CHECK(smx_npy_read_rows_f32(r, 3, 2, x, err, sizeof err) == SMX_E_INVALID_ARG && has(err, "rows 3..5"), "%s", err);
    CHECK(smx_npy_read_rows_f32(r, 5, 0, x, err, sizeof err) == SMX_E_INVALID_ARG, "row0 past the end");
    CHECK(smx_npy_read_rows_f32(r, UINT64_MAX, 2, x, err, sizeof err) == SMX_E_INVALID_ARG, "wrap");
    CHECK(smx_npy_read_rows_f32(r, 4, 0, NULL, err, sizeof err) == SMX_OK, "empty read at the end");
    CHECK(smx_npy_read_rows_f32(r, 0, 1, NULL, err, sizeof err) == SMX_E_INVALID_ARG, "NULL dst");
    smx_npy_close(r);
  }
  /* tiny err buffers are truncated, never overrun */
  char small[8];
  memset(small, 'x', sizeof small);
  CHECK(smx_npy_open("/nonexistent/dir/x.npy", &r, small, 5) == SMX_E_IO && small[4] == '\0' && small[5] == 'x',
        "small err buffer");
  small[0] = 'y';
  CHECK(smx_npy_open("/nonexistent/dir/x.npy", &r, small, 1) == SMX_E_IO && small[0] == '\0', "1-byte err buffer");
}

/* ------------------------------------------------ temporary file + rename */
static void test_atomic_output(void) {
  char p[1024], sub[1024];
  path_in(p, sizeof p, tmpdir, "keep.npy");
  const char old[] = "old contents, not a .npy file";
  put_file(p, old, sizeof old);
  chmod(p, 0640);
  uint64_t shape[2] = { 4, 3 };
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)i;
  size_t n;
  unsigned char *b;

  /* abort after some rows */
  smx_npy_writer *w;
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_OK, "open: %s", err);
  CHECK(smx_npy_write_rows_f32(w, x, 2, err, sizeof err) == SMX_OK, "2 rows");
  CHECK(count_temps() == 1, "a temporary exists while writing");
  smx_npy_writer_abort(w);
  b = get_file(p, &n);
  CHECK(b && n == sizeof old && !memcmp(b, old, n), "abort leaves the old file");
  free(b);
  CHECK(count_temps() == 0, "abort removes the temporary");

  /* finish with rows missing */
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_OK, "open");
  CHECK(smx_npy_write_rows_f32(w, x, 3, err, sizeof err) == SMX_OK, "3 rows");
  CHECK(smx_npy_writer_finish(w, err, sizeof err) == SMX_E_INVALID_ARG && has(err, "3 of 4 rows") &&
        has(err, "left as it was"), "short finish: %s", err);
  b = get_file(p, &n);
  CHECK(b && n == sizeof old && !memcmp(b, old, n) && count_temps() == 0, "short finish leaves the old file");
  free(b);

  /* a bad value mid-way does not fail the writer */
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_U8, 2, shape, NULL, &w, err, sizeof err) == SMX_OK, "open u8");
  float neg[3] = { 1, -5, 2 };
  CHECK(smx_npy_write_rows_f32(w, neg, 1, err, sizeof err) == SMX_E_INVALID_ARG, "negative into u8");
  smx_npy_writer_abort(w);

  /* success replaces, keeping the mode */
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_OK, "open");
  CHECK(smx_npy_write_rows_f32(w, x, 4, err, sizeof err) == SMX_OK, "4 rows");
  CHECK(smx_npy_writer_finish(w, err, sizeof err) == SMX_OK, "finish: %s", err);
  struct stat st;
  CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0640 && st.st_size == 128 + 48, "replaced, mode 0640 kept");
  CHECK(count_temps() == 0, "no temporary after success");

  /* new files get 0666 & ~umask */
  mode_t um = umask(022);
  path_in(p, sizeof p, tmpdir, "fresh.npy");
  CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_OK &&
        smx_npy_write_rows_f32(w, x, 4, err, sizeof err) == SMX_OK &&
            smx_npy_writer_finish(w, err, sizeof err) == SMX_OK,
        "fresh: %s", err);
  CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0644, "fresh file mode %o", (unsigned)(st.st_mode & 0777));
  umask(um);

  /* destinations that cannot work fail at open and create nothing */
  path_in(sub, sizeof sub, tmpdir, "no/such/dir/x.npy");
  CHECK(smx_npy_writer_open(sub, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_IO &&
        has(err, "temporary") && has(err, sub), "missing dir: %s", err);
  path_in(sub, sizeof sub, tmpdir, "adir");
  mkdir(sub, 0755);
  CHECK(smx_npy_writer_open(sub, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_IO &&
        has(err, "is a directory"), "dir destination: %s", err);
  char slash[1100];
  snprintf(slash, sizeof slash, "%s/", sub);
  CHECK(smx_npy_writer_open(slash, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_IO, "dir/ : %s", err);
  if (geteuid() != 0) {  /* root ignores directory permissions */
    chmod(sub, 0555);
    path_in(p, sizeof p, sub, "x.npy");
    CHECK(smx_npy_writer_open(p, SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err) == SMX_E_IO &&
          has(err, "Permission denied"), "read-only dir: %s", err);
    chmod(sub, 0755);
  }
  CHECK(count_temps() == 0, "no temporaries left");

  /* relative path without a directory part */
  char cwd[1024];
  if (getcwd(cwd, sizeof cwd) && chdir(tmpdir) == 0) {
    CHECK(smx_npy_writer_open("rel.npy", SMX_DTYPE_F64, 1, shape, NULL, &w, err, sizeof err) == SMX_OK &&
          smx_npy_write_rows_f32(w, x, 1, err, sizeof err) == SMX_OK &&
              smx_npy_writer_finish(w, err, sizeof err) == SMX_OK,
          "relative path: %s", err);
    CHECK(access("rel.npy", R_OK) == 0, "relative output exists");
    CHECK(chdir(cwd) == 0, "chdir back");
  }
}

/* ------------------------------------------------------- stdin and stdout */
/* Runs fn with fd `which` (0 or 1) redirected to `fd`, restoring it after. */
static void with_fd(int which, int fd, void (*fn)(void *), void *ctx) {
  fflush(stdout);
  int saved = dup(which);
  dup2(fd, which);
  fn(ctx);
  dup2(saved, which);
  close(saved);
}

static void write_stdout_model(void *ctx) {
  int *fortran = ctx;
  uint64_t shape[2] = { 5, 4 };
  smx_npy_write_options o = { 1, *fortran, 0 };
  *fortran = write_model("-", SMX_DTYPE_I32, 2, shape, &o, 0);
}

struct pipe_read { const unsigned char *bytes; size_t n; smx_status s1, s2, s3; double v[64]; int rows_each; };

static void read_stdin(void *ctx) {
  struct pipe_read *pr = ctx;
  smx_npy_reader *r;
  pr->s1 = smx_npy_open("-", &r, err, sizeof err);
  pr->s2 = pr->s3 = SMX_E_INTERNAL;
  if (pr->s1 != SMX_OK) return;
  const smx_npy_info *in = smx_npy_reader_info(r);
  pr->s3 = smx_npy_read_rows_f64(r, 1, 1, pr->v, NULL, 0);  /* out of order: refused */
  pr->s2 = SMX_OK;
  for (uint64_t r0 = 0; r0 < in->rows && pr->s2 == SMX_OK; r0 += (uint64_t)pr->rows_each) {
    uint64_t k = in->rows - r0 < (uint64_t)pr->rows_each ? in->rows - r0 : (uint64_t)pr->rows_each;
    pr->s2 = smx_npy_read_rows_f64(r, r0, k, pr->v + r0 * in->cols, err, sizeof err);
  }
  smx_npy_close(r);
}

/* Feeds bytes into a pipe from a child process and reads it as stdin. */
static void pipe_into_reader(struct pipe_read *pr) {
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    size_t off = 0;
    while (off < pr->n) {
      ssize_t k = write(fds[1], pr->bytes + off, pr->n - off);
      if (k <= 0) break;
      off += (size_t)k;
    }
    _exit(0);
  }
  close(fds[1]);
  with_fd(0, fds[0], read_stdin, pr);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
}

static void test_streams(void) {
  char p[1024], q[1024];
  for (int fo = 0; fo < 2; fo++) {
    path_in(p, sizeof p, tmpdir, "stdout.npy");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int arg = fo;
    with_fd(1, fd, write_stdout_model, &arg);
    close(fd);
    CHECK(arg == SMX_OK, "write to stdout (fortran %d): %s", fo, err);
    uint64_t shape[2] = { 5, 4 };
    check_model(p, SMX_DTYPE_I32, 2, shape, 0, fo ? "stdout F" : "stdout C");
    path_in(q, sizeof q, tmpdir, "file.npy");
    smx_npy_write_options o = { 1, fo, 0 };
    write_model(q, SMX_DTYPE_I32, 2, shape, &o, 0);
    size_t na, nb;
    unsigned char *a = get_file(p, &na), *b = get_file(q, &nb);
    CHECK(a && b && na == nb && !memcmp(a, b, na), "stdout bytes equal file bytes");
    free(a);
    /* the same bytes through a pipe: whole, in 1-row and 2-row steps */
    for (int step = 1; step <= 5; step += 1) {
      struct pipe_read pr = { b, nb, 0, 0, 0, { 0 }, step };
      pipe_into_reader(&pr);
      CHECK(pr.s1 == SMX_OK && pr.s2 == SMX_OK && pr.s3 == SMX_E_INVALID_ARG, "pipe read step %d F%d: %s", step, fo,
            err);
      int ok = 1;
      for (int i = 0; i < 20; i++) ok &= pr.v[i] == model(SMX_DTYPE_I32, (uint64_t)i);
      CHECK(ok, "pipe values step %d", step);
    }
    /* truncated and overlong streams */
    struct pipe_read cut = { b, nb - 1, 0, 0, 0, { 0 }, 5 };
    pipe_into_reader(&cut);
    CHECK(cut.s1 == SMX_OK && cut.s2 == SMX_E_PARSE && has(err, "truncated") && has(err, "<stdin>"),
          "truncated pipe: %s", err);
    unsigned char *longer = malloc(nb + 3);
    memcpy(longer, b, nb);
    memset(longer + nb, 0, 3);
    struct pipe_read lg = { longer, nb + 3, 0, 0, 0, { 0 }, 2 };
    pipe_into_reader(&lg);
    CHECK(lg.s1 == SMX_OK && lg.s2 == SMX_E_PARSE && has(err, "trailing bytes"), "trailing pipe: %s", err);
    struct pipe_read hd = { b, 40, 0, 0, 0, { 0 }, 2 };
    pipe_into_reader(&hd);
    CHECK(hd.s1 == SMX_E_PARSE && has(err, "truncated") && has(err, "header"), "pipe cut in the header: %s", err);
    free(longer);
    free(b);
  }
  /* an empty array from a pipe: trailing bytes are found at open */
  unsigned char hb[SMX_NPY_FORMAT_MAX + 4];
  smx_npy_info in = { 0 };
  in.dtype = SMX_DTYPE_F32;
  in.ndim = 2;
  in.shape[0] = 0;
  in.shape[1] = 3;
  size_t hl;
  smx_npy_format_header(&in, hb, sizeof hb, &hl, err, sizeof err);
  struct pipe_read e0 = { hb, hl, 0, 0, 0, { 0 }, 1 };
  pipe_into_reader(&e0);
  CHECK(e0.s1 == SMX_OK && e0.s2 == SMX_OK, "empty array from a pipe: %s", err);
  hb[hl] = 7;
  struct pipe_read e1 = { hb, hl + 1, 0, 0, 0, { 0 }, 1 };
  pipe_into_reader(&e1);
  CHECK(e1.s1 == SMX_E_PARSE && has(err, "trailing"), "empty array + 1 byte from a pipe: %s", err);
}

/* ------------------------------------------------------- failures mid-way */
static void test_failures(void) {
  char p[1024];
  size_t n;
  unsigned char *b;
  uint64_t shape[2] = { 64, 32 };
  float x[64 * 32];
  for (int i = 0; i < 64 * 32; i++) x[i] = (float)i;
  smx_npy_writer *w;
  smx_npy_reader *r;

  /* a file-size limit hit half-way: the write fails, finish fails, the old
   * file is intact and no temporary is left */
  path_in(p, sizeof p, tmpdir, "limited.npy");
  put_file(p, "old", 3);
  struct rlimit saved, lim;
  void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
  if (getrlimit(RLIMIT_FSIZE, &saved) == 0) {
    lim = saved;
    lim.rlim_cur = 4096;
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
      smx_npy_write_options o = { 0, 0, 0 };
      CHECK(smx_npy_writer_open(p, SMX_DTYPE_F64, 2, shape, &o, &w, err, sizeof err) == SMX_OK, "open: %s", err);
      smx_status s = smx_npy_write_rows_f32(w, x, 64, err, sizeof err);
      CHECK(s == SMX_E_IO && has(err, p) && has(err, "write failed"), "EFBIG: %s", err);
      CHECK(smx_npy_write_rows_f32(w, x, 1, err, sizeof err) == SMX_E_IO && has(err, "earlier write failed"),
            "sticky failure: %s", err);
      CHECK(smx_npy_writer_finish(w, err, sizeof err) == SMX_E_IO && has(err, "left as it was"), "finish: %s", err);
      /* Fortran order through windows (> 1 MiB): fails the same way */
      uint64_t big[2] = { 400, 400 };
      smx_npy_write_options fo = { 0, 1, 0 };
      CHECK(smx_npy_writer_open(p, SMX_DTYPE_F64, 2, big, &fo, &w, err, sizeof err) == SMX_OK, "open F: %s", err);
      s = SMX_OK;
      for (int k = 0; k < 400 && s == SMX_OK; k += 4) s = smx_npy_write_rows_f32(w, x, 4, err, sizeof err);
      CHECK(s == SMX_E_IO, "EFBIG in Fortran order: %s", err);
      smx_npy_writer_abort(w);
      setrlimit(RLIMIT_FSIZE, &saved);
    }
  }
  signal(SIGXFSZ, old_xfsz);
  b = get_file(p, &n);
  CHECK(b && n == 3 && !memcmp(b, "old", 3) && count_temps() == 0, "size limit: old file intact, no temporary");
  free(b);

  /* stdout that breaks after the header: a pipe whose reader goes away */
  int fds[2];
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
  if (pipe(fds) == 0) {
    struct { int fd; smx_status s1, s2, s3, s4; } ctx = { fds[0], 0, 0, 0, 0 };
    fflush(stdout);
    int saved_fd = dup(1);
    dup2(fds[1], 1);
    close(fds[1]);
    ctx.s1 = smx_npy_writer_open("-", SMX_DTYPE_F32, 2, shape, NULL, &w, err, sizeof err);
    close(ctx.fd);
    if (ctx.s1 == SMX_OK) {
      ctx.s2 = smx_npy_write_rows_f32(w, x, 64, err, sizeof err);
      ctx.s3 = smx_npy_write_rows_f32(w, x, 1, err, sizeof err);
      ctx.s4 = smx_npy_writer_finish(w, err, sizeof err);
    }
    dup2(saved_fd, 1);
    close(saved_fd);
    CHECK(ctx.s1 == SMX_OK && ctx.s2 == SMX_E_IO && ctx.s3 == SMX_E_IO && ctx.s4 == SMX_E_IO && has(err, "<stdout>"),
          "broken stdout: %d %d %d %d %s", ctx.s1, ctx.s2, ctx.s3, ctx.s4, err);
  }
  signal(SIGPIPE, old_pipe);

  /* a big Fortran-order array cannot go to stdout, and nothing is written */
  uint64_t big[2] = { 600, 600 };
  smx_npy_write_options fo = { 0, 1, 0 };
  CHECK(smx_npy_writer_open("-", SMX_DTYPE_F32, 2, big, &fo, &w, err, sizeof err) == SMX_E_INVALID_ARG &&
        has(err, "Fortran"), "F to stdout: %s", err);
  fo.fortran_order = 0;
  fo.version = 2;
  big[0] = 1ull << 63;
  CHECK(smx_npy_writer_open("-", SMX_DTYPE_U8, 2, big, &fo, &w, err, sizeof err) == SMX_E_INVALID_ARG &&
        has(err, "2^63 - 1"), "dimension 2^63: %s", err);

  /* ... nor come from a pipe */
  unsigned char hb[SMX_NPY_FORMAT_MAX];
  smx_npy_info in = { 0 };
  in.dtype = SMX_DTYPE_F32;
  in.fortran_order = 1;
  in.ndim = 2;
  in.shape[0] = in.shape[1] = 1000;
  size_t hl;
  CHECK(smx_npy_format_header(&in, hb, sizeof hb, &hl, err, sizeof err) == SMX_OK, "format");
  struct pipe_read pr = { hb, hl, 0, 0, 0, { 0 }, 1 };
  pipe_into_reader(&pr);
  CHECK(pr.s1 == SMX_E_INVALID_ARG && has(err, "Fortran") && has(err, "pipe"), "F from a pipe: %s", err);

  /* format_header's own checks */
  size_t need = 0;
  CHECK(smx_npy_format_header(&in, hb, 64, &need, err, sizeof err) == SMX_E_INVALID_ARG && need == hl &&
        has(err, "needs"), "small buffer: %s", err);
  in.version_major = 4;
  CHECK(smx_npy_format_header(&in, hb, sizeof hb, &need, err, sizeof err) == SMX_E_INVALID_ARG, "version 4");
  in.version_major = 2;
  in.version_minor = 1;
  CHECK(smx_npy_format_header(&in, hb, sizeof hb, &need, err, sizeof err) == SMX_E_INVALID_ARG, "version 2.1");
  CHECK(smx_npy_format_header(NULL, hb, sizeof hb, &need, err, sizeof err) == SMX_E_INVALID_ARG, "NULL info");

  /* a file that shrinks after open: an I/O error, not garbage */
  path_in(p, sizeof p, tmpdir, "shrink.npy");
  CHECK(write_model(p, SMX_DTYPE_F32, 2, shape, NULL, 1) == SMX_OK, "write: %s", err);
  CHECK(smx_npy_open(p, &r, err, sizeof err) == SMX_OK, "open: %s", err);
  if (r) {
    CHECK(truncate(p, 200) == 0, "truncate");
    CHECK(smx_npy_read_rows_f32(r, 0, 64, x, err, sizeof err) == SMX_E_IO && has(err, "shrank"), "shrunk: %s", err);
    smx_npy_close(r);
  }

  /* stdin redirected from a file, positioned after some other bytes */
  CHECK(write_model(p, SMX_DTYPE_I16, 2, shape, NULL, 0) == SMX_OK, "write: %s", err);
  b = get_file(p, &n);
  path_in(p, sizeof p, tmpdir, "prefixed.bin");
  unsigned char *pre = malloc(n + 5);
  memcpy(pre, "junk!", 5);
  memcpy(pre + 5, b, n);
  put_file(p, pre, n + 5);
  free(pre);
  free(b);
  int fd = open(p, O_RDONLY);
  if (fd >= 0 && lseek(fd, 5, SEEK_SET) == 5) {
    struct pipe_read fr = { NULL, 0, 0, 0, 0, { 0 }, 64 };
    double *v = malloc(64 * 32 * sizeof *v);
    int saved_fd = dup(0);
    dup2(fd, 0);
    smx_npy_reader *sr;
    fr.s1 = smx_npy_open("-", &sr, err, sizeof err);
    if (fr.s1 == SMX_OK) {
      fr.s2 = smx_npy_read_rows_f64(sr, 32, 32, v + 32 * 32, err, sizeof err);  /* any order: it is a file */
      fr.s3 = smx_npy_read_rows_f64(sr, 0, 32, v, err, sizeof err);
      smx_npy_close(sr);
    }
    dup2(saved_fd, 0);
    close(saved_fd);
    int ok = fr.s1 == SMX_OK && fr.s2 == SMX_OK && fr.s3 == SMX_OK;
    for (int i = 0; i < 64 * 32 && ok; i++) ok = v[i] == model(SMX_DTYPE_I16, (uint64_t)i);
    CHECK(ok, "stdin from a file at offset 5: %d %d %d %s", fr.s1, fr.s2, fr.s3, err);
    free(v);
  }
  if (fd >= 0) close(fd);

  /* a long file name and a short message buffer: the name is cut, never overrun */
  char longname[300];
  memset(longname, 'n', sizeof longname);
  memcpy(longname + sizeof longname - 5, ".npy", 5);
  path_in(p, sizeof p, tmpdir, "bad.npy");
  put_file(p, "\x93NUMPY\x01\x00\x02\x00{\n", 12);
  char small[24];
  memset(small, 'x', sizeof small);
  CHECK(smx_npy_open(p, &r, small, 20) == SMX_E_PARSE && strlen(small) == 19 && small[20] == 'x' &&
        !strncmp(small, p, 19), "prefix cut: %s", small);
}

/* --------------------------------------- large arrays: the chunked paths */
static void test_large(void) {
  static const struct { int ndim; uint64_t shape[3]; int fortran; smx_dtype t; } cases[] = {
    { 2, { 700, 600 }, 0, SMX_DTYPE_F32 },   /* 1.6 MB: several scratch chunks      */
    { 2, { 700, 600 }, 1, SMX_DTYPE_F32 },   /* Fortran, beyond the in-memory limit */
    { 2, { 2500, 70 }, 1, SMX_DTYPE_F64 },   /* Fortran 2-d, more rows than a block */
    { 3, { 60, 50, 100 }, 1, SMX_DTYPE_F32 }, /* Fortran 3-d: strided windows       */
    { 3, { 40000, 2, 3 }, 1, SMX_DTYPE_F64 }, /* windows > scratch: element runs    */
  };
  char p[1024], what[128];
  path_in(p, sizeof p, tmpdir, "large.npy");
  tu_rng rng = { 42 };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    snprintf(what, sizeof what, "large #%zu", k);
    smx_npy_write_options o = { (int)k & 1, cases[k].fortran, 0 };
    uint64_t rows = 1, cols = cases[k].shape[cases[k].ndim - 1];
    for (int d = 0; d < cases[k].ndim - 1; d++) rows *= cases[k].shape[d];
    smx_npy_writer *w;
    smx_status s = smx_npy_writer_open(p, cases[k].t, cases[k].ndim, cases[k].shape, &o, &w, err, sizeof err);
    CHECK(s == SMX_OK, "%s open: %s", what, err);
    if (s != SMX_OK) continue;
    double *x = malloc(rows * cols * sizeof *x);
    for (uint64_t i = 0; i < rows * cols; i++) x[i] = model(cases[k].t, i);
    for (uint64_t r0 = 0; r0 < rows && s == SMX_OK;) {  /* uneven blocks */
      uint64_t nr = 1 + tu_next(&rng) % 300;
      if (nr > rows - r0) nr = rows - r0;
      s = smx_npy_write_rows_f64(w, x + r0 * cols, nr, err, sizeof err);
      r0 += nr;
    }
    CHECK(s == SMX_OK && smx_npy_writer_finish(w, err, sizeof err) == SMX_OK, "%s write: %s", what, err);
    smx_npy_info in;
    smx_npy_reader *r;
    if (smx_npy_open(p, &r, err, sizeof err) != SMX_OK) {
      CHECK(0, "%s open: %s", what, err);
      free(x);
      continue;
    }
    in = *smx_npy_reader_info(r);
    check_raw_layout(p, &in, 0, what);
    float *y = malloc(rows * cols * sizeof *y);
    /* random row ranges, out of order */
    int bad = 0;
    for (int t = 0; t < 40 && !bad; t++) {
      uint64_t r0 = tu_next(&rng) % rows, nr = 1 + tu_next(&rng) % 1500;
      if (nr > rows - r0) nr = rows - r0;
      s = smx_npy_read_rows_f32(r, r0, nr, y, err, sizeof err);
      CHECK(s == SMX_OK, "%s read %llu+%llu: %s", what, (unsigned long long)r0, (unsigned long long)nr, err);
      for (uint64_t i = 0; i < nr * cols && s == SMX_OK; i++)
        if (y[i] != (float)x[r0 * cols + i]) {
          CHECK(0, "%s: element %llu", what, (unsigned long long)(r0 * cols + i));
          bad = 1;
          break;
        }
    }
    free(y);
    free(x);
    smx_npy_close(r);
  }
}

int main(int argc, char **argv) {
  if (argc > 1) data_dir = argv[1];
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/smx_test_npy.XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  test_f16();
  test_value_conversions();
  test_bad_headers();
  test_file_sizes();
  test_arguments();
  test_round_trips();
  test_fixtures();
  test_atomic_output();
  test_streams();
  test_failures();
  test_large();
  remove_tree(tmpdir);
  return tu_finish("test_npy");
}
