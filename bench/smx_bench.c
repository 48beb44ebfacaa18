/*
 * smx_bench — smx softmax against oneDNN, XNNPACK and a plain C loop, next to
 * the machine's 2-read-1-write memory bandwidth.
 *
 *   smx_bench [--quick] [--cases a,b,...] [--threads 1,2] [--reps N]
 *             [--csv FILE] [--verbose]
 *
 * For every case (rows x cols, row-major, ld == cols) and thread count, each
 * contender is warmed up once, its output is sanity-checked (row sums, or the
 * log-sum-exp against a double reference), and then timed: a repetition runs
 * the contender `inner` times back to back (inner grows until a repetition
 * lasts at least MIN_REP_S, which matters only for the tiny cases) and the
 * reported time is the median over repetitions of (repetition time / inner).
 *
 * Columns:
 *   ns/elem   median time per call / (rows * cols)
 *   GB/s      12 bytes per element / median time. 12 bytes is two reads and one
 *             write of a float, the traffic of the ideal two-pass softmax on
 *             data that does not fit in cache and the same convention as the
 *             roof loop, so "roof" is a like-for-like fraction. (It is the same
 *             convention for every contender, log-sum-exp included.)
 *   vs-peer   peer time / this time, where the peer is the faster of oneDNN and
 *             XNNPACK softmax for that case and thread count (> 1: faster than
 *             the best peer). smx log-softmax is compared with oneDNN
 *             log-softmax instead (XNNPACK has none); log-sum-exp has no peer.
 *   roof      GB/s / the 2R1W roof GB/s measured for that thread count.
 * After each block, one "auto/best" line: per op (softmax, log-softmax,
 * log-sum-exp), AUTO's median time over the fastest fixed algorithm's, the
 * algorithm AUTO chose and the fastest one; OVER marks a ratio above 1.05.
 * AUTO and the algorithm it chose run the same code, so on a quiet machine
 * that ratio is 1 within the noise; it exceeds 1 where AUTO chose another.
 * --smx-only measures smx's algorithms alone (no peers, no roof), for that.
 *
 * The roof (c[i] = a[i] + b[i] over three arrays of 64Mi floats, split across
 * T pthreads, median of several repetitions) is measured first and used for
 * the fractions; it is measured again at the end only to show its drift.
 *
 * Shared machines: during each timed loop the benchmark compares the whole
 * machine's busy CPU time (/proc/stat) with its own; a row during which other
 * processes kept more than BUSY_LIMIT CPUs busy is marked BUSY. A row whose
 * output check (row sums, or log-sum-exp against a double reference, on the
 * first, middle and last row) is off by more than 1e-3 is marked CHECK.
 *
 * Threading of the peers:
 *   - smx: smx_options.threads.
 *   - XNNPACK: threadpool NULL (the calling thread) for 1 thread, and
 *     pthreadpool_create(T) (the caller plus T-1 workers) for T > 1. The pool is
 *     created per case and thread count and destroyed right after, so its
 *     workers never compete with the next contenders.
 *   - oneDNN: Debian builds it on the OpenMP runtime. The benchmark links the
 *     same OpenMP runtime (libgomp) and calls omp_set_num_threads(T) before it
 *     creates and runs the oneDNN primitives of a thread mode; oneDNN reads
 *     omp_get_max_threads() when it creates and executes a primitive. The
 *     primitive cache is switched off so that no primitive made for another
 *     thread count is reused. (Check: --verbose prints each contender's CPU
 *     time / wall time, about 1.0 for one thread.) Without OpenMP in the build,
 *     OMP_NUM_THREADS is set once before oneDNN starts and oneDNN runs only for
 *     the first thread count; a sequential oneDNN runs only for 1 thread; a
 *     TBB or threadpool oneDNN, whose thread count this benchmark cannot set,
 *     runs only for T == the number of online CPUs.
 *   - plain C loop: single-threaded, so it is measured for 1 thread only.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <smx/smx.h>

#include "tune/tune.h" /* the algorithm AUTO chooses, for the auto/best lines */

#ifdef SMX_BENCH_HAVE_DNNL
#  include <oneapi/dnnl/dnnl.h>
#endif
#ifdef SMX_BENCH_HAVE_OMP
#  include <omp.h>
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
#  include <xnnpack.h>
#endif

#define MAX_THREAD_MODES 16
#define MAX_CASES 64
#define MIN_REP_S 2e-4       /* a repetition lasts at least this long            */
#define MAX_REPS 20000
#define MIN_REPS 5
#define PAD_BYTES 64         /* >= XNN_EXTRA_BYTES: XNNPACK may read past the end */
#define BYTES_PER_ELEM 12.0  /* 2 reads + 1 write of a float                      */
#define ROOF_N ((size_t)64 << 20)
#define BUSY_LIMIT 0.15      /* flag a row when others used more CPU than this    */

/* ------------------------------------------------------------------ utils */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *alloc_floats(size_t n) {
  void *p = NULL;
  if (n > (SIZE_MAX - PAD_BYTES) / sizeof(float)) return NULL;
  if (posix_memalign(&p, 64, n * sizeof(float) + PAD_BYTES) != 0) return NULL;
  memset(p, 0, n * sizeof(float) + PAD_BYTES); /* fault the pages in now */
  return (float *)p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* splitmix64: fixed seed, uniform floats in [-10, 10). */
static uint64_t rng_state = 0x5eed5eed12345678ull;
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static void fill_uniform(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float u = (float)(rng_next() >> 40) * 0x1p-24f; /* [0, 1), exact */
    x[i] = -10.0f + 20.0f * u;
  }
}

/* Busy CPU seconds of the whole machine so far (all CPUs, from /proc/stat),
 * or -1 where that is not available. Compared with this process's CPU time it
 * tells whether something else ran during a measurement. */
static double machine_busy_s(void) {
  static long hz;
  unsigned long long v[8] = {0};
  if (!hz) hz = sysconf(_SC_CLK_TCK);
  FILE *f = fopen("/proc/stat", "r");
  if (!f || hz <= 0) {
    if (f) fclose(f);
    return -1.0;
  }
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                 &v[6], &v[7]);
  fclose(f);
  if (n < 8) return -1.0;
  /* user nice system idle iowait irq softirq steal: all but idle and iowait */
  return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
}

