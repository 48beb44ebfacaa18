/*
 * SMX_ALGO_AUTO's tuning (src/tune/): the cache model reproduces the
 * crossovers measured on the development machine and moves with the caches;
 * cache sizes parse and stay plausible; wisdom files round-trip and anything
 * else in their place is ignored; the calibration stays within its time
 * budget; and wisdom switched on through the environment calibrates, rewrites
 * a corrupt file and never fails a call.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/test_util.h"
#include "tune/calibrate.h"
#include "tune/cpu_caches.h"
#include "tune/tune.h"
#include "tune/wisdom.h"

#define KI ((size_t)1 << 10)
#define MI ((size_t)1 << 20)

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The fixed crossovers AUTO used before it read the caches (AVX-512). */
static smx_algo old_f32(smx_op op, size_t rows, size_t cols) {
  size_t limit = op == SMX_OP_LOGSUMEXP ? ((size_t)1 << 18) : ((size_t)1 << 20);
  if (cols > limit) return SMX_ALGO_TWO_PASS;
  if (cols >= ((size_t)1 << 14) && rows * cols >= ((size_t)1 << 22)) return SMX_ALGO_TWO_PASS;
  return SMX_ALGO_THREE_PASS;
}
static smx_algo old_f64(smx_op op, size_t rows, size_t cols) {
  if (op == SMX_OP_SOFTMAX) return SMX_ALGO_THREE_PASS;
  if (cols >= ((size_t)1 << 18)) return SMX_ALGO_TWO_PASS;
  if (cols >= ((size_t)1 << 14) && rows * cols >= ((size_t)1 << 22)) return SMX_ALGO_TWO_PASS;
  return SMX_ALGO_THREE_PASS;
}

static smx_cpu_caches dev_caches(void) {
  smx_cpu_caches c;
  memset(&c, 0, sizeof c);
  c.l1d = 32 * KI;
  c.l2 = MI;
  c.l3 = 32 * MI;
  c.source = "test";
  smx_cpu_caches_sanitize(&c);
  return c;
}

static void test_model(void) {
  smx_cpu_caches c = dev_caches();
  smx_tune_table t;
  smx_tune_model(&c, "avx512", &t);
  static const size_t rows[] = {1, 2, 3, 64, 255, 256, 257, 4096, 65536};
  static const smx_op ops[] = {SMX_OP_SOFTMAX, SMX_OP_LOG_SOFTMAX, SMX_OP_LOGSUMEXP};
  long diff = 0;
  for (int sh = 0; sh <= 27; sh++) {
    for (int d = -1; d <= 1; d++) {
      size_t cols = ((size_t)1 << sh) + (size_t)d;
      if (cols == 0) continue;
      for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (int o = 0; o < 3; o++) {
          diff += smx_tune_pick_f32(&t, ops[o], rows[r], cols) != old_f32(ops[o], rows[r], cols);
          diff += smx_tune_pick_f64(&t, ops[o], rows[r], cols) != old_f64(ops[o], rows[r], cols);
        }
    }
  }
  CHECK(diff == 0, "%ld choices differ from the measured crossovers on the development machine's caches", diff);

  /* other kernel sets: three-pass at every size, but for AVX2 log-sum-exp out of cache */
  static const char *const others[] = {"avx2", "scalar", "neon", "unknown"};
  for (int i = 0; i < 4; i++) {
    smx_tune_model(&c, others[i], &t);
    smx_algo lse_far = i == 0 ? SMX_ALGO_ONLINE : SMX_ALGO_THREE_PASS;
    for (int o = 0; o < 2; o++) {
      CHECK(smx_tune_pick_f32(&t, ops[o], 1, (size_t)1 << 26) == SMX_ALGO_THREE_PASS, "%s", others[i]);
      CHECK(smx_tune_pick_f32(&t, ops[o], 4096, 32000) == SMX_ALGO_THREE_PASS, "%s", others[i]);
    }
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 1, (size_t)1 << 26) == lse_far, "%s", others[i]);
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 1, (size_t)4 << 20) == lse_far, "%s", others[i]);
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 4096, 32000) == lse_far, "%s", others[i]);
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 512, 256000) == lse_far, "%s", others[i]);
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 1, (size_t)256 << 10) == SMX_ALGO_THREE_PASS, "%s", others[i]);
    CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 65536, 1000) == SMX_ALGO_THREE_PASS, "%s", others[i]);
    CHECK(smx_tune_pick_f64(&t, SMX_OP_LOGSUMEXP, 1, (size_t)1 << 26) == SMX_ALGO_THREE_PASS, "%s", others[i]);
  }

  /* the crossovers move with the caches: twice the L3, twice the softmax row */
  smx_cpu_caches big = c;
  big.l3 = 64 * MI;
  smx_tune_model(&big, "avx512", &t);
  CHECK(smx_tune_pick_f32(&t, SMX_OP_SOFTMAX, 1, 2 * MI) == SMX_ALGO_THREE_PASS, "64 MiB L3, 2Mi columns");
  CHECK(smx_tune_pick_f32(&t, SMX_OP_SOFTMAX, 1, 2 * MI + 1) == SMX_ALGO_TWO_PASS, "64 MiB L3, 2Mi+1 columns");
  smx_cpu_caches l2 = c;
  l2.l2 = 2 * MI;
  smx_tune_model(&l2, "avx512", &t);
  CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 1, 512 * KI) == SMX_ALGO_THREE_PASS, "2 MiB L2, 512Ki columns");
  CHECK(smx_tune_pick_f32(&t, SMX_OP_LOGSUMEXP, 1, 512 * KI + 1) == SMX_ALGO_TWO_PASS, "2 MiB L2");

  /* sizes at the limit do not overflow into a wrong choice */
  smx_tune_model(&c, "avx512", &t);
  CHECK(smx_tune_pick_f32(&t, SMX_OP_SOFTMAX, SIZE_MAX / 64, SIZE_MAX / 64) == SMX_ALGO_TWO_PASS, "huge");
  CHECK(smx_tune_pick_f32(&t, SMX_OP_SOFTMAX, SIZE_MAX, 1) == SMX_ALGO_THREE_PASS, "many 1-column rows");
}

