/*
 * SMX_ALGO_AUTO's tables: the cache model, and wisdom when it is switched on.
 *
 * The model's ratios come from the crossovers measured with bench/smx_bench on
 * the development machine (32 KiB L1d, 1 MiB L2, 32 MiB L3; docs/crossovers.md):
 *   f32 softmax, log-softmax  two-pass above 1Mi columns: x + y =  8 MiB = L3 / 4
 *   f32 log-sum-exp           two-pass above 256Ki columns:    x =  1 MiB = L2
 *   f32 batches               rows of 16Ki columns or more:    x = 64 KiB = 2 L1d,
 *                             4Mi elements or more:            x = 16 MiB = L3 / 2
 *   f32 log-sum-exp, AVX2     online from 4Mi columns (x = 16 MiB), three-pass at 256Ki
 *                             (1 MiB) by 20%: above L3 / 4; batches as above
 *   f64 log-softmax, lse      rows of 256Ki columns or more:   x =  2 MiB = 2 L2
 *   f64 batches               rows of 16Ki columns:            x = 128 KiB = 4 L1d,
 *                             4Mi elements:                    x = 32 MiB = L3
 * so on that machine AUTO chooses exactly what the fixed constants chose.
 */
#define _POSIX_C_SOURCE 200809L
#include "tune/tune.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tune/calibrate.h"
#include "tune/wisdom.h"

/* wall time a calibration may take (the contract is well under 0.5 s) */
#define CALIBRATION_BUDGET_S 0.2

void smx_tune_model(const smx_cpu_caches *c, const char *isa, smx_tune_table *t) {
  memset(t, 0, sizeof *t);
  t->source = SMX_TUNE_MODEL;
  t->lse_far = SMX_ALGO_TWO_PASS;
  /* avx512bf16 runs the avx512 softmax kernels: the same crossovers */
  int avx512 = isa && (strcmp(isa, "avx512") == 0 || strcmp(isa, "avx512bf16") == 0);
  int avx2 = isa && strcmp(isa, "avx2") == 0;
  if (!avx512) {
    /* Scalar, AVX2 and NEON kernels stay bound by arithmetic out of cache (the
     * AVX2 two-pass rebuilds 2^n in integer lanes twice per vector)... */
    t->softmax_ws = t->lse_ws = t->batch_row = t->batch_total = SMX_TUNE_NEVER;
    t->lse_batch_row = t->lse_batch_total = SMX_TUNE_NEVER;
    t->f64_row = t->f64_batch_row = t->f64_batch_total = SMX_TUNE_NEVER;
    if (avx2) {
      /* ...except AVX2 log-sum-exp, which writes no y: once x is far out of
       * cache, three-pass reads it twice from memory and the one-read
       * algorithms once; online was the fastest of them in 6 of the 8
       * out-of-cache cases of smx_bench, and within 12% in the others. */
      t->lse_far = SMX_ALGO_ONLINE;
      t->lse_ws = c->l3 / 4;
      t->lse_batch_row = 2 * c->l1d;
      t->lse_batch_total = c->l3 / 2;
    }
    return;
  }
  t->softmax_ws = c->l3 / 4;
  t->lse_ws = c->l2;
  t->batch_row = t->lse_batch_row = 2 * c->l1d;
  t->batch_total = t->lse_batch_total = c->l3 / 2;
  t->f64_row = 2 * c->l2;
  t->f64_batch_row = 4 * c->l1d;
  t->f64_batch_total = c->l3;
}