/* Average number of CPUs that other processes kept busy during a measurement
 * of `wall` seconds in which this process used `own` CPU seconds; -1 unknown.
 * /proc/stat counts clock ticks (usually 10 ms): less than 3 ticks is noise. */
static double others_cpus(double busy0, double busy1, double own, double wall) {
  if (busy0 < 0 || busy1 < 0 || wall <= 0) return -1.0;
  double other = busy1 - busy0 - own;
  return other > 3.0 / (double)sysconf(_SC_CLK_TCK) ? other / wall : 0.0;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------------ cases */

typedef struct bench_case {
  char name[48];
  size_t rows, cols;
} bench_case;

static const bench_case full_cases[] = {
  {"row-1Ki", 1, (size_t)1 << 10},
  {"row-16Ki", 1, (size_t)16 << 10},
  {"row-256Ki", 1, (size_t)256 << 10},
  {"row-4Mi", 1, (size_t)4 << 20},
  {"row-64Mi", 1, (size_t)64 << 20},
  {"batch-65536x1000", 65536, 1000},
  {"batch-4096x32000", 4096, 32000},
  {"batch-512x256000", 512, 256000},
};
/* --quick: no 64Mi row, batches shrunk to 4-8 Mi elements. */
static const bench_case quick_cases[] = {
  {"row-1Ki", 1, (size_t)1 << 10},
  {"row-16Ki", 1, (size_t)16 << 10},
  {"row-256Ki", 1, (size_t)256 << 10},
  {"row-4Mi", 1, (size_t)4 << 20},
  {"batch-4096x1000", 4096, 1000},
  {"batch-256x32000", 256, 32000},
  {"batch-32x256000", 32, 256000},
};
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* "123", "4Ki", "64Mi" */
static int parse_size(const char *s, const char **end, size_t *out) {
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  if (e == s || errno != 0) return -1;
  if (strncmp(e, "Ki", 2) == 0) { v <<= 10; e += 2; }
  else if (strncmp(e, "Mi", 2) == 0) { v <<= 20; e += 2; }
  if (v == 0) return -1;
  *out = (size_t)v;
  *end = e;
  return 0;
}

/* A known case name, or ROWSxCOLS (e.g. 1x16Ki, 128x4000). */
static int lookup_case(const char *name, bench_case *c) {
  for (size_t i = 0; i < NELEMS(full_cases); i++)
    if (strcmp(name, full_cases[i].name) == 0) { *c = full_cases[i]; return 0; }
  for (size_t i = 0; i < NELEMS(quick_cases); i++)
    if (strcmp(name, quick_cases[i].name) == 0) { *c = quick_cases[i]; return 0; }
  const char *p;
  size_t r, k;
  if (parse_size(name, &p, &r) != 0 || *p != 'x') return -1;
  if (parse_size(p + 1, &p, &k) != 0 || *p != '\0') return -1;
  if (r > SIZE_MAX / k / 64) return -1;
  snprintf(c->name, sizeof c->name, "%s", name);
  c->rows = r;
  c->cols = k;
  return 0;
}

/* ------------------------------------------------------------- contenders */

enum { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LSE };
enum { PEER_NONE, PEER_SOFTMAX, PEER_LOG_SOFTMAX };

/* Every smx contender (up to C_SMX_LAST) is one op with one algorithm: each
 * op's AUTO is printed next to its three fixed algorithms, and the block ends
 * with AUTO's time over the fastest fixed one's per op ("auto/best"). */
enum {
  C_SMX_AUTO, C_SMX_THREE_PASS, C_SMX_TWO_PASS, C_SMX_ONLINE,
  C_SMX_LOG_SOFTMAX, C_SMX_LOG_THREE_PASS, C_SMX_LOG_TWO_PASS, C_SMX_LOG_ONLINE,
  C_SMX_LSE, C_SMX_LSE_THREE_PASS, C_SMX_LSE_TWO_PASS, C_SMX_LSE_ONLINE,
  C_PLAIN, C_DNNL, C_DNNL_LOG, C_XNNPACK,
  C_COUNT
};
#define C_SMX_LAST C_SMX_LSE_ONLINE

static const struct {
  const char *name;
  int op;
  int peer;     /* this contender is a peer of that kind          */
  int compare;  /* whose peer it is compared with (PEER_NONE: -)  */
  smx_algo algo; /* smx contenders only */
} contenders[C_COUNT] = {
  [C_SMX_AUTO] = {"smx-auto", OP_SOFTMAX, PEER_NONE, PEER_SOFTMAX, SMX_ALGO_AUTO},
  [C_SMX_THREE_PASS] = {"smx-three-pass", OP_SOFTMAX, PEER_NONE, PEER_SOFTMAX, SMX_ALGO_THREE_PASS},
  [C_SMX_TWO_PASS] = {"smx-two-pass", OP_SOFTMAX, PEER_NONE, PEER_SOFTMAX, SMX_ALGO_TWO_PASS},
  [C_SMX_ONLINE] = {"smx-online", OP_SOFTMAX, PEER_NONE, PEER_SOFTMAX, SMX_ALGO_ONLINE},
  [C_SMX_LOG_SOFTMAX] = {"smx-log-softmax", OP_LOG_SOFTMAX, PEER_NONE, PEER_LOG_SOFTMAX, SMX_ALGO_AUTO},
  [C_SMX_LOG_THREE_PASS] = {"smx-log-three-pass", OP_LOG_SOFTMAX, PEER_NONE, PEER_LOG_SOFTMAX, SMX_ALGO_THREE_PASS},
  [C_SMX_LOG_TWO_PASS] = {"smx-log-two-pass", OP_LOG_SOFTMAX, PEER_NONE, PEER_LOG_SOFTMAX, SMX_ALGO_TWO_PASS},
  [C_SMX_LOG_ONLINE] = {"smx-log-online", OP_LOG_SOFTMAX, PEER_NONE, PEER_LOG_SOFTMAX, SMX_ALGO_ONLINE},
  [C_SMX_LSE] = {"smx-logsumexp", OP_LSE, PEER_NONE, PEER_NONE, SMX_ALGO_AUTO},
  [C_SMX_LSE_THREE_PASS] = {"smx-lse-three-pass", OP_LSE, PEER_NONE, PEER_NONE, SMX_ALGO_THREE_PASS},
  [C_SMX_LSE_TWO_PASS] = {"smx-lse-two-pass", OP_LSE, PEER_NONE, PEER_NONE, SMX_ALGO_TWO_PASS},
  [C_SMX_LSE_ONLINE] = {"smx-lse-online", OP_LSE, PEER_NONE, PEER_NONE, SMX_ALGO_ONLINE},
  [C_PLAIN] = {"plain-c", OP_SOFTMAX, PEER_NONE, PEER_SOFTMAX, SMX_ALGO_AUTO /* unused */},
  [C_DNNL] = {"onednn", OP_SOFTMAX, PEER_SOFTMAX, PEER_SOFTMAX, SMX_ALGO_AUTO},
  [C_DNNL_LOG] = {"onednn-log-softmax", OP_LOG_SOFTMAX, PEER_LOG_SOFTMAX, PEER_LOG_SOFTMAX, SMX_ALGO_AUTO},
  [C_XNNPACK] = {"xnnpack", OP_SOFTMAX, PEER_SOFTMAX, PEER_SOFTMAX, SMX_ALGO_AUTO},
};

typedef struct run_ctx {
  float *x, *y, *lse;
  size_t rows, cols;
  int threads;
  int avail[C_COUNT];
#ifdef SMX_BENCH_HAVE_DNNL
  dnnl_memory_t dnnl_src, dnnl_dst;
  dnnl_primitive_t dnnl_prim[2]; /* softmax, log-softmax */
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
  xnn_operator_t xnn_op;
  pthreadpool_t xnn_pool;
#endif
} run_ctx;

/* The plain C loop: max; exp, store and sum; scale by 1/sum. The sum is kept
 * in double so that rows of 64Mi floats still sum to 1. */
static void plain_softmax_rows(const float *x, float *y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (size_t j = 0; j < cols; j++)
      if (xr[j] > m) m = xr[j];
    double s = 0.0;
    for (size_t j = 0; j < cols; j++) {
      float e = expf(xr[j] - m);
      yr[j] = e;
      s += e;
    }
    float inv = (float)(1.0 / s);
    for (size_t j = 0; j < cols; j++) yr[j] *= inv;
  }
}

