/*
 * Logits in blocks of rows and labels as a whole, for smx score and smx eval.
 * A block holds about 1 MiB of floats, so a file of any number of rows is
 * read in bounded memory, and the block is still in cache when the NaN
 * check and the scores read it (on 1 GiB of float32 logits from the page
 * cache, eval --scores msp took 0.58 s against 0.86 s with 16 MiB blocks); a
 * progress line shows on a terminal. A reader thread reads the next block
 * into a second buffer while this one is scored, so that reading (a copy
 * out of the page cache, as long as `dd` takes) and scoring overlap instead
 * of adding up; without a thread (pthread_create failed) the reads are
 * done in turn.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/message.h"
#include "cli/signals.h"
#include "logits_stream.h"
#include "io/npy_io.h"

#define BLOCK_BYTES ((size_t)1 << 20)

/* The index of the first NaN of x[0, n), or n: a branch-free pass per chunk
 * (16 lanes of x != x or-ed together), the search only in a chunk that has one. */
#if defined(__GNUC__)
typedef float nan_v4f __attribute__((vector_size(16)));
typedef int nan_v4i __attribute__((vector_size(16)));
static int chunk_has_nan(const float *x, size_t n) {
  nan_v4i acc = { 0, 0, 0, 0 };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    nan_v4f a, b, c, d;
    memcpy(&a, x + i, 16);
    memcpy(&b, x + i + 4, 16);
    memcpy(&c, x + i + 8, 16);
    memcpy(&d, x + i + 12, 16);
    acc |= (a != a) | (b != b) | (c != c) | (d != d);
  }
  int any = acc[0] | acc[1] | acc[2] | acc[3];
  for (; i < n; i++) any |= x[i] != x[i];
  return any != 0;
}
#else
static int chunk_has_nan(const float *x, size_t n) {
  int any = 0;
  for (size_t i = 0; i < n; i++) any |= x[i] != x[i];
  return any;
}
#endif

static size_t find_nan(const float *x, size_t n) {
  for (size_t i0 = 0; i0 < n; i0 += 4096) {
    size_t i1 = n - i0 < 4096 ? n : i0 + 4096;
    if (chunk_has_nan(x + i0, i1 - i0))
      for (size_t i = i0; i < i1; i++)
        if (x[i] != x[i]) return i;
  }
  return n;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------- the reader */
/* One block read: rows [r0, r0 + nr) into dst; st and err say how it went. */
typedef struct block_read {
  smx_npy_reader *r;
  const smx_npy_info *info;
  uint64_t r0, cols;
  size_t nr;
  float *dst;
  smx_status st;
  char err[512];
} block_read;

static void do_read(block_read *b) {
  /* C order: the rows are one range of elements, read straight into dst
   * when the file holds native float32 (read_rows goes through a scratch
   * buffer); Fortran order: gathered row by row */
  b->st = b->info->fortran_order
              ? smx_npy_read_rows_f32(b->r, b->r0, b->nr, b->dst, b->err, sizeof b->err)
              : smx_npy_read_elems_f32(b->r, b->r0 * b->cols, b->nr * (size_t)b->cols, b->dst, b->err, sizeof b->err);
}

/* A thread that runs one block read at a time (the main thread touches the
 * reader only between reads). */
typedef struct reader_thread {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int threaded, busy, quit;
  block_read job;
} reader_thread;

static void *reader_main(void *arg) {
  reader_thread *t = arg;
  pthread_mutex_lock(&t->mu);
  for (;;) {
    while (!t->busy && !t->quit) pthread_cond_wait(&t->cv, &t->mu);
    if (t->quit) break;
    pthread_mutex_unlock(&t->mu);
    do_read(&t->job);
    pthread_mutex_lock(&t->mu);
    t->busy = 0;
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

static void reader_start(reader_thread *t) {
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->threaded = pthread_create(&t->th, NULL, reader_main, t) == 0;
}

/* Starts a read (in turn, without a thread: it is done when this returns). */
static void reader_submit(reader_thread *t, const block_read *b) {
  if (!t->threaded) {
    t->job = *b;
    do_read(&t->job);
    return;
  }
  pthread_mutex_lock(&t->mu);
  t->job = *b;
  t->busy = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

/* Waits for the read in flight, if any. */
static void reader_wait(reader_thread *t) {
  if (!t->threaded) return;
  pthread_mutex_lock(&t->mu);
  while (t->busy) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
}

static void reader_stop(reader_thread *t) {
  if (t->threaded) {
    reader_wait(t);
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
  }
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
}

int smx_cli_stream_logits(const char *path, int quiet, uint64_t want_cols, const char *other, int allow_nan,
                          uint64_t *rows_out, uint64_t *cols_out, smx_block_fn fn, void *ctx) {
  return smx_cli_stream_logits_range(path, quiet, want_cols, other, allow_nan, 0, UINT64_MAX, rows_out, cols_out, fn,
                                     ctx);
}

int smx_cli_stream_logits_range(const char *path, int quiet, uint64_t want_cols, const char *other, int allow_nan,
                                uint64_t first, uint64_t end, uint64_t *rows_out, uint64_t *cols_out,
                                smx_block_fn fn, void *ctx) {
  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  uint64_t rows = info->rows, cols = info->cols;
  int rc = 0;
  if (info->ndim < 2 || cols == 0) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: logits must have shape (N, K) with K >= 1 classes; this array has %s",
                      path, info->ndim < 2 ? (info->ndim ? "one axis" : "no axis") : "an empty last axis");
  } else if (want_cols && cols != want_cols) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %llu classes, but %s has %llu", path, (unsigned long long)cols, other,
                      (unsigned long long)want_cols);
  }
  if (rc) { smx_npy_close(r); return rc; }
  size_t block = BLOCK_BYTES / sizeof(float) / (size_t)cols;
  if (block < 1) block = 1;
  if (block > rows) block = rows ? (size_t)rows : 1;
  float *bufs = malloc(2 * block * (size_t)cols * sizeof(float));   /* two: one read while one is scored */
  if (!bufs) {
    smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory for a block of %zu rows", path, block);
  }
  int show = !quiet && isatty(STDERR_FILENO);
  double last = 0.0;
  uint64_t stop = end < rows ? end : rows;
  reader_thread rt;
  reader_start(&rt);
  int cur = 0;
  if (first < stop) {
    block_read b0 = { r, info, first, cols, (size_t)(stop - first < block ? stop - first : block), bufs, SMX_OK, "" };
    reader_submit(&rt, &b0);
  }
  for (uint64_t r0 = first; r0 < stop && !rc; r0 += block) {
    if (show && now_s() - last >= 0.2) {
      last = now_s();
      fputs("\rsmx: ", stderr);
      smx_cli_put_escaped(stderr, path);
      fprintf(stderr, " %3d%%", (int)(100.0 * (double)(r0 - first) / (double)(stop - first)));
      fflush(stderr);
    }
    if (cli_signal_caught()) { rc = smx_cli_fail(SMX_CLI_EXIT_INTERRUPTED, "interrupted while reading %s", path); break; }
    size_t nr = (size_t)(stop - r0 < block ? stop - r0 : block);
    reader_wait(&rt);   /* this block's read */
    if (rt.job.st != SMX_OK) {
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", rt.job.err);
      break;
    }
    float *x = bufs + (size_t)cur * block * (size_t)cols;
    cur ^= 1;
    if (r0 + nr < stop) {   /* the next block, into the other buffer, while this one is scored */
      uint64_t n1 = r0 + nr;
      block_read b = { r, info, n1, cols, (size_t)(stop - n1 < block ? stop - n1 : block),
                       bufs + (size_t)cur * block * (size_t)cols, SMX_OK, "" };
      reader_submit(&rt, &b);
    }
    if (!allow_nan) {
      size_t i = find_nan(x, nr * (size_t)cols);
      if (i < nr * (size_t)cols) {
        rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: row %llu has a NaN logit (scores would be NaN)", path,
                          (unsigned long long)(r0 + i / (size_t)cols));
        break;
      }
    }
    rc = fn(ctx, x, nr, (size_t)cols, r0);
  }
  reader_stop(&rt);   /* a read still in flight (after an error) ends before its buffer goes */
  if (show) fprintf(stderr, "\r\033[K");
  free(bufs);
  smx_npy_close(r);
  if (!rc) {
    *rows_out = rows;
    *cols_out = cols;
  }
  return rc;
}