static void test_caches(void) {
  CHECK(smx_cpu_parse_cache_size("32K") == 32 * KI, "32K");
  CHECK(smx_cpu_parse_cache_size("1024K\n") == MI, "1024K");
  CHECK(smx_cpu_parse_cache_size("32M") == 32 * MI, "32M");
  CHECK(smx_cpu_parse_cache_size("65536") == 65536, "65536");
  static const char *const bad[] = {"", "K", "12X", "-1K", "99999999999999999999999K", "3 2K"};
  for (int i = 0; i < 6; i++) CHECK(smx_cpu_parse_cache_size(bad[i]) == 0, "'%s'", bad[i]);
  CHECK(smx_cpu_parse_cache_size(NULL) == 0, "NULL");

  smx_cpu_caches c;
  memset(&c, 0, sizeof c);
  smx_cpu_caches_sanitize(&c);
  CHECK(c.l1d == 32 * KI && c.l2 == MI && c.l3 == 32 * MI && !strcmp(c.source, "default"), "defaults");
  memset(&c, 0, sizeof c);
  c.l1d = 1;
  c.l2 = SIZE_MAX;
  c.l3 = 4096;
  c.l3_sharing = 100000;
  smx_cpu_caches_sanitize(&c);
  CHECK(c.l1d >= 4 * KI && c.l2 <= 256 * MI && c.l3 >= c.l2 && c.l3_sharing == 1, "clamped");

  const smx_cpu_caches *m = smx_cpu_caches_get();
  CHECK(m == smx_cpu_caches_get(), "read once");
  CHECK(m->l1d >= 4 * KI && m->l2 >= m->l1d && m->l3 >= m->l2 && m->l3_sharing >= 1 && m->source != NULL,
        "this CPU: L1d %zu L2 %zu L3 %zu / %u", m->l1d, m->l2, m->l3, m->l3_sharing);
  printf("caches (%s): L1d %zu KiB, L2 %zu KiB, L3 %zu KiB shared by %u\n", m->source, m->l1d >> 10, m->l2 >> 10,
         m->l3 >> 10, m->l3_sharing);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(data, 1, n, f);
  fclose(f);
}

static size_t read_file(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return n;
}

static void test_wisdom_files(const char *dir) {
  char path[512], text[2048];
  snprintf(path, sizeof path, "%s/w", dir);
  smx_cpu_caches c = dev_caches();
  smx_tune_table t, u;
  smx_tune_model(&c, "avx512", &t);
  t.softmax_ws = 123456;
  t.lse_ws = SMX_TUNE_NEVER;
  CHECK(smx_wisdom_save(path, "avx512", 0x1234, &t) == 0, "save");
  smx_tune_model(&c, "avx512", &u);
  CHECK(smx_wisdom_load(path, "avx512", 0x1234, &u) == 0, "load");
  CHECK(u.softmax_ws == 123456 && u.lse_ws == SMX_TUNE_NEVER, "round trip");
  CHECK(smx_wisdom_load(path, "avx2", 0x1234, &u) != 0, "another kernel set");
  CHECK(smx_wisdom_load(path, "avx512", 0x1235, &u) != 0, "another CPU");

  size_t n = read_file(path, text, sizeof text);
  CHECK(n > 20, "file written");
  smx_tune_table before;
  smx_tune_model(&c, "avx512", &before);
  /* each corruption: the load fails and leaves the table as it was */
  for (int k = 0; k < 9; k++) {
    char buf[4096];
    size_t m = n;
    memcpy(buf, text, n);
    switch (k) {
    case 0: m = n / 2; break;                                  /* truncated */
    case 1: buf[strstr(buf, "123456") - buf] = '9'; break;     /* a value edited, the sum not */
    case 2: buf[m++] = '\n'; break;                            /* trailing bytes */
    case 3: m = 0; break;                                      /* empty */
    case 4: memset(buf, 0xa5, 3000); m = 3000; break;          /* binary, long */
    case 5: buf[3] = '\0'; break;                              /* a NUL byte */
    case 6: memcpy(buf + n - 17, "zzzzzzzzzzzzzzzz", 16); break; /* a mangled sum */
    case 7: memcpy(buf, "smx-wisdom 2", 12); break;            /* another version */
    case 8: memcpy(buf, text, n); buf[n - 1] = ' '; break;     /* no final newline */
    }
    write_file(path, buf, m);
    u = before;
    CHECK(smx_wisdom_load(path, "avx512", 0x1234, &u) != 0, "corruption %d loads", k);
    CHECK(u.softmax_ws == before.softmax_ws && u.lse_ws == before.lse_ws, "corruption %d changed the table", k);
  }
  unlink(path);
  CHECK(smx_wisdom_load(path, "avx512", 0x1234, &u) != 0, "missing file");
  CHECK(smx_wisdom_load(dir, "avx512", 0x1234, &u) != 0, "a directory");
  snprintf(path, sizeof path, "%s/no/such/dir/w", dir);
  CHECK(smx_wisdom_save(path, "avx512", 0x1234, &t) != 0, "save into a missing directory");
}