#ifdef SMX_BENCH_HAVE_DNNL
static dnnl_engine_t dnnl_eng;
static dnnl_stream_t dnnl_strm;
static int dnnl_ok;

static int dnnl_run(const run_ctx *c, int which) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, c->dnnl_src}, {DNNL_ARG_DST, c->dnnl_dst}};
  if (dnnl_primitive_execute(c->dnnl_prim[which], dnnl_strm, 2, args) != dnnl_success) return -1;
  return dnnl_stream_wait(dnnl_strm) == dnnl_success ? 0 : -1;
}
#endif

static int run_once(run_ctx *c, int id) {
  smx_options o;
  memset(&o, 0, sizeof o);
  o.threads = c->threads;
  if (id <= C_SMX_LAST) {
    o.algo = contenders[id].algo;
    smx_status st;
    if (contenders[id].op == OP_SOFTMAX)
      st = smx_softmax_rows_f32(c->x, c->cols, c->y, c->cols, c->rows, c->cols, &o);
    else if (contenders[id].op == OP_LOG_SOFTMAX)
      st = smx_log_softmax_rows_f32(c->x, c->cols, c->y, c->cols, c->rows, c->cols, &o);
    else
      st = smx_logsumexp_rows_f32(c->x, c->cols, c->lse, c->rows, c->cols, &o);
    return st == SMX_OK ? 0 : -1;
  }
  switch (id) {
  case C_PLAIN:
    plain_softmax_rows(c->x, c->y, c->rows, c->cols);
    return 0;
#ifdef SMX_BENCH_HAVE_DNNL
  case C_DNNL: return dnnl_run(c, 0);
  case C_DNNL_LOG: return dnnl_run(c, 1);
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
  case C_XNNPACK: return xnn_run_operator(c->xnn_op, c->xnn_pool) == xnn_status_success ? 0 : -1;
#endif
  default: return -1;
  }
}

/* ---------------------------------------------------------- output check */

static void rows_to_check(size_t rows, size_t idx[3], int *n) {
  idx[0] = 0;
  *n = 1;
  if (rows > 2) idx[(*n)++] = rows / 2;
  if (rows > 1) idx[(*n)++] = rows - 1;
}

/* Poisons the outputs that check_output will read (NaN bytes), so that a
 * contender that writes nothing cannot pass on a previous contender's output. */
static void poison_checked(run_ctx *c, int op) {
  size_t idx[3];
  int n;
  rows_to_check(c->rows, idx, &n);
  for (int i = 0; i < n; i++) {
    if (op == OP_LSE) memset(c->lse + idx[i], 0xff, sizeof(float));
    else memset(c->y + idx[i] * c->cols, 0xff, c->cols * sizeof(float));
  }
}

/* Largest deviation over a few rows: |sum(y) - 1| for softmax,
 * |sum(exp(y)) - 1| for log-softmax, relative log-sum-exp error. */
