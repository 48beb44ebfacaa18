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
/* Blocks of whole rows: small enough that the input block, read by one
 * pread, is still in the core's cache when the kernel reads it, and its
 * results when the writer writes them. On 1 GiB of 4096-column float32 rows
 * from the page cache (busy 2-core machine, medians of 9): score energy
 * 0.61 s against 0.74 s with 16 MiB blocks, softmax 1.98 s against 2.30 s. */
#define ROW_BLOCK_BYTES ((size_t)1 << 20)

/* SMX_CLI_BLOCK_BYTES, or 0 */
static size_t block_bytes_env(void) {
  const char *v = getenv("SMX_CLI_BLOCK_BYTES");
  long long b = v ? atoll(v) : 0;
  return b >= 16 && b <= (1ll << 40) ? (size_t)b : 0;
}

static size_t block_bytes(void) {
  size_t b = block_bytes_env();
  return b ? b : DEFAULT_BLOCK_BYTES;
}

/* ---------------------------------------------------------- the writer */
typedef struct wjob {
  cli_sink *k;              /* NULL: nothing to write                        */
  cli_ctype t;
  const unsigned char *buf;
  size_t pieces, len;       /* pieces of len elements, dense in buf          */
  uint64_t e0, stride;      /* piece i goes to elements e0 + i * stride ...  */
} wjob;

/* The writes of one block: one job per output. */
typedef struct wbatch { wjob j[CLI_MAX_OUT]; } wbatch;

typedef struct writer {
  int threaded;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  wbatch job;
  int has_job, quit;
  smx_status st;
  char err[512];
} writer;

static void do_job(writer *w, const wbatch *b) {
  for (int o = 0; o < CLI_MAX_OUT; o++) {
    const wjob *j = &b->j[o];
    if (!j->k || !j->len) continue;
    size_t es = cli_ctype_size(j->t);
    for (size_t i = 0; i < j->pieces && w->st == SMX_OK; i++)
      w->st = cli_sink_write(j->k, j->t, j->e0 + i * j->stride, j->buf + i * j->len * es, j->len, w->err,
                             sizeof w->err);
  }
}