typedef struct load_ctx { float *x; size_t cols; } load_ctx;
static int load_block(void *ctx, const float *x, size_t nr, size_t cols, uint64_t r0) {
  load_ctx *l = ctx;
  memcpy(l->x + (size_t)r0 * cols, x, nr * cols * sizeof(float));
  return 0;
}

int smx_cli_load_logits(const char *path, int quiet, uint64_t want_cols, const char *other, float **x, uint64_t *rows,
                        uint64_t *cols) {
  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  uint64_t count = smx_npy_reader_info(r)->count;
  smx_npy_close(r);
  if (count > SIZE_MAX / sizeof(float)) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: too large to load", path);
  load_ctx l = { malloc(count ? (size_t)count * sizeof(float) : 1), 0 };
  if (!l.x) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory loading it", path);
  int rc = smx_cli_stream_logits(path, quiet, want_cols, other, 0, rows, cols, load_block, &l);
  if (rc) { free(l.x); return rc; }
  *x = l.x;
  return 0;
}

int smx_cli_read_labels(const char *path, uint64_t n, uint64_t K, const char *logits_path, int64_t **labels) {
  char err[512];
  smx_npy_reader *r = NULL;
  if (smx_npy_open(path, &r, err, sizeof err) != SMX_OK) return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  const smx_npy_info *info = smx_npy_reader_info(r);
  int rc = 0;
  int one_d = info->ndim == 1, column = info->ndim == 2 && info->cols == 1;
  if (!one_d && !column) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: labels must be a 1-d array (shape (N,))", path);
  } else if (info->count != n) {
    rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: %llu labels for the %llu rows of %s", path,
                      (unsigned long long)info->count, (unsigned long long)n, logits_path);
  }
  if (rc) { smx_npy_close(r); return rc; }
  double *v = malloc((n ? (size_t)n : 1) * sizeof(double));
  int64_t *lab = malloc((n ? (size_t)n : 1) * sizeof(int64_t));
  if (!v || !lab) {
    free(v); free(lab); smx_npy_close(r);
    return smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: out of memory", path);
  }
  smx_status s = SMX_OK;
  if (n) s = one_d ? smx_npy_read_rows_f64(r, 0, 1, v, err, sizeof err) : smx_npy_read_rows_f64(r, 0, n, v, err, sizeof err);
  smx_npy_close(r);
  if (s != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
  for (uint64_t i = 0; i < n && !rc; i++) {
    if (!(v[i] >= 0.0 && v[i] < (double)K && v[i] == floor(v[i])))
      rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s: label %.17g at row %llu is not a class in [0, %llu) of %s", path, v[i],
                        (unsigned long long)i, (unsigned long long)K, logits_path);
    else lab[i] = (int64_t)v[i];
  }
  free(v);
  if (rc) { free(lab); return rc; }
  *labels = lab;
  return 0;
}