static double check_output(const run_ctx *c, int op) {
  size_t idx[3];
  int n;
  double worst = 0.0;
  rows_to_check(c->rows, idx, &n);
  for (int i = 0; i < n; i++) {
    const float *xr = c->x + idx[i] * c->cols;
    const float *yr = c->y + idx[i] * c->cols;
    double dev;
    if (op == OP_LSE) {
      double m = -INFINITY, s = 0.0;
      for (size_t j = 0; j < c->cols; j++) if (xr[j] > m) m = xr[j];
      for (size_t j = 0; j < c->cols; j++) s += exp((double)xr[j] - m);
      double ref = m + log(s);
      dev = fabs((double)c->lse[idx[i]] - ref) / fmax(1.0, fabs(ref));
    } else {
      double s = 0.0;
      for (size_t j = 0; j < c->cols; j++) {
        double v = op == OP_SOFTMAX ? (double)yr[j] : exp((double)yr[j]);
        if (!(v >= 0.0 && v <= 1.0 + 1e-6)) return INFINITY;
        s += v;
      }
      dev = fabs(s - 1.0);
    }
    if (!(dev <= worst)) worst = dev; /* NaN propagates as "worst" */
  }
  return worst;
}

/* ------------------------------------------------------------ measurement */

typedef struct result {
  int valid;
  double t;       /* median seconds per call */
  double dev;     /* check_output            */
  double cpu;     /* CPU time / wall time    */
  double other;   /* CPUs used by other processes meanwhile (average), -1: unknown */
  long inner;
  int reps;
} result;

static int measure(run_ctx *c, int id, double target_s, int fixed_reps, result *r) {
  memset(r, 0, sizeof *r);
  poison_checked(c, contenders[id].op);
  double tw = now_s();
  if (run_once(c, id) != 0) return -1; /* warm-up */
  tw = now_s() - tw;
  r->dev = check_output(c, contenders[id].op);

  long inner = 1;
  double t;
  for (;;) {
    double t0 = now_s();
    for (long i = 0; i < inner; i++)
      if (run_once(c, id) != 0) return -1;
    t = now_s() - t0;
    if (t >= MIN_REP_S || inner >= (1L << 22)) break;
    long grow = t > 0 ? (long)(MIN_REP_S / t * 1.25) + 1 : 16;
    inner *= grow < 2 ? 2 : (grow > 1024 ? 1024 : grow);
  }
  if (inner == 1 && tw < t) t = tw; /* one call each: the smaller is the better estimate */
  int reps = fixed_reps;
  if (reps <= 0) {
    double want = ceil(target_s / t);
    reps = want < MIN_REPS ? MIN_REPS : (want > MAX_REPS ? MAX_REPS : (int)want);
  }
  double *times = malloc((size_t)reps * sizeof *times);
  if (!times) return -1;
  int bad = 0;
  double w0 = now_s(), c0 = cpu_s(), m0 = machine_busy_s();
  for (int k = 0; k < reps; k++) {
    double t0 = now_s();
    for (long i = 0; i < inner; i++) bad |= run_once(c, id);
    times[k] = (now_s() - t0) / (double)inner;
  }
  double wall = now_s() - w0;
  double own = cpu_s() - c0, m1 = machine_busy_s();
  r->cpu = wall > 0 ? own / wall : 0.0;
  r->other = others_cpus(m0, m1, own, wall);
  r->t = median(times, (size_t)reps);
  free(times);
  if (bad) return -1;
  r->valid = 1;
  r->inner = inner;
  r->reps = reps;
  return 0;
}

/* Like measure(), for one op's AUTO and fixed algorithms together: their
 * repetitions take turns, so that a disturbance from other processes falls on
 * all of them alike and AUTO's time over the best fixed one's is fair. */
#define GROUP_MAX 4
static void measure_group(run_ctx *c, const int *ids, int n, double target_s, int fixed_reps, result *res) {
  long inner[GROUP_MAX];
  double rep_t = 0.0;
  int live[GROUP_MAX];
  for (int k = 0; k < n; k++) {
    result *r = &res[ids[k]];
    memset(r, 0, sizeof *r);
    live[k] = 0;
    poison_checked(c, contenders[ids[k]].op);
    if (run_once(c, ids[k]) != 0) continue; /* warm-up */
    r->dev = check_output(c, contenders[ids[k]].op);
    long in = 1;
    double t;
    for (;;) {
      double t0 = now_s();
      int bad = 0;
      for (long i = 0; i < in; i++) bad |= run_once(c, ids[k]);
      t = now_s() - t0;
      if (bad) break;
      if (t >= MIN_REP_S || in >= (1L << 22)) break;
      long grow = t > 0 ? (long)(MIN_REP_S / t * 1.25) + 1 : 16;
      in *= grow < 2 ? 2 : (grow > 1024 ? 1024 : grow);
    }
    inner[k] = in;
    live[k] = 1;
    rep_t += t;
  }
  int reps = fixed_reps;
  if (reps <= 0) {
    /* each contender gets about target_s, as with measure() */
    double want = rep_t > 0 ? ceil(target_s * n / rep_t) : MIN_REPS;
    reps = want < MIN_REPS ? MIN_REPS : (want > MAX_REPS ? MAX_REPS : (int)want);
  }
  double *times = malloc((size_t)reps * (size_t)n * sizeof *times);
  if (!times) return;
  int bad[GROUP_MAX] = {0};
  double w0 = now_s(), c0 = cpu_s(), m0 = machine_busy_s();
  for (int q = 0; q < reps; q++) {
    for (int j = 0; j < n; j++) {
      int k = (j + q) % n; /* each round starts with the next one: no contender always follows the same one */
      if (!live[k]) continue;
      double t0 = now_s();
      for (long i = 0; i < inner[k]; i++) bad[k] |= run_once(c, ids[k]);
      times[(size_t)k * (size_t)reps + (size_t)q] = (now_s() - t0) / (double)inner[k];
    }
  }
  double wall = now_s() - w0;
  double own = cpu_s() - c0, m1 = machine_busy_s();
  for (int k = 0; k < n; k++) {
    result *r = &res[ids[k]];
    if (!live[k] || bad[k]) continue;
    r->cpu = wall > 0 ? own / wall : 0.0;
    r->other = others_cpus(m0, m1, own, wall);
    r->t = median(times + (size_t)k * (size_t)reps, (size_t)reps);
    r->valid = 1;
    r->inner = inner[k];
    r->reps = reps;
  }
  free(times);
}

/* ----------------------------------------------------------- 2R1W roof */

typedef struct roof_shared {
  float *a, *b, *c;
  size_t n;
  int threads;
  int stop;
  pthread_barrier_t start, end;
} roof_shared;