static void test_calibration(void) {
  const smx_cpu_caches *c = smx_cpu_caches_get();
  smx_tune_table t, centre;
  smx_tune_model(c, smx_isa(), &t);
  smx_tune_model(c, "avx512", &centre);
  double t0 = now_s(), c0 = cpu_s();
  int measured = smx_tune_calibrate(c, &t, 0.2);
  double dt = now_s() - t0, dc = cpu_s() - c0;
  printf("calibration: %d crossover(s) in %.0f ms (%.0f ms CPU): softmax x+y %zu, lse x %zu bytes\n", measured,
         dt * 1e3, dc * 1e3, t.softmax_ws, t.lse_ws);
  /* its own time is bounded; a busy machine can only stretch the wall time */
  CHECK(dc < 0.3, "the calibration took %.3f s of CPU", dc);
  CHECK(dt < 2.0, "the calibration took %.3f s", dt);
  CHECK(measured >= 0 && measured <= 2, "%d", measured);
  CHECK(t.softmax_ws == SMX_TUNE_NEVER ||
            (t.softmax_ws >= centre.softmax_ws / 8 && t.softmax_ws <= 4 * centre.softmax_ws),
        "softmax crossover %zu", t.softmax_ws);
  CHECK(t.lse_ws == SMX_TUNE_NEVER || (t.lse_ws >= centre.lse_ws / 8 && t.lse_ws <= 4 * centre.lse_ws),
        "lse crossover %zu", t.lse_ws);
  /* no time at all: nothing measured, nothing changed */
  smx_tune_table z = centre;
  CHECK(smx_tune_calibrate(c, &z, 0.0) == 0, "zero budget");
  CHECK(z.softmax_ws == centre.softmax_ws && z.lse_ws == centre.lse_ws, "zero budget changed the table");
}

/* Wisdom on through the environment, over a corrupt file: the first AUTO call
 * calibrates (or keeps the model), succeeds, and leaves a valid file. */
static void test_env_wisdom(const char *dir) {
  char path[512], env[600];
  snprintf(path, sizeof path, "%s/env-wisdom", dir);
  write_file(path, "smx-wisdom 1\ngarbage\n", 21);
  unsetenv("SMX_NO_WISDOM");
  snprintf(env, sizeof env, "%s", path);
  setenv("SMX_WISDOM", env, 1);
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)(i % 17) - 8.0f;
  double c0 = cpu_s();
  smx_status st = smx_softmax_f32(x, y, 256, NULL);
  double dc = cpu_s() - c0;
  CHECK(st == SMX_OK, "softmax with wisdom on: %d", (int)st);
  double s = 0;
  for (int i = 0; i < 256; i++) s += y[i];
  CHECK(s > 0.999 && s < 1.001, "sum %g", s);
  CHECK(dc < 0.3, "first call with calibration took %.3f s of CPU", dc);
  const smx_tune_table *t = smx_tune_table_for(smx_isa());
  CHECK(smx_tune_config_get()->enabled, "SMX_WISDOM read");
  CHECK(t->source == SMX_TUNE_CALIBRATED || t->source == SMX_TUNE_MODEL, "source %d", t->source);
  CHECK(t == smx_tune_table_for(smx_isa()), "settled once");
  if (t->source == SMX_TUNE_CALIBRATED) {
    smx_tune_table u;
    smx_tune_model(smx_cpu_caches_get(), smx_isa(), &u);
    CHECK(smx_wisdom_load(path, smx_isa(), smx_cpu_caches_get()->cpu_hash, &u) == 0, "the corrupt file rewritten");
    CHECK(u.softmax_ws == t->softmax_ws && u.lse_ws == t->lse_ws, "file and table agree");
  }
  /* the environment changing later does not change the choice */
  setenv("SMX_NO_WISDOM", "1", 1);
  CHECK(smx_tune_config_get()->enabled, "config read once");
}

int main(void) {
  char dir[] = "/tmp/smx_test_tune_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_env_wisdom(dir); /* first: the environment is read at the first use */
  test_model();
  test_caches();
  test_wisdom_files(dir);
  test_calibration();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tu_finish("test_tune");
}