static void *writer_main(void *arg) {
  writer *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->has_job && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->has_job) break;
    wbatch j = w->job;
    pthread_mutex_unlock(&w->mu);
    if (w->st == SMX_OK) do_job(w, &j);  /* st is only written here while a job is out */
    pthread_mutex_lock(&w->mu);
    w->has_job = 0;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void writer_start(writer *w) {
  memset(w, 0, sizeof *w);
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
static smx_status writer_submit(writer *w, const wbatch *j) {
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

/* The buffers of one output: y (two, one being written while the next
 * block is computed) in the output's storage layout, and r, the kernel's
 * rows x m result, when it must be transposed into y. */
typedef struct outbuf { unsigned char *y[2], *r; size_t vs; } outbuf;

/* dst[m][w] from src[w][m]: a result rows x m laid out as the output's
 * [m, rows] (a plain copy when m is 1). */
static void to_layout(const unsigned char *src, unsigned char *dst, size_t w, size_t m, size_t es) {
  if (m == 1) memcpy(dst, src, w * es);
  else transpose(src, dst, w, m, es);
}

int cli_run(cli_src *s, cli_sink *const *sinks, const cli_run_args *a) {
  char err[512];
  const cli_kernel *kn = a->kernel;
  uint64_t st[SMX_NPY_MAX_DIMS];
  for (int d = 0; d < s->ndim; d++) st[d] = s->fortran ? s->shape[s->ndim - 1 - d] : s->shape[d];
  plan p = make_plan(s->ndim, st, a->axis);
  cli_ctype ct = kn->ct;
  size_t cs = cli_ctype_size(ct);
  size_t E = block_bytes() / cs;
  int mode = p.inner == 1 ? 0 : p.n * p.inner <= E ? 1 : 2;
  /* nothing to compute: rows of length 0 that give nothing (softmax), or
   * no rows at all, as when an axis after the reduced one has size 0 */
  if ((!kn->empty_rows && p.n == 0) || p.outer == 0 || p.inner == 0) return SMX_CLI_EXIT_OK;

  /* per block: g rows (mode 0), g slabs (mode 1) or w columns of a slab (mode 2) */
  size_t g, xcount, rows_max;
  if (mode == 0) {
    if (!block_bytes_env()) E = ROW_BLOCK_BYTES / cs;
    g = p.n && E / p.n ? E / p.n : 1;
    if (g > p.outer) g = p.outer ? (size_t)p.outer : 1;
    xcount = g * (size_t)p.n;
    rows_max = g;
  } else if (mode == 1) {
    g = E / (size_t)(p.n * p.inner);
    if (g > p.outer) g = (size_t)p.outer;
    xcount = g * (size_t)(p.n * p.inner);
    rows_max = g * (size_t)p.inner;
  } else {
    g = E / p.n ? E / (size_t)p.n : 1;
    xcount = g * (size_t)p.n;
    rows_max = g;
  }
  unsigned char *xbuf = NULL, *tbuf = NULL;
  outbuf ob[CLI_MAX_OUT];
  memset(ob, 0, sizeof ob);
  int rc = 0, oom = 0;
  tbuf = mode ? malloc(xcount * cs) : NULL;
  oom = mode && !tbuf;
  for (int o = 0; o < kn->nout; o++) {
    size_t count = rows_max * (size_t)kn->m[o];
    ob[o].vs = cli_ctype_size(kn->vt[o]);
    /* +16: a valid buffer even for an output of no values */
    ob[o].y[0] = malloc(count * ob[o].vs + 16);
    ob[o].y[1] = malloc(count * ob[o].vs + 16);
    oom |= !ob[o].y[0] || !ob[o].y[1];
    /* modes 1 and 2 compute rows x m and transpose; output 0 of an
     * in-place kernel is computed over the transposed input instead */
    if (mode && kn->m[o] > 1 && !(o == 0 && kn->in_place)) oom |= !(ob[o].r = malloc(count * ob[o].vs));
  }
  if (oom) {
    rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "out of memory for a block of %zu values of %s", xcount, s->name);
    goto done;
  }
  writer w;
  writer_start(&w);
  progress pr = { a->progress, now_s(), a->what };
  uint64_t units = mode == 2 ? p.outer * ((p.inner + g - 1) / g) : (p.outer + g - 1) / g, unit = 0;
  int blk = 0;
  smx_status cs_st = SMX_OK;
  for (uint64_t o0 = 0; o0 < p.outer && !rc; o0 += mode == 2 ? 1 : g) {
    uint64_t cstep = mode == 2 ? g : p.inner;
    for (uint64_t c0 = 0; c0 < (mode == 2 ? p.inner : 1) && !rc; c0 += cstep, unit++, blk++) {
      progress_show(&pr, unit, units);
      if (*a->interrupted) { rc = SMX_CLI_EXIT_INTERRUPTED; break; }
      wbatch b;
      memset(&b, 0, sizeof b);
      void *res[CLI_MAX_OUT] = { NULL, NULL };  /* where the kernel puts rows x m[o] */
      size_t nrows;                              /* rows of this block               */
      uint64_t row0;
      const unsigned char *x;
      if (mode == 0 || mode == 1) {
        size_t m = p.outer - o0 < g ? (size_t)(p.outer - o0) : g;
        size_t cnt = m * (size_t)(p.n * p.inner);
        x = cli_src_peek(s, ct, o0 * p.n * p.inner, cnt);
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
        if (!x) x = ob[0].y[0];  /* no data (n == 0): any valid pointer */
        if (mode == 0) {
          nrows = m;
          row0 = o0;
          for (int o = 0; o < kn->nout; o++) {
            wjob *j = &b.j[o];
            *j = (wjob){ sinks[o], kn->vt[o], ob[o].y[blk & 1], 1, m * (size_t)kn->m[o], o0 * kn->m[o], 0 };
            unsigned char *direct = sinks[o] ? cli_sink_window(sinks[o], kn->vt[o], j->e0, j->len) : NULL;
            if (direct) j->k = NULL;  /* computed straight into the output */
            res[o] = direct ? direct : ob[o].y[blk & 1];
          }
        } else {
          size_t slab = (size_t)(p.n * p.inner);
          for (size_t i = 0; i < m; i++) transpose(x + i * slab * cs, tbuf + i * slab * cs, (size_t)p.n, (size_t)p.inner, cs);
          x = tbuf;
          nrows = m * (size_t)p.inner;
          row0 = o0 * p.inner;
          for (int o = 0; o < kn->nout; o++) {
            size_t mo = (size_t)kn->m[o];
            b.j[o] = (wjob){ sinks[o], kn->vt[o], ob[o].y[blk & 1], 1, m * mo * (size_t)p.inner, o0 * mo * p.inner, 0 };
            res[o] = mo <= 1 ? ob[o].y[blk & 1] : ob[o].r ? ob[o].r : tbuf;
          }
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
        x = tbuf;
        nrows = wc;
        row0 = o0 * p.inner + c0;
        for (int o = 0; o < kn->nout; o++) {
          size_t mo = (size_t)kn->m[o];
          b.j[o] = (wjob){ sinks[o], kn->vt[o], ob[o].y[blk & 1], mo, wc, o0 * mo * p.inner + c0, p.inner };
          res[o] = mo <= 1 ? ob[o].y[blk & 1] : ob[o].r ? ob[o].r : tbuf;
        }
      }
      cs_st = kn->rows(kn->ctx, x, res, nrows, (size_t)p.n, row0);
      if (cs_st != SMX_OK) {
        rc = smx_cli_fail(SMX_CLI_EXIT_COMPUTE, "%s: %s", s->name, smx_status_string(cs_st));
        break;
      }
      if (mode) {
        /* rows x m results into the output's [m, rows] layout, slab by slab */
        size_t per = mode == 1 ? (size_t)p.inner : nrows, nslab = nrows / per;
        for (int o = 0; o < kn->nout; o++) {
          size_t mo = (size_t)kn->m[o];
          if (mo <= 1) continue;
          for (size_t i = 0; i < nslab; i++)
            to_layout((unsigned char *)res[o] + i * per * mo * ob[o].vs, ob[o].y[blk & 1] + i * per * mo * ob[o].vs, per,
                      mo, ob[o].vs);
        }
      }
      if (writer_submit(&w, &b) != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", w.err);
    }
  }
  smx_status ws = writer_stop(&w);
  if (pr.on) fprintf(stderr, "\r\033[K");
  if (!rc && ws != SMX_OK) rc = smx_cli_fail(SMX_CLI_EXIT_OUTPUT, "%s", w.err);
done:
  free(xbuf);
  free(tbuf);
  for (int o = 0; o < CLI_MAX_OUT; o++) {
    free(ob[o].y[0]);
    free(ob[o].y[1]);
    free(ob[o].r);
  }
  return rc;
}