typedef struct roof_worker {
  roof_shared *s;
  int id;
} roof_worker;

static void add_part(roof_shared *s, int id) {
  size_t lo = s->n * (size_t)id / (size_t)s->threads;
  size_t hi = s->n * (size_t)(id + 1) / (size_t)s->threads;
  float *restrict c = s->c;
  const float *restrict a = s->a;
  const float *restrict b = s->b;
  for (size_t i = lo; i < hi; i++) c[i] = a[i] + b[i];
}

static void *roof_main(void *arg) {
  roof_worker *w = arg;
  for (;;) {
    pthread_barrier_wait(&w->s->start);
    if (w->s->stop) break;
    add_part(w->s, w->id);
    pthread_barrier_wait(&w->s->end);
  }
  return NULL;
}

/* Median GB/s of c[i] = a[i] + b[i] with `threads` threads, 12 bytes/element. */
static double measure_roof(roof_shared *s, int threads, int reps, double *other, double *cpu) {
  pthread_t tid[MAX_THREAD_MODES * 4];
  roof_worker w[MAX_THREAD_MODES * 4];
  double times[64];
  int started = 0;
  if (reps > 64) reps = 64;
  s->threads = threads;
  s->stop = 0;
  pthread_barrier_init(&s->start, NULL, (unsigned)threads);
  pthread_barrier_init(&s->end, NULL, (unsigned)threads);
  for (int i = 1; i < threads; i++) {
    w[i].s = s;
    w[i].id = i;
    if (pthread_create(&tid[i], NULL, roof_main, &w[i]) != 0) break;
    started++;
  }
  double gbps = 0.0;
  *other = -1.0;
  *cpu = 0.0;
  if (started == threads - 1) {
    double w0 = 0, c0 = 0, m0 = 0;
    for (int k = -1; k < reps; k++) { /* k == -1: warm-up */
      if (k == 0) { w0 = now_s(); c0 = cpu_s(); m0 = machine_busy_s(); }
      double t0 = now_s();
      pthread_barrier_wait(&s->start);
      add_part(s, 0);
      pthread_barrier_wait(&s->end);
      if (k >= 0) times[k] = now_s() - t0;
    }
    double wall = now_s() - w0, own = cpu_s() - c0, m1 = machine_busy_s();
    *other = others_cpus(m0, m1, own, wall);
    *cpu = wall > 0 ? own / wall : 0.0;
    gbps = BYTES_PER_ELEM * (double)s->n / median(times, (size_t)reps) / 1e9;
    s->stop = 1;
    pthread_barrier_wait(&s->start);
  } else {
    fprintf(stderr, "smx_bench: could not start roof threads\n");
    /* the started workers wait on a barrier that can never fill: leave them */
    return 0.0;
  }
  for (int i = 1; i < threads; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&s->start);
  pthread_barrier_destroy(&s->end);
  return gbps;
}

/* Measures the roof for each thread count into gbps[] and prints it (with the
 * earlier value `before` when given). Returns -1 when out of memory. */
static int verbose;
static int busy_rows; /* rows measured while other processes used the CPUs */

static int run_roof(const int *modes, int nmodes, int reps, double *gbps, const double *before) {
  roof_shared s;
  memset(&s, 0, sizeof s);
  s.n = ROOF_N;
  s.a = alloc_floats(s.n);
  s.b = alloc_floats(s.n);
  s.c = alloc_floats(s.n);
  if (!s.a || !s.b || !s.c) {
    fprintf(stderr, "smx_bench: out of memory for the roof arrays\n");
    free(s.a);
    free(s.b);
    free(s.c);
    return -1;
  }
  for (size_t i = 0; i < s.n; i++) {
    s.a[i] = (float)(i & 1023);
    s.b[i] = 0.5f;
  }
  for (int m = 0; m < nmodes; m++) {
    double other, cpu;
    gbps[m] = measure_roof(&s, modes[m], reps, &other, &cpu);
    printf("  %2d thread%s: %6.2f GB/s", modes[m], modes[m] == 1 ? " " : "s", gbps[m]);
    if (before) printf(" (at the start: %.2f GB/s)", before[m]);
    if (verbose) printf("   cpu/wall %.2f, others %.2f", cpu, other);
    if (other > BUSY_LIMIT) {
      printf("   BUSY: other processes used %.2f CPUs", other);
      busy_rows++;
    }
    printf("\n");
  }
  volatile float sink = s.c[s.n / 2];
  (void)sink;
  free(s.a);
  free(s.b);
  free(s.c);
  fflush(stdout);
  return 0;
}

/* ---------------------------------------------------------- peer setup */

#ifdef SMX_BENCH_HAVE_DNNL
static const char *dnnl_runtime_name(unsigned rt) {
  switch (rt) {
  case DNNL_RUNTIME_SEQ: return "sequential";
  case DNNL_RUNTIME_OMP: return "OpenMP";
  case DNNL_RUNTIME_TBB: return "TBB";
  case DNNL_RUNTIME_THREADPOOL: return "threadpool";
  default: return "other";
  }
}

/* Whether oneDNN results for `threads` are trustworthy, given how its thread
 * count can be set (see the comment at the top). */
static int dnnl_first_threads;
static int dnnl_threads_ok(int threads) {
  unsigned rt = dnnl_version()->cpu_runtime;
  if (rt == DNNL_RUNTIME_SEQ) return threads == 1;
  if (rt == DNNL_RUNTIME_OMP) {
#ifdef SMX_BENCH_HAVE_OMP
    return 1;
#else
    return threads == dnnl_first_threads;
#endif
  }
  return threads == online_cpus();
}