static size_t mul_sat(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

/* v > limit, where NEVER is never exceeded */
static int above(size_t v, size_t limit) { return limit != SMX_TUNE_NEVER && v > limit; }
static int at_least(size_t v, size_t limit) { return limit != SMX_TUNE_NEVER && v >= limit; }

smx_algo smx_tune_pick_f32(const smx_tune_table *t, smx_op op, size_t rows, size_t cols) {
  size_t x_row = mul_sat(cols, sizeof(float));
  smx_algo far = op == SMX_OP_LOGSUMEXP ? t->lse_far : SMX_ALGO_TWO_PASS;
  if (op == SMX_OP_LOGSUMEXP ? above(x_row, t->lse_ws) : above(mul_sat(x_row, 2), t->softmax_ws)) return far;
  /* a batch far larger than the caches: long rows are read twice from L2
   * (two-pass) rather than writing y and reading it back (three-pass) */
  size_t brow = op == SMX_OP_LOGSUMEXP ? t->lse_batch_row : t->batch_row;
  size_t btotal = op == SMX_OP_LOGSUMEXP ? t->lse_batch_total : t->batch_total;
  if (at_least(x_row, brow) && at_least(mul_sat(x_row, rows), btotal)) return far;
  return SMX_ALGO_THREE_PASS;
}

smx_algo smx_tune_pick_f64(const smx_tune_table *t, smx_op op, size_t rows, size_t cols) {
  /* softmax's two-pass and online forms compute two exponentials per element */
  if (op == SMX_OP_SOFTMAX) return SMX_ALGO_THREE_PASS;
  size_t x_row = mul_sat(cols, sizeof(double));
  if (at_least(x_row, t->f64_row)) return SMX_ALGO_TWO_PASS;
  if (at_least(x_row, t->f64_batch_row) && at_least(mul_sat(x_row, rows), t->f64_batch_total))
    return SMX_ALGO_TWO_PASS;
  return SMX_ALGO_THREE_PASS;
}

/* ---------------------------------------------------------------- config */

static smx_tune_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static int env_on(const char *v) { return v && *v && strcmp(v, "0") != 0; }

static void init_config(void) {
  const char *no = getenv("SMX_NO_WISDOM");
  const char *w = getenv("SMX_WISDOM");
  config.disabled_by_env = env_on(no);
  config.enabled = !config.disabled_by_env && env_on(w);
  config.file = NULL;
  if (config.enabled && strcmp(w, "1") != 0) {
    /* kept: the environment may change later, the choice may not */
    size_t n = strlen(w) + 1;
    char *copy = malloc(n);
    if (copy) {
      memcpy(copy, w, n);
      config.file = copy;
    } else {
      config.enabled = 0;
    }
  }
}

const smx_tune_config *smx_tune_config_get(void) {
  pthread_once(&config_once, init_config);
  return &config;
}

static int mkdir_ok(const char *dir) { return mkdir(dir, 0755) == 0 || errno == EEXIST; }

int smx_tune_wisdom_path(const char *isa, char *buf, size_t n, int mkdirs) {
  const smx_tune_config *cfg = smx_tune_config_get();
  if (cfg->file) {
    int k = snprintf(buf, n, "%s", cfg->file);
    return k > 0 && (size_t)k < n ? 0 : -1;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char dir[4096];
  int k;
  if (xdg && xdg[0] == '/') k = snprintf(dir, sizeof dir, "%s", xdg);
  else if (home && home[0] == '/') k = snprintf(dir, sizeof dir, "%s/.cache", home);
  else return -1;
  if (k <= 0 || (size_t)k >= sizeof dir - 8) return -1;
  if (mkdirs && !mkdir_ok(dir)) return -1;
  strcat(dir, "/smx");
  if (mkdirs && !mkdir_ok(dir)) return -1;
  k = snprintf(buf, n, "%s/wisdom-%s-%016llx", dir, isa, (unsigned long long)smx_cpu_caches_get()->cpu_hash);
  return k > 0 && (size_t)k < n ? 0 : -1;
}

const char *smx_tune_source_name(int source) {
  switch (source) {
  case SMX_TUNE_FROM_WISDOM: return "wisdom file";
  case SMX_TUNE_CALIBRATED: return "calibrated now";
  default: return "cache model";
  }
}

/* ---------------------------------------------------------------- tables */

/* one table per kernel set: the set in use can change (smx_set_max_isa) */
static const char *const isa_names[] = {"scalar", "avx2", "avx512", "neon", "avx512bf16"};
#define NISA (sizeof isa_names / sizeof isa_names[0])
static smx_tune_table tables[NISA + 1]; /* + 1: an unknown name, model only */
static _Atomic(const smx_tune_table *) ready[NISA + 1];
static pthread_mutex_t settle_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void settle(size_t i, const char *isa, smx_tune_table *t) {
  const smx_cpu_caches *c = smx_cpu_caches_get();
  smx_tune_model(c, isa, t);
  if (i == NISA || !smx_tune_config_get()->enabled) return;
  char path[4096];
  int have_path = smx_tune_wisdom_path(isa, path, sizeof path, 1) == 0;
  if (have_path && smx_wisdom_load(path, isa, c->cpu_hash, t) == 0) {
    t->source = SMX_TUNE_FROM_WISDOM;
    return;
  }
  /* Calibrate the kernel set in use only: another one would time the wrong kernels. */
  if (strcmp(smx_isa(), isa) != 0) return;
  smx_tune_table m = *t;
  double t0 = now_s();
  int measured = smx_tune_calibrate(c, &m, CALIBRATION_BUDGET_S);
  m.calib_s = now_s() - t0;
  if (measured == 0 || strcmp(smx_isa(), isa) != 0) return; /* nothing, or the kernels changed under it */
  m.source = SMX_TUNE_CALIBRATED;
  *t = m;
  if (have_path) (void)smx_wisdom_save(path, isa, c->cpu_hash, t); /* a read-only cache costs a recalibration */
}

/* The kernel tables' isa names are string constants: once a table is settled
 * for one, later calls find it by its address (AUTO runs on every call, and
 * three strcmp cost 4% of a 1Ki-column softmax). */
static _Atomic(const char *) seen_name[NISA + 1];

const smx_tune_table *smx_tune_table_for(const char *isa) {
  for (size_t k = 0; k <= NISA; k++)
    if (isa && atomic_load_explicit(&seen_name[k], memory_order_acquire) == isa)
      return atomic_load_explicit(&ready[k], memory_order_relaxed);
  size_t i = 0;
  while (i < NISA && (!isa || strcmp(isa, isa_names[i]) != 0)) i++;
  const smx_tune_table *t = atomic_load_explicit(&ready[i], memory_order_acquire);
  if (t) return t;
  pthread_mutex_lock(&settle_lock);
  t = atomic_load_explicit(&ready[i], memory_order_relaxed);
  if (!t) {
    settle(i, i < NISA ? isa_names[i] : "unknown", &tables[i]);
    t = &tables[i];
    atomic_store_explicit(&ready[i], t, memory_order_release);
    /* release: whoever finds the name finds the table (only known names: another
     * unknown string must not find this slot) */
    if (i < NISA && isa) atomic_store_explicit(&seen_name[i], isa, memory_order_release);
  }
  pthread_mutex_unlock(&settle_lock);
  return t;
}
