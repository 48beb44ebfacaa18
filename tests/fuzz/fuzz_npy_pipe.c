/*
 * libFuzzer target for the .npy reader on a pipe (also replayed without
 * libFuzzer by regression_driver.c). smx_npy_open("-") reads standard input
 * sequentially when fstat does not call it a regular file, so a memfd would
 * not do: the input goes through a real pipe on fd 0, fed by a thread in
 * pieces of uneven sizes (short reads on the reader's side). For each input:
 *  1. the same bytes as a regular file are the reference: opened (a seekable
 *     open checks the size, a pipe open cannot) and read whole as f64 and f32;
 *  2. through the pipe, the open gives SMX_OK, SMX_E_PARSE or (Fortran order
 *     over 1 MiB) SMX_E_INVALID_ARG with a message, and the same description
 *     as the header says;
 *  3. all rows read in order, in uneven pieces, as f64, as f32, and as
 *     elements (f64, f32, and float16 bits for float16 data), succeed exactly
 *     when the reference opened, i.e. when the stream holds exactly the bytes
 *     the shape declares, and then give bitwise the reference's values; a
 *     failed read is SMX_E_PARSE and every later read SMX_E_IO;
 *  4. a read out of order is refused (SMX_E_INVALID_ARG) without harm.
 * Any broken invariant aborts, which libFuzzer reports as a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy_io.h"

#define FUZZ_TARGET "fuzz_npy_pipe"
#include "fuzz_require.h"

#define SMALL_FORTRAN ((uint64_t)1 << 20)  /* the reader's limit for Fortran order on a pipe */

static char dir[256], ref_path[300];
static int devnull = -1;

static void cleanup(void) {
  unlink(ref_path);
  rmdir(dir);
}

static void setup(void) {
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/smx_fuzz_pipe.XXXXXX", base && *base ? base : "/tmp");
  REQUIRE(mkdtemp(dir) != NULL);
  snprintf(ref_path, sizeof ref_path, "%s/ref.npy", dir);
  atexit(cleanup);
  devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(devnull >= 0);
  signal(SIGPIPE, SIG_IGN);  /* the reader may stop early: the feeder then gets EPIPE */
}

/* ------------------------------------------------ the pipe on fd 0 */
typedef struct feeder {
  pthread_t th;
  int fd;
  const uint8_t *p;
  size_t n;
} feeder;

static void *feed_main(void *arg) {
  static const size_t piece[] = { 1, 7, 64, 3, 4093, 65536, 2 };
  feeder *f = arg;
  for (size_t off = 0, i = 0; off < f->n; i++) {
    size_t k = piece[i % (sizeof piece / sizeof piece[0])];
    if (k > f->n - off) k = f->n - off;
    ssize_t w = write(f->fd, f->p + off, k);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  /* EPIPE: the reader is done */
    off += (size_t)w;
  }
  close(f->fd);
  return NULL;
}

static void feed_start(feeder *f, const uint8_t *data, size_t size) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  REQUIRE(dup2(p[0], STDIN_FILENO) == STDIN_FILENO);
  close(p[0]);
  f->fd = p[1];
  f->p = data;
  f->n = size;
  REQUIRE(pthread_create(&f->th, NULL, feed_main, f) == 0);
}

static void feed_stop(feeder *f) {
  REQUIRE(dup2(devnull, STDIN_FILENO) == STDIN_FILENO);  /* closes the read end: unblocks the feeder */
  pthread_join(f->th, NULL);
}

/* ------------------------------------------------ reads */
enum { K_ROWS_F64, K_ROWS_F32, K_ELEMS_F64, K_ELEMS_F32, K_ELEMS_F16, K_COUNT };
static const size_t esize[K_COUNT] = { 8, 4, 8, 4, 2 };