static void dnnl_set_threads(int threads) {
#ifdef SMX_BENCH_HAVE_OMP
  if (dnnl_version()->cpu_runtime == DNNL_RUNTIME_OMP) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

static void dnnl_teardown(run_ctx *c) {
  for (int i = 0; i < 2; i++)
    if (c->dnnl_prim[i]) dnnl_primitive_destroy(c->dnnl_prim[i]);
  if (c->dnnl_src) dnnl_memory_destroy(c->dnnl_src);
  if (c->dnnl_dst) dnnl_memory_destroy(c->dnnl_dst);
  c->dnnl_prim[0] = c->dnnl_prim[1] = NULL;
  c->dnnl_src = c->dnnl_dst = NULL;
}

static void dnnl_setup(run_ctx *c) {
  if (!dnnl_ok || !dnnl_threads_ok(c->threads)) return;
  dnnl_set_threads(c->threads);
  dnnl_memory_desc_t md;
  dnnl_dims_t dims = {(dnnl_dim_t)c->rows, (dnnl_dim_t)c->cols};
  if (dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab) != dnnl_success) return;
  if (dnnl_memory_create(&c->dnnl_src, &md, dnnl_eng, c->x) != dnnl_success ||
      dnnl_memory_create(&c->dnnl_dst, &md, dnnl_eng, c->y) != dnnl_success) {
    dnnl_teardown(c);
    return;
  }
  const dnnl_alg_kind_t alg[2] = {dnnl_softmax_accurate, dnnl_softmax_log};
  for (int i = 0; i < 2; i++) {
    dnnl_softmax_v2_desc_t sd;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference, alg[i], &md, &md, 1) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &sd, NULL, dnnl_eng, NULL) != dnnl_success) {
      fprintf(stderr, "smx_bench: oneDNN softmax (%s) unavailable for %zux%zu\n", i ? "log" : "accurate",
              c->rows, c->cols);
      continue;
    }
    if (dnnl_primitive_create(&c->dnnl_prim[i], pd) != dnnl_success) c->dnnl_prim[i] = NULL;
    dnnl_primitive_desc_destroy(pd);
  }
  c->avail[C_DNNL] = c->dnnl_prim[0] != NULL;
  c->avail[C_DNNL_LOG] = c->dnnl_prim[1] != NULL;
}
#endif

#ifdef SMX_BENCH_HAVE_XNNPACK
static int xnn_ok;

static void xnn_teardown(run_ctx *c) {
  if (c->xnn_op) xnn_delete_operator(c->xnn_op);
  if (c->xnn_pool) pthreadpool_destroy(c->xnn_pool);
  c->xnn_op = NULL;
  c->xnn_pool = NULL;
}

static void xnn_setup(run_ctx *c) {
  if (!xnn_ok) return;
  if (c->threads > 1) {
    c->xnn_pool = pthreadpool_create((size_t)c->threads);
    if (!c->xnn_pool) {
      fprintf(stderr, "smx_bench: pthreadpool_create(%d) failed\n", c->threads);
      return;
    }
  }
  if (xnn_create_softmax_nc_f32(c->cols, c->cols, c->cols, 0, &c->xnn_op) != xnn_status_success ||
      xnn_setup_softmax_nc_f32(c->xnn_op, c->rows, c->x, c->y, c->xnn_pool) != xnn_status_success) {
    fprintf(stderr, "smx_bench: XNNPACK softmax unavailable for %zux%zu\n", c->rows, c->cols);
    xnn_teardown(c);
    return;
  }
  c->avail[C_XNNPACK] = 1;
}
#endif

/* ---------------------------------------------------------------- output */

static FILE *csv;

static void fmt_or_dash(char *buf, size_t n, const char *fmt, double v, int ok) {
  if (ok) snprintf(buf, n, fmt, v);
  else snprintf(buf, n, "-");
}

/* Per op: AUTO's time over the fastest fixed algorithm's, the algorithm AUTO
 * chose (src/tune/) and the fastest one. */
static void print_auto_ratio(const bench_case *bc, int threads, const result *res) {
  static const char *const op_name[3] = {"softmax", "log-softmax", "logsumexp"};
  static const char *const algo_name[4] = {"auto", "three-pass", "two-pass", "online"};
  static const smx_op tune_op[3] = {SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP};
  printf("%-18s %3d  auto/best:", bc->name, threads);
  for (int op = 0; op < 3; op++) {
    int auto_id = -1, best_id = -1;
    for (int id = 0; id <= C_SMX_LAST; id++) {
      if (contenders[id].op != op || !res[id].valid) continue;
      if (contenders[id].algo == SMX_ALGO_AUTO) auto_id = id;
      else if (best_id < 0 || res[id].t < res[best_id].t) best_id = id;
    }
    if (auto_id < 0 || best_id < 0) continue;
    smx_algo chosen = smx_tune_pick_f32(smx_tune_table_for(smx_isa()), tune_op[op], bc->rows, bc->cols);
    double r = res[auto_id].t / res[best_id].t;
    printf("  %s %.3f (%s; best %s)%s", op_name[op], r, algo_name[chosen], algo_name[contenders[best_id].algo],
           r > 1.05 ? " OVER" : "");
  }
  printf("\n");
}

/* The algorithm a contender ran ("" for the peers): AUTO's is the one it chose. */
static const char *algo_of(const bench_case *bc, int id) {
  static const char *const algo_name[4] = {"auto", "three-pass", "two-pass", "online"};
  static const smx_op tune_op[3] = {SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP};
  if (id > C_SMX_LAST) return "";
  smx_algo a = contenders[id].algo;
  if (a == SMX_ALGO_AUTO)
    a = smx_tune_pick_f32(smx_tune_table_for(smx_isa()), tune_op[contenders[id].op], bc->rows, bc->cols);
  return algo_name[a];
}

