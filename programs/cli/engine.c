/*
 * The engine of `smx softmax | log-softmax | logsumexp`: any axis of an N-d
 * array in bounded memory. In storage order the array is [outer, n, inner]
 * with n the length of the axis:
 *  - inner == 1 (the axis is the storage-last one): blocks of whole rows
 *    (computed straight from the mapped input with SMX_CLI_MMAP_IN=1, and
 *    into the mapped output with SMX_CLI_MMAP_OUT=1);
 *  - a slab [n, inner] fits a block: blocks of whole slabs, each transposed
 *    to [inner, n], computed, and transposed back; reads and writes stay
 *    sequential;
 *  - otherwise: per slab, column blocks [n, w] gathered from n places,
 *    transposed, computed, transposed back and scattered (out of order).
 * Each block is about BLOCK_BYTES per buffer (more only when one row is
 * longer). Results are written by a background thread while the next block
 * is computed (two output buffers), unless SMX_CLI_SYNC_WRITES is set, which
 * exists to measure the difference. SMX_CLI_BLOCK_BYTES overrides the block
 * size, so that tests reach every mode with small arrays.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/message.h"
#include "cli/stream.h"

#define DEFAULT_BLOCK_BYTES ((size_t)16 << 20)

static size_t block_bytes(void) {
  const char *v = getenv("SMX_CLI_BLOCK_BYTES");
  long long b = v ? atoll(v) : 0;
  return b >= 16 && b <= (1ll << 40) ? (size_t)b : DEFAULT_BLOCK_BYTES;
}

/* ---------------------------------------------------------- the writer */
typedef struct wjob {
  cli_ctype t;
  const unsigned char *buf;
  size_t pieces, len;       /* pieces of len elements, dense in buf          */
  uint64_t e0, stride;      /* piece i goes to elements e0 + i * stride ...  */
} wjob;

typedef struct writer {
  cli_sink *k;
  int threaded;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  wjob job;
  int has_job, quit;
  smx_status st;
  char err[512];
} writer;

static void do_job(writer *w, const wjob *j) {
  size_t es = cli_ctype_size(j->t);
  for (size_t i = 0; i < j->pieces && w->st == SMX_OK; i++)
    w->st = cli_sink_write(w->k, j->t, j->e0 + i * j->stride, j->buf + i * j->len * es, j->len, w->err, sizeof w->err);
}

static void *writer_main(void *arg) {
  writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->has_job && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->has_job) break;
    wjob j = w->job;
    pthread_mutex_unlock(&w->mu);
    if (w->st == SMX_OK) do_job(w, &j);  /* st is only written here while a job is out */
    pthread_mutex_lock(&w->mu);
    w->has_job = 0;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void writer_start(writer *w, cli_sink *k) {
  memset(w, 0, sizeof *w);
  w->k = k;
  const char *sync = getenv("SMX_CLI_SYNC_WRITES");
  if (sync && *sync && strcmp(sync, "0")) return;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->threaded = pthread_create(&w->th, NULL, writer_main, w) == 0;
  if (!w->threaded) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
  }
}

/* Waits for the job in flight; returns the writer's status. */
static smx_status writer_wait(writer *w) {
  if (!w->threaded) return w->st;
  pthread_mutex_lock(&w->mu);
  while (w->has_job) pthread_cond_wait(&w->cv, &w->mu);
  smx_status s = w->st;
  pthread_mutex_unlock(&w->mu);
  return s;
}

/* Hands j over (after the previous job finished). j->buf must stay untouched
 * until the next submit or wait returns. */
static smx_status writer_submit(writer *w, const wjob *j) {
  if (!w->threaded) {
    if (w->st == SMX_OK) do_job(w, j);
    return w->st;
  }
  smx_status s = writer_wait(w);
  if (s != SMX_OK) return s;
  pthread_mutex_lock(&w->mu);
  w->job = *j;
  w->has_job = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return SMX_OK;
}

static smx_status writer_stop(writer *w) {
  if (!w->threaded) return w->st;
  smx_status s = writer_wait(w);
  pthread_mutex_lock(&w->mu);
  w->quit = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  w->threaded = 0;
  return s;
}

