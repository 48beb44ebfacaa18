/* Shared helpers for the C tests: counters, RNG, long-double references (guard pages: tests/ops/guard.h). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#ifndef SMX_TESTS_TEST_UTIL_H
#define SMX_TESTS_TEST_UTIL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smx/smx.h"
#include "splitmix.h"

static long tu_pass, tu_fail;

/* The options of a loss call, smx_options with its loss extension beside it, copyable by value:
 * tu_lo() points the extension at the copy's own e just before the call. */
typedef struct tu_loss_opts { smx_options o; smx_loss_ext e; } tu_loss_opts;
#define TU_LOSS_OPTS_INIT { { SMX_ALGO_AUTO, 0.0, 0u, 0, NULL }, SMX_LOSS_EXT_INIT }
static inline const smx_options *tu_lo(tu_loss_opts *t) {
  t->o.loss = &t->e;
  return &t->o;
}

#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (cond) tu_pass++;                                                        \
    else {                                                                      \
      tu_fail++;                                                                \
      if (tu_fail <= 40) {                                                      \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
        fprintf(stderr, __VA_ARGS__);                                           \
        fprintf(stderr, "\n");                                                  \
      }                                                                         \
    }                                                                           \
  } while (0)

static inline int tu_finish(const char *name) {
  printf("%s: %ld passed, %ld failed\n", name, tu_pass, tu_fail);
  return tu_fail ? 1 : 0;
}

static inline float tu_uniform_f(tu_rng *r, float lo, float hi) { return (float)((double)lo + ((double)hi - (double)lo) * tu_uniform(r)); }
static inline float tu_normal(tu_rng *r) {
  double u1 = tu_uniform(r), u2 = tu_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* Long-double reference: log sum exp(x/T) = max/T + log_d with
 * log_d = log sum exp((x - max)/T); log-softmax_i = (x_i - max)/T - log_d.
 * Returns log_d and sets *m; -inf (and *m = -inf) for a fully masked row. */
static inline long double tu_ref_logd(const float *x, size_t n, float t, long double *mout) {
  long double T = t == 0.0f ? 1.0L : (long double)t;
  long double m = -INFINITY;
  for (size_t i = 0; i < n; i++) if ((long double)x[i] > m) m = x[i];
  *mout = m;
  if (m == -INFINITY) return -INFINITY;
  long double s = 0.0L, blk = 0.0L;   /* blocked sum: exact enough for 2^26 terms */
  for (size_t i = 0; i < n; i++) {
    blk += expl(((long double)x[i] - m) / T);
    if ((i & 4095) == 4095) { s += blk; blk = 0.0L; }
  }
  s += blk;
  return logl(s);
}

static inline long double tu_ref_lse(const float *x, size_t n, float t) {
  long double m, T = t == 0.0f ? 1.0L : (long double)t;
  long double ld = tu_ref_logd(x, n, t, &m);
  return m == -INFINITY ? m : m / T + ld;
}

static const smx_algo tu_algos[3] = { SMX_ALGO_THREE_PASS, SMX_ALGO_TWO_PASS, SMX_ALGO_ONLINE };
static const char *const tu_algo_names[4] = { "auto", "three-pass", "two-pass", "online" };
/* The ISA levels a test walks, by index 0 .. tu_isa_top(); AArch64 has two, x86 four (avx512bf16 runs the
 * avx512 kernels but attention's bf16 tile products). tu_tables_top(): the last of a test's own per-ISA
 * kernel tables { scalar, avx2, avx512 } (or { scalar, neon }) that this CPU runs. */
#if defined(__aarch64__)
static const smx_isa_level tu_isas[4] = { SMX_ISA_SCALAR, SMX_ISA_NEON, SMX_ISA_NEON, SMX_ISA_NEON };
static const char *const tu_isa_names[4] = { "scalar", "neon", "neon", "neon" };
static inline int tu_isa_top(void) { return smx_cpu_isa() == SMX_ISA_NEON ? 1 : 0; }
static inline int tu_tables_top(void) { return tu_isa_top(); }
#else
static const smx_isa_level tu_isas[4] = { SMX_ISA_SCALAR, SMX_ISA_AVX2, SMX_ISA_AVX512, SMX_ISA_AVX512BF16 };
static const char *const tu_isa_names[4] = { "scalar", "avx2", "avx512", "avx512bf16" };
static inline int tu_isa_top(void) { return smx_cpu_isa() == SMX_ISA_AVX512BF16 ? 3 : (int)smx_cpu_isa(); }
static inline int tu_tables_top(void) { return tu_isa_top() > 2 ? 2 : tu_isa_top(); }
#endif

/* bit-exact float comparison that treats NaN == NaN and distinguishes -0 */
static inline int tu_same(float a, float b) {
  if (a != a && b != b) return 1;
  uint32_t ua, ub;
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  return ua == ub;
}

#endif