static void print_block(const bench_case *bc, int threads, const run_ctx *c, const result *res, double roof) {
  double elems = (double)bc->rows * (double)bc->cols;
  double best[3] = {0, 0, 0};
  const char *best_name[3] = {NULL, NULL, NULL};
  for (int id = 0; id < C_COUNT; id++) {
    int p = contenders[id].peer;
    if (p == PEER_NONE || !res[id].valid) continue;
    if (!best_name[p] || res[id].t < best[p]) { best[p] = res[id].t; best_name[p] = contenders[id].name; }
  }
  for (int id = 0; id < C_COUNT; id++) {
    if (!c->avail[id]) continue;
    char ns[32], gb[32], ratio[32], frac[32];
    if (!res[id].valid) {
      printf("%-18s %3d  %-20s %10s\n", bc->name, threads, contenders[id].name, "FAILED");
      if (csv) fprintf(csv, "%s,%d,%s,,,,,%zu,%zu,,,,\n", bc->name, threads, contenders[id].name, bc->rows, bc->cols);
      continue;
    }
    double t = res[id].t;
    double gbps = BYTES_PER_ELEM * elems / t / 1e9;
    int cmp = contenders[id].compare;
    int have_ratio = cmp != PEER_NONE && best_name[cmp] != NULL;
    double r = have_ratio ? best[cmp] / t : 0.0;
    fmt_or_dash(ns, sizeof ns, "%.4f", t * 1e9 / elems, 1);
    fmt_or_dash(gb, sizeof gb, "%.2f", gbps, 1);
    fmt_or_dash(ratio, sizeof ratio, "%.2f", r, have_ratio);
    fmt_or_dash(frac, sizeof frac, "%.3f", gbps / roof, roof > 0);
    printf("%-18s %3d  %-20s %10s %9s %8s %7s", bc->name, threads, contenders[id].name, ns, gb, ratio, frac);
    if (verbose)
      printf("   reps %d x %ld, cpu/wall %.2f, others %.2f, check %.1e", res[id].reps, res[id].inner, res[id].cpu,
             res[id].other, res[id].dev);
    if (!(res[id].dev <= 1e-3)) printf("   CHECK: output off by %.3g (row-sum or lse error)", res[id].dev);
    if (res[id].other > BUSY_LIMIT) {
      printf("   BUSY: other processes used %.2f CPUs", res[id].other);
      busy_rows++;
    }
    printf("\n");
    if (csv)
      fprintf(csv, "%s,%d,%s,%.6f,%.4f,%s,%s,%zu,%zu,%d,%.9g,%s,%s\n", bc->name, threads, contenders[id].name,
              t * 1e9 / elems, gbps, have_ratio ? ratio : "", roof > 0 ? frac : "", bc->rows, bc->cols,
              res[id].reps, t, have_ratio ? best_name[cmp] : "", algo_of(bc, id));
  }
  print_auto_ratio(bc, threads, res);
  fflush(stdout);
  if (csv) fflush(csv);
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f) {
  fprintf(f,
          "usage: smx_bench [--quick] [--smx-only] [--cases NAME,...] [--threads 1,2] [--reps N] [--csv FILE]\n"
          "                 [--verbose]\n"
          "  --quick        smaller cases and shorter timing (well under half a minute)\n"
          "  --smx-only     smx's algorithms only: no peers, no plain C loop, no roof (AUTO against\n"
          "                 the fixed algorithms)\n"
          "  --cases LIST   case names (below) or ROWSxCOLS, e.g. 1x16Ki,128x4000\n"
          "  --threads LIST thread counts (default 1,2)\n"
          "  --reps N       timed repetitions per contender (default: ~0.3 s, at least %d)\n"
          "  --csv FILE     also write the results as CSV\n"
          "  --verbose      reps, CPU time / wall time and output-check deviation per row\n"
          "cases:",
          MIN_REPS);
  for (size_t i = 0; i < NELEMS(full_cases); i++) fprintf(f, " %s", full_cases[i].name);
  fprintf(f, "\nquick cases:");
  for (size_t i = 0; i < NELEMS(quick_cases); i++) fprintf(f, " %s", quick_cases[i].name);
  fprintf(f, "\n");
}

int main(int argc, char **argv) {
  int quick = 0, fixed_reps = 0, smx_only = 0;
  int thread_modes[MAX_THREAD_MODES] = {1, 2};
  int nmodes = 2;
  const char *cases_arg = NULL, *csv_path = NULL;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    if (strcmp(a, "--quick") == 0) quick = 1;
    else if (strcmp(a, "--smx-only") == 0) smx_only = 1;
    else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) verbose = 1;
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return 0; }
    else if (strcmp(a, "--cases") == 0 && has_val) cases_arg = argv[++i];
    else if (strcmp(a, "--csv") == 0 && has_val) csv_path = argv[++i];
    else if (strcmp(a, "--reps") == 0 && has_val) {
      char *e;
      long v = strtol(argv[++i], &e, 10);
      if (*e || v < 1 || v > MAX_REPS) { fprintf(stderr, "smx_bench: bad --reps\n"); return 2; }
      fixed_reps = (int)v;
    } else if (strcmp(a, "--threads") == 0 && has_val) {
      const char *p = argv[++i];
      nmodes = 0;
      while (*p) {
        char *e;
        long v = strtol(p, &e, 10);
        if (e == p || v < 1 || v > 64 || nmodes == MAX_THREAD_MODES || (*e && *e != ',')) {
          fprintf(stderr, "smx_bench: bad --threads\n");
          return 2;
        }
        thread_modes[nmodes++] = (int)v;
        p = *e ? e + 1 : e;
      }
      if (nmodes == 0) { fprintf(stderr, "smx_bench: bad --threads\n"); return 2; }
    } else {
      usage(stderr);
      return 2;
    }
  }

  bench_case cases[MAX_CASES];
  size_t ncases = 0;
  if (cases_arg) {
    char *list = strdup(cases_arg), *save = NULL;
    if (!list) return 1;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      if (ncases == MAX_CASES || lookup_case(tok, &cases[ncases]) != 0) {
        fprintf(stderr, "smx_bench: unknown case '%s' (see --help)\n", tok);
        free(list);
        return 2;
      }
      ncases++;
    }
    free(list);
  } else if (quick) {
    for (size_t i = 0; i < NELEMS(quick_cases); i++) cases[ncases++] = quick_cases[i];
  } else {
    for (size_t i = 0; i < NELEMS(full_cases); i++) cases[ncases++] = full_cases[i];
  }
  double target_s = quick ? 0.05 : 0.3;

  if (csv_path) {
    csv = fopen(csv_path, "w");
    if (!csv) { fprintf(stderr, "smx_bench: cannot open %s: %s\n", csv_path, strerror(errno)); return 1; }
    fprintf(csv, "case,threads,contender,ns_per_elem,gb_per_s,ratio_vs_best_peer,roof_fraction,"
                 "rows,cols,reps,median_s,peer,algo\n");
  }

  printf("smx_bench: smx %s, ISA %s, %d online CPUs%s\n", smx_version_string(), smx_isa(), online_cpus(),
         quick ? ", quick mode" : "");

  /* ---- peers */