/* ------------------------------------------------------------ helpers */
/* dst[j][i] = src[i][j] for an r x c matrix of esz-byte elements, in tiles. */
#define TRANSPOSE_T(T)                                                        \
  for (size_t i0 = 0; i0 < r; i0 += 32)                                      \
    for (size_t j0 = 0; j0 < c; j0 += 32) {                                  \
      size_t i1 = i0 + 32 < r ? i0 + 32 : r, j1 = j0 + 32 < c ? j0 + 32 : c; \
      for (size_t i = i0; i < i1; i++)                                       \
        for (size_t j = j0; j < j1; j++) ((T *)dst)[j * r + i] = ((const T *)src)[i * c + j]; \
    }
static void transpose(const void *src, void *dst, size_t r, size_t c, size_t esz) {
  if (esz == 8) { TRANSPOSE_T(uint64_t) }
  else if (esz == 4) { TRANSPOSE_T(uint32_t) }
  else { TRANSPOSE_T(uint16_t) }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct progress { int on; double last; const char *what; } progress;
static void progress_show(progress *p, uint64_t done, uint64_t total) {
  if (!p->on || total == 0) return;
  double t = now_s();
  if (t - p->last < 0.2) return;
  p->last = t;
  fputs("\rsmx: ", stderr);
  smx_cli_put_escaped(stderr, p->what);
  fprintf(stderr, " %3d%%", (int)(100.0 * (double)done / (double)total));
  fflush(stderr);
}

/* ------------------------------------------------------------- the plan */
typedef struct plan { uint64_t outer, n, inner; } plan;

static plan make_plan(int ndim, const uint64_t *st, int axis) {
  plan p = { 1, 1, 1 };
  for (int d = 0; d < ndim; d++) {
    if (d < axis) p.outer *= st[d];
    else if (d == axis) p.n = st[d];
    else p.inner *= st[d];
  }
  if (p.n == 0) { p.outer *= p.inner; p.inner = 1; }  /* no data: one empty row per output value */
  return p;
}

int cli_plan_random(int ndim, const uint64_t *st_shape, int axis, cli_ctype ct) {
  plan p = make_plan(ndim, st_shape, axis);
  return p.inner > 1 && p.n * p.inner > block_bytes() / cli_ctype_size(ct);
}

int cli_run(cli_src *s, cli_sink *k, const cli_run_args *a) {
  char err[512];
  uint64_t st[SMX_NPY_MAX_DIMS];
  for (int d = 0; d < s->ndim; d++) st[d] = s->fortran ? s->shape[s->ndim - 1 - d] : s->shape[d];
  plan p = make_plan(s->ndim, st, a->axis);
  int lse = a->op == CLI_LOGSUMEXP;
  cli_ctype ct = a->ct, vt = cli_out_type(a->op, ct);
  size_t cs = cli_ctype_size(ct), vs = cli_ctype_size(vt);
  size_t E = block_bytes() / cs;
  int mode = p.inner == 1 ? 0 : p.n * p.inner <= E ? 1 : 2;
  /* nothing to write: an empty reduced axis (softmax), or no output values
   * at all, as when an axis after the reduced one has size 0 */
  if ((!lse && p.n == 0) || p.outer == 0 || p.inner == 0) return SMX_CLI_EXIT_OK;

  /* per block: g rows (mode 0), g slabs (mode 1) or w columns of a slab (mode 2) */
  size_t g, xcount, ycount;
  if (mode == 0) {
    g = p.n && E / p.n ? E / p.n : 1;
    if (g > p.outer) g = p.outer ? (size_t)p.outer : 1;
    xcount = g * (size_t)p.n;
    ycount = lse ? g : xcount;
  } else if (mode == 1) {
    g = E / (size_t)(p.n * p.inner);
    if (g > p.outer) g = (size_t)p.outer;
    xcount = g * (size_t)(p.n * p.inner);
    ycount = lse ? g * (size_t)p.inner : xcount;
  } else {
    g = E / p.n ? E / (size_t)p.n : 1;
    xcount = g * (size_t)p.n;
    ycount = lse ? g : xcount;
  }
  unsigned char *xbuf = NULL, *tbuf = NULL, *ybuf[2] = { NULL, NULL };
  int rc = 0;
  tbuf = mode ? malloc(xcount * cs) : NULL;
  ybuf[0] = malloc(ycount * vs + 16);
  ybuf[1] = malloc(ycount * vs + 16);
  if ((mode && !tbuf) || !ybuf[0] || !ybuf[1]) {
    free(tbuf); free(ybuf[0]); free(ybuf[1]);
    return smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu values of %s", xcount, s->name);
  }
  writer w;
  writer_start(&w, k);
  progress pr = { a->progress, now_s(), a->what };
  uint64_t units = mode == 2 ? p.outer * ((p.inner + g - 1) / g) : (p.outer + g - 1) / g, unit = 0;
  int blk = 0;
  smx_status cs_st = SMX_OK;
  for (uint64_t o0 = 0; o0 < p.outer && !rc; o0 += mode == 2 ? 1 : g) {
    uint64_t cstep = mode == 2 ? g : p.inner;
    for (uint64_t c0 = 0; c0 < (mode == 2 ? p.inner : 1) && !rc; c0 += cstep, unit++, blk++) {
      progress_show(&pr, unit, units);
      if (*a->interrupted) { rc = SMX_CLI_EXIT_INTERRUPTED; break; }
      unsigned char *y = ybuf[blk & 1];
      wjob j = { vt, y, 1, 0, 0, 0 };
      if (mode == 0 || mode == 1) {
        size_t m = p.outer - o0 < g ? (size_t)(p.outer - o0) : g;
        size_t cnt = m * (size_t)(p.n * p.inner);
        const unsigned char *x = cli_src_peek(s, ct, o0 * p.n * p.inner, cnt);
        if (!x && cnt) {
          if (!xbuf && !(xbuf = malloc(xcount * cs))) {
            rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu values of %s", xcount, s->name);
            break;
          }
          if (cli_src_read(s, ct, o0 * p.n * p.inner, cnt, xbuf, err, sizeof err) != SMX_OK) {
            rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
            break;
          }
          x = xbuf;
        }
        if (!x) x = y;  /* no data (n == 0): any valid pointer */
        if (mode == 0) {
          j.len = lse ? m : cnt;
          j.e0 = lse ? o0 : o0 * p.n;
          unsigned char *direct = cli_sink_window(k, vt, j.e0, j.len);
          if (direct) j.pieces = 0;  /* computed straight into the output */
          cs_st = cli_compute(a->op, ct, x, direct ? direct : y, m, (size_t)p.n, &a->opt);
        } else {
          size_t slab = (size_t)(p.n * p.inner);
          for (size_t i = 0; i < m; i++) transpose(x + i * slab * cs, tbuf + i * slab * cs, (size_t)p.n, (size_t)p.inner, cs);
          cs_st = cli_compute(a->op, ct, tbuf, lse ? y : tbuf, m * (size_t)p.inner, (size_t)p.n, &a->opt);
          if (!lse)
            for (size_t i = 0; i < m; i++) transpose(tbuf + i * slab * cs, y + i * slab * vs, (size_t)p.inner, (size_t)p.n, cs);
          j.len = lse ? m * (size_t)p.inner : cnt;
          j.e0 = lse ? o0 * p.inner : o0 * p.n * p.inner;
        }
      } else {
        size_t wc = p.inner - c0 < g ? (size_t)(p.inner - c0) : g;
        if (!xbuf && !(xbuf = malloc(xcount * cs))) {
          rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu values of %s", xcount, s->name);
          break;
        }
        uint64_t base = o0 * p.n * p.inner + c0;
        for (uint64_t i = 0; i < p.n && !rc; i++)
          if (cli_src_read(s, ct, base + i * p.inner, wc, xbuf + i * wc * cs, err, sizeof err) != SMX_OK)
            rc = smx_cli_fail(SMX_CLI_EXIT_INPUT, "%s", err);
        if (rc) break;
        transpose(xbuf, tbuf, (size_t)p.n, wc, cs);
        cs_st = cli_compute(a->op, ct, tbuf, lse ? y : tbuf, wc, (size_t)p.n, &a->opt);
        if (lse) {
          j.len = wc;
          j.e0 = o0 * p.inner + c0;
        } else {
          transpose(tbuf, y, wc, (size_t)p.n, cs);
          j.pieces = (size_t)p.n;
          j.len = wc;
          j.e0 = base;
          j.stride = p.inner;
        }
      }
      if (cs_st != SMX_OK) {
        rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", s->name, smx_status_string(cs_st));
        break;
      }
      if (writer_submit(&w, &j) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", w.err);
    }
  }
  smx_status ws = writer_stop(&w);
  if (pr.on) fprintf(stderr, "\r\033[K");
  if (!rc && ws != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", w.err);
  free(xbuf);
  free(tbuf);
  free(ybuf[0]);
  free(ybuf[1]);
  return rc;
}