static smx_status read_piece(smx_npy_reader *r, int kind, uint64_t at, uint64_t n, void *dst, char *err, size_t el) {
  switch (kind) {
  case K_ROWS_F64: return smx_npy_read_rows_f64(r, at, n, dst, err, el);
  case K_ROWS_F32: return smx_npy_read_rows_f32(r, at, n, dst, err, el);
  case K_ELEMS_F64: return smx_npy_read_elems_f64(r, at, (size_t)n, dst, err, el);
  case K_ELEMS_F32: return smx_npy_read_elems_f32(r, at, (size_t)n, dst, err, el);
  default: return smx_npy_read_elems_f16(r, at, (size_t)n, dst, err, el);
  }
}

/* Reads everything of r in order, in uneven pieces (units: rows or
 * elements), into all (count values) when given, else into a fresh block
 * per piece. Returns the first failure, or SMX_OK. */
static smx_status read_all(smx_npy_reader *r, int kind, void *all) {
  const smx_npy_info *in = smx_npy_reader_info(r);
  int rows = kind == K_ROWS_F64 || kind == K_ROWS_F32;
  uint64_t units = rows ? in->rows : in->count, per = rows ? in->cols : 1;
  static const uint64_t piece[] = { 1, 2, 5, 64, 3, 1000 };
  char err[256];
  void *block = NULL;
  smx_status s = SMX_OK;
  for (uint64_t u = 0, i = 0; u < units; i++) {
    uint64_t n = piece[i % (sizeof piece / sizeof piece[0])];
    if (per == 0) n = units;  /* rows of nothing: any number of them at once */
    else if (!all && n * per > 65536) n = 65536 / per ? 65536 / per : 1;
    if (n > units - u) n = units - u;
    void *dst;
    if (all) {
      dst = (unsigned char *)all + u * per * esize[kind];
    } else {
      free(block);  /* a fresh block each time, so ASan sees a write past it */
      dst = block = malloc((size_t)(n * per) * esize[kind] + 1);
      REQUIRE(block != NULL);
    }
    if (u > 0)  /* going back is refused and changes nothing */
      REQUIRE(read_piece(r, kind, u - 1, 1, dst, err, sizeof err) == SMX_E_INVALID_ARG);
    memset(err, 'x', sizeof err);
    s = read_piece(r, kind, u, n, dst, err, sizeof err);
    if (s != SMX_OK) {
      REQUIRE(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
      if (kind == K_ELEMS_F16 && in->dtype != SMX_DTYPE_F16) {
        REQUIRE(s == SMX_E_INVALID_ARG);  /* float16 bits of other data: refused before reading */
        break;
      }
      REQUIRE(s == SMX_E_PARSE);  /* truncated or trailing bytes: the pipe itself cannot fail */
      REQUIRE(read_piece(r, kind, u, 0, dst, err, sizeof err) == SMX_E_IO);
      break;
    }
    u += n;
  }
  free(block);
  return s;
}

/* The reference: the bytes as a regular file, read whole as f64 / f32 / f16
 * bits; NULL values when it does not open. */
typedef struct ref {
  smx_status st;
  smx_npy_info info;
  void *v[K_COUNT];
} ref;

static void ref_read(const uint8_t *data, size_t size, ref *f) {
  char err[256];
  memset(f, 0, sizeof *f);
  FILE *fp = fopen(ref_path, "wb");
  REQUIRE(fp != NULL);
  REQUIRE(fwrite(data, 1, size, fp) == size || size == 0);
  REQUIRE(fclose(fp) == 0);
  smx_npy_reader *r;
  f->st = smx_npy_open(ref_path, &r, err, sizeof err);
  if (f->st != SMX_OK) return;
  f->info = *smx_npy_reader_info(r);
  size_t n = (size_t)f->info.count;
  REQUIRE(f->info.data_offset + f->info.data_bytes == size);  /* a regular file: the size was checked */
  for (int k = 0; k < K_COUNT; k++) {
    f->v[k] = malloc(n * esize[k] + 1);
    REQUIRE(f->v[k] != NULL);
  }
  REQUIRE(smx_npy_read_rows_f64(r, 0, f->info.rows, f->v[K_ROWS_F64], err, sizeof err) == SMX_OK);
  REQUIRE(smx_npy_read_rows_f32(r, 0, f->info.rows, f->v[K_ROWS_F32], err, sizeof err) == SMX_OK);
  REQUIRE(smx_npy_read_elems_f64(r, 0, n, f->v[K_ELEMS_F64], err, sizeof err) == SMX_OK);
  REQUIRE(smx_npy_read_elems_f32(r, 0, n, f->v[K_ELEMS_F32], err, sizeof err) == SMX_OK);
  smx_status s16 = smx_npy_read_elems_f16(r, 0, n, f->v[K_ELEMS_F16], err, sizeof err);
  REQUIRE(s16 == (f->info.dtype == SMX_DTYPE_F16 ? SMX_OK : SMX_E_INVALID_ARG));
  /* rows and elements are the same storage walk for C order only */
  if (!f->info.fortran_order || f->info.ndim < 2) {
    REQUIRE(memcmp(f->v[K_ROWS_F64], f->v[K_ELEMS_F64], n * 8) == 0);
    REQUIRE(memcmp(f->v[K_ROWS_F32], f->v[K_ELEMS_F32], n * 4) == 0);
  }
  smx_npy_close(r);
}

static void pipe_pass(const uint8_t *data, size_t size, const ref *f, int kind) {
  char err[256];
  feeder fd;
  feed_start(&fd, data, size);
  smx_npy_reader *r = NULL;
  memset(err, 'x', sizeof err);
  smx_status s = smx_npy_open("-", &r, err, sizeof err);
  if (s != SMX_OK) {
    REQUIRE(s == SMX_E_PARSE || s == SMX_E_INVALID_ARG);
    REQUIRE(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
    /* only a large Fortran-order array is refused on a pipe alone */
    if (f->st == SMX_OK) REQUIRE(s == SMX_E_INVALID_ARG && f->info.fortran_order && f->info.data_bytes > SMALL_FORTRAN);
    feed_stop(&fd);
    return;
  }
  const smx_npy_info *in = smx_npy_reader_info(r);
  smx_npy_info h;  /* the description is the header's, whatever follows it */
  REQUIRE(smx_npy_parse_header(data, size, &h, NULL, 0) == SMX_OK);
  REQUIRE(in->dtype == h.dtype && in->ndim == h.ndim && in->count == h.count && in->rows == h.rows &&
          in->cols == h.cols && in->data_offset == h.data_offset && in->data_bytes == h.data_bytes &&
          memcmp(in->shape, h.shape, sizeof h.shape) == 0);
  if (f->st == SMX_OK) {
    void *all = malloc((size_t)in->count * esize[kind] + 1);
    REQUIRE(all != NULL);
    s = read_all(r, kind, all);
    REQUIRE(s == (kind != K_ELEMS_F16 || in->dtype == SMX_DTYPE_F16 || in->count == 0 ? SMX_OK : SMX_E_INVALID_ARG));
    if (s == SMX_OK) REQUIRE(memcmp(all, f->v[kind], (size_t)in->count * esize[kind]) == 0);
    free(all);
  } else if (kind != K_ELEMS_F16 || in->dtype == SMX_DTYPE_F16) {
    /* the stream is too short or too long for the shape: some read says so,
     * unless a single piece would be larger than the whole input (then the
     * data is certainly short, and the buffer is not worth allocating) */
    uint64_t per = kind == K_ROWS_F64 || kind == K_ROWS_F32 ? in->cols : 1;
    if (per <= size) REQUIRE(read_all(r, kind, NULL) == SMX_E_PARSE);
  }
  smx_npy_close(r);
  feed_stop(&fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (devnull < 0) setup();
  ref f;
  ref_read(data, size, &f);
  for (int kind = 0; kind < K_COUNT; kind++) pipe_pass(data, size, &f, kind);
  for (int k = 0; k < K_COUNT; k++) free(f.v[k]);
  return 0;
}