#ifdef SMX_BENCH_HAVE_DNNL
  {
    const dnnl_version_t *v = dnnl_version();
    dnnl_first_threads = thread_modes[0];
#  ifndef SMX_BENCH_HAVE_OMP
    if (v->cpu_runtime == DNNL_RUNTIME_OMP) {
      char buf[16];
      snprintf(buf, sizeof buf, "%d", thread_modes[0]);
      setenv("OMP_NUM_THREADS", buf, 1); /* before oneDNN starts OpenMP */
    }
#  endif
    dnnl_ok = dnnl_engine_create(&dnnl_eng, dnnl_cpu, 0) == dnnl_success &&
              dnnl_stream_create(&dnnl_strm, dnnl_eng, dnnl_stream_default_flags) == dnnl_success;
    dnnl_set_primitive_cache_capacity(0);
    printf("peer oneDNN %d.%d.%d (%s runtime): %s", v->major, v->minor, v->patch, dnnl_runtime_name(v->cpu_runtime),
           dnnl_ok ? "ok" : "engine creation FAILED");
#  ifdef SMX_BENCH_HAVE_OMP
    if (v->cpu_runtime == DNNL_RUNTIME_OMP) printf(", threads set with omp_set_num_threads");
#  endif
    printf("\n");
    for (int m = 0; m < nmodes; m++)
      if (dnnl_ok && !dnnl_threads_ok(thread_modes[m]))
        printf("  note: oneDNN's thread count cannot be set here: no oneDNN rows for %d threads\n", thread_modes[m]);
  }
#else
  printf("peer oneDNN: not found at build time, skipped\n");
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
  xnn_ok = xnn_initialize(NULL) == xnn_status_success;
  printf("peer XNNPACK: %s\n", xnn_ok ? "ok (pthreadpool)" : "xnn_initialize FAILED, skipped");
#else
  printf("peer XNNPACK: not found at build time, skipped\n");
#endif

  /* ---- roof (measured again at the end, to show how much it drifted) */
  double roof[MAX_THREAD_MODES] = {0};
  if (!smx_only) {
    printf("2R1W roof (c[i] = a[i] + b[i], 3 x 64Mi floats, 12 bytes/element, median):\n");
    if (run_roof(thread_modes, nmodes, quick ? 5 : 9, roof, NULL) != 0) return 1;
  }
  printf("\n%-18s %3s  %-20s %10s %9s %8s %7s\n", "case", "thr", "contender", "ns/elem", "GB/s", "vs-peer", "roof");
  fflush(stdout);

  /* ---- cases */
  for (size_t ci = 0; ci < ncases; ci++) {
    const bench_case *bc = &cases[ci];
    size_t n = bc->rows * bc->cols;
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.rows = bc->rows;
    c.cols = bc->cols;
    c.x = alloc_floats(n);
    c.y = alloc_floats(n);
    c.lse = alloc_floats(bc->rows);
    if (!c.x || !c.y || !c.lse) {
      fprintf(stderr, "smx_bench: out of memory for %s, skipped\n", bc->name);
      free(c.x);
      free(c.y);
      free(c.lse);
      continue;
    }
    fill_uniform(c.x, n);

    for (int m = 0; m < nmodes; m++) {
      result res[C_COUNT];
      memset(res, 0, sizeof res);
      c.threads = thread_modes[m];
      for (int id = 0; id <= C_SMX_LAST; id++) c.avail[id] = 1;
      c.avail[C_PLAIN] = c.threads == 1 && !smx_only;
      c.avail[C_DNNL] = c.avail[C_DNNL_LOG] = c.avail[C_XNNPACK] = 0;
#ifdef SMX_BENCH_HAVE_DNNL
      if (!smx_only) dnnl_setup(&c);
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
      if (!smx_only) xnn_setup(&c);
#endif
      /* smx: each op's AUTO and three fixed algorithms in turns (C_SMX_AUTO .. C_SMX_LAST come in fours) */
      for (int id = 0; id <= C_SMX_LAST; id += GROUP_MAX) {
        const int ids[GROUP_MAX] = {id, id + 1, id + 2, id + 3};
        measure_group(&c, ids, GROUP_MAX, target_s, fixed_reps, res);
      }
      for (int id = C_SMX_LAST + 1; id < C_COUNT; id++)
        if (c.avail[id] && measure(&c, id, target_s, fixed_reps, &res[id]) != 0) res[id].valid = 0;
#ifdef SMX_BENCH_HAVE_DNNL
      dnnl_teardown(&c);
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
      xnn_teardown(&c);
#endif
      print_block(bc, c.threads, &c, res, roof[m]);
    }
    free(c.x);
    free(c.y);
    free(c.lse);
  }

#ifdef SMX_BENCH_HAVE_DNNL
  if (dnnl_strm) dnnl_stream_destroy(dnnl_strm);
  if (dnnl_eng) dnnl_engine_destroy(dnnl_eng);
#endif
#ifdef SMX_BENCH_HAVE_XNNPACK
  if (xnn_ok) xnn_deinitialize();
#endif
  double roof_end[MAX_THREAD_MODES] = {0};
  if (!smx_only) {
    printf("\n2R1W roof again at the end (fractions above use the first one):\n");
    run_roof(thread_modes, nmodes, quick ? 5 : 9, roof_end, roof);
  }
  if (busy_rows)
    printf("\nnote: %d row(s) were measured while other processes used more than %.2f CPUs (BUSY): "
           "rerun them on an idle machine.\n", busy_rows, BUSY_LIMIT);
  if (csv) fclose(csv);
  return 0;
}
